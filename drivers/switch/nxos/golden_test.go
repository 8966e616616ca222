package nxos

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/internal/testutil"
)

// goldenHeader names the documents whose syntax the rendered file follows.
const goldenHeader = "! fabctl render: Cisco NX-OS CLI (managed sections only)\n" +
	"! Syntax: every command shape is listed with its vendor source in testdata/vendor/nxos/shapes.txt\n" +
	"!   (Cisco's AI/ML RoCE recipe paregupt/nx-os utils/roce_enable.py, Microsoft's Azure Local Nexus\n" +
	"!   guide, the Cisco NX-OS QoS guide and command reference; docs/vendor-sources.md, NX-OS)\n" +
	"! interface mtu is the IP MTU; network-qos mtu 9216 is the per-class frame MTU (IP MTU + 22 B of L2 fits).\n"

func TestGoldenRender(t *testing.T) {
	for _, c := range []struct{ dir, sw, golden string }{
		{"testdata/nxlab", "leaf4", "nxlab-leaf4.golden"},
		{"../../../examples/ai-pod", "leaf4", "ai-pod-leaf4.golden"},
		{switchtest.MixedQoS, "leaf-nx", "mixedqos-leaf-nx.golden"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			_, f := load(t, c.dir)
			sw := nxosSwitch(t, f, c.sw)
			files, err := (&Driver{}).Render(drivers.Target{Device: sw.Device, Intent: sw})
			if err != nil {
				t.Fatal(err)
			}
			got := append([]byte(goldenHeader), files[0].Data...)
			testutil.Golden(t, filepath.Join("testdata", c.golden), got)
			// The rendering, read back as a running-config, is the intent's state.
			st, err := ReadRunningConfig(string(files[0].Data), sw)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range expressible(sw) {
				if !(intent.Field{}).Equal(v, st[k]) { // a port MTU floor (">=9000") holds any MTU at least that
					t.Errorf("%s: rendered reads back %q, want %q", k, st[k], v)
				}
			}
		})
	}
}

func FuzzReadRunningConfig(f *testing.F) {
	_, fab := load(f, "testdata/nxlab")
	sw := nxosSwitch(f, fab, "leaf4")
	p, err := Build(sw)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p.Config())
	f.Add("!Command: show running-config\n!Time: x\nclass-map type qos match-any A\n  match dscp 99-3,x,-,7-\npolicy-map type qos FABCTL-QOS\n  class A\n    set qos-group 9\n  class class-default\n    set qos-group -1\n")
	f.Add("policy-map type queuing Q\n  class type queuing c-out-8q-q3\n    random-detect minimum-threshold 99999999999999999999 kbytes maximum-threshold 1 furlongs\n  class type queuing c-out-8q-q\n    priority level\nsystem qos\n  service-policy type queuing output Q\n  service-policy type network-qos N\npolicy-map type network-qos N\n  class type network-qos c-8q-nq-default\n    pause pfc-cos 0-7,9\n")
	f.Add("priority-flow-control watch-dog interval 99999999999\npriority-flow-control auto-restore multiplier -4\npriority-flow-control watch-dog-interval on\n\ninterface Ethernet1/1\n\tmtu abc\n  priority-flow-control mode on\n      service-policy type qos input FABCTL-QOS\n")
	f.Add("class-map type qos match-any FABCTL-COS3\n  match cos 3,9-1\npolicy-map type qos FABCTL-QOS-COS\n  class FABCTL-COS3\n    set qos-group 5\n  class class-default\n    set qos-group 8\npolicy-map type network-qos N\n  class type network-qos c-8q-nq3\n    mtu x\n  class type network-qos c-8q-nq6\n    mtu 1500\nsystem qos\n  service-policy type network-qos N\ninterface Ethernet1/1\n  service-policy type qos input FABCTL-QOS-COS\n")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ReadRunningConfig(s, sw)
		if err == nil && st == nil {
			t.Fatal("nil state without error")
		}
		_ = Script(strings.Split(s, "\n"))
		_ = Normalize(s)
	})
}
