package apply

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

func mtu(v string) intent.State { return intent.State{"port/Ethernet0/mtu": v, "trust": "dscp"} }

// tenSwitches is a 10-switch fabric whose MTU goes 1500 -> 9100.
func tenSwitches() []testDev {
	var tds []testDev
	for i := 1; i <= 10; i++ {
		tds = append(tds, sw(fmt.Sprintf("sw%02d", i), mtu("1500"), mtu("9100")))
	}
	return tds
}

func TestPartialFailure(t *testing.T) {
	type want struct {
		statuses map[Status][]int // device numbers by status
		events   []string         // journal events from device 1 on (run_start/run_end excluded)
		errParts []string
	}
	tests := []struct {
		policy Policy
		want   want
	}{
		{Stop, want{
			statuses: map[Status][]int{StatusApplied: {1, 2}, StatusFailed: {3}, StatusNotAttempted: {4, 5, 6, 7, 8, 9, 10}},
			events: []string{
				"device_start switch.sw01", "device_applied switch.sw01", "device_verified switch.sw01",
				"device_start switch.sw02", "device_applied switch.sw02", "device_verified switch.sw02",
				"device_start switch.sw03", "device_failed switch.sw03",
				"device_skipped switch.sw04", "device_skipped switch.sw05", "device_skipped switch.sw06", "device_skipped switch.sw07",
				"device_skipped switch.sw08", "device_skipped switch.sw09", "device_skipped switch.sw10",
			},
			errParts: []string{"2 applied, 1 failed, 0 rolled back, 7 not attempted", "switch.sw03 failed (restored): apply: injected: connection reset"},
		}},
		{Continue, want{
			statuses: map[Status][]int{StatusApplied: {1, 2, 4, 5, 6, 7, 8, 9, 10}, StatusFailed: {3}},
			errParts: []string{"9 applied, 1 failed, 0 rolled back, 0 not attempted"},
		}},
		{Rollback, want{
			statuses: map[Status][]int{StatusRolledBack: {1, 2}, StatusFailed: {3}, StatusNotAttempted: {4, 5, 6, 7, 8, 9, 10}},
			events: []string{
				"device_start switch.sw01", "device_applied switch.sw01", "device_verified switch.sw01",
				"device_start switch.sw02", "device_applied switch.sw02", "device_verified switch.sw02",
				"device_start switch.sw03", "device_failed switch.sw03",
				"device_rolled_back switch.sw02", "device_rolled_back switch.sw01",
				"device_skipped switch.sw04", "device_skipped switch.sw05", "device_skipped switch.sw06", "device_skipped switch.sw07",
				"device_skipped switch.sw08", "device_skipped switch.sw09", "device_skipped switch.sw10",
			},
			errParts: []string{"0 applied, 1 failed, 2 rolled back, 7 not attempted"},
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			fx := newFixture(t, tenSwitches(), nil)
			fx.store.FailApply["sw03"] = errors.New("injected: connection reset")
			dir := t.TempDir()
			rec, err := OpenRecorder(dir, "t")
			if err != nil {
				t.Fatal(err)
			}
			res, err, journal := fx.run(t, Options{Parallelism: 1, OnFailure: tt.policy, Record: rec})
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			var fe *FailedError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want *FailedError", err, err)
			}
			for _, p := range tt.want.errParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q lacks %q", err, p)
				}
			}
			applied, _ := plan.LoadApplied(dir, "t")
			for status, nums := range tt.want.statuses {
				for _, n := range nums {
					name := fmt.Sprintf("sw%02d", n)
					d := res.dev("switch." + name)
					if d.Status != status {
						t.Errorf("%s: status %s, want %s (%+v)", name, d.Status, status, d)
					}
					// Every device's state in the store matches its outcome.
					got := fx.store.Get(name)["port/Ethernet0/mtu"]
					wantMTU := "1500"
					if status == StatusApplied {
						wantMTU = "9100"
					}
					if got != wantMTU {
						t.Errorf("%s (%s): store mtu %s, want %s", name, status, got, wantMTU)
					}
					_, inRecord := applied.Devices["switch."+name]
					if inRecord != (status == StatusApplied) {
						t.Errorf("%s (%s): in applied record = %v", name, status, inRecord)
					}
				}
			}
			f3 := res.dev("switch.sw03")
			if !f3.Restored || f3.Partial || !strings.Contains(f3.Error, "injected") {
				t.Errorf("sw03 %+v", f3)
			}
			if tt.policy != Continue && !strings.Contains(res.dev("switch.sw04").Reason, "stopped after switch.sw03 failed") {
				t.Errorf("sw04 reason %q", res.dev("switch.sw04").Reason)
			}
			if journal[0].Event != EventRunStart || journal[0].OnFailure != string(tt.policy) || journal[0].Devices != 10 {
				t.Errorf("first journal line %+v", journal[0])
			}
			last := journal[len(journal)-1]
			if last.Event != EventRunEnd || last.Status != "failed" || *last.Counts != res.Counts {
				t.Errorf("last journal line %+v", last)
			}
			if tt.want.events != nil {
				if got := events(journal[1 : len(journal)-1]); !reflect.DeepEqual(got, tt.want.events) {
					t.Errorf("journal\n got  %q\n want %q", got, tt.want.events)
				}
			}
			for _, e := range journal {
				if e.Event == EventDeviceFailed && (e.Restored == nil || !*e.Restored || !strings.Contains(e.Error, "injected")) {
					t.Errorf("failed line %+v", e)
				}
			}
		})
	}
}

// With parallelism, stop lets devices in flight finish: every device is
// applied (and at the desired state), failed (and restored) or not
// attempted (and untouched), and nothing starts after the failure.
func TestStopParallel(t *testing.T) {
	var tds []testDev
	for i := 1; i <= 40; i++ {
		tds = append(tds, sw(fmt.Sprintf("sw%02d", i), mtu("1500"), mtu("9100")))
	}
	fx := newFixture(t, tds, nil)
	fx.store.ApplyLatency = 5 * time.Millisecond
	fx.store.FailApply["sw03"] = errors.New("boom")
	res, err, _ := fx.run(t, Options{Parallelism: 4, OnFailure: Stop})
	if err == nil {
		t.Fatal("no error")
	}
	c := res.Counts
	if c.Failed != 1 || c.Applied+c.Failed+c.NotAttempted != 40 || c.NotAttempted < 30 {
		t.Errorf("counts %+v", c)
	}
	for _, d := range res.Devices {
		got := fx.store.Get(d.Name)["port/Ethernet0/mtu"]
		if (d.Status == StatusApplied) != (got == "9100") {
			t.Errorf("%s %s with mtu %s", d.Address, d.Status, got)
		}
	}
}

func TestWaveOrderRun(t *testing.T) {
	enable := func(pfc string) intent.State { return intent.State{"port/Ethernet0/pfc": pfc} }
	nic := func(pfc string) intent.State { return intent.State{"nic/eth0/pfc": pfc} }
	tests := []struct {
		name  string
		tds   []testDev
		first string // kind of the first wave
	}{
		{"enable lossless: switches first",
			[]testDev{host("h1", nic(""), nic("3")), sw("s1", enable(""), enable("3")), host("h2", nic(""), nic("3")), sw("s2", enable(""), enable("3"))},
			intent.KindSwitch},
		{"remove lossless: hosts first",
			[]testDev{sw("s1", enable("3"), enable("")), host("h1", nic("3"), nic("")), sw("s2", enable("3,4"), enable("3")), host("h2", nic("3,4"), nic("3"))},
			intent.KindHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls []string
			fx := newFixture(t, tt.tds, func(d drivers.Driver) drivers.Driver { return &recorder{Driver: d, mu: &mu, calls: &calls} })
			res, err, _ := fx.run(t, Options{Parallelism: 8})
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts.Applied != 4 {
				t.Fatalf("counts %+v", res.Counts)
			}
			// Every apply of the first kind ends before any of the other starts.
			kind := map[string]string{}
			for _, td := range tt.tds {
				kind[td.name] = td.kind
			}
			seenSecond := false
			for _, c := range calls {
				op, name, _ := strings.Cut(c, " ")
				if op != "apply" && op != "applied" {
					continue
				}
				if kind[name] != tt.first {
					seenSecond = true
				} else if seenSecond {
					t.Fatalf("%s of %s after the second wave started: %q", op, name, calls)
				}
			}
			if want := Order(SwitchesFirst); tt.first == intent.KindHost {
				if res.Order != HostsFirst {
					t.Errorf("order %s", res.Order)
				}
			} else if res.Order != want {
				t.Errorf("order %s", res.Order)
			}
			for _, d := range res.Devices {
				wantWave := 1
				if d.Kind != tt.first {
					wantWave = 2
				}
				if d.Wave != wantWave {
					t.Errorf("%s wave %d, want %d", d.Address, d.Wave, wantWave)
				}
			}
		})
	}
}

// concurrency counts Apply calls in flight.
type concurrency struct {
	drivers.Driver
	cur, max *atomic.Int64
}

func (c *concurrency) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	n := c.cur.Add(1)
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			break
		}
	}
	defer c.cur.Add(-1)
	return c.Driver.Apply(ctx, t, ch, o)
}

func TestParallelismBound(t *testing.T) {
	for _, par := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(par), func(t *testing.T) {
			var tds []testDev
			for i := 0; i < 40; i++ {
				tds = append(tds, sw(fmt.Sprintf("sw%02d", i), mtu("1500"), mtu("9100")))
			}
			var cur, max atomic.Int64
			fx := newFixture(t, tds, func(d drivers.Driver) drivers.Driver { return &concurrency{Driver: d, cur: &cur, max: &max} })
			fx.store.ApplyLatency = 3 * time.Millisecond
			res, err, _ := fx.run(t, Options{Parallelism: par})
			if err != nil || res.Counts.Applied != 40 {
				t.Fatalf("%v %+v", err, res.Counts)
			}
			if got := max.Load(); got != int64(par) {
				t.Errorf("max concurrent applies %d, want %d", got, par)
			}
		})
	}
}

func TestPartialErrorReported(t *testing.T) {
	fx := newFixture(t, []testDev{
		sw("s1", intent.State{"a": "1", "b": "1", "c": "1", "d": "1"}, intent.State{"a": "2", "b": "2", "c": "2", "d": "2"}),
		sw("s2", mtu("1500"), mtu("9100")),
	}, nil)
	fx.store.Partial["s1"] = true
	res, err, journal := fx.run(t, Options{Parallelism: 1})
	d := res.dev("switch.s1")
	if d.Status != StatusFailed || !d.Partial || d.Restored || !d.NotRestored() {
		t.Fatalf("s1 %+v", d)
	}
	if !strings.Contains(err.Error(), "switch.s1 failed, NOT restored") || !strings.Contains(err.Error(), "could not be restored") {
		t.Errorf("error %q", err)
	}
	if res.Counts.NotRestored != 1 || res.dev("switch.s2").Status != StatusNotAttempted {
		t.Errorf("counts %+v", res.Counts)
	}
	found := false
	for _, e := range journal {
		if e.Event == EventDeviceFailed && e.Partial && e.Restored != nil && !*e.Restored {
			found = true
		}
	}
	if !found {
		t.Errorf("journal has no partial failure: %q", events(journal))
	}
}

// noop's Apply reports success without changing anything.
type noop struct{ drivers.Driver }

func (noop) Apply(context.Context, drivers.Target, []drivers.Change, drivers.ApplyOptions) (drivers.Result, error) {
	return drivers.Result{Token: "noop"}, nil
}
func (noop) Rollback(context.Context, drivers.Target, drivers.Result) error { return nil }

// lossy applies all changes but the first.
type lossy struct{ drivers.Driver }

func (l lossy) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	return l.Driver.Apply(ctx, t, ch[1:], o)
}

// clobbers applies its steps and also resets a setting the plan lists as
// unmanaged (a step rewriting a whole object).
type clobbers struct {
	drivers.Driver
	store *memory.Store
}

func (c clobbers) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	res, err := c.Driver.Apply(ctx, t, ch, o)
	st := c.store.Get(t.Device.Name)
	delete(st, "tc/7/lossless")
	c.store.Set(t.Device.Name, st)
	return res, err
}

// Issue 36: an apply that changes a setting the spec leaves unmanaged
// fails its verification, names the setting and is rolled back.
func TestVerificationUnmanagedMoved(t *testing.T) {
	live := intent.State{"port/Ethernet0/mtu": "1500", "tc/7/lossless": "false"}
	want := intent.State{"port/Ethernet0/mtu": "9100"}
	var fx *fixture
	fx = newFixture(t, []testDev{sw("s1", live, want)}, func(d drivers.Driver) drivers.Driver { return clobbers{d, fx.store} })
	fx.devs[0].Plan.Unmanaged = []plan.Unmanaged{{Path: "tc/7/lossless", Live: "false", Differs: true, Reason: "a vendor queue"}}
	fx.devs[0].Plan.Changes = []intent.AttrChange{{Path: "port/Ethernet0/mtu", Action: intent.Update, Before: "1500", After: "9100"}}
	res, err, _ := fx.run(t, Options{})
	d := res.dev("switch.s1")
	if err == nil || d.Status != StatusFailed || !d.Restored {
		t.Fatalf("%v %+v", err, d)
	}
	if !strings.Contains(d.Error, `the apply changed settings the spec leaves unmanaged: 1 setting(s) differ after apply: tc/7/lossless missing (want "false")`) {
		t.Errorf("error %q", d.Error)
	}
	if !reflect.DeepEqual(fx.store.Get("s1"), live) {
		t.Errorf("store not restored: %v", fx.store.Get("s1"))
	}
}

func TestReadBackVerification(t *testing.T) {
	tests := []struct {
		name     string
		wrap     func(drivers.Driver) drivers.Driver
		restored bool
		errPart  string
	}{
		{"apply changes nothing", func(d drivers.Driver) drivers.Driver { return noop{d} }, true,
			`verification: 2 setting(s) differ after apply: port/Ethernet0/mtu want "9100" have "1500", port/Ethernet1/mtu want "9100" have "1500"; rolled back`},
		{"apply drops a setting", func(d drivers.Driver) drivers.Driver { return lossy{d} }, true,
			`verification: 1 setting(s) differ after apply: port/Ethernet0/mtu want "9100" have "1500"; rolled back`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := intent.State{"port/Ethernet0/mtu": "1500", "port/Ethernet1/mtu": "1500"}
			want := intent.State{"port/Ethernet0/mtu": "9100", "port/Ethernet1/mtu": "9100"}
			fx := newFixture(t, []testDev{sw("s1", live, want)}, tt.wrap)
			dir := t.TempDir()
			rec, _ := OpenRecorder(dir, "t")
			res, err, _ := fx.run(t, Options{Record: rec})
			rec.Close()
			d := res.dev("switch.s1")
			if d.Status != StatusFailed || d.Restored != tt.restored || len(d.Remaining) == 0 {
				t.Fatalf("%+v", d)
			}
			if d.Error != tt.errPart {
				t.Errorf("error\n got  %q\n want %q", d.Error, tt.errPart)
			}
			if err == nil || res.Counts.Applied != 0 {
				t.Errorf("reported success: %v %+v", err, res.Counts)
			}
			if !reflect.DeepEqual(fx.store.Get("s1"), live) {
				t.Errorf("store not restored: %v", fx.store.Get("s1"))
			}
			if a, _ := plan.LoadApplied(dir, "t"); len(a.Devices) != 0 {
				t.Errorf("unverified device recorded: %v", a.Devices)
			}
		})
	}
}

// confirming is a commit-confirm driver over the memory driver: Apply
// returns a pending result, and it logs Confirm/Rollback.
type confirming struct {
	*recorder
	opts        *drivers.ApplyOptions
	noRollback  bool
	failConfirm bool
}

func (c *confirming) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{CommitConfirm: true, Rollback: !c.noRollback}
}

func (c *confirming) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	*c.opts = o
	res, err := c.recorder.Apply(ctx, t, ch, o)
	res.Pending = o.ConfirmTimeout > 0
	return res, err
}

func (c *confirming) Confirm(ctx context.Context, t drivers.Target, r drivers.Result) error {
	c.note("confirm", t)
	if c.failConfirm {
		return errors.New("commit confirm id unknown")
	}
	return nil
}

func (c *confirming) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if c.noRollback {
		c.note("rollback-unsupported", t)
		return drivers.ErrUnsupported
	}
	return c.recorder.Rollback(ctx, t, r)
}

func TestConfirmTimeout(t *testing.T) {
	tests := []struct {
		name        string
		breakApply  bool // the device does not take the change
		noRollback  bool
		failConfirm bool
		calls       []string
		status      Status
		restored    bool
		errPart     string
	}{
		{name: "verified then confirmed", calls: []string{"apply s1", "applied s1", "read s1", "confirm s1"}, status: StatusApplied},
		{name: "verification fails: rolled back, never confirmed", breakApply: true,
			calls: []string{"apply s1", "applied s1", "read s1", "rollback s1", "read s1"}, status: StatusFailed, restored: true, errPart: "verification"},
		{name: "verification fails, no explicit rollback: left to the timer", breakApply: true, noRollback: true,
			calls: []string{"apply s1", "applied s1", "read s1", "rollback-unsupported s1"}, status: StatusFailed,
			errPart: "not confirmed: the device reverts by itself when its confirm timer (2m0s) expires"},
		{name: "confirm fails: rolled back", failConfirm: true,
			calls: []string{"apply s1", "applied s1", "read s1", "confirm s1", "rollback s1", "read s1"}, status: StatusFailed, restored: true, errPart: "confirm: commit confirm id unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls []string
			var got drivers.ApplyOptions
			fx := newFixture(t, []testDev{sw("s1", mtu("1500"), mtu("9100"))}, func(d drivers.Driver) drivers.Driver {
				if tt.breakApply {
					d = noop{d}
				}
				return &confirming{recorder: &recorder{Driver: d, mu: &mu, calls: &calls}, opts: &got, noRollback: tt.noRollback, failConfirm: tt.failConfirm}
			})
			res, _, journal := fx.run(t, Options{ConfirmTimeout: 2 * time.Minute})
			if got.ConfirmTimeout != 2*time.Minute {
				t.Errorf("driver got confirm timeout %v", got.ConfirmTimeout)
			}
			if !reflect.DeepEqual(calls, tt.calls) {
				t.Errorf("calls\n got  %q\n want %q", calls, tt.calls)
			}
			d := res.dev("switch.s1")
			if d.Status != tt.status || d.Restored != tt.restored || !strings.Contains(d.Error, tt.errPart) {
				t.Errorf("%+v", d)
			}
			if d.Confirmed != (tt.status == StatusApplied) {
				t.Errorf("confirmed = %v", d.Confirmed)
			}
			if journal[0].ConfirmTime != "2m0s" {
				t.Errorf("run_start %+v", journal[0])
			}
			for _, e := range journal {
				if e.Event == EventDeviceApplied && !e.Pending {
					t.Errorf("applied line not pending: %+v", e)
				}
			}
		})
	}
}

func TestStalePlanRefused(t *testing.T) {
	fx := newFixture(t, tenSwitches(), nil)
	// Someone changes two devices between plan and apply.
	for _, n := range []string{"sw04", "sw07"} {
		st := fx.store.Get(n)
		st["port/Ethernet0/mtu"] = "4200"
		fx.store.Set(n, st)
	}
	res, err, journal := fx.run(t, Options{CheckStale: true})
	var se *StaleError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want *StaleError", err)
	}
	want := "stale plan: 2 devices changed since the plan (switch.sw04, switch.sw07); run fabctl plan again (nothing was applied)"
	if err.Error() != want {
		t.Errorf("error\n got  %q\n want %q", err, want)
	}
	if len(fx.store.Applied) != 0 {
		t.Errorf("applied despite stale plan: %v", fx.store.Applied)
	}
	if res.Counts.NotAttempted != 10 || res.dev("switch.sw01").Reason != "nothing applied: stale plan" {
		t.Errorf("%+v %+v", res.Counts, res.dev("switch.sw01"))
	}
	if got := events(journal); !reflect.DeepEqual(got, []string{"run_start", "stale switch.sw04", "stale switch.sw07", "run_end"}) {
		t.Errorf("journal %q", got)
	}
	if journal[3].Status != "refused" || !strings.Contains(journal[3].Error, "stale plan") {
		t.Errorf("run_end %+v", journal[3])
	}

	// One stale device: the message names it.
	fx = newFixture(t, tenSwitches(), nil)
	st := fx.store.Get("sw03")
	st["trust"] = "pcp"
	fx.store.Set("sw03", st)
	_, err, _ = fx.run(t, Options{CheckStale: true})
	if err == nil || err.Error() != "stale plan: switch.sw03 changed since the plan; run fabctl plan again (nothing was applied)" {
		t.Errorf("error %v", err)
	}

	// A device that cannot be re-read: nothing applied either.
	fx = newFixture(t, tenSwitches(), nil)
	fx.store.FailRead["sw05"] = errors.New("dial tcp 192.0.2.5:22: i/o timeout")
	_, err, _ = fx.run(t, Options{CheckStale: true})
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "switch.sw05: dial tcp") || len(fx.store.Applied) != 0 {
		t.Errorf("error %v, applied %v", err, fx.store.Applied)
	}

	// A plan with an unplanned device is refused.
	fx = newFixture(t, tenSwitches(), nil)
	fx.devs[1].Plan.Error = "read switch.sw02: connection refused"
	_, err, _ = fx.run(t, Options{})
	var pe *PlanError
	if !errors.As(err, &pe) || len(fx.store.Applied) != 0 {
		t.Errorf("error %v", err)
	}
}

func TestIdempotentSecondRun(t *testing.T) {
	tds := tenSwitches()
	tds = append(tds, host("h1", intent.State{"nic/eth0/mtu": "1500"}, intent.State{"nic/eth0/mtu": "9000"}))
	fx := newFixture(t, tds, nil)
	res, err, _ := fx.run(t, Options{CheckStale: true})
	if err != nil || res.Counts.Applied != 11 {
		t.Fatalf("%v %+v", err, res.Counts)
	}
	// Plan again: nothing to change, and applying changes nothing.
	fx.devs = fx.plan(t, tds)
	for _, d := range fx.devs {
		if d.Plan.HasChanges() {
			t.Errorf("%s still has changes: %v", d.Plan.Address, d.Plan.Changes)
		}
	}
	before := len(fx.store.Applied)
	res, err, journal := fx.run(t, Options{CheckStale: true})
	if err != nil || res.Counts.Unchanged != 11 || res.Counts.Applied != 0 {
		t.Fatalf("%v %+v", err, res.Counts)
	}
	total := 0
	for _, n := range fx.store.Applied {
		total += n
	}
	if total != 11 || len(fx.store.Applied) != before {
		t.Errorf("second run applied: %v", fx.store.Applied)
	}
	if got := events(journal); !reflect.DeepEqual(got, []string{"run_start", "run_end"}) {
		t.Errorf("journal %q", got)
	}
}

// Under continue, a device cabled to a failed device of an earlier wave
// is not attempted; the others are.
func TestContinueSkipsLinkedDevices(t *testing.T) {
	pfc := func(v string) intent.State { return intent.State{"port/Ethernet0/pfc": v} }
	nic := func(v string) intent.State { return intent.State{"nic/eth0/pfc": v} }
	fx := newFixture(t, []testDev{
		sw("leaf1", pfc(""), pfc("3"), "h1:eth0"),
		sw("leaf2", pfc(""), pfc("3"), "h2:eth0"),
		host("h1", nic(""), nic("3")),
		host("h2", nic(""), nic("3")),
	}, nil)
	fx.store.FailApply["leaf1"] = errors.New("session aborted")
	res, _, _ := fx.run(t, Options{OnFailure: Continue})
	if s := res.dev("host.h2").Status; s != StatusApplied {
		t.Errorf("h2 %s", s)
	}
	h1 := res.dev("host.h1")
	if h1.Status != StatusNotAttempted || !strings.Contains(h1.Reason, "cabled to switch.leaf1, which failed in wave 1") {
		t.Errorf("h1 %+v", h1)
	}
	if fx.store.Get("h1")["nic/eth0/pfc"] != "" {
		t.Errorf("h1 changed")
	}
}

func TestInterruptFinishesInFlight(t *testing.T) {
	var tds []testDev
	for i := 0; i < 20; i++ {
		tds = append(tds, sw(fmt.Sprintf("sw%02d", i), mtu("1500"), mtu("9100")))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int64
	var mu sync.Mutex
	var calls []string
	fx := newFixture(t, tds, func(d drivers.Driver) drivers.Driver {
		return &recorder{Driver: d, mu: &mu, calls: &calls, hook: func(op string, _ drivers.Target) {
			if op == "apply" && started.Add(1) == 2 {
				cancel() // Ctrl-C while two devices are in flight
			}
		}}
	})
	fx.store.ApplyLatency = 20 * time.Millisecond
	res, err := Run(ctx, fx.devs, fx.reg, Options{Parallelism: 2})
	if err == nil || !res.Interrupted {
		t.Fatalf("%v interrupted=%v", err, res.Interrupted)
	}
	if res.Counts.Applied != 2 || res.Counts.NotAttempted != 18 {
		t.Errorf("counts %+v", res.Counts)
	}
	for _, d := range res.Devices {
		if d.Status == StatusApplied && fx.store.Get(d.Name)["port/Ethernet0/mtu"] != "9100" {
			t.Errorf("%s applied but not in store", d.Name)
		}
		if d.Status == StatusNotAttempted && !strings.Contains(d.Reason, "interrupted") {
			t.Errorf("%s reason %q", d.Name, d.Reason)
		}
	}
}

func TestJournalRedactsSecrets(t *testing.T) {
	const secret = "hunter2-s3cret"
	fx := newFixture(t, []testDev{sw("s1", mtu("1500"), mtu("9100"))}, nil)
	fx.store.FailApply["s1"] = fmt.Errorf("ssh: auth failed for admin:%s@192.0.2.1", secret)
	var buf strings.Builder
	j := NewJournal(&buf, "r", fixedClock(), []string{secret})
	res, _ := Run(context.Background(), fx.devs, fx.reg, Options{Journal: j})
	j.Close()
	if strings.Contains(buf.String(), secret) {
		t.Errorf("journal holds the secret:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "admin:***@") {
		t.Errorf("journal lacks the masked error:\n%s", buf.String())
	}
	if strings.Contains(res.dev("switch.s1").Error, secret) {
		t.Errorf("result holds the secret")
	}
}

func TestRollbackRevertsRecord(t *testing.T) {
	tds := tenSwitches()
	fx := newFixture(t, tds, nil)
	dir := t.TempDir()
	// A previous run recorded sw01 with an older desired state.
	a, _ := plan.LoadApplied(dir, "t")
	a.Devices["switch.sw01"] = mtu("1500")
	if err := a.Save(dir); err != nil {
		t.Fatal(err)
	}
	rec, _ := OpenRecorder(dir, "t")
	fx.store.FailApply["sw05"] = errors.New("boom")
	res, _, _ := fx.run(t, Options{Parallelism: 1, OnFailure: Rollback, Record: rec})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Counts.RolledBack != 4 {
		t.Fatalf("%+v", res.Counts)
	}
	a, _ = plan.LoadApplied(dir, "t")
	if !reflect.DeepEqual(a.Devices, map[string]intent.State{"switch.sw01": mtu("1500")}) {
		t.Errorf("record after rollback: %v", a.Devices)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, s := range []string{"stop", "continue", "rollback"} {
		if p, err := ParsePolicy(s); err != nil || string(p) != s {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("abort"); err == nil {
		t.Error("abort accepted")
	}
}
