package apply

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/drivers"
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
