package eos

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
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
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const pw = switchtest.Password

func load(t testing.TB, dir string) (*spec.Spec, *intent.Fabric) {
	return switchtest.Load(t, filepath.Join("..", "..", "..", "examples", dir))
}

func eosSwitch(t testing.TB, f *intent.Fabric, name string) *intent.Switch {
	return switchtest.Switch(t, f, name, Name)
}

type rig struct {
	emu    *eosemu.Switch
	drv    *Driver
	target drivers.Target
	sw     *intent.Switch
	s      *spec.Spec
	f      *intent.Fabric
	creds  *spec.Credentials
}

func newRig(t *testing.T) *rig { t.Helper(); return newRigModel(t, "") }

// newRigModel is newRig with an emulator of that model ("" eosemu's
// default, a Sand switch).
func newRigModel(t *testing.T, model string) *rig {
	t.Helper()
	s, f := load(t, "testbed")
	sw := eosSwitch(t, f, "leaf2")
	emu, err := eosemu.Start(eosemu.Options{Hostname: "leaf2", Password: switchtest.Password, Ports: 8, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	return &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
}

func (r *rig) plan(t *testing.T) (intent.State, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	return switchtest.Plan(t, r.drv, r.target, expressible(r.sw))
}

func TestPlanApplyIdempotentDrift(t *testing.T) {
	r := newRig(t)
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
	if res.Token == "" || res.Pending {
		t.Fatalf("result: %+v", res)
	}
	if s := r.emu.Sessions(); len(s) != 0 {
		t.Fatalf("session left pending: %v", s)
	}
	live, diff, _ := r.plan(t)
	if len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	for k, v := range expressible(r.sw) {
		if !(intent.Field{}).Equal(v, live[k]) { // a port MTU floor (">=9000") holds any MTU at least that
			t.Fatalf("read back %s = %q, want %q", k, live[k], v)
		}
	}
	// Drift: someone edits the switch by hand.
	r.emu.Edit(func(c *eosemu.Config) {
		c.Interfaces["Ethernet1"].MTU = 1500 + 100
		c.Profiles[ProfileName].TxQueues[3].ECN = "minimum-threshold 1024 kbytes maximum-threshold 2048 kbytes max-mark-probability 5"
		c.DSCP[30] = 5
	})
	_, diff, steps = r.plan(t)
	got := map[string]bool{}
	for _, c := range diff {
		got[c.Path] = true
	}
	for _, p := range []string{"port/Ethernet1/mtu", "tc/3/ecn/min", "tc/3/ecn/max", "tc/3/ecn/probability", "dscp/30"} {
		if !got[p] {
			t.Fatalf("drift %s not detected: %+v", p, diff)
		}
	}
	if len(diff) != 5 {
		t.Fatalf("drift diff: %+v", diff)
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("drift not repaired: %+v", diff)
	}
}

func TestRejectedLineAborts(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	before := r.emu.RunningConfig()
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^random-detect ecn`), Kind: sshemu.Reject,
		Output: "                                  ^\n% Invalid input detected at '^' marker.\n"})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "leaf2: random-detect ecn") || !strings.Contains(err.Error(), "% Invalid input detected") ||
		!strings.Contains(err.Error(), "aborted, the running-config is unchanged") {
		t.Fatalf("want aborted session naming the line, got %v", err)
	}
	var pe *drivers.PartialError
	if errors.As(err, &pe) {
		t.Fatalf("aborted apply reported partial: %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running-config changed")
	}
	if s := r.emu.Sessions(); len(s) != 0 {
		t.Fatalf("session left pending: %v", s)
	}
	t.Log(err)
}

// TestEmulatorRejectsOutOfRange: the emulator's own grammar refuses an
// MTU above 9214; the session is aborted.
func TestEmulatorRejectsOutOfRange(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	for i := range steps {
		for j, l := range steps[i].Payload {
			if l == "   mtu 9000" {
				steps[i].Payload[j] = "   mtu 9300"
			}
		}
	}
	before := r.emu.RunningConfig()
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "mtu 9300") || !strings.Contains(err.Error(), "Invalid input") {
		t.Fatalf("want rejected mtu, got %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running-config changed")
	}
}

func TestCommitTimerRevertsUnlessConfirmed(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	before := r.emu.RunningConfig()
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{ConfirmTimeout: time.Second})
	if err != nil || !res.Pending {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("commit timer did not apply")
	}
	time.Sleep(1500 * time.Millisecond)
	if !bytes.Equal(before, r.emu.RunningConfig()) || r.emu.Reverts() != 1 {
		t.Fatal("unconfirmed commit did not revert")
	}
	// Confirmed: stays.
	res, err = r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{ConfirmTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Confirm(context.Background(), r.target, res); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, diff, _ := r.plan(t); len(diff) != 0 || r.emu.Reverts() != 1 {
		t.Fatalf("confirmed commit reverted: %+v", diff)
	}
}

func TestRollback(t *testing.T) {
	r := newRig(t)
	// A prior configuration of someone else's that fabctl changes.
	r.emu.Edit(func(c *eosemu.Config) {
		c.Interfaces["Ethernet1"].MTU = 9100
		c.Interfaces["Ethernet2"].Description = "to h4"
		c.DSCP[10] = 2
		c.WDTimeout, c.WDRecovery, c.WDPolling = "1", "1", "0.5"
		other := eosemu.NewProfile()
		other.Trust, other.NoDrop[4], other.PFCOn = "cos", true, true
		c.Profiles["OTHER"] = other
	})
	before := r.emu.RunningConfig()
	_, _, steps := r.plan(t)
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("apply changed nothing")
	}
	if err := r.drv.Rollback(context.Background(), r.target, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatalf("rollback differs:\n%s\n---\n%s", before, r.emu.RunningConfig())
	}
}

func TestDroppedConnectionMidApply(t *testing.T) {
	for _, c := range []struct {
		kind  sshemu.FaultKind
		match string
		want  string
	}{
		{sshemu.DropBefore, `^service-profile`, "aborted, the running-config is unchanged"},
		{sshemu.DropAfter, `^priority-flow-control on`, "aborted, the running-config is unchanged"},
		{sshemu.DropBefore, `^commit$`, "aborted, the running-config is unchanged"},
		{sshemu.DropAfter, `^commit$`, "had been committed, the prior config was restored"},
	} {
		r := newRig(t)
		_, _, steps := r.plan(t)
		before := r.emu.RunningConfig()
		r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(c.match), Kind: c.kind, Times: 1})
		_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
		step := strings.Trim(c.match, "^$")
		if err == nil || !strings.Contains(err.Error(), "leaf2: "+step) || !strings.Contains(err.Error(), "connection lost") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s %d: want error naming the step, got %v", c.match, c.kind, err)
		}
		if !bytes.Equal(before, r.emu.RunningConfig()) {
			t.Fatalf("%s %d: not restored", c.match, c.kind)
		}
		if s := r.emu.Sessions(); len(s) != 0 {
			t.Fatalf("session left pending: %v", s)
		}
		t.Log(err)
	}
	// The switch goes away for good: partial.
	r := newRig(t)
	_, _, steps := r.plan(t)
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^commit$`), Kind: sshemu.DropAfter, Times: 1})
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^configure session .*-rb$`), Kind: sshemu.DropBefore})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	var pe *drivers.PartialError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "leaf2: commit") {
		t.Fatalf("want PartialError, got %v", err)
	}
	t.Log(err)
}

func TestWrongPassword(t *testing.T) {
	r := newRig(t)
	d := NewWith(sshtransport.Options{Getenv: func(string) string { return "WRONG-secret-xyz" }})
	_, err := d.Read(context.Background(), r.target)
	if err == nil || !strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "WRONG-secret-xyz") {
		t.Fatalf("want auth error without the password, got %v", err)
	}
}

// TestEngineEndToEnd runs plan.Make and apply.Run with a registry holding
// this driver, against the emulator.
func TestEngineEndToEnd(t *testing.T) {
	r := newRig(t)
	switchtest.NewEngine(t, r.drv, r.s, r.f, r.sw, r.creds).EndToEnd(t)
}

// TestEngineDropReported: a connection dropped mid-session shows in
// apply.Run's result with the line, the session and the restored state.
func TestEngineDropReported(t *testing.T) {
	r := newRig(t)
	e := switchtest.NewEngine(t, r.drv, r.s, r.f, r.sw, r.creds)
	dp := e.Plan(t)
	before := r.emu.RunningConfig()
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^tx-queue 3$`), Kind: sshemu.DropAfter, Times: 1})
	res, _ := e.Apply(dp)
	d := res.Devices[0]
	if d.Status != apply.StatusFailed || !d.Restored || d.Partial ||
		!strings.Contains(d.Error, "leaf2: tx-queue 3 (line ") || !strings.Contains(d.Error, "connection lost") {
		t.Fatalf("result: %+v", d)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running-config changed")
	}
	t.Log(d.Error)
}
