package switchtest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// checkPlan plans the switch with plan --check-on-device's option.
func (r *sshRig) checkPlan(t *testing.T) *drivers.DeviceCheck {
	t.Helper()
	e := *r.e
	e.Opts.CheckOnDevice = true
	dp := e.Plan(t)
	if dp.Error != "" || !dp.HasChanges() {
		t.Fatalf("plan: %s (changes: %v)", dp.Error, dp.HasChanges())
	}
	if dp.Check == nil {
		t.Fatal("a plan with changes and CheckOnDevice has no device check")
	}
	return dp.Check
}

// runCheck: plan --check-on-device on the platform. With a check: a
// clean check is accepted and leaves the running and startup
// configurations byte-identical (and a later apply works: no session or
// pending state is left behind); a line the NOS refuses is refused by the
// check with its own words and the step it answers, the device
// byte-identical, and the apply refuses the same line; a connection that
// drops in the middle of the check leaves the device as it was, or the
// verdict names what it left. Without one: the verdict says so and
// nothing is sent.
func (c SSHCase) runCheck(t *testing.T) {
	r := c.rig(t)
	before, startup := r.emu.RunningConfig(), r.emu.StartupConfig()
	same := func(when string) {
		t.Helper()
		if !bytes.Equal(before, r.emu.RunningConfig()) {
			t.Fatalf("%s: running configuration changed:\n%s\n---\n%s", when, before, r.emu.RunningConfig())
		}
		if !bytes.Equal(startup, r.emu.StartupConfig()) {
			t.Fatalf("%s: startup configuration changed", when)
		}
	}
	v := r.checkPlan(t)
	if !c.Check {
		if v.Status != drivers.CheckNotChecked || v.Message == "" || v.Unchanged {
			t.Fatalf("a platform without a check must say why: %+v", v)
		}
		same("not checked")
		return
	}
	if v.Status != drivers.CheckAccepted || !v.Unchanged || v.Method == "" {
		t.Fatalf("clean check: %+v", v)
	}
	same("after a clean check")

	var undo func()
	var refusedPlan *plan.DevicePlan
	if c.Refuse != nil {
		// The emulator refuses by itself what changed after the plan: the
		// plan's steps are checked and applied as they were planned.
		refusedPlan = r.plan(t)
		undo = c.Refuse(t, r.emu)
		u := plan.Unit{Device: r.e.SW.Device, Intent: r.e.SW}
		cv := r.drv.(drivers.Checker).CheckOnDevice(context.Background(), plan.Target(u, r.e.Opts), drivers.WithoutSaveSteps(refusedPlan.Steps))
		v = &cv
	} else {
		r.emu.Inject(sshemu.Fault{Match: c.RefuseLine, Kind: sshemu.Reject, Output: c.Refusal})
		v = r.checkPlan(t)
	}
	if v.Status != drivers.CheckRefused || !v.Unchanged || v.Step == 0 || v.Summary == "" || !c.RefuseLine.MatchString(strings.TrimSpace(v.Line)) {
		t.Fatalf("refused check: %+v", v)
	}
	words := lastLine(v.Message)
	if words == "" || !strings.Contains(c.Refusal, words) {
		t.Errorf("the verdict does not carry the NOS's words (%q): %q", c.Refusal, v.Message)
	}
	same("after a refused check")
	var d *apply.DeviceResult
	if refusedPlan != nil {
		d = r.applyPlan(t, refusedPlan, apply.Options{})
	} else {
		d = r.apply(t, apply.Options{})
	}
	if d.Status != apply.StatusFailed || !strings.Contains(d.Error, words) {
		t.Fatalf("apply must refuse what the check refused (%q): %+v", words, d)
	}
	same("after the refused apply")
	r.emu.ClearFaults()
	if undo != nil {
		undo()
	}

	r.emu.Inject(sshemu.Fault{Match: c.RefuseLine, Kind: sshemu.DropBefore, Times: 1})
	v = r.checkPlan(t)
	if v.Status != drivers.CheckFailed || !v.Unchanged && v.Kept == "" {
		t.Fatalf("a dropped check must fail and restore or name what it kept: %+v", v)
	}
	same("after a dropped check")

	// Nothing pending: the apply goes through and a re-plan is clean.
	if d := r.apply(t, apply.Options{}); d.Status != apply.StatusApplied {
		t.Fatalf("apply after the checks: %+v", d)
	}
	r.clean(t, "after the checks and the apply")
}

// lastLine is the last non-empty line of s, trimmed.
func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(ls[len(ls)-1])
}
