package eos

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

// TestPortTrustRead: a port's trust is its interface's `qos trust` line
// or the qos profile's it uses (avd-qos-trust.txt); `no qos trust` is
// untrusted; when the two differ the value names both (no source says
// which EOS applies); a port default DSCP is not read.
func TestPortTrustRead(t *testing.T) {
	sw := &intent.Switch{Trust: "dscp", Ports: []intent.Port{{Name: "Ethernet1"}}}
	prof := func(trust string) string { return "qos profile P\n   " + trust + "\n   qos dscp 46\n!\n" }
	for _, c := range []struct {
		name, text, want string
		own              bool
	}{
		{"AVD: both dscp", prof("qos trust dscp") + "interface Ethernet1\n   service-profile P\n   qos trust dscp\n   qos dscp 48\n!\n", "dscp", true},
		{"interface only", "interface Ethernet1\n   qos trust cos\n!\n", "pcp", true},
		{"profile only", prof("qos trust cos") + "interface Ethernet1\n   service-profile P\n!\n", "pcp", false},
		{"interface untrusted", "interface Ethernet1\n   no qos trust\n!\n", "none", true},
		{"profile untrusted", prof("no qos trust") + "interface Ethernet1\n   service-profile P\n!\n", "none", false},
		{"differ", prof("qos trust dscp") + "interface Ethernet1\n   service-profile P\n   qos trust cos\n!\n",
			"pcp (interface qos trust; qos profile P: dscp; which one EOS applies is not in the sources)", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := ReadRunningConfig(c.text, sw)
			if err != nil {
				t.Fatal(err)
			}
			if got := st["port/Ethernet1/trust"]; got != c.want {
				t.Errorf("trust %q, want %q", got, c.want)
			}
			if got := st[FactInterfaceTrust] == "Ethernet1"; got != c.own {
				t.Errorf("%s = %q", FactInterfaceTrust, st[FactInterfaceTrust])
			}
		})
	}
}

// TestInterfaceTrustLineFollowsPort: a port whose interface was given a
// trust of its own by hand (`qos trust cos` beside FABCTL's dscp) plans
// its trust; the step writes the interface's line to the port's trust,
// and the apply converges.
func TestInterfaceTrustLineFollowsPort(t *testing.T) {
	_, emu, plan, apply := mixedLeaf(t)
	_, _, steps := plan()
	apply(steps)
	emu.Edit(func(c *eosemu.Config) { c.Interfaces["Ethernet1"].Trust = "cos" })
	live, diff, steps := plan()
	if len(diff) != 1 || diff[0].Path != "port/Ethernet1/trust" || !strings.HasPrefix(live["port/Ethernet1/trust"], "pcp (interface qos trust; qos profile FABCTL") {
		t.Fatalf("interface trust: %+v", diff)
	}
	if p := strings.Join(flattenPayload(steps), "\n"); !strings.Contains(p, "interface Ethernet1\n") || !strings.Contains(p, "qos trust dscp") {
		t.Fatalf("payload:\n%s", p)
	}
	apply(steps)
	run := string(emu.RunningConfig())
	sec, _, _ := strings.Cut(run[strings.Index(run, "interface Ethernet1\n"):], "!\n")
	if !strings.Contains(sec, "   qos trust dscp\n") {
		t.Fatalf("interface section:\n%s", sec)
	}
}
