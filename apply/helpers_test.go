package apply

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// testDev is a device of a test fabric: its live state in the store and
// the state the spec wants.
type testDev struct {
	kind, name     string
	live, desired  intent.State
	peers          []string // switch ports' far ends, "host:nic"
	driverOverride string
}

func sw(name string, live, desired intent.State, peers ...string) testDev {
	return testDev{kind: intent.KindSwitch, name: name, live: live, desired: desired, peers: peers}
}

func host(name string, live, desired intent.State) testDev {
	return testDev{kind: intent.KindHost, name: name, live: live, desired: desired}
}

var testFields = []intent.Field{{Pattern: "tc/*/ecn/*", Tolerance: 0.05}}

// fixture is a store, a registry of memory drivers over it ("memory" for
// switches, "host" for hosts) and the plan of a set of devices.
type fixture struct {
	store *memory.Store
	reg   *drivers.Registry
	devs  []Device
}

func newFixture(t testing.TB, tds []testDev, wrap func(drivers.Driver) drivers.Driver) *fixture {
	t.Helper()
	fx := &fixture{store: memory.NewStore(), reg: drivers.NewRegistry()}
	mk := func() drivers.Driver {
		var d drivers.Driver = &memory.Driver{Store: fx.store, FieldList: testFields}
		if wrap != nil {
			d = wrap(d)
		}
		return d
	}
	for _, n := range []string{"memory", "host"} {
		if err := fx.reg.Register(n, mk); err != nil {
			t.Fatal(err)
		}
	}
	for _, td := range tds {
		fx.store.Set(td.name, td.live)
	}
	fx.devs = fx.plan(t, tds)
	return fx
}

// plan computes every device's plan against the store, as plan.Make does.
func (fx *fixture) plan(t testing.TB, tds []testDev) []Device {
	t.Helper()
	var out []Device
	for _, td := range tds {
		dev := intent.Device{Kind: td.kind, Name: td.name, Platform: "memory"}
		var in any
		if td.kind == intent.KindSwitch {
			s := &intent.Switch{Device: dev}
			for i, p := range td.peers {
				s.Ports = append(s.Ports, intent.Port{Name: fmt.Sprintf("Ethernet%d", i), Peer: p})
			}
			in = s
		} else {
			dev.Platform = "linux"
			in = &intent.Host{Device: dev}
		}
		name := drivers.For(dev)
		if td.driverOverride != "" {
			name = td.driverOverride
		}
		dp := &plan.DevicePlan{Address: dev.Addr(), Kind: dev.Kind, Name: dev.Name, Platform: dev.Platform,
			Driver: name, Desired: td.desired}
		drv := &memory.Driver{Store: fx.store, FieldList: testFields}
		tgt := drivers.Target{Device: dev, Intent: in}
		live, err := drv.Read(context.Background(), tgt)
		if err != nil {
			dp.Error = err.Error()
		} else {
			dp.Fingerprint = live.Fingerprint()
			dp.Changes = intent.Diff(td.desired, live, testFields)
			dp.Steps, _ = drv.Changes(tgt, dp.Changes, td.desired)
		}
		out = append(out, Device{Plan: dp, Target: tgt})
	}
	return out
}

// run applies the fixture's plan with a journal in a buffer.
func (fx *fixture) run(t testing.TB, opts Options) (*Result, error, []Entry) {
	t.Helper()
	var buf bytes.Buffer
	opts.Journal = NewJournal(&buf, "run-1", fixedClock(), nil)
	res, err := Run(context.Background(), fx.devs, fx.reg, opts)
	if cerr := opts.Journal.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return res, err, parseJournal(t, buf.Bytes())
}

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 8, 5, 10, 0, 0, 0, time.UTC)
	return func() time.Time { return t0 }
}

func parseJournal(t testing.TB, b []byte) []Entry {
	t.Helper()
	out, err := ParseJournal(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// events returns "event device" strings for the journal entries.
func events(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Event
		if e.Device != "" {
			out[i] += " " + e.Device
		}
	}
	return out
}

func (r *Result) dev(addr string) *DeviceResult {
	for _, d := range r.Devices {
		if d.Address == addr {
			return d
		}
	}
	return nil
}

// recorder wraps a driver and records the order of calls.
type recorder struct {
	drivers.Driver
	mu    *sync.Mutex
	calls *[]string
	hook  func(op string, t drivers.Target)
}

func (r *recorder) note(op string, t drivers.Target) {
	r.mu.Lock()
	*r.calls = append(*r.calls, op+" "+t.Device.Name)
	r.mu.Unlock()
	if r.hook != nil {
		r.hook(op, t)
	}
}

func (r *recorder) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	r.note("apply", t)
	res, err := r.Driver.Apply(ctx, t, ch, o)
	r.note("applied", t)
	return res, err
}

func (r *recorder) Rollback(ctx context.Context, t drivers.Target, res drivers.Result) error {
	r.note("rollback", t)
	return r.Driver.Rollback(ctx, t, res)
}

func (r *recorder) Confirm(ctx context.Context, t drivers.Target, res drivers.Result) error {
	r.note("confirm", t)
	return r.Driver.Confirm(ctx, t, res)
}

func (r *recorder) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	r.note("read", t)
	return r.Driver.Read(ctx, t)
}
