package cumulus

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const pw = switchtest.Password

func load(t testing.TB, dir string) (*spec.Spec, *intent.Fabric) {
	return switchtest.Load(t, dir)
}

func clSwitch(t testing.TB, f *intent.Fabric, name string) *intent.Switch {
	return switchtest.Switch(t, f, name, Name)
}

// expressible is the desired state without what NVUE cannot express.
func expressible(sw *intent.Switch) intent.State { return switchtest.Desired(&Driver{}, sw) }

type rig struct {
	emu    *cumulusemu.Switch
	drv    *Driver
	target drivers.Target
	sw     *intent.Switch
	s      *spec.Spec
	f      *intent.Fabric
	creds  *spec.Credentials
}

func newRig(t *testing.T, o cumulusemu.Options) *rig {
	t.Helper()
	s, f := load(t, "testdata/cllab")
	sw := clSwitch(t, f, "leaf2")
	o.Hostname, o.Password, o.Ports = "leaf2", switchtest.Password, 8
	emu, err := cumulusemu.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "cumulus")
	return &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
}

func (r *rig) plan(t *testing.T) (intent.State, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	return switchtest.Plan(t, r.drv, r.target, expressible(r.sw))
}

func TestPlanApplyIdempotentDrift(t *testing.T) {
	// ECNQuantum: Spectrum granularity, 150000 B is stored as 147456 B.
	r := newRig(t, cumulusemu.Options{ECNQuantum: 4096})
	_, diff, steps := r.plan(t)
	if len(diff) == 0 || len(steps) == 0 {
		t.Fatal("empty switch planned no changes")
	}
	start := time.Now()
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apply of %d steps took %v (token %s)", len(steps), time.Since(start), res.Token)
	if res.Token != "1" || r.emu.Pending() {
		t.Fatalf("result %+v, pending %v", res, r.emu.Pending())
	}
	live, diff, _ := r.plan(t)
	if len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	desired := expressible(r.sw)
	_, tolerated := intent.DiffTolerated(desired, live, r.drv.Fields())
	if len(tolerated) != 2 || live["tc/3/ecn/min"] != "147456" {
		t.Fatalf("quantised thresholds not tolerated: %+v (live min %s)", tolerated, live["tc/3/ecn/min"])
	}
	for k, v := range desired {
		if f, _ := intent.FieldFor(r.drv.Fields(), k); !f.Equal(v, live[k]) {
			t.Fatalf("read back %s = %q, want %q", k, live[k], v)
		}
	}
	// Drift: an operator edits the switch by hand.
	r.emu.Edit(func(tr map[string]any) {
		cumulusemu.SetPath(tr, "interface.swp1.link.mtu", 1600)
		cumulusemu.SetPath(tr, "qos.congestion-control.default-global.traffic-class.3.min-threshold", 1048576)
		// SP 5 now queues on the best-effort TC0 (what DSCP 30 wants):
		// move DSCP 30 to the RoCE priority instead.
		cumulusemu.SetPath(tr, "qos.mapping.default-global.dscp.30.switch-priority", 3)
	})
	_, diff, steps = r.plan(t)
	got := map[string]bool{}
	for _, c := range diff {
		got[c.Path] = true
	}
	for _, p := range []string{"port/swp1/mtu", "tc/3/ecn/min", "dscp/30"} {
		if !got[p] {
			t.Fatalf("drift %s not detected: %+v", p, diff)
		}
	}
	if len(diff) != 3 {
		t.Fatalf("drift diff: %+v", diff)
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("drift not repaired: %+v", diff)
	}
}

// TestRejectedApply: NVUE refuses the revision at apply time (ECN min
// above max); nothing is applied and the pending revision is dropped.
func TestRejectedApply(t *testing.T) {
	r := newRig(t, cumulusemu.Options{})
	_, _, steps := r.plan(t)
	for i := range steps {
		for j, l := range steps[i].Payload {
			if strings.HasSuffix(l, " min-threshold 150000") {
				steps[i].Payload[j] = strings.Replace(l, "min-threshold 150000", "min-threshold 9000000", 1)
			}
		}
	}
	before := r.emu.AppliedJSON()
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "leaf2: nv config apply --assume-yes") || !strings.Contains(err.Error(), "min-threshold 9000000 is greater than max-threshold") ||
		!strings.Contains(err.Error(), "nothing applied") {
		t.Fatalf("want rejected apply, got %v", err)
	}
	var pe *drivers.PartialError
	if errors.As(err, &pe) {
		t.Fatalf("rejected apply reported partial: %v", err)
	}
	if !bytes.Equal(before, r.emu.AppliedJSON()) || r.emu.Pending() {
		t.Fatal("applied config changed or pending revision left")
	}
	t.Log(err)
}

// TestRejectedLine: a value NVUE refuses at `nv set` time.
func TestRejectedLine(t *testing.T) {
	r := newRig(t, cumulusemu.Options{})
	_, _, steps := r.plan(t)
	for i := range steps {
		for j, l := range steps[i].Payload {
			if l == "nv set interface swp1 link mtu 9000" {
				steps[i].Payload[j] = "nv set interface swp1 link mtu 9300"
			}
		}
	}
	before := r.emu.AppliedJSON()
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "leaf2: nv set interface swp1 link mtu 9300 (line ") || !strings.Contains(err.Error(), "Error: Invalid value for mtu") {
		t.Fatalf("want rejected line, got %v", err)
	}
	if !bytes.Equal(before, r.emu.AppliedJSON()) || r.emu.Pending() {
		t.Fatal("applied config changed or pending revision left")
	}
	t.Log(err)
}

func TestRollback(t *testing.T) {
	r := newRig(t, cumulusemu.Options{})
	r.emu.Edit(func(tr map[string]any) {
		cumulusemu.SetPath(tr, "interface.swp1.link.mtu", 9100)
		cumulusemu.SetPath(tr, "interface.swp2.description", "to h2")
		cumulusemu.SetPath(tr, "qos.mapping.default-global.dscp.10.switch-priority", 2)
	})
	before := r.emu.AppliedJSON()
	_, _, steps := r.plan(t)
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, r.emu.AppliedJSON()) {
		t.Fatal("apply changed nothing")
	}
	if err := r.drv.Rollback(context.Background(), r.target, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, r.emu.AppliedJSON()) {
		t.Fatalf("rollback differs:\n%s\n---\n%s", before, r.emu.AppliedJSON())
	}
}

func TestDroppedConnectionMidApply(t *testing.T) {
	for _, c := range []struct {
		kind  sshemu.FaultKind
		match string
		want  string
	}{
		{sshemu.DropBefore, `^nv set qos pfc default-global switch-priority 3$`, "nothing applied"},
		{sshemu.DropAfter, `^nv set interface swp2 link mtu`, "nothing applied"},
		{sshemu.DropBefore, `^nv config apply --assume-yes$`, "nothing applied"},
		{sshemu.DropAfter, `^nv config apply --assume-yes$`, "the apply had gone through, rolled back to revision 1"},
	} {
		r := newRig(t, cumulusemu.Options{})
		_, _, steps := r.plan(t)
		before := r.emu.AppliedJSON()
		r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(c.match), Kind: c.kind, Times: 1})
		_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
		step := strings.TrimSuffix(strings.Trim(c.match, "^$"), "$")
		if err == nil || !strings.Contains(err.Error(), "leaf2: "+step) || !strings.Contains(err.Error(), "connection lost") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s %d: want error naming the step, got %v", c.match, c.kind, err)
		}
		if !bytes.Equal(before, r.emu.AppliedJSON()) || r.emu.Pending() {
			t.Fatalf("%s %d: not restored", c.match, c.kind)
		}
		t.Log(err)
	}
	// The switch goes away for good after the apply ran: partial.
	r := newRig(t, cumulusemu.Options{})
	_, _, steps := r.plan(t)
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^nv config apply --assume-yes$`), Kind: sshemu.DropAfter, Times: 1})
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^nv config apply 1 --assume-yes$`), Kind: sshemu.DropBefore})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	var pe *drivers.PartialError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "leaf2: nv config apply --assume-yes") || !strings.Contains(err.Error(), "re-applying revision 1 failed") {
		t.Fatalf("want PartialError, got %v", err)
	}
	t.Log(err)
}

func TestWrongPassword(t *testing.T) {
	r := newRig(t, cumulusemu.Options{})
	d := NewWith(sshtransport.Options{Getenv: func(string) string { return "WRONG-secret-xyz" }})
	_, err := d.Read(context.Background(), r.target)
	if err == nil || !strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "WRONG-secret-xyz") {
		t.Fatalf("want auth error without the password, got %v", err)
	}
}

// TestEngineEndToEnd runs plan.Make and apply.Run against the emulator.
func TestEngineEndToEnd(t *testing.T) {
	r := newRig(t, cumulusemu.Options{ECNQuantum: 4096})
	switchtest.NewEngine(t, r.drv, r.s, r.f, r.sw, r.creds).EndToEnd(t)
}

// TestEngineDropReported: a connection dropped mid-apply shows in
// apply.Run's result with the line and the restored state.
func TestEngineDropReported(t *testing.T) {
	r := newRig(t, cumulusemu.Options{})
	e := switchtest.NewEngine(t, r.drv, r.s, r.f, r.sw, r.creds)
	dp := e.Plan(t)
	before := r.emu.AppliedJSON()
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^nv set qos pfc-watchdog`), Kind: sshemu.DropAfter, Times: 1})
	res, _ := e.Apply(dp)
	d := res.Devices[0]
	if d.Status != apply.StatusFailed || !d.Restored || d.Partial ||
		!strings.Contains(d.Error, "leaf2: nv set qos pfc-watchdog polling-interval") || !strings.Contains(d.Error, "connection lost") {
		t.Fatalf("result: %+v", d)
	}
	if !bytes.Equal(before, r.emu.AppliedJSON()) {
		t.Fatal("applied config changed")
	}
	t.Log(d.Error)
}
