package local_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// rollbackSONiCWithoutGlobal (issue: rollback on a SONiC switch that had
// no PFC_WD|GLOBAL): two SONiC switches without PFC_WD|GLOBAL, the second
// refusing its patch; under --on-failure rollback the first, already
// applied, is rolled back with `config replace`, which the emulator's
// GCU validators check like apply-patch (gu_common.py
// validate_field_operation): fabctl never created PFC_WD|GLOBAL there, so
// the replace removes nothing GCU forbids and the switch is back
// byte for byte.
func rollbackSONiCWithoutGlobal(t *testing.T) {
	t.Helper()
	dir, es := benchEmulators(t, []string{"sonic", "sonic"}, 0)
	sws := []*sonicemu.Switch{es[0].(*sonicemu.Switch), es[1].(*sonicemu.Switch)}
	for _, sw := range sws {
		sw.Edit(func(db map[string]any) {
			db["PFC_WD"] = map[string]any{"Ethernet12": map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}}
		})
	}
	before := sws[0].RunningConfig()
	s, f, reg, opts := loadSpec(t, dir, 1)
	pl := plan.Make(context.Background(), s, f, reg, opts)
	var devs []apply.Device
	for _, u := range plan.Units(f) {
		dp := pl.Device(u.Device.Addr())
		if dp.Error != "" || !dp.HasChanges() {
			t.Fatalf("plan of %s: %q, changes %v", dp.Address, dp.Error, dp.HasChanges())
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	// The second switch refuses its patch once the first is applied.
	sws[1].RejectPatches("Failed to apply patch due to: Modification of PORT table is illegal- validating function generic_config_updater.field_operation_validators.port_config_update_validator returned False")
	res, _ := apply.Run(context.Background(), devs, reg, apply.Options{Parallelism: 1, OnFailure: apply.Rollback})
	var first *apply.DeviceResult
	for _, d := range res.Devices {
		if d.Address == devs[0].Plan.Address {
			first = d
		}
	}
	if first == nil || first.Status != apply.StatusRolledBack || first.RollbackError != "" {
		t.Fatalf("the applied SONiC switch without PFC_WD|GLOBAL was not rolled back clean: %+v", first)
	}
	if now := sws[0].RunningConfig(); !bytes.Equal(now, before) {
		t.Fatalf("after the rollback the running CONFIG_DB differs:\n%s\n---\n%s", now, before)
	}
}
