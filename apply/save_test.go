package apply

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// A switch fabric on a platform with a startup configuration.
const saveSrc = `
fabric "t" {}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}
switch "leaf2" {
  platform = "sonic"
  address  = "192.0.2.2"
}
link {
  endpoints = ["leaf1:Ethernet0", "leaf2:Ethernet0"]
  speed     = "400G"
}
`

type saveRig struct {
	t     *testing.T
	store *memory.Store
	reg   *drivers.Registry
	s     *spec.Spec
	f     *intent.Fabric
	dir   string
}

func newSaveRig(t *testing.T) *saveRig {
	s := testutil.LoadSrc(t, saveSrc)
	r := &saveRig{t: t, store: memory.NewStore(), reg: drivers.NewRegistry(), s: s, f: intent.Compile(s), dir: t.TempDir()}
	if err := r.reg.Register("sonic", func() drivers.Driver { return &memory.SavingDriver{Driver: memory.Driver{Store: r.store}} }); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *saveRig) plan() *plan.Plan {
	r.t.Helper()
	a, err := plan.LoadApplied(r.dir, "t")
	if err != nil {
		r.t.Fatal(err)
	}
	p := plan.Make(context.Background(), r.s, r.f, r.reg, plan.Options{Applied: a.Devices})
	for _, d := range p.Devices {
		if d.Error != "" {
			r.t.Fatalf("%s: %s", d.Address, d.Error)
		}
	}
	return p
}

// apply runs the plan's devices with changes through the engine, recording
// what it verified; it returns the result and the journal's events.
func (r *saveRig) apply(p *plan.Plan) (*Result, []Entry) {
	r.t.Helper()
	var devs []Device
	for _, u := range plan.Units(r.f) {
		for _, dp := range p.Devices {
			if dp.Address == u.Device.Addr() {
				devs = append(devs, Device{Plan: dp, Target: plan.Target(u, plan.Options{})})
			}
		}
	}
	rec, err := OpenRecorder(r.dir, "t")
	if err != nil {
		r.t.Fatal(err)
	}
	var buf bytes.Buffer
	j := NewJournal(&buf, "run-1", fixedClock(), nil)
	res, _ := Run(context.Background(), devs, r.reg, Options{Journal: j, Record: rec, OnFailure: Continue})
	if err := j.Close(); err != nil {
		r.t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		r.t.Fatal(err)
	}
	return res, parseJournal(r.t, buf.Bytes())
}

func changed(p *plan.Plan) map[string][]string {
	out := map[string][]string{}
	for _, d := range p.Devices {
		for _, c := range d.Changes {
			out[d.Address] = append(out[d.Address], c.Path)
		}
	}
	return out
}

// Apply saves after the verified transaction, the configuration survives
// a reload, and a re-plan is clean.
func TestApplySavesAndSurvivesReload(t *testing.T) {
	r := newSaveRig(t)
	p := r.plan()
	for _, d := range p.Devices {
		if len(d.Steps) == 0 || !drivers.IsSaveStep(d.Steps[len(d.Steps)-1]) {
			t.Fatalf("%s: the change list does not end with the save: %+v", d.Address, d.Steps)
		}
	}
	res, _ := r.apply(p)
	if !res.OK() || res.Counts.Applied != 2 {
		t.Fatalf("apply: %+v", res.Counts)
	}
	for _, d := range res.Devices {
		if !d.Saved {
			t.Errorf("%s: not saved", d.Address)
		}
	}
	r.store.Reload("leaf1")
	r.store.Reload("leaf2")
	if c := changed(r.plan()); len(c) > 0 {
		t.Fatalf("re-plan after reload: %v", c)
	}
}

// Without a save the reload loses the configuration: the rig itself can
// tell a saved device from an unsaved one.
func TestReloadLosesUnsavedConfiguration(t *testing.T) {
	r := newSaveRig(t)
	p := r.plan()
	for _, d := range p.Devices {
		tgt := drivers.Target{Device: intent.Device{Kind: d.Kind, Name: d.Name}}
		drv := &memory.Driver{Store: r.store}
		if _, err := drv.Apply(context.Background(), tgt, d.Steps[:len(d.Steps)-1], drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := changed(r.plan())
	if len(c) != 2 || !slices.Equal(c["switch.leaf1"], []string{drivers.PathSaved}) {
		t.Fatalf("an applied, unsaved device must plan only the save: %v", c)
	}
	r.store.Reload("leaf1")
	if c := changed(r.plan()); len(c["switch.leaf1"]) < 2 {
		t.Fatalf("after reload the unsaved configuration must be gone: %v", c)
	}
}

// A failed save fails the device as "applied, not saved" (never a silent
// success, never "not restored"); the record and plan then show the save,
// and the next apply repairs it.
func TestSaveFailure(t *testing.T) {
	r := newSaveRig(t)
	r.store.FailSave["leaf2"] = errors.New("injected: % Error: copy failed, flash full")
	res, js := r.apply(r.plan())
	if res.OK() || res.Counts.Failed != 1 || res.Counts.NotSaved != 1 || res.Counts.NotRestored != 0 || res.Counts.Applied != 1 {
		t.Fatalf("counts: %+v", res.Counts)
	}
	var failed *DeviceResult
	for _, d := range res.Devices {
		if d.Address == "switch.leaf2" {
			failed = d
		}
	}
	if failed == nil || failed.Status != StatusFailed || !failed.NotSaved || failed.NotRestored() {
		t.Fatalf("leaf2: %+v", failed)
	}
	for _, part := range []string{"applied and verified, but not saved", "flash full", "next reload"} {
		if !strings.Contains(failed.Error, part) {
			t.Errorf("error %q does not say %q", failed.Error, part)
		}
	}
	var sawNotSaved bool
	for _, e := range js {
		if e.Event == EventDeviceFailed && e.Device == "switch.leaf2" && e.NotSaved {
			sawNotSaved = true
		}
	}
	if !sawNotSaved {
		t.Fatalf("journal has no not_saved device_failed for leaf2: %v", events(js))
	}

	// The plan shows only the save; drift shows nothing: the record says
	// applied-but-unsaved, which is what the device runs.
	p := r.plan()
	if c := changed(p); len(c) != 1 || !slices.Equal(c["switch.leaf2"], []string{drivers.PathSaved}) {
		t.Fatalf("plan after a failed save: %v", c)
	}
	for _, d := range p.Devices {
		if len(d.Drift) > 0 {
			t.Fatalf("%s: drift %v", d.Address, d.Drift)
		}
	}

	// A reload now would lose it: the next apply saves it.
	delete(r.store.FailSave, "leaf2")
	res, _ = r.apply(r.plan())
	if !res.OK() || res.Counts.Applied != 1 {
		t.Fatalf("repair: %+v", res.Counts)
	}
	r.store.Reload("leaf2")
	if c := changed(r.plan()); len(c) > 0 {
		t.Fatalf("re-plan after repair and reload: %v", c)
	}
}

// Running changes nobody saved after fabctl's apply are drift.
func TestUnsavedIsDrift(t *testing.T) {
	r := newSaveRig(t)
	if res, _ := r.apply(r.plan()); !res.OK() {
		t.Fatalf("apply: %+v", res.Counts)
	}
	st := r.store.Get("leaf1")
	drv := &memory.Driver{Store: r.store}
	tgt := drivers.Target{Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf1"}}
	var k string
	for k = range st {
		break
	}
	if _, err := drv.Apply(context.Background(), tgt, []drivers.Change{{Payload: []string{"delete " + k}}}, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var drift []string
	for _, d := range r.plan().Devices {
		for _, c := range d.Drift {
			drift = append(drift, d.Address+" "+c.Path)
		}
	}
	if !slices.Contains(drift, "switch.leaf1 "+drivers.PathSaved) || !slices.Contains(drift, "switch.leaf1 "+k) {
		t.Fatalf("drift: %v", drift)
	}
}
