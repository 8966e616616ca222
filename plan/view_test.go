package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/spec/spectest"
)

func TestFormatValue(t *testing.T) {
	for in, want := range map[string]string{
		"9000": "9000", "3,4": "3,4", "": `""`, "10.0.0.1/31": "10.0.0.1/31", "200ms": "200ms",
		"a b": `"a b"`, `x"y`: `"x\"y"`, "line\nbreak": `"line\nbreak"`, "mlx5_0,mlx5_1": "mlx5_0,mlx5_1",
	} {
		if got := FormatValue(in); got != want {
			t.Errorf("FormatValue(%q) = %s, want %s", in, got, want)
		}
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

func TestCompactLines(t *testing.T) {
	var cs []intent.AttrChange
	for _, p := range []string{"Ethernet1/1", "Ethernet1/2", "Ethernet2/1", "Ethernet2/2"} {
		cs = append(cs,
			intent.AttrChange{Path: "port/" + p + "/mtu", Action: intent.Create, After: "9000"},
			intent.AttrChange{Path: "port/" + p + "/pfc", Action: intent.Update, Before: "", After: "3", Disruptive: "flap"})
	}
	for d := 0; d < 5; d++ {
		cs = append(cs, intent.AttrChange{Path: "dscp/" + string(rune('0'+d)), Action: intent.Create, After: "0"})
	}
	cs = append(cs, intent.AttrChange{Path: "trust", Action: intent.Update, Before: "pcp", After: "dscp"},
		intent.AttrChange{Path: "nic/eth0/mtu", Action: intent.Update, Before: "1500", After: "9000"})
	sort.Slice(cs, func(i, j int) bool { return NaturalLess(cs[i].Path, cs[j].Path) })
	var got []string
	for _, l := range compactLines(cs) {
		got = append(got, l.text+"|"+l.disruptive)
	}
	want := []string{
		"+ dscp/* (5 settings)|",
		"~ nic/eth0/mtu: 1500 → 9000|",
		"+ port/*/* (4 settings on 4 ports)|",
		`~ port/*/pfc (4 settings on 4 ports)|flap`,
		"~ trust: pcp → dscp|",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compact lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWrapList(t *testing.T) {
	got := wrapList([]string{"aaaa", "bbbb", "cccc", "dd"}, 12)
	want := []string{"aaaa, bbbb,", "cccc, dd"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q", got)
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
	var buf bytes.Buffer
	if err := WriteHuman(&buf, p, ViewOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "= tc/3/ecn/min: device has 146480 for 150000 (within the driver's tolerance)") {
		t.Errorf("verbose view lacks the tolerated setting:\n%s", buf.String())
	}
}

func TestJSONNulls(t *testing.T) {
	p := &Plan{FormatVersion: FormatVersion, Fabric: "f", Devices: []*DevicePlan{{
		Address: "switch.a", Kind: "switch", Name: "a",
		Changes: []intent.AttrChange{
			{Path: "x", Action: intent.Create, After: ""},
			{Path: "y", Action: intent.Delete, Before: "1"},
			{Path: "z", Action: intent.Update, Before: "", After: "2", Disruptive: "why"},
		},
		Drift: []intent.AttrChange{{Path: "x", Action: intent.Create, After: "5"}},
	}}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, JSON(p)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Devices []struct {
			Changes []map[string]any `json:"changes"`
			Drift   []map[string]any `json:"drift"`
		} `json:"devices"`
		Disruptive []map[string]any `json:"disruptive_changes"`
		Targets    []string         `json:"targets"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Devices[0].Changes
	if c[0]["before"] != nil || c[0]["after"] != "" || c[0]["action"] != "add" {
		t.Errorf("add: %v", c[0])
	}
	if c[1]["after"] != nil || c[1]["before"] != "1" || c[1]["action"] != "remove" {
		t.Errorf("remove: %v", c[1])
	}
	if c[2]["before"] != "" || c[2]["disruptive"] != "why" {
		t.Errorf("change: %v", c[2])
	}
	if dr := doc.Devices[0].Drift[0]; dr["live"] != nil || dr["applied"] != "5" {
		t.Errorf("drift: %v", dr)
	}
	if len(doc.Disruptive) != 1 || doc.Targets == nil {
		t.Errorf("disruptive %v targets %v", doc.Disruptive, doc.Targets)
	}
}

func TestSourceHashMatchesSpec(t *testing.T) {
	files, diags := spec.ReadFiles("../examples/ai-pod")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s, diags := spec.LoadFiles(files, spec.LoadOptions{Platforms: spectest.Platforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := SourceHash(files); got != s.SourceHash {
		t.Errorf("SourceHash %s, spec %s", got, s.SourceHash)
	}
}

func TestStaleness(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "a.fab.hcl")
	varFile := filepath.Join(dir, "v.fabvars")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(specFile, "fabric \"a\" {}\n")
	write(varFile, "x = 1\n")
	files, _ := spec.ReadFiles(dir)
	sp := &SavedPlan{FormatVersion: FormatVersion, SpecPath: dir, Sources: files,
		VarFiles: []spec.File{{Name: varFile, Data: []byte("x = 1\n")}}, Plan: &Plan{SpecHash: SourceHash(files)}}
	if w := sp.Staleness(); len(w) != 0 {
		t.Errorf("fresh plan stale: %q", w)
	}
	write(filepath.Join(dir, "b.fab.hcl"), "")
	write(varFile, "x = 2\n")
	w := sp.Staleness()
	if len(w) != 2 || !strings.Contains(w[0], "b.fab.hcl added") || !strings.Contains(w[1], "var file "+varFile+" changed") {
		t.Errorf("stale reasons %q", w)
	}
	old := *sp
	old.FormatVersion = major(FormatVersion) + ".0"
	if minor(FormatVersion) > 0 && len(old.Staleness()) != 3 {
		t.Errorf("older format not reported")
	}
	if minor("1.10") != 10 || minor("1") != 0 {
		t.Error("minor")
	}
}

func TestSavedPlanRoundTripAndSeal(t *testing.T) {
	s, f, store, reg := setup(t)
	_ = store
	p := Make(context.Background(), s, f, reg, Options{Targets: []string{"leaf1"}})
	sp := &SavedPlan{FabctlVersion: "v1", SpecPath: "t.fab.hcl", Sources: []spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, Env: []string{"FAB_VAR_x=1"}, Plan: p}
	b, err := sp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.fab")
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan.Targets[0] != "leaf1" || got.Env[0] != "FAB_VAR_x=1" || got.Plan.Device("leaf1") == nil || got.Plan.FabricDevices != 3 {
		t.Errorf("round trip lost fields: %+v", got.Plan)
	}
	// Any edit breaks the seal, including one to the embedded sources.
	edited := bytes.Replace(b, []byte(`"FAB_VAR_x=1"`), []byte(`"FAB_VAR_x=2"`), 1)
	if _, err := Decode(edited, "p.fab"); err == nil || !strings.Contains(err.Error(), "modified") {
		t.Errorf("edited plan accepted: %v", err)
	}
}
