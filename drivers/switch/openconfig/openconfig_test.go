package openconfig

import (
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

// TestAgainstTarget runs the gNMI scenarios for testdata/oc.fab.hcl leaf1
// against OpenConfig targets validating every Set with the OpenConfig
// models.
func TestAgainstTarget(t *testing.T) {
	switchtest.RunGNMI(t, switchtest.GNMICase{
		Flavor: gnmitarget.FlavorOpenConfig, YANG: &Descriptor.YANG.Profile,
		Spec: "testdata/oc.fab.hcl", Switch: "leaf1", Platform: Name, New: newDriver,
		Drift: []gc.Op{
			gc.NewOp(gc.OpUpdate, InterfacesRoot+"/interface[name=Ethernet0]/config", map[string]any{"mtu": 1514}),
			gc.NewOp(gc.OpUpdate, QoSRoot+"/queue-management-profiles/queue-management-profile[name=fabctl-tc3-ecn]/wred/uniform/config",
				map[string]any{"min-threshold": "1048576"}),
			gc.NewOp(gc.OpDelete, QoSRoot+"/interfaces/interface[interface-id=Ethernet8]/input", nil),
		},
		DriftPaths: []string{"port/Ethernet0/mtu", "tc/3/ecn/min", "port/Ethernet8/trust"},
		Invalid:    func(sw *intent.Switch) { sw.Ports[0].MTU = 70000 }, // uint16 mtu
		InvalidMsg: "out of range",
	})
}
