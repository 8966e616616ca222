package cumulus

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
)

// TestSeveralProfiles: a leaf whose storage port has no PFC and whose
// legacy port trusts PCP gets the NVUE PFC and mapping profiles of those
// settings over real SSH; the apply converges, a port whose profile
// assignment was removed by hand and a mapping profile edited by hand
// are detected and repaired, and a port moved back to the switch's
// settings returns to default-global.
func TestSeveralProfiles(t *testing.T) {
	_, f := switchtest.Load(t, switchtest.MixedQoS)
	sw := clSwitch(t, f, "leaf-cl")
	emu, err := cumulusemu.Start(cumulusemu.Options{Hostname: "leaf-cl", Password: switchtest.Password, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	target, opts := switchtest.Connect(t, emu, sw, "cumulus")
	drv := NewWith(opts)
	plan := func() (intent.State, []intent.AttrChange, []drivers.Change) {
		return switchtest.Plan(t, drv, target, expressible(sw))
	}
	apply := func(steps []drivers.Change) {
		t.Helper()
		if _, err := drv.Apply(context.Background(), target, steps, drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, diff, _ := plan(); len(diff) != 0 {
			t.Fatalf("re-plan not empty: %+v", diff)
		}
	}
	_, _, steps := plan()
	apply(steps)
	js := string(emu.AppliedJSON())
	for _, want := range []string{`"fabctl-nopfc"`, `"fabctl-trust-l2"`, `"profile": "fabctl-nopfc"`, `"profile": "fabctl-trust-l2"`} {
		if !strings.Contains(js, want) {
			t.Fatalf("applied revision lacks %s:\n%s", want, js)
		}
	}

	emu.Edit(func(tree map[string]any) {
		delete(tree["interface"].(map[string]any)["swp3"].(map[string]any)["qos"].(map[string]any), "pfc")
		cumulusemu.SetPath(tree, "qos.mapping.fabctl-trust-l2.trust", "l3")
	})
	live, diff, steps := plan()
	if len(diff) != 2 || live["port/swp3/pfc"] != "3" || !strings.HasPrefix(live["port/swp4/trust"], "dscp (mapping profile fabctl-trust-l2 differs for dscp ") {
		t.Fatalf("drift: %+v", diff)
	}
	apply(steps)

	// The legacy NIC moves to DSCP: swp4 returns to default-global.
	for i := range sw.Ports {
		if sw.Ports[i].Name == "swp4" {
			sw.Ports[i].Trust = "dscp"
		}
	}
	_, diff, steps = plan()
	if len(diff) != 1 || diff[0].Path != "port/swp4/trust" {
		t.Fatalf("trust change: %+v", diff)
	}
	if p := strings.Join(steps[0].Payload, "\n"); !strings.Contains(p, "nv unset interface swp4 qos mapping") {
		t.Fatalf("payload: %s", p)
	}
	apply(steps)
}
