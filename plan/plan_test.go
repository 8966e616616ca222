package plan

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

const src = `
fabric "t" {}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
}
switch "spine1" {
  platform = "eos"
  address  = "192.0.2.2"
  role     = "spine"
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf1:Ethernet1", "spine1:Ethernet1"]
  speed        = "400G"
  cable_length = "10m"
}
`

func setup(t *testing.T) (*spec.Spec, *intent.Fabric, *memory.Store, *drivers.Registry) {
	t.Helper()
	s := testutil.LoadSrc(t, src)
	store := memory.NewStore()
	reg := drivers.NewRegistry()
	fields := []intent.Field{{Pattern: "tc/*/ecn/*", Tolerance: 0.05}, {Pattern: "port/*/pfc", Disruptive: "PFC change flaps the link"}}
	for _, n := range []string{"sonic", "eos", "host"} {
		if err := reg.Register(n, func() drivers.Driver { return &memory.Driver{Store: store, FieldList: fields} }); err != nil {
			t.Fatal(err)
		}
	}
	return s, intent.Compile(s), store, reg
}

func TestMakePlan(t *testing.T) {
	s, f, store, reg := setup(t)
	p := Make(context.Background(), s, f, reg, Options{})
	if len(p.Devices) != 3 || !p.HasChanges() || p.Errored() {
		t.Fatalf("plan %+v", p.Counts())
	}
	c := p.Counts()
	if c.Changed != 3 || c.Add == 0 || c.Disruptive != 2+1 {
		t.Errorf("counts %+v", c)
	}
	// Converge the store: the next plan has no changes.
	for _, u := range Units(f) {
		store.Set(u.Device.Name, u.State)
	}
	p = Make(context.Background(), s, f, reg, Options{})
	if p.HasChanges() {
		t.Errorf("converged plan has changes: %+v", p.Counts())
	}
	// Quantised ECN threshold: within tolerance, not a change.
	st := store.Get("leaf1")
	st["tc/3/ecn/min"] = "146480"
	store.Set("leaf1", st)
	if Make(context.Background(), s, f, reg, Options{}).HasChanges() {
		t.Errorf("quantised ECN shows as a change")
	}
	// Drift against the last apply.
	applied := map[string]intent.State{}
	for _, u := range Units(f) {
		applied[u.Device.Addr()] = u.State
	}
	st["port/Ethernet0/mtu"] = "1500"
	store.Set("leaf1", st)
	store.FailRead["spine1"] = errors.New("dial tcp 192.0.2.2:22: connection refused")
	p = Make(context.Background(), s, f, reg, Options{Applied: applied})
	leaf := p.Device("switch.leaf1")
	if len(leaf.Changes) != 1 || leaf.Changes[0].Path != "port/Ethernet0/mtu" || len(leaf.Drift) != 1 {
		t.Errorf("leaf1 %+v", leaf)
	}
	if sp := p.Device("spine1"); sp.Error == "" || !p.Errored() {
		t.Errorf("unreachable spine not reported: %+v", sp)
	}
	// Targets and excludes.
	p = Make(context.Background(), s, f, reg, Options{Targets: []string{"role:leaf", "host.*"}, Excludes: []string{"h1"}})
	if len(p.Devices) != 1 || p.Devices[0].Name != "leaf1" {
		t.Errorf("selection: %v", p.Devices)
	}
}

func TestSavedPlan(t *testing.T) {
	s, f, _, reg := setup(t)
	p := Make(context.Background(), s, f, reg, Options{FabctlVersion: "test"})
	sp := &SavedPlan{FabctlVersion: "test", Sources: []spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, Plan: p}
	b, err := sp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.fab")
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan.SpecHash != s.SourceHash || len(got.Plan.Devices) != 3 {
		t.Errorf("round trip lost data")
	}
	tampered := []byte(string(b))
	for i := range tampered {
		if string(tampered[i:i+4]) == "9000" {
			copy(tampered[i:], "9001")
			break
		}
	}
	if _, err := Decode(tampered, "p.fab"); err == nil {
		t.Errorf("tampered plan accepted")
	}
	if _, err := Decode([]byte("{}"), "p.fab"); err == nil {
		t.Errorf("empty plan accepted")
	}
}

func TestNaturalLess(t *testing.T) {
	in := []string{"leaf10", "leaf2", "leaf1", "spine1", "port/Ethernet12/mtu", "port/Ethernet4/mtu", "leaf02", "a", ""}
	sort.Slice(in, func(i, j int) bool { return NaturalLess(in[i], in[j]) })
	want := []string{"", "a", "leaf1", "leaf02", "leaf2", "leaf10", "port/Ethernet4/mtu", "port/Ethernet12/mtu", "spine1"}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %q", in)
	}
	// Total order: different strings are never equal.
	if NaturalLess("leaf2", "leaf02") == NaturalLess("leaf02", "leaf2") {
		t.Error("leaf2 and leaf02 compare equal")
	}
}

// TestSlashedPortNames: EOS, NX-OS and SR Linux port names contain '/';
// a setting of a port the spec does not name is never removed, and the
// port's own settings are diffed as usual.
func TestSlashedPortNames(t *testing.T) {
	desired := intent.State{"port/Ethernet1/1/mtu": "9000", "port/Ethernet1/1/pfc": "3"}
	live := intent.State{"port/Ethernet1/1/mtu": "9000", "port/Ethernet1/1/pause": "true", "port/Ethernet1/5/mtu": "1500"}
	var got []string
	for _, c := range intent.Diff(desired, live, nil) {
		got = append(got, string(c.Action)+c.Path)
	}
	want := []string{"-port/Ethernet1/1/pause", "+port/Ethernet1/1/pfc"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff %q, want %q (Ethernet1/5 is not in the spec and must not be touched)", got, want)
	}
}

func TestMakeToleratedAndOrder(t *testing.T) {
	s, f, store, reg := setup(t)
	for _, u := range Units(f) {
		store.Set(u.Device.Name, u.State)
	}
	st := store.Get("leaf1")
	st["tc/3/ecn/min"] = "146480" // quantised: 2.3 % off
	st["port/Ethernet1/mtu"] = "1500"
	store.Set("leaf1", st)
	p := Make(context.Background(), s, f, reg, Options{})
	var order []string
	for _, d := range p.Devices {
		order = append(order, d.Address)
	}
	if want := []string{"switch.leaf1", "switch.spine1", "host.h1"}; !reflect.DeepEqual(order, want) {
		t.Errorf("device order %q, want %q", order, want)
	}
	d := p.Device("leaf1")
	if len(d.Changes) != 1 || d.Changes[0].Path != "port/Ethernet1/mtu" {
		t.Errorf("changes %+v", d.Changes)
	}
	if len(d.Tolerated) != 1 || d.Tolerated[0].Path != "tc/3/ecn/min" || d.Tolerated[0].Before != "146480" || d.Tolerated[0].After != "150000" {
		t.Errorf("tolerated %+v", d.Tolerated)
	}
	if p.FabricDevices != 3 || d.Unchanged() != len(d.Desired)-1 {
		t.Errorf("fabric devices %d, unchanged %d of %d", p.FabricDevices, d.Unchanged(), len(d.Desired))
	}
}
