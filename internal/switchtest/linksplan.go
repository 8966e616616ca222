package switchtest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/yangval"
)

// LinkEmulator starts switch sw's emulator answering its interface and
// LLDP state from src (sw.Address is pointed at it) and returns the
// platform's driver for it and the credentials the plan hands it.
type LinkEmulator func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, *spec.Credentials)

// RunPlanLinks is the link truth check of a switch driver through plan's
// links stage (the one validate fails on), against its emulator: switch
// name of spec s cabled as the spec draws it (portlink.FromSpec) plans
// with no link finding and is not listed as unread; each fault on its
// first cabled port (a miswire, the port down, a lower speed, more
// errors than link_errors_max, through Static.With) is one mismatch
// finding of its kind on that port, in the plan's report and on the
// device (port/<port>/link, an error: the plan's mismatch).
func RunPlanLinks(t *testing.T, s *spec.Spec, name string, start LinkEmulator) {
	t.Helper()
	addr := "switch." + name
	clean := portlink.FromSpec(s, name)
	ports := slices.Sorted(maps.Keys(clean))
	if len(ports) == 0 {
		t.Fatalf("%s has no cabled port in the spec", name)
	}
	run := func(t *testing.T, src portlink.Source) *plan.Plan {
		t.Helper()
		f := intent.Compile(s)
		var sw *intent.Switch
		for _, x := range f.Switches {
			if x.Name == name {
				sw = x
			}
		}
		if sw == nil {
			t.Fatalf("no switch %s", name)
		}
		drv, creds := start(t, sw, src)
		reg := drivers.NewRegistry()
		if err := reg.Register(sw.Platform, func() drivers.Driver { return drv }); err != nil {
			t.Fatal(err)
		}
		p := plan.Make(context.Background(), s, f, reg, plan.Options{Targets: []string{addr},
			Credentials: func(string) *spec.Credentials { return creds }})
		if dp := p.Device(addr); dp == nil || dp.Error != "" {
			t.Fatalf("%s not planned: %+v", addr, dp)
		}
		if p.Links == nil {
			t.Fatal("the plan has no links report")
		}
		for _, n := range p.LinkNotes() {
			if strings.Contains(n, addr) {
				t.Fatalf("%s's links not read: %s", addr, n)
			}
		}
		return p
	}
	linkFindings := func(p *plan.Plan) []drivers.Finding {
		var out []drivers.Finding
		for _, f := range p.Device(addr).Findings {
			if strings.HasSuffix(f.Path, "/link") {
				out = append(out, f)
			}
		}
		return out
	}
	t.Run("clean", func(t *testing.T) {
		p := run(t, clean)
		if fs := linkFindings(p); len(fs) != 0 || len(p.Links.Findings) != 0 || p.Mismatched() {
			t.Fatalf("clean cabling: findings %+v %+v", fs, p.Links.Findings)
		}
		if p.Links.Ends != len(ports) {
			t.Fatalf("clean cabling: %d ends read, want %d", p.Links.Ends, len(ports))
		}
	})
	port := ports[0]
	o := clean[port]
	for _, c := range []struct {
		kind  string
		fault func(o *linktruth.Observation)
	}{
		{linktruth.KindMiswired, func(o *linktruth.Observation) {
			o.Neighbors = []linktruth.Neighbor{{SystemName: "elsewhere", PortID: "Ethernet99", PortIDSubtype: "ifname"}}
		}},
		{linktruth.KindLinkDown, func(o *linktruth.Observation) { o.Oper, o.Neighbors = linktruth.Down, nil }},
		{linktruth.KindSpeed, func(o *linktruth.Observation) { o.SpeedMbps /= 10 }},
		{linktruth.KindErrors, func(o *linktruth.Observation) {
			o.Counters = &linktruth.Counters{InErrors: uint64(s.Fabric.LinkErrorsMax) + 7}
		}},
	} {
		t.Run(c.kind, func(t *testing.T) {
			if c.kind == linktruth.KindSpeed && o.SpeedMbps == 0 {
				t.Fatalf("the spec gives %s:%s no speed", name, port)
			}
			fault := o
			fault.Neighbors = slices.Clone(o.Neighbors)
			c.fault(&fault)
			p := run(t, clean.With(port, fault))
			if len(p.Links.Findings) != 1 {
				t.Fatalf("%s on %s: findings %+v", c.kind, port, p.Links.Findings)
			}
			f := p.Links.Findings[0]
			if f.Kind != c.kind || f.Port != port || f.Device != addr || f.Verdict != linktruth.VerdictMismatch || !strings.Contains(f.End, port) {
				t.Fatalf("%s on %s: finding %+v", c.kind, port, f)
			}
			fs := linkFindings(p)
			if len(fs) != 1 || fs[0].Path != "port/"+port+"/link" || fs[0].Kind != c.kind || fs[0].Severity != drivers.SeverityError || !p.Mismatched() {
				t.Fatalf("%s on %s: device findings %+v (mismatched %v)", c.kind, port, fs, p.Mismatched())
			}
		})
	}
}

// CheckModelPaths fails for each path (gNMI path strings, keys ignored)
// that model set set of ../shared/yang lacks; prefer picks among
// same-named top-level nodes ("openconfig-", "srl_nokia-").
func CheckModelPaths(t *testing.T, set, prefer string, paths []string) {
	t.Helper()
	s := Schema(t, set)
	for _, p := range paths {
		elems, err := yangval.ParsePath(p)
		if err != nil || len(elems) == 0 {
			t.Errorf("%s: %v", p, err)
			continue
		}
		n := s.ResolveRoot(elems[0].Name, prefer)
		for i := 1; i < len(elems) && n.Valid(); i++ {
			n = n.Child(elems[i].Name)
		}
		if !n.Valid() {
			t.Errorf("%s is not in the %s models of ../shared/yang", p, set)
		}
	}
}

// FuzzLinkTree fuzzes a gNMI platform's link decoder with Get answers
// (JSON objects; seeds first): any answer reads as ports or an error,
// never a panic, and every port under its own name.
func FuzzLinkTree(f *testing.F, seeds []string, decode func(tree map[string]any) (*linktruth.DeviceLinks, error)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dl, err := DecodeLinkTree(b, decode)
		if err != nil {
			return
		}
		for k, o := range dl.Ports {
			if o == nil || o.Port != k {
				t.Fatalf("port %q reported as %+v", k, o)
			}
		}
	})
}

// DecodeLinkTree decodes a Get answer (JSON, numbers kept as written)
// with a platform's link decoder.
func DecodeLinkTree(b []byte, decode func(tree map[string]any) (*linktruth.DeviceLinks, error)) (*linktruth.DeviceLinks, error) {
	v, err := gnmicore.Decode(b)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return decode(m)
}
