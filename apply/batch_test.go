package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

func TestParseMaxUnavailable(t *testing.T) {
	for _, c := range []struct {
		in    string
		total int
		want  int
		err   bool
	}{
		{"2", 100, 2, false},
		{"10%", 100, 10, false},
		{"10%", 8, 1, false}, // rounded up
		{"25%", 6, 2, false},
		{"100%", 4096, 4096, false},
		{"1%", 3, 1, false}, // at least one
		{"0", 5, 0, true},
		{"-1", 5, 0, true},
		{"0%", 5, 0, true},
		{"101%", 5, 0, true},
		{"x", 5, 0, true},
		{"", 5, 0, true},
	} {
		m, err := ParseMaxUnavailable(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v, want error %v", c.in, err, c.err)
			continue
		}
		if err == nil && m.Of(c.total) != c.want {
			t.Errorf("%q of %d = %d, want %d", c.in, c.total, m.Of(c.total), c.want)
		}
		if err == nil && m.String() != c.in {
			t.Errorf("%q reads back as %q", c.in, m.String())
		}
	}
}

// inflight is a driver wrapper that counts the devices inside Apply at
// once and records the order devices started and finished in.
type inflight struct {
	drivers.Driver
	s *flightLog
}

type flightLog struct {
	mu    sync.Mutex
	now   int
	most  int
	order []string // "start h1", "end h1"
}

func (f *inflight) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	f.s.mu.Lock()
	f.s.now++
	f.s.most = max(f.s.most, f.s.now)
	f.s.order = append(f.s.order, "start "+t.Device.Name)
	f.s.mu.Unlock()
	res, err := f.Driver.Apply(ctx, t, ch, o)
	f.s.mu.Lock()
	f.s.now--
	f.s.order = append(f.s.order, "end "+t.Device.Name)
	f.s.mu.Unlock()
	return res, err
}

func mtuHosts(n int) []testDev {
	var tds []testDev
	for i := 1; i <= n; i++ {
		tds = append(tds, host(fmt.Sprintf("h%d", i), intent.State{"nic/e1/mtu": "1500"}, intent.State{"nic/e1/mtu": "9000"}))
	}
	return tds
}

func batchFixture(t *testing.T, tds []testDev) (*fixture, *flightLog) {
	fl := &flightLog{}
	fx := newFixture(t, tds, func(d drivers.Driver) drivers.Driver { return &inflight{Driver: d, s: fl} })
	fx.store.ApplyLatency = 20 * time.Millisecond
	return fx, fl
}

// TestHostBatches: the hosts' wave under a batch policy (the Kubernetes
// engine's --canary 1 --max-unavailable 2): the canary alone first, the
// rest only after it, never more than two in flight, a new one as soon
// as one finishes; the journal numbers the batches and records the
// policy.
func TestHostBatches(t *testing.T) {
	fx, fl := batchFixture(t, mtuHosts(6))
	res, err, es := fx.run(t, Options{Parallelism: 16, HostBatches: BatchPolicy{Canary: 1, MaxUnavailable: MaxUnavailable{N: 2}}, Engine: "kubernetes"})
	if err != nil || res.Counts.Applied != 6 {
		t.Fatalf("run: %v %+v", err, res.Counts)
	}
	if fl.order[0] != "start h1" || fl.order[1] != "end h1" {
		t.Fatalf("order %v: the canary h1 must run alone first", fl.order)
	}
	if fl.most != 2 {
		t.Fatalf("at most %d hosts in flight, want 2 (--max-unavailable 2)", fl.most)
	}
	if es[0].Event != EventRunStart || es[0].MaxUnavailable != "2" || es[0].Canary != 1 || es[0].Engine != "kubernetes" {
		t.Fatalf("run_start %+v", es[0])
	}
	for _, e := range es {
		if e.Event != EventDeviceStart {
			continue
		}
		want := 2
		if e.Device == "host.h1" {
			want = 1
		}
		if e.Batch != want {
			t.Errorf("%s in batch %d, want %d", e.Device, e.Batch, want)
		}
	}

	// A percentage is of the hosts in the wave, rounded up: 34% of 6 is 3.
	fx, fl = batchFixture(t, mtuHosts(6))
	if res, err, _ := fx.run(t, Options{Parallelism: 16, HostBatches: BatchPolicy{MaxUnavailable: MaxUnavailable{N: 34, Percent: true}}}); err != nil || res.Counts.Applied != 6 || fl.most != 3 {
		t.Fatalf("34%%: %v %+v, at most %d in flight, want 3", err, res, fl.most)
	}
}

// TestHostBatchesFailureBudget: a canary that fails under --on-failure
// stop releases nothing more (the rest not attempted, untouched); under
// continue the rest goes on.
func TestHostBatchesFailureBudget(t *testing.T) {
	for _, pol := range []Policy{Stop, Continue} {
		fx, _ := batchFixture(t, mtuHosts(4))
		fx.store.FailApply["h1"] = errors.New("NIC gone")
		res, _, es := fx.run(t, Options{OnFailure: pol, HostBatches: BatchPolicy{Canary: 1, MaxUnavailable: MaxUnavailable{N: 1}}})
		switch pol {
		case Stop:
			if res.Counts.Failed != 1 || res.Counts.NotAttempted != 3 || fx.store.Applied["h2"] != 0 {
				t.Errorf("stop: %+v (h2 applied %d times)", res.Counts, fx.store.Applied["h2"])
			}
			var skipped int
			for _, e := range es {
				if e.Event == EventSkipped {
					skipped++
				}
			}
			if skipped != 3 {
				t.Errorf("stop: %d device_skipped, want 3", skipped)
			}
		case Continue:
			if res.Counts.Failed != 1 || res.Counts.Applied != 3 {
				t.Errorf("continue: %+v", res.Counts)
			}
		}
	}
}

// TestHostBatchesLeaveSwitches: the policy is the hosts' wave's; the
// switches' wave runs --parallelism at a time.
func TestHostBatchesLeaveSwitches(t *testing.T) {
	var tds []testDev
	for i := 1; i <= 4; i++ {
		tds = append(tds, sw(fmt.Sprintf("s%d", i), intent.State{"port/e1/mtu": "1500"}, intent.State{"port/e1/mtu": "9100"}))
	}
	fx, fl := batchFixture(t, tds)
	res, err, _ := fx.run(t, Options{Parallelism: 4, HostBatches: BatchPolicy{Canary: 1, MaxUnavailable: MaxUnavailable{N: 1}}})
	if err != nil || res.Counts.Applied != 4 || fl.most != 4 {
		t.Fatalf("switches: %v %+v, at most %d in flight, want 4", err, res, fl.most)
	}
}
