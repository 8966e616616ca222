package switchtest

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// SSHEmulator is what the conformance suite needs of an SSH CLI switch
// emulator. Every emulator (eosemu, nxosemu, cumulusemu, sonicemu) keeps a
// startup configuration next to the running one, as the NOS does.
type SSHEmulator interface {
	Emulator
	// RunningConfig is the running configuration as the NOS prints it.
	RunningConfig() []byte
	// StartupConfig is what the switch comes up with after a reload.
	StartupConfig() []byte
	// Reload makes running what startup holds and drops pending sessions,
	// commit timers and uncommitted state, as a reboot does.
	Reload()
	// FailSave makes the NOS's save command print output (its error) and
	// save nothing while output is not empty; "" clears it.
	FailSave(output string)
	Inject(f sshemu.Fault)
	ClearFaults()
	Close() error
}

// SSHCase is one SSH CLI platform under the conformance suite.
type SSHCase struct {
	// SpecDir holds the spec (default MixedQoS) and Switch names the
	// switch of that spec the emulator plays.
	SpecDir, Switch string
	// User logs in (default "admin").
	User string
	// Start starts a fresh emulator in its factory configuration, saved.
	Start func(t testing.TB) SSHEmulator
	// NewDriver is the driver under test with the suite's SSH options.
	NewDriver func(opts sshtransport.Options) drivers.Driver
	// Drift changes the running configuration behind fabctl's back, the
	// way an operator would on the device, and returns state paths that
	// must show as drift.
	Drift func(t testing.TB, emu SSHEmulator) []string
	// RefuseLine matches a line of the platform's change list that the
	// suite makes the NOS refuse with Refusal, the NOS's own error text.
	RefuseLine *regexp.Regexp
	Refusal    string
	// Refuse, when set, makes the emulator refuse RefuseLine by its own
	// modelled behaviour instead of an injected Refusal: it changes the
	// emulator after the plan was made (what the planner's read could not
	// see, as a device changed between plan and apply) and returns how to
	// undo it. Refusal is then the text the emulator must print itself.
	Refuse func(t testing.TB, emu SSHEmulator) (undo func())
	// CommitLine matches the command that commits the transaction; the
	// suite drops the connection right after it ran.
	CommitLine *regexp.Regexp
	// MissingPort is a port of the platform's naming that the emulator
	// does not have: the driver's read lists the switch's ports
	// (drivers.FactPorts) and the plan must refuse a spec naming it. ""
	// for a platform whose read lists no port inventory: the suite then
	// checks that the read claims none.
	MissingPort string
	// ConfirmTimeout: the platform commits with an auto-revert timer.
	ConfirmTimeout bool
	// Check: the driver checks a change list on the device without
	// committing it (drivers.Checker); false: it must say it does not.
	Check bool
}

// sshRig is one scenario's emulator, driver and engine.
type sshRig struct {
	c   SSHCase
	emu SSHEmulator
	drv drivers.Driver
	e   *Engine
	t   drivers.Target
}

func (c SSHCase) rig(t *testing.T) *sshRig {
	t.Helper()
	dir := c.SpecDir
	if dir == "" {
		dir = MixedQoS
	}
	user := c.User
	if user == "" {
		user = "admin"
	}
	s, f := Load(t, dir)
	var sw *intent.Switch
	for _, x := range f.Switches {
		if x.Name == c.Switch {
			sw = x
		}
	}
	if sw == nil {
		t.Fatalf("spec %s has no switch %s", dir, c.Switch)
	}
	emu := c.Start(t)
	t.Cleanup(func() { emu.Close() })
	target, opts := Connect(t, emu, sw, user)
	drv := c.NewDriver(opts)
	if _, ok := drv.(drivers.Saver); !ok {
		t.Fatalf("%s: the driver does not implement drivers.Saver: a reload would lose what it applies", sw.Platform)
	}
	return &sshRig{c: c, emu: emu, drv: drv, e: NewEngine(t, drv, s, f, sw, target.Credentials), t: target}
}

// apply plans and applies the switch through the engine.
func (r *sshRig) apply(t *testing.T, opts apply.Options) *apply.DeviceResult {
	t.Helper()
	return r.applyPlan(t, r.plan(t), opts)
}

// plan is the engine's plan of the switch; it must not fail.
func (r *sshRig) plan(t *testing.T) *plan.DevicePlan {
	t.Helper()
	dp := r.e.Plan(t)
	if dp.Error != "" {
		t.Fatalf("plan: %s", dp.Error)
	}
	return dp
}

// applyPlan applies a plan made before (the device may have changed since).
func (r *sshRig) applyPlan(t *testing.T, dp *plan.DevicePlan, opts apply.Options) *apply.DeviceResult {
	t.Helper()
	u := plan.Unit{Device: r.e.SW.Device, Intent: r.e.SW}
	res, _ := apply.Run(context.Background(), []apply.Device{{Plan: dp, Target: plan.Target(u, r.e.Opts)}}, r.e.Reg, opts)
	return res.Devices[0]
}

// clean fails unless a re-plan has nothing to change.
func (r *sshRig) clean(t *testing.T, when string) {
	t.Helper()
	dp := r.e.Plan(t)
	if dp.Error != "" || dp.HasChanges() {
		t.Fatalf("%s: re-plan not clean: %s %s", when, dp.Error, describe(dp.Changes))
	}
}

// transact applies the plan's configuration through the driver alone,
// without the engine's save: a configuration applied but never saved.
func (r *sshRig) transact(t *testing.T) {
	t.Helper()
	dp := r.e.Plan(t)
	steps := drivers.WithoutSaveSteps(dp.Steps)
	if _, err := r.drv.Apply(context.Background(), r.t, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func describe(cs []intent.AttrChange) string {
	var b strings.Builder
	for i, c := range cs {
		if i == 8 {
			b.WriteString(" ...")
			break
		}
		b.WriteString(" " + c.Path + "=" + c.After)
	}
	return b.String()
}

func paths(cs []intent.AttrChange) map[string]bool {
	m := map[string]bool{}
	for _, c := range cs {
		m[c.Path] = true
	}
	return m
}

// RunSSH runs the conformance suite every SSH CLI platform passes: plan
// from empty, apply, read back, idempotent re-plan, reload survival, a
// reload that loses an unsaved configuration, save failure, drift repaired,
// a refused line that leaves the device byte-identical, a drop right after
// the commit, and commit-confirm expiry.
func RunSSH(t *testing.T, c SSHCase) {
	t.Run("plan-from-empty", func(t *testing.T) {
		r := c.rig(t)
		dp := r.e.Plan(t)
		if dp.Error != "" || !dp.HasChanges() || len(dp.Steps) < 2 {
			t.Fatalf("plan: %s %d steps", dp.Error, len(dp.Steps))
		}
		last := dp.Steps[len(dp.Steps)-1]
		if !drivers.IsSaveStep(last) || len(last.Payload) == 0 {
			t.Fatalf("the change list does not end with the platform's save: %+v", last)
		}
	})
	t.Run("apply-readback-idempotent-reload", func(t *testing.T) {
		r := c.rig(t)
		d := r.apply(t, apply.Options{})
		if d.Status != apply.StatusApplied || !d.Saved {
			t.Fatalf("apply: %+v", d)
		}
		r.clean(t, "after apply")
		r.emu.Reload()
		r.clean(t, "after reload")
	})
	t.Run("unsaved-is-lost-at-reload", func(t *testing.T) {
		r := c.rig(t)
		r.transact(t)
		dp := r.e.Plan(t)
		if dp.Error != "" || len(dp.Changes) != 1 || dp.Changes[0].Path != drivers.PathSaved {
			t.Fatalf("applied but unsaved must plan only the save: %s %s", dp.Error, describe(dp.Changes))
		}
		r.emu.Reload()
		dp = r.e.Plan(t)
		if dp.Error != "" || len(dp.Changes) < 2 {
			t.Fatalf("the reload kept an unsaved configuration: %s %s", dp.Error, describe(dp.Changes))
		}
	})
	t.Run("save-failure", func(t *testing.T) {
		r := c.rig(t)
		const why = "flash: No space left on device"
		r.emu.FailSave(why)
		d := r.apply(t, apply.Options{})
		if d.Status != apply.StatusFailed || !d.NotSaved || d.NotRestored() || !strings.Contains(d.Error, "not saved") {
			t.Fatalf("a failed save must fail the device as applied, not saved: %+v", d)
		}
		dp := r.e.Plan(t)
		if len(dp.Changes) != 1 || dp.Changes[0].Path != drivers.PathSaved {
			t.Fatalf("after a failed save the plan must be the save alone: %s", describe(dp.Changes))
		}
		r.emu.FailSave("")
		if d := r.apply(t, apply.Options{}); d.Status != apply.StatusApplied || !d.Saved {
			t.Fatalf("repair: %+v", d)
		}
		r.emu.Reload()
		r.clean(t, "after repair and reload")
	})
	t.Run("drift-repaired", func(t *testing.T) {
		r := c.rig(t)
		if d := r.apply(t, apply.Options{}); d.Status != apply.StatusApplied {
			t.Fatalf("apply: %+v", d)
		}
		want := c.Drift(t, r.emu)
		got := paths(r.e.Plan(t).Changes)
		for _, p := range want {
			if !got[p] {
				t.Fatalf("drift %s not seen: %v", p, got)
			}
		}
		if !got[drivers.PathSaved] {
			t.Fatalf("an unsaved change on the device is not reported as unsaved: %v", got)
		}
		if d := r.apply(t, apply.Options{}); d.Status != apply.StatusApplied || !d.Saved {
			t.Fatalf("repair: %+v", d)
		}
		r.emu.Reload()
		r.clean(t, "after drift repair and reload")
	})
	t.Run("port-inventory", func(t *testing.T) {
		r := c.rig(t)
		live, err := r.drv.Read(context.Background(), r.t)
		if err != nil {
			t.Fatal(err)
		}
		ports, listed := drivers.Ports(live)
		if c.MissingPort == "" {
			if listed {
				t.Fatalf("the read lists ports (%d), but the case names no missing port to test the refusal with", len(ports))
			}
			return
		}
		for _, p := range r.e.SW.Ports {
			if !slices.Contains(ports, p.Name) {
				t.Fatalf("the inventory lacks the spec's port %s the emulator has: %v", p.Name, ports)
			}
		}
		if slices.Contains(ports, c.MissingPort) {
			t.Fatalf("the emulator has %s", c.MissingPort)
		}
		before := r.emu.RunningConfig()
		r.e.SW.Ports = append(r.e.SW.Ports, intent.Port{Name: c.MissingPort, MTU: 9000})
		dp := r.e.Plan(t)
		if !strings.Contains(dp.Error, "has no port \""+c.MissingPort+"\"") || !strings.Contains(dp.Error, "nearest: ") || dp.HasChanges() {
			t.Fatalf("a spec port the switch lacks was planned: %q, %d changes", dp.Error, len(dp.Changes))
		}
		if !bytes.Equal(before, r.emu.RunningConfig()) {
			t.Fatal("running configuration changed")
		}
	})
	t.Run("refused-line-leaves-device-unchanged", func(t *testing.T) {
		r := c.rig(t)
		before, startup := r.emu.RunningConfig(), r.emu.StartupConfig()
		var d *apply.DeviceResult
		if c.Refuse != nil {
			dp := r.plan(t)
			c.Refuse(t, r.emu)
			before = r.emu.RunningConfig()
			d = r.applyPlan(t, dp, apply.Options{})
		} else {
			r.emu.Inject(sshemu.Fault{Match: c.RefuseLine, Kind: sshemu.Reject, Output: c.Refusal})
			d = r.apply(t, apply.Options{})
		}
		// With Refuse the device itself changed after the plan (the facts
		// its read reports differ), so the engine's read-back cannot call
		// it restored; its configurations must still be byte-identical
		// (below) and the error must say the state differs, not hide it.
		restored := d.Restored || c.Refuse != nil && strings.Contains(d.Error, "does not match its state before the apply")
		if d.Status != apply.StatusFailed || !restored || d.Partial {
			t.Fatalf("a refused line must fail the device, restored: %+v", d)
		}
		if first := strings.TrimSpace(strings.Split(c.Refusal, "\n")[0]); !strings.Contains(d.Error, first) && !strings.Contains(d.Error, strings.TrimSpace(c.Refusal)) {
			t.Errorf("the error does not carry the NOS's words %q: %s", c.Refusal, d.Error)
		}
		if !bytes.Equal(before, r.emu.RunningConfig()) {
			t.Fatalf("running configuration changed:\n%s\n---\n%s", before, r.emu.RunningConfig())
		}
		if !bytes.Equal(startup, r.emu.StartupConfig()) {
			t.Fatal("startup configuration changed")
		}
	})
	t.Run("drop-after-commit", func(t *testing.T) {
		r := c.rig(t)
		startup := r.emu.StartupConfig()
		r.emu.Inject(sshemu.Fault{Match: c.CommitLine, Kind: sshemu.DropAfter, Times: 1})
		d := r.apply(t, apply.Options{})
		if d.Status == apply.StatusApplied && !d.Saved {
			t.Fatalf("applied without a save after a drop: %+v", d)
		}
		if d.Status == apply.StatusFailed && !d.Restored && !d.Partial {
			t.Fatalf("a failed device must be restored or reported partial: %+v", d)
		}
		if d.Status == apply.StatusFailed && !bytes.Equal(startup, r.emu.StartupConfig()) {
			t.Fatal("a failed apply changed the startup configuration")
		}
		r.emu.ClearFaults()
		if d := r.apply(t, apply.Options{}); d.Status != apply.StatusApplied && d.Status != apply.StatusUnchanged {
			t.Fatalf("re-apply after the drop: %+v", d)
		}
		r.emu.Reload()
		r.clean(t, "after the drop, re-apply and reload")
	})
	t.Run("check-on-device", func(t *testing.T) { c.runCheck(t) })
	if c.ConfirmTimeout {
		t.Run("commit-confirm-expires", func(t *testing.T) {
			r := c.rig(t)
			before := r.emu.RunningConfig()
			dp := r.e.Plan(t)
			steps := drivers.WithoutSaveSteps(dp.Steps)
			res, err := r.drv.Apply(context.Background(), r.t, steps, drivers.ApplyOptions{ConfirmTimeout: time.Second})
			if err != nil || !res.Pending {
				t.Fatalf("apply with a confirm timer: %+v %v", res, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !bytes.Equal(before, r.emu.RunningConfig()) {
				if time.Now().After(deadline) {
					t.Fatal("an unconfirmed commit did not revert")
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
