package srlinux

import (
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

// TestGnmicRequestFile: the rendered request file, read as gnmic reads
// it and sent to an SR Linux target with its factory configuration, leaves the
// device as apply would (switchtest.CheckRequestFile).
func TestGnmicRequestFile(t *testing.T) {
	s, f := load(t, "testbed")
	sw := switchtest.Switch(t, f, "leaf5", Name)
	g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorSRLinux, Profile: &Descriptor.YANG.Profile, Initial: SystemDefaults()}, false)
	drv := newDriver(g.Options)
	switchtest.CheckRequestFile(t, drv, switchtest.NewEngine(t, drv, s, f, sw, g.DT.Credentials), g)
}
