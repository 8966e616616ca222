package eos

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
const goldenHeader = "! fabctl render: Arista EOS CLI (managed sections only)\n" +
	"! Syntax: the vendor corpus testdata/vendor/eos (Arista AVD eos_cli_config_gen output and\n" +
	"!   schema, Arista pyeapi, NAPALM); every line's form and source: testdata/vendor/eos/shapes.txt\n" +
	"! mtu is EOS's L3 (IP) MTU; qos map dscp lists all 64 code points (no EOS default table is sourced).\n"

func TestGoldenRender(t *testing.T) {
	for _, c := range []struct{ dir, sw, golden string }{
		{"testbed", "leaf2", "testbed-leaf2.golden"},
		{"ai-pod", "leaf3", "ai-pod-leaf3.golden"},
		{switchtest.MixedQoS, "leaf-eos", "mixedqos-leaf-eos.golden"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			var f *intent.Fabric
			if strings.HasPrefix(c.dir, "..") {
				_, f = switchtest.Load(t, c.dir)
			} else {
				_, f = load(t, c.dir)
			}
			sw := eosSwitch(t, f, c.sw)
			files, err := (&Driver{}).Render(drivers.Target{Device: sw.Device, Intent: sw})
			if err != nil {
				t.Fatal(err)
			}
			got := append([]byte(goldenHeader), files[0].Data...)
			testutil.Golden(t, filepath.Join("testdata", c.golden), got)
			// The rendering, read back as a running-config of a switch
			// that has the ports, is the intent's state.
			text := string(files[0].Data)
			st, err := ReadRunningConfig(text, sw)
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
	_, fab := load(f, "testbed")
	sw := eosSwitch(f, fab, "leaf2")
	f.Add("qos map dscp 8 9 to traffic-class 0\n!\nqos profile FABCTL\n   qos trust dscp\n   tx-queue 3\n      no priority\n      bandwidth percent 50\n      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\ninterface Ethernet1\n   mtu 9000\n   service-profile FABCTL\n!\npriority-flow-control pause watchdog default timeout 0.2 recovery-time 0.4 polling-interval 0.1\nend\n")
	f.Add("qos map dscp 99 x to traffic-class 9\ninterface Ethernet1\n\tmtu abc\n  service-profile NOPE\n      tx-queue 12\npriority-flow-control pause watchdog default timeout x recovery-time NaN polling-interval 1e999\n")
	f.Add("   \n!\n  end\nqos profile FABCTL\n   tx-queue 3\n      random-detect ecn minimum-threshold 9999999999999 mbytes maximum-threshold 1 segments\n")
	f.Add("qos profile FABCTL\n   tx-queue 3\n      no priority\nqos profile FABCTL-NOPFC\n   qos trust cos\n   tx-queue 3\n      bandwidth percent 9\n   tx-queue 99\ninterface Ethernet1\n   service-profile FABCTL-NOPFC\ninterface Ethernet2\n   service-profile FABCTL-NOPFC\n   service-profile MISSING\n")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ReadRunningConfig(s, sw)
		if err == nil && st == nil {
			t.Fatal("nil state without error")
		}
		// The tree builders never panic on the same input.
		_ = Script(strings.Split(s, "\n"))
		_ = RestoreScript(ParseConfig(s))
	})
}

// expressible is the switch's desired state without what EOS cannot
// express (Unexpressible): what a read-back can ever show.
func expressible(sw *intent.Switch) intent.State { return switchtest.Desired(&Driver{}, sw) }
