package builtin

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
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

// TestSpecPlatformsFixture writes internal/testutil/platforms.json, the
// platform list of the tests that cannot import this package, from the
// descriptors (-update), and fails when it is stale.
func TestSpecPlatformsFixture(t *testing.T) {
	b, err := json.MarshalIndent(SpecPlatforms(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "../../internal/testutil/platforms.json", append(b, '\n'))
	if !testutil.Update() && !reflect.DeepEqual(testutil.Platforms(), SpecPlatforms()) {
		t.Errorf("testutil.Platforms() does not read back as the descriptors':\n got %+v\nwant %+v", testutil.Platforms(), SpecPlatforms())
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

// TestNoPFCAsTheDriverSays: a platform whose descriptor tells lint it has
// no PFC is one whose driver lists a port's PFC as not expressible, with
// the same reason; every other platform's driver expresses it.
func TestNoPFCAsTheDriverSays(t *testing.T) {
	for _, p := range Platforms() {
		if p.New == nil {
			continue
		}
		port := p.Ports.Name(0)
		sw := &intent.Switch{Device: intent.Device{Kind: intent.KindSwitch, Name: "s", Platform: p.Name},
			Ports: []intent.Port{{Name: port, PFC: []int{3}}}}
		desired := intent.State{"port/" + port + "/pfc": "3"}
		why := ""
		if lim, ok := p.New().(drivers.Limiter); ok {
			why = lim.Unexpressible(drivers.Target{Device: sw.Device, Intent: sw}, desired)["port/"+port+"/pfc"]
		}
		if why != p.Limits.NoPFC {
			t.Errorf("platform %s: the driver says port PFC is not expressible because %q, the descriptor's NoPFC is %q", p.Name, why, p.Limits.NoPFC)
		}
	}
}
