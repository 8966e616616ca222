package apply

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// checkedDriver is a driver with the one-round-trip apply
// (drivers.CheckedApplier), built on the memory driver the way the host
// driver's agent does it: read, compare the fingerprint, apply, read
// back. It counts the engine's own Reads and the checked applies, and can
// return a read-back of its choosing (after).
type checkedDriver struct {
	drivers.Driver
	reads, checked *atomic.Int32
	after          intent.State // returned instead of the real read-back when set
}

func (d *checkedDriver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	d.reads.Add(1)
	return d.Driver.Read(ctx, t)
}

func (d *checkedDriver) ApplyChecked(ctx context.Context, t drivers.Target, steps []drivers.Change, fp string, o drivers.ApplyOptions) (drivers.Result, intent.State, error) {
	d.checked.Add(1)
	live, err := d.Driver.Read(ctx, t)
	if err != nil {
		return drivers.Result{}, nil, err
	}
	if got := live.Fingerprint(); got != fp {
		return drivers.Result{}, nil, &drivers.StaleError{Device: t.Device.Addr(), Planned: fp, Live: got}
	}
	res, err := d.Driver.Apply(ctx, t, steps, o)
	if err != nil {
		return res, nil, err
	}
	if d.after != nil {
		return res, d.after, nil
	}
	after, err := d.Driver.Read(ctx, t)
	return res, after, err
}

func checkedFixture(t *testing.T, after intent.State) (*fixture, *atomic.Int32, *atomic.Int32) {
	var reads, checked atomic.Int32
	fx := newFixture(t, []testDev{
		host("h1", intent.State{"nic/eth0/mtu": "1500"}, intent.State{"nic/eth0/mtu": "9000"}),
		host("h2", intent.State{"nic/eth0/mtu": "1500"}, intent.State{"nic/eth0/mtu": "9000"}),
	}, func(d drivers.Driver) drivers.Driver {
		return &checkedDriver{Driver: d, reads: &reads, checked: &checked, after: after}
	})
	return fx, &reads, &checked
}

// TestCheckedApplyOneRoundTrip: a device whose driver checks the
// fingerprint, applies and reads back in one round trip is neither
// re-read before the waves nor read back after its transaction.
func TestCheckedApplyOneRoundTrip(t *testing.T) {
	fx, reads, checked := checkedFixture(t, nil)
	res, err, ents := fx.run(t, Options{CheckStale: true, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Devices {
		if d.Status != StatusApplied {
			t.Errorf("%s: %s %s", d.Address, d.Status, d.Error)
		}
	}
	if reads.Load() != 0 || checked.Load() != 2 {
		t.Errorf("engine reads %d (want 0), checked applies %d (want 2)", reads.Load(), checked.Load())
	}
	if got := fx.store.Get("h1")["nic/eth0/mtu"]; got != "9000" {
		t.Errorf("h1 mtu %s", got)
	}
	if n := countEvents(ents, EventDeviceVerified); n != 2 {
		t.Errorf("%d device_verified entries, want 2", n)
	}
}

// TestCheckedApplyStale: a device that moved since the plan is refused by
// its own transaction: nothing applied on it, a stale journal entry, and
// with nothing applied anywhere the run is stale, as with the re-read.
func TestCheckedApplyStale(t *testing.T) {
	fx, _, _ := checkedFixture(t, nil)
	fx.store.Set("h1", intent.State{"nic/eth0/mtu": "4200"}) // moved after the plan
	res, err, ents := fx.run(t, Options{CheckStale: true, Parallelism: 1})
	var se *StaleError
	if !errors.As(err, &se) || len(se.Devices) != 1 || se.Devices[0].Address != "host.h1" {
		t.Fatalf("err %v", err)
	}
	if got := fx.store.Get("h1")["nic/eth0/mtu"]; got != "4200" {
		t.Errorf("h1 was changed: mtu %s", got)
	}
	if got := fx.store.Get("h2")["nic/eth0/mtu"]; got != "1500" {
		t.Errorf("h2 was applied after h1 was stale (on-failure stop): mtu %s", got)
	}
	if countEvents(ents, EventStale) != 1 {
		t.Errorf("journal: %+v", ents)
	}
	if d := res.Devices[0]; d.Status != StatusFailed || !d.Restored {
		t.Errorf("h1: %+v", d)
	}
	if runStatus(res, err, true) != RunStale {
		t.Errorf("run status %s", runStatus(res, err, true))
	}
}

// TestCheckedApplyVerifies: the read-back the transaction returns is
// verified as strictly as the engine's own: a setting that did not take
// fails the device, which is rolled back.
func TestCheckedApplyVerifies(t *testing.T) {
	fx, _, _ := checkedFixture(t, intent.State{"nic/eth0/mtu": "1500"})
	res, err, _ := fx.run(t, Options{CheckStale: true, Parallelism: 1})
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("err %v", err)
	}
	d := res.Devices[0]
	if d.Status != StatusFailed || len(d.Remaining) != 1 || !d.Restored {
		t.Fatalf("h1: %+v", d)
	}
	if got := fx.store.Get("h1")["nic/eth0/mtu"]; got != "1500" {
		t.Errorf("h1 not rolled back: mtu %s", got)
	}
}

func countEvents(ents []Entry, ev string) int {
	n := 0
	for _, e := range ents {
		if e.Event == ev {
			n++
		}
	}
	return n
}

// TestCheckedApplySavedPlan: a saved plan is re-derived before the waves
// (Rederive), and its transaction still checks, applies and reads back
// in one round trip: no read of the engine's own.
func TestCheckedApplySavedPlan(t *testing.T) {
	fx, reads, checked := checkedFixture(t, nil)
	byAddr := map[string]*plan.DevicePlan{}
	for _, d := range fx.devs {
		byAddr[d.Plan.Address] = d.Plan
	}
	rederive := func(_ context.Context, addr string) *plan.DevicePlan { return byAddr[addr] }
	res, err, _ := fx.run(t, Options{CheckStale: true, Parallelism: 2, Rederive: rederive})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Applied != 2 || reads.Load() != 0 || checked.Load() != 2 {
		t.Errorf("applied %d, engine reads %d (want 0), checked applies %d (want 2)", res.Counts.Applied, reads.Load(), checked.Load())
	}
}

// TestCheckedApplyStaleRollsBack: a device found stale by its transaction
// after another was applied stops the run and rolls the applied one back,
// whatever --on-failure says: the fabric is left as the plan found it and
// the run is stale.
func TestCheckedApplyStaleRollsBack(t *testing.T) {
	fx, _, _ := checkedFixture(t, nil)
	fx.store.Set("h2", intent.State{"nic/eth0/mtu": "4200"}) // moved after the plan
	res, err, ents := fx.run(t, Options{CheckStale: true, Parallelism: 1, OnFailure: Continue})
	var se *StaleError
	if !errors.As(err, &se) || len(se.Devices) != 1 || se.Devices[0].Address != "host.h2" {
		t.Fatalf("err %v", err)
	}
	if got := fx.store.Get("h1")["nic/eth0/mtu"]; got != "1500" {
		t.Errorf("h1 not rolled back: mtu %s", got)
	}
	if d := res.Devices[0]; d.Status != StatusRolledBack || d.RollbackError != "" {
		t.Errorf("h1: %+v", d)
	}
	if countEvents(ents, EventStale) != 1 {
		t.Errorf("journal: %+v", ents)
	}
}
