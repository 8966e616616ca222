package srlinux

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

// saveRig is an SR Linux target (factory configuration, commit-confirm)
// and the engine aimed at it.
func saveRig(t *testing.T) (*switchtest.Engine, *gnmitarget.Target) {
	t.Helper()
	s, f := load(t, "testbed")
	sw := switchtest.Switch(t, f, "leaf5", Name)
	g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorSRLinux, Profile: &Descriptor.YANG.Profile, Initial: SystemDefaults(), CommitConfirm: true}, false)
	return switchtest.NewEngine(t, newDriver(g.Options), s, f, sw, g.DT.Credentials), g.Target
}

func applyPlan(t *testing.T, e *switchtest.Engine, dp *plan.DevicePlan) *apply.DeviceResult {
	t.Helper()
	u := plan.Unit{Device: e.SW.Device, Intent: e.SW}
	res, err := apply.Run(t.Context(), []apply.Device{{Plan: dp, Target: plan.Target(u, e.Opts)}}, e.Reg,
		apply.Options{ConfirmTimeout: 30 * time.Second})
	if res == nil || len(res.Devices) != 1 {
		t.Fatalf("apply: %v", err)
	}
	return res.Devices[0]
}

// TestSaveReload: the plan ends with SR Linux's save
// (/tools/system/configuration/save); apply commits with commit-confirm,
// verifies, confirms, then saves (the startup configuration is the
// running one); after a reload (the device boots from startup) the
// re-plan is clean. Without the save, a reload loses the configuration.
func TestSaveReload(t *testing.T) {
	e, tg := saveRig(t)
	dp := e.Plan(t)
	if dp.Error != "" || len(dp.Steps) < 2 {
		t.Fatalf("plan: %s, %d steps", dp.Error, len(dp.Steps))
	}
	last := dp.Steps[len(dp.Steps)-1]
	if !drivers.IsSaveStep(last) || len(last.Payload) != 1 || !strings.Contains(last.Payload[0], SavePath) {
		t.Fatalf("the change list does not end with the save: %+v", last)
	}
	found := false
	for _, f := range dp.Findings {
		found = found || (f.Path == drivers.PathSaved && strings.Contains(f.Message, "not checked"))
	}
	if !found {
		t.Errorf("the plan does not say config/saved is not checked on SR Linux: %+v", dp.Findings)
	}
	factory, _ := tg.Startup()
	d := applyPlan(t, e, dp)
	if d.Status != apply.StatusApplied || !d.Confirmed || !d.Saved {
		t.Fatalf("apply: %+v", d)
	}
	running, _ := tg.Config()
	startup, _ := tg.Startup()
	if string(startup) != string(running) || string(startup) == string(factory) {
		t.Fatalf("startup is not the applied running configuration after the save")
	}
	if st := tg.Stats(); st.Saves != 1 {
		t.Fatalf("saves = %d, want 1 (after the confirm)", st.Saves)
	}
	tg.Reload()
	if d2 := e.Plan(t); d2.Error != "" || d2.HasChanges() {
		t.Fatalf("re-plan after reload: %s %+v", d2.Error, d2.Changes)
	}
}

// TestSaveFailure: a save the device refuses fails the device as
// applied and verified but NOT SAVED (no rollback: the configuration is
// live); a reload then loses it, the next plan shows it, and a repair
// apply saves it so that it survives the next reload.
func TestSaveFailure(t *testing.T) {
	e, tg := saveRig(t)
	const why = "/etc/opt/srlinux/config.json: No space left on device"
	tg.Inject(gnmitarget.Fault{RPC: "Save", Kind: gnmitarget.FaultReject, Code: codes.Internal, Message: why})
	d := applyPlan(t, e, e.Plan(t))
	if d.Status != apply.StatusFailed || !d.NotSaved || d.Saved || d.NotRestored() ||
		!strings.Contains(d.Error, "not saved") || !strings.Contains(d.Error, why) || !strings.Contains(d.Error, SavePath) {
		t.Fatalf("a failed save must fail the device as applied, NOT SAVED: %+v", d)
	}
	if dp := e.Plan(t); dp.HasChanges() {
		t.Fatalf("the configuration is live after a failed save, want no configuration change: %+v", dp.Changes)
	}
	tg.Reload()
	dp := e.Plan(t)
	if dp.Error != "" || len(dp.Changes) < 2 {
		t.Fatalf("the reload kept an unsaved configuration: %s %+v", dp.Error, dp.Changes)
	}
	if d := applyPlan(t, e, dp); d.Status != apply.StatusApplied || !d.Saved {
		t.Fatalf("repair: %+v", d)
	}
	tg.Reload()
	if dp := e.Plan(t); dp.Error != "" || dp.HasChanges() {
		t.Fatalf("after repair and reload: %s %+v", dp.Error, dp.Changes)
	}
}
