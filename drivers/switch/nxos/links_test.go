package nxos

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// The corpus's real outputs parse into the report the comparison reads:
// NX-OS 7.x (numbers) and 10.x (strings, FEC) interface rows, a shut
// port, "auto-speed", the LLDP table's abbreviated local ports and its
// "null" port description.
func TestParseLinksCorpus(t *testing.T) {
	dl, err := ParseLinks(corpusBody(t, "napalm-show-interface.json"), corpusBody(t, "harvest-show-lldp-neighbors-detail.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !dl.LLDP || dl.Source != showInterface || dl.LLDPSource != showLLDP || len(dl.Ports) != 4 {
		t.Fatalf("report %+v", dl)
	}
	want := map[string]linktruth.Observation{
		"Ethernet1/1": {Port: "Ethernet1/1", Oper: linktruth.Down},
		"Ethernet1/2": {Port: "Ethernet1/2", Oper: linktruth.Down, AdminDown: true},
		"Ethernet2/1": {Port: "Ethernet2/1", Oper: linktruth.Up, SpeedMbps: 1000, Counters: &linktruth.Counters{}},
		"Ethernet2/7": {Port: "Ethernet2/7", Oper: linktruth.Down, AdminDown: true, Counters: &linktruth.Counters{}},
	}
	for p, w := range want {
		o := dl.Ports[p]
		if o == nil || o.Oper != w.Oper || o.AdminDown != w.AdminDown || o.SpeedMbps != w.SpeedMbps || (o.Counters == nil) != (w.Counters == nil) {
			t.Errorf("%s: %+v, want %+v", p, o, w)
		}
	}
	dl, err = ParseLinks(corpusBody(t, "harvest-show-interface.json"), corpusBody(t, "harvest-show-lldp-neighbors-detail.json"))
	if err != nil {
		t.Fatal(err)
	}
	e1 := dl.Ports["Ethernet1/1"]
	if e1.Oper != linktruth.Up || e1.SpeedMbps != 40000 || e1.FEC != "off" || *e1.Counters != (linktruth.Counters{OutDiscards: 8}) {
		t.Fatalf("Ethernet1/1 %+v %+v", e1, e1.Counters)
	}
	if n := e1.Neighbors; len(n) != 1 || n[0] != (linktruth.Neighbor{SystemName: "sa-tme-flexpod-afx-c1-01", ChassisID: "d039.ea53.77ed", PortID: "e4b", PortIDSubtype: "ifname"}) {
		t.Fatalf("Ethernet1/1 neighbours %+v", n)
	}
}

// Output that is not NX-OS's JSON tables is an error naming the
// command; a one-row table may be the row itself.
func TestParseLinksShapes(t *testing.T) {
	one := `{"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/3", "state": "up", "eth_speed": "100 Gb/s", "eth_inerr": 2}}}`
	lldp := `{"TABLE_nbor_detail": {"ROW_nbor_detail": {"l_port_id": "Eth1/3", "sys_name": "spine1", "port_id": "Ethernet1/9", "port_type": "Interface Name"}}}`
	dl, err := ParseLinks(one, lldp)
	if err != nil {
		t.Fatal(err)
	}
	o := dl.Ports["Ethernet1/3"]
	if o.SpeedMbps != 100000 || o.Counters.InErrors != 2 || len(o.Neighbors) != 1 || o.Neighbors[0].PortID != "Ethernet1/9" {
		t.Fatalf("one row: %+v", o)
	}
	if dl, err := ParseLinks(one, `{"neigh_count": "0"}`); err != nil || len(dl.Ports["Ethernet1/3"].Neighbors) != 0 {
		t.Fatalf("no neighbour table: %+v %v", dl, err)
	}
	for _, tc := range [][2]string{
		{"% Invalid command at '^' marker.", lldp},
		{one, "% Invalid command at '^' marker."},
		{`{}`, lldp},
		{`{"TABLE_interface": {"ROW_interface": [{"state": "up"}]}}`, lldp},
		{`{"TABLE_interface": {"ROW_interface": [{"interface": "Ethernet1/1", "eth_inerr": "many"}]}}`, lldp},
		{`{"TABLE_interface": {"ROW_interface": [{"interface": "Ethernet1/1", "eth_inerr": -1}]}}`, lldp},
		{`{"TABLE_interface": {"ROW_interface": "x"}}`, lldp},
		{one, `{"TABLE_nbor_detail": {"ROW_nbor_detail": 7}}`},
	} {
		if dl, err := ParseLinks(tc[0], tc[1]); err == nil || !strings.Contains(err.Error(), "show ") {
			t.Errorf("ParseLinks(%q, %q) = %+v, %v", tc[0], tc[1], dl, err)
		}
	}
}

func FuzzParseLinks(f *testing.F) {
	f.Add(corpusBody(f, "napalm-show-interface.json"), corpusBody(f, "harvest-show-lldp-neighbors-detail.json"))
	f.Add(corpusBody(f, "harvest-show-interface.json"), `{"neigh_count": "0"}`)
	f.Fuzz(func(t *testing.T, ifs, lldp string) {
		dl, err := ParseLinks(ifs, lldp)
		if err == nil && (dl == nil || dl.Ports == nil) {
			t.Fatal("no error and no report")
		}
		if err != nil && !strings.Contains(err.Error(), "show ") {
			t.Fatalf("error names no command: %v", err)
		}
	})
}

// TestLinks: examples/testbed's leaf3 against nxosemu answering from the
// cabling (Options.Links): clean as the spec draws it, a miswire, a port
// down, a lower speed and errors each named by port in plan's links
// stage (the switch read, not listed as "link truth not read"), and
// every port down without cabling.
func TestLinks(t *testing.T) {
	s, _ := load(t, filepath.Join("..", "..", "..", "examples", "testbed"))
	switchtest.RunLinks(t, s, "leaf3", func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target) {
		emu, err := nxosemu.Start(nxosemu.Options{Hostname: sw.Name, Password: switchtest.Password, Ports: 8, Links: src})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { emu.Close() })
		target, opts := switchtest.Connect(t, emu, sw, "admin")
		return NewWith(opts), target
	})
}
