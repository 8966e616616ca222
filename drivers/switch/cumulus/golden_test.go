package cumulus

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/internal/testutil"
)

// goldenHeader names the documents whose syntax the rendered file follows.
const goldenHeader = "# fabctl render: NVIDIA Cumulus Linux NVUE commands (managed settings only)\n" +
	"# Syntax: CumulusNetworks/docs cumulus-linux-514 Layer-1-and-Switch-Ports/Quality-of-Service/\n" +
	"#   RDMA-over-Converged-Ethernet-RoCE.md (nv set qos roce baseline and its fine-tuning commands)\n" +
	"#   and Quality-of-Service/_index.md (mapping, pfc, congestion-control, egress-scheduler,\n" +
	"#   pfc-watchdog), NVUE CLI (nv config diff / apply --assume-yes / history / apply <rev>)\n" +
	"#   Pinned to Cumulus Linux 5.14; every line shape is in testdata/vendor/cumulus/shapes.txt.\n" +
	"#   (see shared/reference/switches.md section 2.2)\n" +
	"# link mtu is the Linux netdev (IP) MTU; switch priority N is traffic class N for the\n" +
	"#   intent's classes, the other priorities go to the best-effort class.\n"

func TestGoldenRender(t *testing.T) {
	for _, c := range []struct{ dir, sw, golden string }{
		{"testdata/cllab", "leaf2", "cllab-leaf2.golden"},
		{"../../../examples/ai-pod", "leaf2", "ai-pod-leaf2.golden"},
		{"../../../examples/rocev1-storage", "leaf1", "rocev1-storage-leaf1.golden"},
		{switchtest.MixedQoS, "leaf-cl", "mixedqos-leaf-cl.golden"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			_, f := load(t, c.dir)
			sw := clSwitch(t, f, c.sw)
			files, err := (&Driver{}).Render(drivers.Target{Device: sw.Device, Intent: sw})
			if err != nil {
				t.Fatal(err)
			}
			got := append([]byte(goldenHeader), files[0].Data...)
			testutil.Golden(t, filepath.Join("testdata", c.golden), got)
		})
	}
}

func FuzzReadConfigJSON(f *testing.F) {
	_, fab := load(f, "testdata/cllab")
	sw := clSwitch(f, fab, "leaf2")
	// nv config show -o json is a list [{"header"}, {"set"}] (nvue-config-show-json.txt:44-46).
	f.Add(`[{"header":{"rev-id":"1.0"}},{"set":{"qos":{"roce":{"enable":"on","mode":"lossless"}},"interface":{"swp1":{"link":{"mtu":9000}}}}}]`)
	f.Add(`[{"set":{"qos":{"pfc":{"fabctl-nopfc":{"tx":"disable","rx":"disable"},"p2":{"switch-priority":{"3":{},"x":1}}},"mapping":{"fabctl-trust-l3":{"trust":"l3","dscp":{"26":{"switch-priority":9}}}}},` +
		`"interface":{"swp1":{"qos":{"pfc":{"profile":"p2"},"mapping":{"profile":"fabctl-trust-l3"}}},"swp2":{"qos":{"pfc":{"profile":7},"mapping":{"profile":"gone"}}}}}}]`)
	f.Add(`[{"set":{"qos":{"mapping":{"default-global":{"trust":"l3","dscp":{"26":{"switch-priority":3},"99":{"switch-priority":"x"}}}},` +
		`"congestion-control":{"default-global":{"traffic-class":{"3":{"min-threshold":1e308,"max-threshold":-1,"ecn":"disable"}}}},` +
		`"pfc":{"default-global":{"switch-priority":{"3":{},"9":{}}}},"egress-scheduler":{"default-global":{"traffic-class":{"3":{"mode":"dwrr","bw-percent":"50"}}}},` +
		`"pfc-watchdog":{"polling-interval":100,"robustness":3}},"interface":{"swp1":{"qos":{"pfc-watchdog":{"state":"disable"}}},"swp2":[]}}}]`)
	f.Add(`[]`)
	f.Add(`null`)
	f.Add(`{"qos":"x","interface":7}`)
	f.Add(`[{"set":7}]`)
	f.Add(`[{"set":{"qos":"x","interface":7}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ReadConfigJSON([]byte(s), sw)
		if err == nil && st == nil {
			t.Fatal("nil state without error")
		}
		for k := range st {
			if strings.HasPrefix(k, "port/") && !strings.HasPrefix(k, "port/swp") {
				t.Fatalf("port outside the intent: %s", k)
			}
		}
	})
}
