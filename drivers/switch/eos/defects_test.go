package eos

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Tests for the defects the vendor audit found (docs/vendor-sources.md,
// "EOS: audit defects"); each was written before its fix and failed.

func leaf2Plan(t *testing.T) (*intent.Switch, *Plan) {
	t.Helper()
	_, f := load(t, "testbed")
	sw := eosSwitch(t, f, "leaf2")
	p, err := Build(sw)
	if err != nil {
		t.Fatal(err)
	}
	return sw, p
}

// TestWatchdogTimersThreeLines (audit E16/E18): the global watchdog
// timers are three `default` lines (avd-qos-profile.cfg:56-58), rendered
// and read back.
func TestWatchdogTimersThreeLines(t *testing.T) {
	sw, p := leaf2Plan(t)
	cfg := p.Config()
	for _, l := range []string{
		"priority-flow-control pause watchdog default timeout 0.2\n",
		"priority-flow-control pause watchdog default recovery-time 0.4\n",
		"priority-flow-control pause watchdog default polling-interval 0.1\n",
	} {
		if !strings.Contains(cfg, l) {
			t.Errorf("render lacks %q", l)
		}
	}
	if strings.Contains(cfg, "recovery-time 0.4 polling-interval") {
		t.Error("render still has the one-line timer form")
	}
	// The reader parses Arista's own three-line output.
	st, err := ReadRunningConfig("priority-flow-control pause watchdog default timeout 0.05\n"+
		"priority-flow-control pause watchdog default recovery-time 1.22\n"+
		"priority-flow-control pause watchdog default polling-interval 10.001\n", sw)
	if err != nil {
		t.Fatal(err)
	}
	if st["pfcwd/detect"] != "50ms" || st["pfcwd/restore"] != "1220ms" || st["pfcwd/poll"] != "10001ms" {
		t.Errorf("three-line watchdog read as %q %q %q", st["pfcwd/detect"], st["pfcwd/restore"], st["pfcwd/poll"])
	}
	// Clearing the watchdog has no sourced form: no line is rendered
	// (Unexpressible lists it, TestWatchdogOffNotExpressible).
	sw2 := *p.sw
	sw2.Watchdog.Enabled = false
	q := *p
	q.sw = &sw2
	if got := q.WatchdogLines(); len(got) != 0 {
		t.Errorf("a watchdog turned off renders %q", got)
	}
}

// TestDSCPMapWrittenInFull (audit E1): no DSCP->TC hardware default is
// assumed: every code point is written.
func TestDSCPMapWrittenInFull(t *testing.T) {
	_, p := leaf2Plan(t)
	seen := map[string]bool{}
	for _, l := range strings.Split(p.Config(), "\n") {
		f := strings.Fields(l)
		if len(f) > 6 && f[0] == "qos" && f[1] == "map" && f[2] == "dscp" {
			for _, d := range f[3 : len(f)-3] {
				seen[d] = true
			}
		}
	}
	if len(seen) != 64 {
		t.Errorf("render maps %d code points, want all 64", len(seen))
	}
}

// TestClearPFCDocumentedForms (audit E11 and the NO-SOURCE negations):
// PFC is disabled with `no priority-flow-control`, a no-drop priority is
// removed with `no priority-flow-control priority N`, ECN with `no
// random-detect ecn minimum-threshold`.
func TestClearPFCDocumentedForms(t *testing.T) {
	_, f := load(t, "testbed")
	sw := eosSwitch(t, f, "leaf2")
	port := sw.Ports[0].Name
	sw.Ports[0].PFC = nil
	sw.TCs[1].ECN = nil
	diff := []intent.AttrChange{
		{Path: "port/" + port + "/pfc", Action: intent.Update, Before: "3", After: ""},
		{Path: "tc/" + strconv.Itoa(sw.TCs[1].TC) + "/ecn/min", Action: intent.Delete, Before: "150000"},
	}
	steps, err := New().Changes(drivers.Target{Device: sw.Device, Intent: sw}, diff, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, s := range steps {
		lines = append(lines, s.Payload...)
	}
	all := strings.Join(lines, "\n") + "\n"
	for _, want := range []string{"   no priority-flow-control\n", "   no priority-flow-control priority 3\n", "      no random-detect ecn minimum-threshold\n"} {
		if !strings.Contains(all, want) {
			t.Errorf("payload lacks %q:\n%s", want, all)
		}
	}
	for _, bad := range []string{"no priority-flow-control on", "priority 3 no-drop\n   no", "no random-detect ecn\n"} {
		if strings.Contains(all, bad) {
			t.Errorf("payload has undocumented %q", bad)
		}
	}
}

// TestEmptySessionIsNotCommitted (audit E23): `show session-config diffs`
// prints a ---/+++ header (pyeapi-session-config-diffs.txt:11-12); a
// session with no change is aborted, not committed.
func TestEmptySessionIsNotCommitted(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	n := r.emu.Commits()
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.emu.Commits() != n || res.Token != "" {
		t.Fatalf("a session without changes was committed (%d commits, result %+v)", r.emu.Commits()-n, res)
	}
}

// TestSaveAndSavedRead (audit E25): the driver saves with `copy
// running-config startup-config` and reads config/saved by comparing
// `show startup-config` with `show running-config`.
func TestSaveAndSavedRead(t *testing.T) {
	r := newRig(t)
	var d drivers.Driver = r.drv
	sv, ok := d.(drivers.Saver)
	if !ok {
		t.Fatal("the EOS driver does not implement drivers.Saver")
	}
	live, _, steps := r.plan(t)
	if live[drivers.PathSaved] != "true" {
		t.Fatalf("factory switch reads config/saved = %q", live[drivers.PathSaved])
	}
	for _, s := range steps {
		for _, p := range s.Paths {
			if p == drivers.PathSaved {
				t.Fatal("the driver's own change list carries config/saved")
			}
		}
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if live, _, _ := r.plan(t); live[drivers.PathSaved] != "false" {
		t.Fatalf("applied, unsaved: config/saved = %q", live[drivers.PathSaved])
	}
	r.emu.FailSave("% Error copying system:/running-config to flash:/startup-config (No space left on device)")
	if err := sv.Save(context.Background(), r.target); err == nil || !strings.Contains(err.Error(), "No space left on device") {
		t.Fatalf("failed save: %v", err)
	}
	r.emu.FailSave("")
	if err := sv.Save(context.Background(), r.target); err != nil {
		t.Fatal(err)
	}
	if live, diff, _ := r.plan(t); live[drivers.PathSaved] != "true" || len(diff) != 0 {
		t.Fatalf("saved: config/saved = %q, diff %+v", live[drivers.PathSaved], diff)
	}
	r.emu.Reload()
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("saved configuration lost at reload: %+v", diff)
	}
}
