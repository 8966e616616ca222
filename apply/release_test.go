package apply

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
)

// releasing is a driver that keeps a rollback point per run (like NX-OS
// checkpoints) and counts Release calls.
type releasing struct {
	drivers.Driver
	mu       *sync.Mutex
	released *[]string
	fail     bool
}

func (r *releasing) Release(_ context.Context, t drivers.Target, res drivers.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.released = append(*r.released, t.Device.Name+"@"+res.Token)
	if r.fail {
		return errors.New("checkpoint busy")
	}
	return nil
}

func TestReleaseAfterRun(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var mu sync.Mutex
		var released []string
		tds := []testDev{
			sw("s1", intent.State{}, intent.State{"trust": "dscp"}),
			sw("s2", intent.State{"trust": "dscp"}, intent.State{"trust": "dscp"}),
		}
		fx := newFixture(t, tds, func(d drivers.Driver) drivers.Driver {
			return &releasing{Driver: d, mu: &mu, released: &released, fail: fail}
		})
		fx.plan(t, tds)
		res, err, journal := fx.run(t, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.dev("switch.s1").Status != StatusApplied {
			t.Fatalf("s1 %+v", res.dev("switch.s1"))
		}
		// Only the device applied in this run releases its rollback point.
		if len(released) != 1 || released[0][:3] != "s1@" {
			t.Errorf("released %v", released)
		}
		got := false
		for _, e := range journal {
			if e.Event == EventReleaseFailed {
				got = true
			}
		}
		if got != fail {
			t.Errorf("fail=%v: release_failed journaled = %v", fail, got)
		}
	}
}

// TestRollbackOfSavedDevice: under --on-failure rollback a device that
// was applied, verified and saved, then rolled back because another
// device failed, gets its running configuration back and its startup
// configuration too (saved again), so a reload does not bring back the
// change the run reports rolled back. Its configuration was saved before
// the run; when it was not, the run's save replaced the startup
// configuration the rollback cannot restore: the device is saved as it
// ran before the run, and the result says so.
func TestRollbackOfSavedDevice(t *testing.T) {
	for _, savedBefore := range []bool{true, false} {
		tds := []testDev{
			sw("s1", intent.State{"mtu": "1500"}, intent.State{"mtu": "9100"}),
			sw("s2", intent.State{"mtu": "1500"}, intent.State{"mtu": "9100"}),
		}
		fx := newFixture(t, tds, func(d drivers.Driver) drivers.Driver {
			return &memory.SavingDriver{Driver: *d.(*memory.Driver)}
		})
		if !savedBefore {
			// s1's running state differs from its startup (an unsaved change).
			fx.store.Set("s1", intent.State{"mtu": "1400"})
			fx.store.SetRunning("s1", intent.State{"mtu": "1500"})
		}
		// Plan through the saving driver: config/saved is part of the
		// state, as plan.Make records it.
		for i, d := range fx.devs {
			drv := &memory.SavingDriver{Driver: memory.Driver{Store: fx.store, FieldList: testFields}}
			live, err := drv.Read(context.Background(), d.Target)
			if err != nil {
				t.Fatal(err)
			}
			desired := intent.State{drivers.PathSaved: "true"}
			for k, v := range d.Plan.Desired {
				desired[k] = v
			}
			fx.devs[i].Plan.Desired = desired
			fx.devs[i].Plan.Fingerprint = live.Fingerprint()
			fx.devs[i].Plan.Changes = intent.Diff(desired, live, testFields)
			fx.devs[i].Plan.Steps, _ = drv.Changes(d.Target, fx.devs[i].Plan.Changes, desired)
			// Every apply of a saving platform ends with its save (plan.Make).
			fx.devs[i].Plan.Steps = append(fx.devs[i].Plan.Steps, drivers.SaveStep(drv))
		}
		fx.store.FailApply["s2"] = errors.New("boom")
		res, _, _ := fx.run(t, Options{Parallelism: 1, OnFailure: Rollback})
		s1 := res.dev("switch.s1")
		fx.store.Reload("s1") // what the device comes back with after a reload
		after := fx.store.Get("s1")["mtu"]
		if savedBefore {
			if s1.Status != StatusRolledBack || s1.RollbackError != "" || after != "1500" {
				t.Errorf("saved before: s1 %s (%s), MTU %s after a reload; want rolled_back, 1500", s1.Status, s1.RollbackError, after)
			}
			continue
		}
		if s1.Status != StatusRolledBack || after != "1500" {
			t.Errorf("unsaved before: s1 %s (%s), MTU %s after a reload; want rolled_back, 1500 (the running configuration from before the run)", s1.Status, s1.RollbackError, after)
		}
		if !strings.Contains(s1.Error, "startup configuration") {
			t.Errorf("unsaved before: s1's result %q does not say its startup configuration changed", s1.Error)
		}
	}
}
