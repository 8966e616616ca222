package nxos

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
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const pw = switchtest.Password

func load(t testing.TB, dir string) (*spec.Spec, *intent.Fabric) {
	return switchtest.Load(t, dir)
}

func nxosSwitch(t testing.TB, f *intent.Fabric, name string) *intent.Switch {
	return switchtest.Switch(t, f, name, Name)
}

type rig struct {
	emu    *nxosemu.Switch
	drv    *Driver
	target drivers.Target
	sw     *intent.Switch
	s      *spec.Spec
	f      *intent.Fabric
	creds  *spec.Credentials
}

func newRig(t *testing.T) *rig {
	t.Helper()
	s, f := load(t, "testdata/nxlab")
	sw := nxosSwitch(t, f, "leaf4")
	emu, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf4", Password: switchtest.Password, Ports: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	return &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
}

// plan reads the switch and plans the intent's configuration, leaving the
// save (drivers.PathSaved) to the planner as plan.planDevice does: the
// driver's change lists never carry it.
func (r *rig) plan(t *testing.T) (intent.State, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	live, err := r.drv.Read(context.Background(), r.target)
	if err != nil {
		t.Fatal(err)
	}
	delete(live, drivers.PathSaved)
	desired := expressible(r.sw)
	diff := intent.Diff(desired, live, r.drv.Fields())
	steps, err := r.drv.Changes(r.target, diff, desired)
	if err != nil {
		t.Fatal(err)
	}
	return live, diff, steps
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
	if cps := r.emu.Checkpoints(); len(cps) != 1 || cps[0] != res.Token {
		t.Fatalf("checkpoints after apply: %v", cps)
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
	// What Limiter declares is not read back as if it were live.
	for k := range (&Driver{}).Unexpressible(r.target, r.sw.Flatten()) {
		if _, ok := live[k]; ok {
			t.Fatalf("unexpressible %s reported live", k)
		}
	}
	if err := r.drv.Release(context.Background(), r.target, res); err != nil || len(r.emu.Checkpoints()) != 0 {
		t.Fatalf("release: %v %v", err, r.emu.Checkpoints())
	}

	// Drift: someone edits the switch by hand.
	r.emu.Edit(func(c *nxosemu.Config) {
		c.Interfaces["Ethernet1/1"].MTU = 1500 // below the floor the spec wants (a larger one is kept)
		c.Interfaces["Ethernet1/2"].PFCMode = ""
		q := c.Policies["queuing"][QueuingPolicy]
		for _, cl := range q.Classes {
			if cl.Name == "c-out-8q-q3" {
				cl.WRED = "minimum-threshold 1024 kbytes maximum-threshold 2048 kbytes drop-probability 5 weight 0"
			}
		}
		c.ClassMaps[ClassMapPrefix+"6"].DSCP[30] = true
	})
	_, diff, steps = r.plan(t)
	got := map[string]bool{}
	for _, c := range diff {
		got[c.Path] = true
	}
	for _, p := range []string{"port/Ethernet1/1/mtu", "port/Ethernet1/2/pfc", "tc/3/ecn/min", "tc/3/ecn/max", "tc/3/ecn/probability", "dscp/30"} {
		if !got[p] {
			t.Fatalf("drift %s not detected: %+v", p, diff)
		}
	}
	if len(diff) != 6 {
		t.Fatalf("drift diff: %+v", diff)
	}
	for _, c := range diff {
		if c.Path == "tc/3/ecn/min" && !strings.Contains(c.Before, "no ecn") {
			t.Fatalf("WRED without ecn not shown as dropping: %+v", c)
		}
	}
	res, err = r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("drift not repaired: %+v", diff)
	}
	if !strings.Contains(string(r.emu.RunningConfig()), "class-map type qos match-any FABCTL-TC6\n  match dscp 48\n") {
		t.Fatalf("stray dscp 30 not removed:\n%s", r.emu.RunningConfig())
	}
	_ = res
}

func TestRejectedLineRollsBack(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	before := r.emu.RunningConfig()
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^random-detect `), Kind: sshemu.Reject,
		Output: "                                  ^\n% Invalid command at '^' marker.\n"})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "leaf4: random-detect minimum-threshold") || !strings.Contains(err.Error(), "% Invalid command at '^' marker.") ||
		!strings.Contains(err.Error(), "rolled back to checkpoint fabctl-") || !strings.Contains(err.Error(), "the running-config is as before") {
		t.Fatalf("want a rollback naming the line, got %v", err)
	}
	var pe *drivers.PartialError
	if errors.As(err, &pe) {
		t.Fatalf("rolled-back apply reported partial: %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatalf("running-config changed:\n%s\n---\n%s", before, r.emu.RunningConfig())
	}
	if r.emu.Rollbacks() != 1 || len(r.emu.Checkpoints()) != 0 {
		t.Fatalf("rollbacks %d, checkpoints left %v", r.emu.Rollbacks(), r.emu.Checkpoints())
	}
	t.Log(err)
}

// TestEmulatorRejectsOutOfRange: the emulator's own grammar refuses an
// MTU above 9216; the apply rolls back.
func TestEmulatorRejectsOutOfRange(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	for i := range steps {
		for j, l := range steps[i].Payload {
			if l == "  mtu 9000" {
				steps[i].Payload[j] = "  mtu 9300"
			}
		}
	}
	before := r.emu.RunningConfig()
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "mtu 9300") || !strings.Contains(err.Error(), "Invalid command") {
		t.Fatalf("want rejected mtu, got %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running-config changed")
	}
}

func TestRollback(t *testing.T) {
	r := newRig(t)
	r.emu.Edit(func(c *nxosemu.Config) {
		c.Interfaces["Ethernet1/1"].MTU = 1500 // below the floor the spec wants (a larger one is kept)
		c.Interfaces["Ethernet1/2"].Description = "to h2"
		c.WDInterval = "on"
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
	if len(r.emu.Checkpoints()) != 0 {
		t.Fatalf("checkpoint left: %v", r.emu.Checkpoints())
	}
}

func TestDroppedConnectionMidApply(t *testing.T) {
	for _, c := range []struct {
		kind  sshemu.FaultKind
		match string
		want  string
	}{
		{sshemu.DropBefore, `^service-policy type qos input`, "rolled back to checkpoint"},
		{sshemu.DropAfter, `^pause pfc-cos 3$`, "rolled back to checkpoint"},
		{sshemu.DropAfter, `^end$`, "rolled back to checkpoint"},
		{sshemu.DropAfter, `^checkpoint `, "no configuration was sent"},
	} {
		r := newRig(t)
		_, _, steps := r.plan(t)
		before := r.emu.RunningConfig()
		r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(c.match), Kind: c.kind, Times: 1})
		_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
		step := strings.Trim(c.match, "^$")
		if err == nil || !strings.Contains(err.Error(), "leaf4: "+step) || !strings.Contains(err.Error(), "connection lost") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s %d: want error naming the step, got %v", c.match, c.kind, err)
		}
		var pe *drivers.PartialError
		if errors.As(err, &pe) {
			t.Fatalf("%s: restored apply reported partial: %v", c.match, err)
		}
		if !bytes.Equal(before, r.emu.RunningConfig()) {
			t.Fatalf("%s %d: not restored", c.match, c.kind)
		}
		if cps := r.emu.Checkpoints(); len(cps) != 0 {
			t.Fatalf("checkpoint left: %v", cps)
		}
		t.Log(err)
	}
	// The switch goes away for good: partial, naming the checkpoint.
	r := newRig(t)
	_, _, steps := r.plan(t)
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^system qos$`), Kind: sshemu.DropAfter, Times: 1})
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^rollback `), Kind: sshemu.DropBefore})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	var pe *drivers.PartialError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "leaf4: system qos") || !strings.Contains(err.Error(), "rollback to checkpoint fabctl-") {
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

// TestEngineDropReported: a connection dropped mid-apply shows in
// apply.Run's result with the line, the checkpoint and the restored state.
func TestEngineDropReported(t *testing.T) {
	r := newRig(t)
	e := switchtest.NewEngine(t, r.drv, r.s, r.f, r.sw, r.creds)
	dp := e.Plan(t)
	before := r.emu.RunningConfig()
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^class type queuing c-out-8q-q3$`), Kind: sshemu.DropAfter, Times: 1})
	res, _ := e.Apply(dp)
	d := res.Devices[0]
	if d.Status != apply.StatusFailed || !d.Restored || d.Partial ||
		!strings.Contains(d.Error, "leaf4: class type queuing c-out-8q-q3 (line ") || !strings.Contains(d.Error, "connection lost") {
		t.Fatalf("result: %+v", d)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running-config changed")
	}
	t.Log(d.Error)
}

// TestIntentChangeConverges: after a first apply the intent moves RoCE
// from qos-group 3 to 4 without ECN, makes CNP a weighted class and
// drops the watchdog; the change list removes what is no longer wanted
// (stale class-maps and classes, priority, ECN, the no-drop class, the
// watchdogs) with documented forms only, and the re-plan is empty.
func TestIntentChangeConverges(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	sw := r.sw
	for d := 24; d < 32; d++ {
		sw.DSCPToTC[d] = 4
	}
	sw.TCs = []intent.TC{{TC: 0, Bandwidth: 40}, {TC: 4, Lossless: true, Bandwidth: 40}, {TC: 6, Bandwidth: 20}}
	sw.Watchdog = intent.Watchdog{}
	for i := range sw.Ports {
		sw.Ports[i].PFC = []int{4}
		sw.Ports[i].Watchdog = false
	}
	_, diff, steps := r.plan(t)
	if len(diff) == 0 {
		t.Fatal("no changes planned")
	}
	var payload []string
	for _, s := range steps {
		payload = append(payload, s.Payload...)
	}
	// What only an undocumented `no` form would clear is cleared by
	// removing the policy with its documented form and writing it anew
	// (cisco-roce-enable.cfg:64-77); unused queues get bandwidth 0.
	for _, want := range []string{"  no service-policy type qos input FABCTL-QOS", "no policy-map type qos FABCTL-QOS",
		"no class-map type qos match-any FABCTL-TC3", "  no service-policy type queuing output FABCTL-QUEUING",
		"no policy-map type queuing FABCTL-QUEUING", "  no service-policy type network-qos FABCTL-NQOS",
		"no policy-map type network-qos FABCTL-NQOS", "  no priority-flow-control watch-dog-interval on",
		"no priority-flow-control watch-dog-interval on"} {
		found := false
		for _, l := range payload {
			found = found || l == want
		}
		if !found {
			t.Fatalf("payload lacks %q:\n%s", want, strings.Join(payload, "\n"))
		}
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v\n%s", diff, r.emu.RunningConfig())
	}
	run := string(r.emu.RunningConfig())
	if !strings.Contains(run, "  class type queuing c-out-8q-q3\n    bandwidth remaining percent 0\n") {
		t.Fatalf("dropped class c-out-8q-q3 not zeroed:\n%s", run)
	}
	for _, gone := range []string{"FABCTL-TC3", "c-8q-nq3", "priority level", "random-detect", "watch-dog-interval"} {
		if strings.Contains(run, gone) {
			t.Fatalf("%s still configured:\n%s", gone, run)
		}
	}
}

// TestVerifyCatchesSilentlyIgnoredLine: a line the switch swallows
// without an error is caught by the read-back and rolled back.
func TestVerifyCatchesSilentlyIgnoredLine(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	before := r.emu.RunningConfig()
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^mtu 9000$`), Kind: sshemu.Reject, Output: "", Times: 1})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "leaf4: verify: ") || !strings.Contains(err.Error(), `port/Ethernet1/1/mtu is "1500", want ">=9000"`) ||
		!strings.Contains(err.Error(), "the running-config is as before") {
		t.Fatalf("want a verify failure rolled back, got %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running-config changed")
	}
	t.Log(err)
}

// TestNetworkQoSMTUDrift: a network-qos class mtu changed by hand (or a
// class whose mtu line was removed) is read back, shows as a change of
// the class's tc/N/lossless, and the apply restores NetworkMTU.
func TestNetworkQoSMTUDrift(t *testing.T) {
	r := newRig(t)
	_, _, steps := r.plan(t)
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	r.emu.Edit(func(c *nxosemu.Config) {
		for _, cl := range c.Policies["network-qos"][NetworkPolicy].Classes {
			switch cl.Name {
			case nqClass(3):
				cl.MTU = 1500
			case nqClass(6):
				cl.MTU = 0
			}
		}
	})
	live, diff, steps := r.plan(t)
	want := map[string]string{
		"tc/3/lossless": "true (network-qos mtu 1500, fabctl sets 9216)",
		"tc/6/lossless": "false (network-qos mtu not set: 1500, fabctl sets 9216)",
	}
	if len(diff) != len(want) {
		t.Fatalf("diff: %+v", diff)
	}
	for _, c := range diff {
		if want[c.Path] == "" || c.Before != want[c.Path] || live[c.Path] != want[c.Path] {
			t.Fatalf("unexpected change %+v", c)
		}
	}
	payload := strings.Join(steps[0].Payload, "\n")
	if !strings.Contains(payload, "class type network-qos c-8q-nq3\n    pause pfc-cos 3\n    mtu 9216") {
		t.Fatalf("payload does not restore the class mtu:\n%s", payload)
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan after restoring the mtu: %+v", diff)
	}
	if !strings.Contains(string(r.emu.RunningConfig()), "class type network-qos c-8q-nq6\n    mtu 9216") {
		t.Fatal("class c-8q-nq6 mtu not restored on the switch")
	}
}
