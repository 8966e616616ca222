package local_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// TestRollbackRestoresStartup applies two SONiC emulators over SSH
// under --on-failure rollback, one device at a time: sw00 is applied,
// verified and saved (`config save`), then sw01's patch is refused by
// GCU, and sw00 is rolled back. Its running CONFIG_DB is back, and so is
// /etc/sonic/config_db.json: after a `config reload` sw00 still runs
// what it ran before the apply (before, the rollback restored the
// running configuration only; the reload brought the change back, and
// the rollback was reported failed on config/saved).
func TestRollbackRestoresStartup(t *testing.T) {
	t.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	dir, emus := benchEmulators(t, []string{"sonic", "sonic"}, 0)
	sw00, sw01 := emus[0].(*sonicemu.Switch), emus[1].(*sonicemu.Switch)
	before := sw00.RunningConfig()
	s, f, reg, opts := loadSpec(t, dir, 1)
	p := plan.Make(context.Background(), s, f, reg, opts)
	var devs []apply.Device
	for _, u := range plan.Units(f) {
		dp := p.Device(u.Device.Addr())
		if dp.Error != "" || !dp.HasChanges() {
			t.Fatalf("plan %s: %q, %d changes", dp.Address, dp.Error, len(dp.Changes))
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	sw01.RejectPatches("Modification of PORT table is illegal")
	res, err := apply.Run(context.Background(), devs, reg, apply.Options{Parallelism: 1, OnFailure: apply.Rollback})
	if err == nil {
		t.Fatal("apply with a refused patch on sw01 succeeded")
	}
	var got *apply.DeviceResult
	for _, d := range res.Devices {
		if d.Name == "sw00" {
			got = d
		}
	}
	if got == nil || got.Status != apply.StatusRolledBack || got.RollbackError != "" {
		t.Fatalf("sw00: %+v; want rolled back", got)
	}
	if !bytes.Equal(sw00.RunningConfig(), before) {
		t.Errorf("sw00's running CONFIG_DB after the rollback differs from before the apply")
	}
	sw00.Reload()
	if !bytes.Equal(sw00.RunningConfig(), before) {
		t.Errorf("sw00 after config reload runs the rolled-back change: config_db.json kept it")
	}
}
