package eos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// TestWatchdogOffNotExpressible: the removal forms no vendor source shows
// (the profile watchdog's and the global watchdog lines' `no` forms) are
// never sent: an intent that turns the watchdog off on a switch running
// it lists those settings as not expressible, plans nothing that removes
// them, and a re-plan stays clean on what it can express. eosemu refuses
// the forms (TestRefusesUndocumentedForms), so a driver sending them fails
// here.
func TestWatchdogOffNotExpressible(t *testing.T) {
	r := newRig(t)
	if !r.sw.Watchdog.Enabled {
		t.Fatal("the testbed's leaf2 runs no watchdog")
	}
	_, _, steps := r.plan(t)
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	off := *r.sw
	off.Watchdog.Enabled = false
	off.Ports = append(off.Ports[:0:0], r.sw.Ports...)
	for i := range off.Ports {
		off.Ports[i].Watchdog = false
	}
	tg := r.target
	tg.Intent = &off
	un, diff, steps := switchtest.PlanExpressed(t, r.drv, tg, expressible(&off))
	for _, k := range []string{"pfcwd/detect", "pfcwd/restore", "pfcwd/poll", "port/" + off.Ports[0].Name + "/pfcwd"} {
		if !strings.Contains(un[k], "no vendor source") {
			t.Errorf("%s: not listed as not expressible: %q", k, un[k])
		}
	}
	for _, c := range diff {
		if strings.HasPrefix(c.Path, "pfcwd/") || strings.HasSuffix(c.Path, "/pfcwd") {
			t.Errorf("watchdog change planned: %+v", c)
		}
	}
	for _, s := range steps {
		for _, l := range s.Payload {
			if strings.Contains(l, "no priority-flow-control pause watchdog") {
				t.Errorf("step %q sends the unsourced %q", s.Summary, l)
			}
		}
	}
	// The switch keeps its watchdog and the planner's read says so.
	if len(steps) > 0 {
		if _, err := r.drv.Apply(context.Background(), tg, steps, drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if run := string(r.emu.RunningConfig()); !strings.Contains(run, "priority-flow-control pause watchdog default timeout") {
		t.Fatalf("the global watchdog went:\n%s", run)
	}
}
