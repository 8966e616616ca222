package builtin

import (
	"reflect"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/spec/spectest"
)

func TestRegistry(t *testing.T) {
	r := Registry()
	for _, name := range []string{"host", "opensm", "srlinux", "openconfig"} {
		d, err := r.New(name)
		if err != nil || d.Name() == "" {
			t.Errorf("driver %s: %v", name, err)
		}
	}
	if _, err := r.New("nope"); err == nil {
		t.Errorf("unknown driver accepted")
	}
}

// TestSpecPlatformsFixture keeps spectest.Platforms, the list for tests
// that cannot import this package, equal to the descriptors'.
func TestSpecPlatformsFixture(t *testing.T) {
	if got := SpecPlatforms(); !reflect.DeepEqual(got, spectest.Platforms) {
		t.Errorf("spec/spectest.Platforms is out of date:\n got %v\nwant %v", spectest.Platforms, got)
	}
}

func TestPlatforms(t *testing.T) {
	r := Registry()
	for _, p := range Platforms() {
		if p.InfiniBand {
			if p.New != nil {
				t.Errorf("platform %s: an InfiniBand switch platform has no driver", p.Name)
			}
			continue
		}
		if p.Name == "" || p.New == nil || (p.Transport != drivers.TransportSSH && p.Transport != drivers.TransportGNMI) {
			t.Errorf("platform %+v: incomplete descriptor", p)
		}
		if d, err := r.New(p.Name); err != nil || d.Name() != p.Name {
			t.Errorf("platform %s: registry gives %v, %v", p.Name, d, err)
		}
	}
}
