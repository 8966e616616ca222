package eos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

// TestCoSMapForPCPTrust (audit EN19): a switch trusting PCP classifies by
// the global CoS map, which fabctl writes (CoS p to traffic class p,
// avd-qos-profile.cfg:49) instead of assuming the platform's. On vEOS,
// whose built-in map sends every CoS to traffic-class 8
// (pyeapi-running-config-all.txt:49), the trust reads as not in effect
// until the map is written, then verifies; on a platform whose built-in
// map is the identity, show running-config hides the entries and show
// running-config all shows them, so nothing is planned. Without CoSLines
// the vEOS switch never converges; without reading the map from show
// running-config all the trust reads pcp on vEOS before any apply.
func TestCoSMapForPCPTrust(t *testing.T) {
	_, f := load(t, "testbed")
	base := eosSwitch(t, f, "leaf2")
	sw := *base
	sw.Trust = spec.TrustPCP
	sw.Ports = append(sw.Ports[:0:0], base.Ports...)
	for i := range sw.Ports {
		sw.Ports[i].Trust = spec.TrustPCP
	}
	identity := map[int]int{}
	for c := 0; c < 8; c++ {
		identity[c] = c
	}
	for _, tc := range []struct {
		name, model string
		cosDefault  map[int]int
	}{
		{name: "vEOS", model: "vEOS"},
		{name: "identity built-in map", cosDefault: identity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu, err := eosemu.Start(eosemu.Options{Hostname: "leaf2", Password: switchtest.Password, Ports: 8, Model: tc.model, CoSDefault: tc.cosDefault})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { emu.Close() })
			target, opts := switchtest.Connect(t, emu, &sw, "admin")
			drv := NewWith(opts)
			desired := expressible(&sw)
			if tc.model == "vEOS" {
				// vEOS's uc-tx-queue family renders; its DSCP map is not used under PCP trust.
				desired = switchtest.Desired(drv, &sw)
			}
			_, _, steps := switchtest.Plan(t, drv, target, desired)
			if !sends(steps, "qos map cos 3 to traffic-class 3") {
				t.Fatalf("the CoS map is not written: %+v", steps)
			}
			if _, err := drv.Apply(context.Background(), target, steps, drivers.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			live, diff, _ := switchtest.Plan(t, drv, target, desired)
			if live["trust"] != spec.TrustPCP || len(diff) != 0 {
				t.Fatalf("after the apply: trust %q, re-plan %+v", live["trust"], diff)
			}
			run := string(emu.RunningConfig())
			printed := strings.Contains(run, "qos map cos 3 to traffic-class 3")
			if tc.model == "vEOS" != printed {
				t.Fatalf("the CoS entries printed in show running-config: %v, want %v (built-in defaults are hidden):\n%s", printed, tc.model == "vEOS", run)
			}
			// A CoS moved behind fabctl's back: trust reads as not in
			// effect, naming it, and the plan writes the map again.
			emu.Edit(func(c *eosemu.Config) { c.CoS[3] = 5 })
			live, _, steps = switchtest.Plan(t, drv, target, desired)
			if live["trust"] != "pcp (qos map cos 3 to traffic-class 5)" || !sends(steps, "qos map cos 3 to traffic-class 3") {
				t.Fatalf("CoS drift: trust %q, steps %+v", live["trust"], steps)
			}
			if _, err := drv.Apply(context.Background(), target, steps, drivers.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, diff, _ := switchtest.Plan(t, drv, target, desired); len(diff) != 0 {
				t.Fatalf("after the repair: %+v", diff)
			}
		})
	}
}

// sends says whether a step's payload holds the line.
func sends(steps []drivers.Change, line string) bool {
	for _, s := range steps {
		for _, l := range s.Payload {
			if strings.TrimSpace(l) == line {
				return true
			}
		}
	}
	return false
}
