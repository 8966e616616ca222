package nxos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/nxosemu"
)

// mixedLeaf is MixedQoS's leaf-nx on an emulator over SSH: its intent,
// the emulator, plan (read, diff, steps) and apply (which releases the
// checkpoint and fails unless a re-plan is empty then).
func mixedLeaf(t *testing.T) (*intent.Switch, *nxosemu.Switch, func() (intent.State, []intent.AttrChange, []drivers.Change), func([]drivers.Change)) {
	t.Helper()
	_, f := switchtest.Load(t, switchtest.MixedQoS)
	sw := nxosSwitch(t, f, "leaf-nx")
	emu, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf-nx", Password: switchtest.Password, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	drv := NewWith(opts)
	plan := func() (intent.State, []intent.AttrChange, []drivers.Change) {
		return switchtest.Plan(t, drv, target, expressible(sw))
	}
	apply := func(steps []drivers.Change) {
		t.Helper()
		res, err := drv.Apply(context.Background(), target, steps, drivers.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := drv.Release(context.Background(), target, res); err != nil {
			t.Fatal(err)
		}
		if live, diff, _ := plan(); len(diff) != 0 || live["trust"] != sw.Trust {
			t.Fatalf("re-plan: trust %q, diff %+v", live["trust"], diff)
		}
	}
	return sw, emu, plan, apply
}

// TestSeveralPolicies: a leaf whose ports differ (uplink without
// watchdog, lossy storage port, a port trusting PCP) gets the CoS
// classification policy next to the DSCP one over real SSH; the apply
// converges, a drifted CoS class is detected, and a port whose trust
// changes moves from one input policy to the other.
func TestSeveralPolicies(t *testing.T) {
	sw, emu, plan, apply := mixedLeaf(t)
	_, _, steps := plan()
	apply(steps)
	run := string(emu.RunningConfig())
	for _, want := range []string{
		"policy-map type qos FABCTL-QOS-COS\n  class FABCTL-COS3\n    set qos-group 3\n",
		"interface Ethernet1/4\n  priority-flow-control mode on\n",
		"  service-policy type qos input FABCTL-QOS-COS\n",
	} {
		if !strings.Contains(run, want) {
			t.Fatalf("running-config lacks %q:\n%s", want, run)
		}
	}

	// Drift: CoS 3 classified into qos-group 5 by hand.
	emu.Edit(func(c *nxosemu.Config) {
		for _, cl := range c.Policies["qos"][CoSPolicy].Classes {
			if cl.Name == CoSClassPrefix+"3" {
				cl.QosGroup = 5
			}
		}
	})
	live, diff, steps := plan()
	if len(diff) != 1 || live["port/Ethernet1/4/trust"] != "pcp (FABCTL-QOS-COS: cos 3 -> qos-group 5)" {
		t.Fatalf("CoS drift: %+v", diff)
	}
	apply(steps)

	// The legacy port's NIC moves to DSCP: the port changes policy.
	for i := range sw.Ports {
		if sw.Ports[i].Name == "Ethernet1/4" {
			sw.Ports[i].Trust = "dscp"
		}
	}
	_, diff, steps = plan()
	if len(diff) != 1 || diff[0].Path != "port/Ethernet1/4/trust" || diff[0].Action != intent.Delete {
		t.Fatalf("trust change: %+v", diff)
	}
	payload := strings.Join(steps[0].Payload, "\n")
	if !strings.Contains(payload, "  no service-policy type qos input FABCTL-QOS-COS\n  service-policy type qos input FABCTL-QOS") {
		t.Fatalf("payload: %s", payload)
	}
	apply(steps)
}
