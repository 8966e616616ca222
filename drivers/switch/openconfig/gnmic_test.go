package openconfig

import (
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

// TestGnmicRequestFile: the rendered request file, read as gnmic reads
// it and sent to an OpenConfig target whose interfaces exist, leaves the
// device as apply would (switchtest.CheckRequestFile).
func TestGnmicRequestFile(t *testing.T) {
	s, f := load(t, "testdata/oc.fab.hcl")
	sw := switchtest.Switch(t, f, "leaf1", Name)
	g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorOpenConfig, Profile: &Descriptor.YANG.Profile}, false)
	drv := newDriver(g.Options)
	switchtest.CheckRequestFile(t, drv, switchtest.NewEngine(t, drv, s, f, sw, g.DT.Credentials), g)
}
