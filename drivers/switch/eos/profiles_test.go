package eos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

// TestProfileNames: one profile per distinct port QoS shape, named by
// how it differs from the switch's default; equal shapes share a name.
func TestProfileNames(t *testing.T) {
	sw := &intent.Switch{Trust: "dscp", Watchdog: intent.Watchdog{Enabled: true, Action: "drop"}}
	def := shape{trust: "dscp", pfc: []int{3}, watchdog: true}
	tests := []struct {
		s    shape
		want string
	}{
		{def, "FABCTL"},
		{shape{trust: "dscp", pfc: nil}, "FABCTL-NOPFC"},
		{shape{trust: "dscp", pfc: []int{3}}, "FABCTL-PFC3-NOWD"},
		{shape{trust: "dscp", pfc: []int{3, 4}, watchdog: true}, "FABCTL-PFC34"},
		{shape{trust: "pcp", pfc: []int{3}, watchdog: true}, "FABCTL-COS-PFC3"},
		{shape{trust: "pcp", pfc: nil}, "FABCTL-COS-NOPFC"},
	}
	for _, tt := range tests {
		if got := profileName(sw, def, tt.s); got != tt.want {
			t.Errorf("profileName(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// mixedLeaf is MixedQoS's leaf-eos on an emulator over SSH: its intent,
// the emulator, plan (read, diff, steps) and apply (which fails unless
// a re-plan is empty then).
func mixedLeaf(t *testing.T) (*intent.Switch, *eosemu.Switch, func() (intent.State, []intent.AttrChange, []drivers.Change), func([]drivers.Change)) {
	t.Helper()
	_, f := switchtest.Load(t, switchtest.MixedQoS)
	sw := eosSwitch(t, f, "leaf-eos")
	emu, err := eosemu.Start(eosemu.Options{Hostname: "leaf-eos", Password: switchtest.Password, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	drv := NewWith(opts)
	plan := func() (intent.State, []intent.AttrChange, []drivers.Change) {
		return switchtest.Plan(t, drv, target, expressible(sw))
	}
	apply := func(steps []drivers.Change) {
		t.Helper()
		if _, err := drv.Apply(context.Background(), target, steps, drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, diff, _ := plan(); len(diff) != 0 {
			t.Fatalf("re-plan not empty: %+v", diff)
		}
	}
	return sw, emu, plan, apply
}

// TestSeveralProfiles: a leaf whose uplink, GPU, storage and legacy
// ports have different QoS gets four qos profiles over real SSH; the
// apply converges, a drifted tx-queue in a profile other than FABCTL is
// detected, and a port moved to another shape changes profile.
func TestSeveralProfiles(t *testing.T) {
	sw, emu, plan, apply := mixedLeaf(t)
	_, _, steps := plan()
	apply(steps)
	run := string(emu.RunningConfig())
	for _, want := range []string{
		"qos profile FABCTL-NOPFC\n", "qos profile FABCTL-PFC3-NOWD\n", "qos profile FABCTL-COS-PFC3\n   qos trust cos\n",
		"interface Ethernet1\n   mtu 9000\n   service-profile FABCTL-PFC3-NOWD\n",
		"interface Ethernet3\n   mtu 9000\n   service-profile FABCTL-NOPFC\n",
	} {
		if !strings.Contains(run, want) {
			t.Fatalf("running-config lacks %q:\n%s", want, run)
		}
	}

	// Drift in a profile only the storage port uses.
	emu.Edit(func(c *eosemu.Config) {
		c.Profiles["FABCTL-NOPFC"].TxQueues[3].ECN = "minimum-threshold 1024 kbytes maximum-threshold 2048 kbytes max-mark-probability 5"
	})
	live, diff, steps := plan()
	if len(diff) != 3 || live["tc/3/ecn/min"] != "150000 (qos profile FABCTL-NOPFC: 1024000)" {
		t.Fatalf("drift in FABCTL-NOPFC: %+v", diff)
	}
	apply(steps)

	// The storage port becomes a RoCE port: it moves to FABCTL.
	for i := range sw.Ports {
		if sw.Ports[i].Name == "Ethernet3" {
			sw.Ports[i].PFC, sw.Ports[i].Watchdog = []int{3}, true
		}
	}
	_, diff, steps = plan()
	if len(diff) != 2 || diff[0].Path != "port/Ethernet3/pfc" || diff[1].Path != "port/Ethernet3/pfcwd" {
		t.Fatalf("moved port: %+v", diff)
	}
	payload := strings.Join(steps[0].Payload, "\n")
	if !strings.Contains(payload, "interface Ethernet3\n   mtu 9000\n   service-profile FABCTL") {
		t.Fatalf("payload: %s", payload)
	}
	apply(steps)
}
