package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// A miswired link end is a finding no change fixes on its device (the
// plan's mismatch, exit 6), named by port, with the link and the peer;
// a device whose driver reads no links is said not read, never matched;
// a saved plan's re-derivation reads no links.
func TestPlanLinks(t *testing.T) {
	s, f, store, reg := setup(t)
	for _, u := range Units(f) {
		store.Set(u.Device.Name, u.State)
	}
	obs := func(sys, port string) *linktruth.Observation {
		return &linktruth.Observation{Oper: linktruth.Up, SpeedMbps: 100000, Neighbors: []linktruth.Neighbor{{SystemName: sys, PortID: port}}}
	}
	// leaf1's host port hears spine1: a cable in the wrong port.
	store.Links["leaf1"] = &linktruth.DeviceLinks{LLDP: true, Ports: map[string]*linktruth.Observation{
		"Ethernet0": obs("spine1", "Ethernet7"), "Ethernet1": {Oper: linktruth.Up, SpeedMbps: 400000, Neighbors: []linktruth.Neighbor{{SystemName: "spine1", PortID: "Ethernet1"}}}}}
	store.Links["h1"] = &linktruth.DeviceLinks{LLDP: true, Ports: map[string]*linktruth.Observation{"eth1": obs("leaf1", "Ethernet0")}}
	p := Make(context.Background(), s, f, reg, Options{})
	if !p.Mismatched() || p.HasChanges() {
		t.Fatalf("mismatched %v, changes %v", p.Mismatched(), p.HasChanges())
	}
	leaf := p.Device("switch.leaf1")
	if len(leaf.Findings) != 1 {
		t.Fatalf("leaf1 findings %+v", leaf.Findings)
	}
	fd := leaf.Findings[0]
	if fd.Severity != drivers.SeverityError || fd.Kind != linktruth.KindMiswired || fd.Path != "port/Ethernet0/link" ||
		fd.IDs["peer"] != "h1:eth1" || fd.IDs["link"] != "link.leaf1:Ethernet0--h1:eth1" ||
		!strings.Contains(fd.Message, "leaf1:Ethernet0: LLDP neighbour is spine1:Ethernet7, the spec cables h1:eth1") {
		t.Fatalf("finding %+v", fd)
	}
	if len(p.Device("host.h1").Findings) != 0 {
		t.Fatalf("h1 findings %+v", p.Device("host.h1").Findings)
	}
	notes := strings.Join(p.LinkNotes(), "\n")
	if !strings.Contains(notes, "link truth not read on eos") || !strings.Contains(notes, "switch.spine1") {
		t.Fatalf("notes %q", notes)
	}
	if p.Links == nil || p.Links.Links != 2 || p.Links.Ends != 3 {
		t.Fatalf("links report %+v", p.Links)
	}
	var u Unit
	for _, x := range Units(f) {
		if x.Device.Name == "leaf1" {
			u = x
		}
	}
	if d := Derive(context.Background(), u, reg, Options{}); d.links != nil {
		t.Fatalf("Derive read links: %+v", d.links)
	}
}

// TestPlanLinkSettle: a port that heard no LLDP neighbour while its peer
// speaks LLDP (a NIC apply has just brought up) is read again every
// second for up to Options.LinkSettle; once it hears the neighbour the
// link is clean. Silence that outlasts the window stays the fault, and
// the wait is bounded.
func TestPlanLinkSettle(t *testing.T) {
	s, f, store, reg := setup(t)
	for _, u := range Units(f) {
		store.Set(u.Device.Name, u.State)
	}
	heard := func(sys, port string) *linktruth.DeviceLinks {
		o := &linktruth.Observation{Oper: linktruth.Up, SpeedMbps: 100000}
		if sys != "" {
			o.Neighbors = []linktruth.Neighbor{{SystemName: sys, PortID: port}}
		}
		return &linktruth.DeviceLinks{LLDP: true, Ports: map[string]*linktruth.Observation{"eth1": o}}
	}
	leaf := &linktruth.DeviceLinks{LLDP: true, Ports: map[string]*linktruth.Observation{
		"Ethernet0": {Oper: linktruth.Up, SpeedMbps: 100000, Neighbors: []linktruth.Neighbor{{SystemName: "h1", PortID: "eth1"}}},
		"Ethernet1": {Oper: linktruth.Up, SpeedMbps: 400000, Neighbors: []linktruth.Neighbor{{SystemName: "spine1", PortID: "Ethernet1"}}}}}
	store.SetLinks("leaf1", leaf)
	silent := func(p *Plan) int {
		n := 0
		for _, fd := range p.Device("host.h1").Findings {
			if fd.Kind == linktruth.KindNoNeighbor {
				n++
			}
		}
		return n
	}

	store.SetLinks("h1", heard("", ""))
	if p := Make(context.Background(), s, f, reg, Options{}); silent(p) != 1 || !p.Mismatched() {
		t.Fatalf("no settle: h1 findings %+v", p.Device("host.h1").Findings)
	}

	store.SetLinks("h1", heard("", ""))
	go func() {
		time.Sleep(1200 * time.Millisecond)
		store.SetLinks("h1", heard("leaf1", "Ethernet0"))
	}()
	start := time.Now()
	p := Make(context.Background(), s, f, reg, Options{LinkSettle: 20 * time.Second})
	if took := time.Since(start); silent(p) != 0 || p.Mismatched() || took < time.Second || took > 10*time.Second {
		t.Fatalf("settled in %v: h1 findings %+v", took, p.Device("host.h1").Findings)
	}

	store.SetLinks("h1", heard("", ""))
	start = time.Now()
	p = Make(context.Background(), s, f, reg, Options{LinkSettle: 1500 * time.Millisecond})
	if took := time.Since(start); silent(p) != 1 || took < 1500*time.Millisecond || took > 5*time.Second {
		t.Fatalf("never heard, %v: h1 findings %+v", took, p.Device("host.h1").Findings)
	}
}
