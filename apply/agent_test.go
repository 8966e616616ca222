package apply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// agentHosts is the shared side of agentDriver, a memory double of a
// driver that hands a host's configuration to an agent on the host (the
// Kubernetes engine's): Apply only publishes, the agent applies it when
// Await waits for its report, or reports the failure fail says.
type agentHosts struct {
	mu    sync.Mutex
	gen   int64
	fail  map[string]error // Await's report per host
	calls []string
}

func (a *agentHosts) note(s string) {
	a.mu.Lock()
	a.calls = append(a.calls, s)
	a.mu.Unlock()
}

type agentDriver struct {
	memory.Driver
	a       *agentHosts
	steps   []drivers.Change
	token   string
	del     drivers.Delivery
	applied bool
}

func (d *agentDriver) Name() string { return "agent" }

func (d *agentDriver) Delivery(t drivers.Target) drivers.Delivery {
	if d.del.Revision == "" {
		d.del = drivers.Delivery{Revision: "new-" + t.Device.Name, PreviousRevision: "old-" + t.Device.Name}
	}
	return d.del
}

func (d *agentDriver) Apply(_ context.Context, t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	d.a.note("publish " + t.Device.Name)
	d.a.mu.Lock()
	d.a.gen++
	d.del.Generation = d.a.gen
	d.a.mu.Unlock()
	d.steps = steps
	return drivers.Result{}, nil
}

func (d *agentDriver) Await(ctx context.Context, t drivers.Target, _ drivers.Result) error {
	d.a.note("await " + t.Device.Name)
	d.a.mu.Lock()
	err := d.a.fail[t.Device.Name]
	d.a.mu.Unlock()
	d.del.ObservedGeneration = d.del.Generation
	if err != nil {
		d.del.Reason = "ApplyFailed"
		return err
	}
	res, err := d.Driver.Apply(ctx, t, d.steps, drivers.ApplyOptions{})
	if err != nil {
		return err
	}
	d.token, d.applied = res.Token, true
	d.del.Reason = "Applied"
	return nil
}

func (d *agentDriver) Rollback(ctx context.Context, t drivers.Target, _ drivers.Result) error {
	d.a.note("republish " + t.Device.Name)
	if !d.applied {
		return errors.New("nothing applied")
	}
	d.a.mu.Lock()
	d.a.gen++
	d.del = drivers.Delivery{Revision: d.del.PreviousRevision, PreviousRevision: d.del.Revision, Generation: d.a.gen, ObservedGeneration: d.a.gen, Reason: "Applied"}
	d.a.mu.Unlock()
	return d.Driver.Rollback(ctx, t, drivers.Result{Token: d.token})
}

// agentFixture is a fixture whose hosts go through agentDriver.
func agentFixture(t *testing.T, tds []testDev) (*fixture, *agentHosts) {
	a := &agentHosts{fail: map[string]error{}}
	for i := range tds {
		if tds[i].kind == intent.KindHost {
			tds[i].driverOverride = "agent"
		}
	}
	fx := newFixture(t, tds, nil)
	if err := fx.reg.Register("agent", func() drivers.Driver {
		return &agentDriver{Driver: memory.Driver{Store: fx.store, FieldList: testFields}, a: a}
	}); err != nil {
		t.Fatal(err)
	}
	return fx, a
}

func byDevice(es []Entry, dev string) []Entry {
	var out []Entry
	for _, e := range es {
		if e.Device == dev {
			out = append(out, e)
		}
	}
	return out
}

// TestAgentDelivery: a host delivered to its agent is journaled at each
// step with what was handed over and what the agent reported: the
// revision and the one it replaces before it is touched, the generation
// once handed over (before the agent applied it), the agent's report
// once verified.
func TestAgentDelivery(t *testing.T) {
	fx, a := agentFixture(t, mtuHosts(2))
	res, err, es := fx.run(t, Options{HostBatches: BatchPolicy{Canary: 1, MaxUnavailable: MaxUnavailable{N: 1}}})
	if err != nil || res.Counts.Applied != 2 || fx.store.Get("h2")["nic/e1/mtu"] != "9000" {
		t.Fatalf("run: %v %+v", err, res.Counts)
	}
	if want := []string{"publish h1", "await h1", "publish h2", "await h2"}; !slices.Equal(a.calls, want) {
		t.Fatalf("calls %v, want %v", a.calls, want)
	}
	ev := byDevice(es, "host.h2")
	if got := strings.Join(events(ev), ","); got != "device_start host.h2,device_applied host.h2,device_verified host.h2" {
		t.Fatalf("journal %s", got)
	}
	st, pub, ver := ev[0], ev[1], ev[2]
	if st.Revision != "new-h2" || st.PreviousRevision != "old-h2" || st.Generation != 0 || st.Batch != 2 || st.Changes != 1 {
		t.Errorf("device_start %+v", st)
	}
	if pub.Generation != 2 || pub.Revision != "new-h2" || pub.ObservedGeneration != 0 {
		t.Errorf("device_applied %+v", pub)
	}
	if ver.ObservedGeneration != 2 || ver.Reason != "Applied" {
		t.Errorf("device_verified %+v", ver)
	}
}

// TestAgentFailure: the agent's report says whether a failed host was
// restored (the engine cannot read it to check, and rolls nothing back
// itself): restored, not restored (partial), or unknown (no report in
// time).
func TestAgentFailure(t *testing.T) {
	for _, c := range []struct {
		name               string
		err                error
		restored, partial  bool
		wantErrorSubstring string
	}{
		{"restored", &drivers.AgentError{Reason: "ApplyFailed", Message: "link v0a: no such device", Restored: true}, true, false, "no such device"},
		{"not restored", &drivers.PartialError{Device: "h2", Err: &drivers.AgentError{Reason: "NotRestored", Message: "half applied"}}, false, true, "half applied"},
		{"no report", &drivers.AgentError{Reason: "Timeout", Message: "no report from the node's agent within 90s"}, false, false, "no report"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx, a := agentFixture(t, mtuHosts(3))
			a.fail["h2"] = c.err
			res, _, es := fx.run(t, Options{Parallelism: 1, OnFailure: Stop})
			h2 := res.dev("host.h2")
			if h2.Status != StatusFailed || h2.Restored != c.restored || h2.Partial != c.partial || !strings.Contains(h2.Error, c.wantErrorSubstring) {
				t.Fatalf("h2 %+v", h2)
			}
			if res.Counts.Applied != 1 || res.Counts.NotAttempted != 1 {
				t.Fatalf("counts %+v: want h1 applied, h3 not attempted", res.Counts)
			}
			if slices.Contains(a.calls, "republish h2") {
				t.Fatalf("the engine rolled back a host its agent reported on: %v", a.calls)
			}
			ev := byDevice(es, "host.h2")
			if got := strings.Join(events(ev), ","); got != "device_start host.h2,device_applied host.h2,device_failed host.h2" {
				t.Fatalf("journal %s", got)
			}
			if f := ev[2]; f.Restored == nil || *f.Restored != c.restored || f.Partial != c.partial || f.Reason != "ApplyFailed" || f.ObservedGeneration != 2 {
				t.Fatalf("device_failed %+v", f)
			}
		})
	}
}

// TestAgentWavesRollBackTogether: under --on-failure rollback the waves
// roll back together, whatever delivers each: a host failing in the
// second wave rolls back the hosts before it and the switch of the
// first wave (an MTU increase: switches first); a switch failing in the
// second wave rolls back the hosts of the first (a decrease: hosts
// first). The journal says each was rolled back, the applied record
// keeps what the devices had.
func TestAgentWavesRollBackTogether(t *testing.T) {
	for _, widen := range []bool{true, false} {
		from, to := "5000", "6000"
		if !widen {
			from, to = "6000", "5000"
		}
		tds := []testDev{sw("s1", intent.State{"port/e1/mtu": from}, intent.State{"port/e1/mtu": to}, "h1:e1", "h2:e1", "h3:e1")}
		for _, n := range []string{"h1", "h2", "h3"} {
			tds = append(tds, host(n, intent.State{"nic/e1/mtu": from}, intent.State{"nic/e1/mtu": to}))
		}
		fx, a := agentFixture(t, tds)
		if widen {
			a.fail["h3"] = &drivers.AgentError{Reason: "ApplyFailed", Message: "NIC gone", Restored: true}
		} else {
			fx.store.FailApply["s1"] = errors.New("GCU refused the patch")
		}
		res, err, es := fx.run(t, Options{Parallelism: 1, OnFailure: Rollback})
		var fe *FailedError
		if !errors.As(err, &fe) {
			t.Fatalf("widen=%v: %v", widen, err)
		}
		rolled := []string{"host.h1", "host.h2", "switch.s1"}
		failed := "host.h3"
		if !widen {
			rolled, failed = []string{"host.h1", "host.h2", "host.h3"}, "switch.s1"
		}
		for _, addr := range rolled {
			if d := res.dev(addr); d.Status != StatusRolledBack {
				t.Errorf("widen=%v: %s %s (%s), want rolled back", widen, addr, d.Status, d.RollbackError)
			}
			if ev := byDevice(es, addr); ev[len(ev)-1].Event != EventRolledBack {
				t.Errorf("widen=%v: %s journal %v", widen, addr, events(ev))
			}
		}
		if d := res.dev(failed); d.Status != StatusFailed {
			t.Errorf("widen=%v: %s %s, want failed", widen, failed, d.Status)
		}
		for _, n := range []string{"s1", "h1", "h2", "h3"} {
			k := "nic/e1/mtu"
			if n == "s1" {
				k = "port/e1/mtu"
			}
			if v := fx.store.Get(n)[k]; v != from {
				t.Errorf("widen=%v: %s %s = %s after the rollback, want %s", widen, n, k, v, from)
			}
		}
		if widen {
			if rb := byDevice(es, "host.h2"); rb[len(rb)-1].Revision != "old-h2" || rb[len(rb)-1].Generation == 0 {
				t.Errorf("device_rolled_back %+v: want the previous revision republished", rb[len(rb)-1])
			}
		}
	}
}

// TestLockLostBetweenWaves: a fabric lock taken over while the run holds
// it (a Lease whose renewals failed) starts no further wave.
func TestLockLostBetweenWaves(t *testing.T) {
	tds := []testDev{
		sw("s1", intent.State{"port/e1/mtu": "1500"}, intent.State{"port/e1/mtu": "9100"}),
		host("h1", intent.State{"nic/e1/mtu": "1500"}, intent.State{"nic/e1/mtu": "9000"}),
	}
	fx := newFixture(t, tds, nil)
	lost := errors.New("the fabric lock (Lease fabctl-system/fabctl-lock-t) was taken by \"ci@other/x\"")
	res, err, _ := fx.run(t, Options{Lost: func() error { return lost }})
	if err == nil || res.dev("switch.s1").Status != StatusApplied || res.dev("host.h1").Status != StatusNotAttempted ||
		!strings.Contains(res.dev("host.h1").Reason, "was taken by") {
		t.Fatalf("lost lock: %v %+v %+v", err, res.dev("switch.s1"), res.dev("host.h1"))
	}
}

// blocking is a memory driver whose device has a finding that blocks
// apply (another owner manages it: nic-configuration-operator).
type blocking struct{ memory.Driver }

func (b *blocking) Findings(drivers.Target) []drivers.Finding {
	return []drivers.Finding{{Severity: "warning", Path: "nic/eth1", Message: "host h1 NIC eth1 is also configured by nic-configuration-operator", BlocksApply: true}}
}

// TestRunFabricBlocked: a finding that blocks apply refuses the run
// before anything is applied (after the plan was shown); the plan keeps
// it as a warning.
func TestRunFabricBlocked(t *testing.T) {
	store, o := runFixture(t)
	reg := drivers.NewRegistry()
	if err := reg.Register("host", func() drivers.Driver { return &blocking{memory.Driver{Store: store}} }); err != nil {
		t.Fatal(err)
	}
	o.Registry = reg
	shown := false
	o.Hooks.Plan = func(*plan.Plan, WavePlan) error { shown = true; return nil }
	out, err := RunFabric(context.Background(), o)
	var be *BlockedError
	if out.Status != RunRefused || !errors.As(err, &be) || !strings.Contains(err.Error(), "nic-configuration-operator") || !shown {
		t.Fatalf("blocked: %+v %v (plan shown %v)", out, err, shown)
	}
	if len(store.Get("h1")) != 0 || out.Journal != "" {
		t.Fatalf("a blocked run applied or journaled: %v %q", store.Get("h1"), out.Journal)
	}
}

// unconfirmed is a memory driver whose device reports, until it is
// applied again, that it did not take its last configuration (the
// Kubernetes engine's node agent reporting Applied=False).
type unconfirmed struct{ memory.Driver }

func (u *unconfirmed) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	if u.Store.Applied[t.Device.Name] == 0 {
		return nil, &drivers.UnconfirmedError{Err: errors.New("the node's agent reports Applied=False (Incompatible): spec.protocol 99")}
	}
	return u.Driver.Read(ctx, t)
}

// TestRunFabricRepairs: a device whose own report says it did not take
// its configuration is planned with that error and every setting to set
// (plan fails on it), and apply configures it again instead of refusing
// the run as for a device that cannot be read.
func TestRunFabricRepairs(t *testing.T) {
	store, o := runFixture(t)
	store.Set("h1", intent.State{"nic/eth1/mtu": "9000"})
	reg := drivers.NewRegistry()
	if err := reg.Register("host", func() drivers.Driver { return &unconfirmed{memory.Driver{Store: store}} }); err != nil {
		t.Fatal(err)
	}
	o.Registry = reg
	var planned *plan.Plan
	o.Hooks.Planned = func(p *plan.Plan) { planned = p }
	out, err := RunFabric(context.Background(), o)
	if err != nil || out.Status != RunApplied || out.Result.Counts.Applied != 1 || store.Applied["h1"] != 1 {
		t.Fatalf("repair: %+v %v", out, err)
	}
	d := planned.Device("host.h1")
	if !planned.Errored() || !d.Repair || len(d.Changes) == 0 || !strings.Contains(d.Error, "Applied=False") {
		t.Fatalf("plan of an unconfirmed device: %+v", d)
	}

	// A device that cannot be read still refuses the run.
	store.FailRead["h1"] = errors.New("connection refused")
	out, err = RunFabric(context.Background(), o)
	var pe *PlanError
	if out.Status != RunRefused || !errors.As(err, &pe) {
		t.Fatalf("unreadable: %+v %v", out, err)
	}
}
