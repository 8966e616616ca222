package switchtest

import (
	"testing"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// CheckNoCabling fails unless dl, switch name's link report read from an
// emulator given no cabling (a nil portlink.Source), has every port the
// spec cables down with no neighbour (portlink's rule: never up).
func CheckNoCabling(t *testing.T, s *spec.Spec, name string, dl *linktruth.DeviceLinks) {
	t.Helper()
	ports := portlink.FromSpec(s, name)
	if dl == nil || len(ports) == 0 {
		t.Fatalf("%s: report %+v, cabled ports %v", name, dl, ports)
	}
	for p := range ports {
		if o := dl.Ports[p]; o == nil || o.Oper != linktruth.Down || len(o.Neighbors) != 0 {
			t.Errorf("no cabling: %s:%s reads %+v", name, p, o)
		}
	}
}
