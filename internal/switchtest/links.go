package switchtest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// ReadLinksFunc starts the platform's emulator answering from src and
// returns what the driver's ReadLinks read from it.
type ReadLinksFunc func(t *testing.T, src portlink.Source) *linktruth.DeviceLinks

// RunLinks is the link truth check every switch driver passes against
// its emulator: switch sw cabled as spec s draws it (portlink.FromSpec)
// reads with no finding; then each fault on its first cabled port (a
// miswire, the port down, a lower speed, more errors than
// link_errors_max) is one mismatch finding of its kind, naming the port.
// A nil Source reads every port down.
func RunLinks(t *testing.T, s *spec.Spec, sw string, read ReadLinksFunc) {
	t.Helper()
	addr := "switch." + sw
	compare := func(t *testing.T, src portlink.Source) *linktruth.Report {
		t.Helper()
		dl := read(t, src)
		if dl == nil || !dl.LLDP {
			t.Fatalf("%s: no link report with LLDP: %+v", sw, dl)
		}
		return linktruth.Compare(s, map[string]linktruth.Read{addr: {Links: dl}})
	}
	clean := portlink.FromSpec(s, sw)
	ports := slices.Sorted(maps.Keys(clean))
	if len(ports) == 0 {
		t.Fatalf("%s has no cabled port in the spec", sw)
	}
	t.Run("clean", func(t *testing.T) {
		r := compare(t, clean)
		if len(r.Findings) != 0 || r.Ends != len(ports) {
			t.Fatalf("clean cabling: %d of %d ends read, findings %v", r.Ends, len(ports), r.Findings)
		}
	})
	port := ports[0]
	o := clean[port]
	for _, c := range []struct {
		kind  string
		fault linktruth.Observation
	}{
		{linktruth.KindMiswired, with(o, func(o *linktruth.Observation) {
			o.Neighbors = []linktruth.Neighbor{{SystemName: "elsewhere", PortID: "Ethernet99", PortIDSubtype: "ifname"}}
		})},
		{linktruth.KindLinkDown, with(o, func(o *linktruth.Observation) { o.Oper, o.SpeedMbps, o.Neighbors = linktruth.Down, 0, nil })},
		{linktruth.KindSpeed, with(o, func(o *linktruth.Observation) { o.SpeedMbps /= 10 })},
		{linktruth.KindErrors, with(o, func(o *linktruth.Observation) {
			o.Counters = &linktruth.Counters{InErrors: uint64(s.Fabric.LinkErrorsMax) + 7}
		})},
	} {
		t.Run(c.kind, func(t *testing.T) {
			if c.kind == linktruth.KindSpeed && o.SpeedMbps == 0 {
				t.Skipf("the spec gives %s:%s no speed", sw, port)
			}
			r := compare(t, clean.With(port, c.fault))
			if len(r.Findings) != 1 {
				t.Fatalf("%s on %s: findings %v", c.kind, port, r.Findings)
			}
			f := r.Findings[0]
			if f.Kind != c.kind || f.Port != port || f.Device != addr || f.Verdict != linktruth.VerdictMismatch || !strings.Contains(f.End, port) {
				t.Fatalf("%s on %s: finding %+v", c.kind, port, f)
			}
		})
	}
	t.Run("no-source", func(t *testing.T) {
		dl := read(t, nil)
		for _, p := range ports {
			if o := dl.Ports[p]; o == nil || o.Oper != linktruth.Down || len(o.Neighbors) != 0 {
				t.Fatalf("no cabling: %s reads %+v", p, o)
			}
		}
	})
}

func with(o linktruth.Observation, f func(*linktruth.Observation)) linktruth.Observation {
	o.Neighbors = slices.Clone(o.Neighbors)
	f(&o)
	return o
}
