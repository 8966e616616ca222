package srlinux

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	gc "github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

func newDriver(o gc.Options) drivers.Driver {
	return &Driver{Core: gc.Core{P: Platform{}, Options: o}}
}

// TestAgainstTarget runs the gNMI scenarios for examples/testbed leaf5
// against SR Linux targets validating every Set with the SR Linux models.
func TestAgainstTarget(t *testing.T) {
	switchtest.RunGNMI(t, switchtest.GNMICase{
		Flavor: gnmitarget.FlavorSRLinux, YANG: &Descriptor.YANG.Profile, Initial: SystemDefaults(),
		Spec: "../../../examples/testbed", Switch: "leaf5", Platform: Name, New: newDriver,
		Drift: []gc.Op{
			gc.NewOp(gc.OpUpdate, "/interface[name=ethernet-1/1]", map[string]any{"mtu": 1514}),
			gc.NewOp(gc.OpReplace, "/qos/buffer-management/queue-management-profile[name=fabctl-tc3-ecn]",
				map[string]any{"name": "fabctl-tc3-ecn", "wred": map[string]any{"wred-slope": []any{map[string]any{
					"traffic-type": "all", "drop-probability": "all", "enable-ecn": true, "slope-enabled": true,
					"min-threshold": "1048576", "max-threshold": "1500000", "max-drop-probability-percent": 100}}}}),
			gc.NewOp(gc.OpUpdate, "/qos/pfc-mapping-profile[name=fabctl-pfc]/received-pfc-pause-frames/deadlock", map[string]any{"detection-timer": 1000}),
		},
		DriftPaths: []string{"port/ethernet-1/1/mtu", "tc/3/ecn/min", "pfcwd/detect"},
		// A port name srl_nokia-common's interface-all pattern refuses (the
		// renderer refuses an MTU outside the IXR's range itself).
		Invalid:    func(sw *intent.Switch) { sw.Ports[0].Name = "ethernet-1/999" },
		InvalidMsg: "does not match pattern",
	})
}

// TestPortPFCProfiles: a port moving to its own PFC set gets a profile
// named after it, and moving back deletes that profile from the device.
func TestPortPFCProfiles(t *testing.T) {
	_, f := load(t, "testbed")
	sw := switchtest.Switch(t, f, "leaf5", Name)
	g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorSRLinux, Profile: &Descriptor.YANG.Profile, Initial: SystemDefaults()}, false)
	drv := newDriver(g.Options)
	apply := func(wantIn, wantOut string) {
		t.Helper()
		_, diff, steps := switchtest.Plan(t, drv, g.DT, switchtest.Desired(drv, sw))
		if len(diff) == 0 {
			t.Fatal("no changes planned")
		}
		if _, err := drv.Apply(context.Background(), g.DT, steps, drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, diff, _ := switchtest.Plan(t, drv, g.DT, switchtest.Desired(drv, sw)); len(diff) != 0 {
			t.Fatalf("re-plan not clean: %+v", diff)
		}
		cfg, _ := g.Target.Config()
		if wantIn != "" && !strings.Contains(string(cfg), wantIn) {
			t.Fatalf("%s not on the device:\n%s", wantIn, cfg)
		}
		if wantOut != "" && strings.Contains(string(cfg), wantOut) {
			t.Fatalf("%s still on the device", wantOut)
		}
	}
	apply(`"fabctl-pfc"`, "fabctl-pfc-3-4")
	orig := sw.Ports[0]
	sw.Ports[0].PFC, sw.Ports[0].Watchdog = []int{3, 4}, false
	apply(`"fabctl-pfc-3-4-nowd"`, "")
	sw.Ports[0] = orig
	apply(`"fabctl-pfc"`, "fabctl-pfc-3-4-nowd")
}
