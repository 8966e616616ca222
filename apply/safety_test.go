package apply

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// Issue 21: apply never runs native steps that do not follow from the
// plan's spec and the live state, even on a device with no changes.
func TestRunFabricForgedSteps(t *testing.T) {
	ctx := context.Background()
	for _, converged := range []bool{false, true} {
		store, o := runFixture(t)
		if converged {
			store.Set("h1", intent.State{"nic/eth1/mtu": "9000"})
		}
		p := plan.Make(ctx, o.Spec, o.Fabric, o.Registry, o.Plan)
		dp := p.Devices[0]
		dp.Steps = append(dp.Steps, drivers.Change{Paths: []string{"hostname"}, Payload: []string{`set hostname "pwned"`}})
		o.Saved, o.PlanFile = &plan.SavedPlan{Plan: p}, "plan.fab"
		out, err := RunFabric(ctx, o)
		var me *MismatchPlanError
		if out.Status != RunRefused || !errors.As(err, &me) || store.Get("h1")["hostname"] != "" {
			t.Errorf("converged=%v: %+v %v %v", converged, out.Status, err, store.Get("h1"))
		}
	}
}

// Issue 21: the first interrupt ends the run "interrupted" even when
// every device was already in flight.
func TestRunFabricInterruptedInFlight(t *testing.T) {
	store, o := runFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := drivers.NewRegistry()
	_ = reg.Register("host", func() drivers.Driver { return onApply{&memory.Driver{Store: store}, cancel} })
	o.Registry = reg
	out, _ := RunFabric(ctx, o)
	if out.Status != RunInterrupted {
		t.Errorf("status %s, want interrupted", out.Status)
	}
}

type onApply struct {
	drivers.Driver
	fn func()
}

func (d onApply) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	d.fn()
	return d.Driver.Apply(ctx, t, ch, o)
}

type switchableWriter struct {
	broken atomic.Bool
	buf    strings.Builder
}

func (w *switchableWriter) Write(b []byte) (int, error) {
	if w.broken.Load() {
		return 0, errors.New("no space left on device")
	}
	return w.buf.Write(b)
}

// Issue 21: a journal write failure during the run stops it: no new
// device is started and the run fails.
func TestRunJournalFailureStops(t *testing.T) {
	tds := []testDev{
		host("h1", intent.State{"a": "1"}, intent.State{"a": "2"}),
		host("h2", intent.State{"a": "1"}, intent.State{"a": "2"}),
		host("h3", intent.State{"a": "1"}, intent.State{"a": "2"}),
	}
	w := &switchableWriter{}
	fx := newFixture(t, tds, func(d drivers.Driver) drivers.Driver {
		return onApply{d, func() { w.broken.Store(true) }}
	})
	j := NewJournal(w, "run-1", fixedClock(), nil)
	res, err := Run(context.Background(), fx.devs, fx.reg, Options{Parallelism: 1, Journal: j})
	j.Close()
	if err == nil || !strings.Contains(err.Error(), "journal") {
		t.Errorf("error %v, want a journal failure", err)
	}
	if res.Counts.Applied > 1 || res.Counts.NotAttempted < 2 {
		t.Errorf("counts %+v: devices were started after the journal failed", res.Counts)
	}
}

// Issue 21: the journal redacts secrets as whole tokens.
func TestJournalRedactsWholeTokens(t *testing.T) {
	j := NewJournal(&strings.Builder{}, "r", nil, []string{"fail", "a"})
	defer j.Close()
	if got := j.Redact("authentication failed for admin:fail@h, a"); got != "authentication failed for admin:***@h, ***" {
		t.Errorf("got %q", got)
	}
}
