package switchtest

import (
	"context"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// LinkDevice starts switch sw's emulator answering its link commands
// from src (nil: no cabling) and returns the platform's driver for it
// and the target that reaches it (Connect's).
type LinkDevice func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target)

// RunLinks is the link truth check of an SSH switch driver against its
// emulator: RunPlanLinks (clean cabling, and each fault by port, through
// plan's links stage), then the emulator without cabling, whose spec
// ports the driver's ReadLinks must read down with no neighbour
// (portlink's rule: never up).
func RunLinks(t *testing.T, s *spec.Spec, name string, start LinkDevice) {
	t.Helper()
	RunPlanLinks(t, s, name, func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, *spec.Credentials) {
		drv, target := start(t, sw, src)
		return drv, target.Credentials
	})
	t.Run("no-cabling", func(t *testing.T) {
		var sw *intent.Switch
		for _, x := range intent.Compile(s).Switches {
			if x.Name == name {
				sw = x
			}
		}
		if sw == nil {
			t.Fatalf("no switch %s", name)
		}
		drv, target := start(t, sw, nil)
		lr, ok := drv.(drivers.LinkReader)
		if !ok {
			t.Fatalf("the %s driver reads no link truth", sw.Platform)
		}
		dl, err := lr.ReadLinks(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		for p := range portlink.FromSpec(s, name) {
			if o := dl.Ports[p]; o == nil || o.Oper != linktruth.Down || len(o.Neighbors) != 0 {
				t.Errorf("no cabling: %s:%s reads %+v", name, p, o)
			}
		}
	})
}
