package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
)

// limited is the memory driver on a platform without cable lengths.
type limited struct{ memory.Driver }

func (l *limited) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k := range desired {
		if strings.HasSuffix(k, "/cable") {
			out[k] = "no cable-length setting on this platform"
		}
	}
	return out
}

func TestUnexpressible(t *testing.T) {
	s, f, store, _ := setup(t)
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "eos", "host"} {
		_ = reg.Register(n, func() drivers.Driver { return &limited{memory.Driver{Store: store}} })
	}
	p := Make(context.Background(), s, f, reg, Options{})
	leaf := p.Device("leaf1")
	if len(leaf.Unexpressible) != 2 {
		t.Fatalf("unexpressible %+v", leaf.Unexpressible)
	}
	for _, c := range leaf.Changes {
		if strings.HasSuffix(c.Path, "/cable") {
			t.Errorf("unexpressible setting planned as a change: %s", c.Path)
		}
	}
	if _, ok := leaf.Desired["port/Ethernet0/cable"]; ok {
		t.Errorf("unexpressible setting left in Desired (apply would never verify)")
	}
	// Converge: only the expressible settings are needed.
	for _, d := range p.Devices {
		store.Set(d.Name, d.Desired)
	}
	p = Make(context.Background(), s, f, reg, Options{})
	if p.HasChanges() {
		t.Errorf("plan does not converge: %+v", p.Counts())
	}
	if u := p.Device("leaf1").Unexpressible; len(u) != 2 || !strings.HasSuffix(u[0].Path, "/cable") {
		t.Errorf("converged plan lost the unexpressible settings: %+v", u)
	}
}

// limitedSaver is a saving platform without cable lengths.
type limitedSaver struct{ memory.SavingDriver }

func (l *limitedSaver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	return (&limited{}).Unexpressible(t, desired)
}

// TestExpressed: the state apply re-derives from a saved plan's spec
// (Expressed) is the plan's Desired, with the unexpressible settings out
// and config/saved in, so a saved plan's spec check and the planner agree.
func TestExpressed(t *testing.T) {
	s, f, store, _ := setup(t)
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "eos", "host"} {
		_ = reg.Register(n, func() drivers.Driver { return &limitedSaver{memory.SavingDriver{Driver: memory.Driver{Store: store}}} })
	}
	p := Make(context.Background(), s, f, reg, Options{})
	units := map[string]Unit{}
	for _, u := range Units(f) {
		units[u.Device.Addr()] = u
	}
	for _, dp := range p.Devices {
		u := units[dp.Address]
		got := Expressed(u.State, dp)
		if got.Fingerprint() != dp.Desired.Fingerprint() {
			t.Errorf("%s: Expressed differs from the plan's Desired", dp.Address)
		}
		if got[drivers.PathSaved] != "true" {
			t.Errorf("%s: Expressed lacks %s", dp.Address, drivers.PathSaved)
		}
		for _, x := range dp.Unexpressible {
			if _, ok := got[x.Path]; ok {
				t.Errorf("%s: Expressed keeps unexpressible %s", dp.Address, x.Path)
			}
		}
	}
	if len(p.Device("leaf1").Unexpressible) == 0 {
		t.Fatal("the test fabric has no unexpressible setting: the test proves nothing")
	}
}
