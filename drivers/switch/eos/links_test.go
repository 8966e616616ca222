package eos

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// The vendor corpus's real outputs parse into the report the comparison
// reads: line protocol up, bandwidth in Mb/s, the counters, LLDP
// neighbours with a MAC port ID (the neighbour's ifname in the
// description) and with a quoted interface name.
func TestParseLinksCorpus(t *testing.T) {
	dl, err := ParseLinks(corpusBody(t, "napalm-show-interfaces.json"), corpusBody(t, "napalm-show-lldp-neighbors-detail.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !dl.LLDP || dl.Source != showInterfaces || dl.LLDPSource != showLLDP || len(dl.Ports) != 2 {
		t.Fatalf("report %+v", dl)
	}
	e5 := dl.Ports["Ethernet5"]
	if e5.Oper != linktruth.Up || e5.SpeedMbps != 2 || e5.Counters == nil || e5.Counters.InErrors != 0 {
		t.Fatalf("Ethernet5 %+v", e5)
	}
	if e2 := dl.Ports["Ethernet2"]; e2.SpeedMbps != 0 || len(e2.Neighbors) != 0 {
		t.Fatalf("Ethernet2 %+v", e2)
	}
	// The LLDP table's ports that show interfaces did not list are not
	// judged; list them both to see the neighbours.
	ifs := `{"interfaces": {"Ethernet8": {"lineProtocolStatus": "up", "bandwidth": 10000000000}, "Ethernet12": {"lineProtocolStatus": "down"}, "Ethernet27/1": {"lineProtocolStatus": "up", "bandwidth": 100000000000}}}`
	dl, err = ParseLinks(ifs, corpusBody(t, "napalm-show-lldp-neighbors-detail.json"))
	if err != nil {
		t.Fatal(err)
	}
	n8 := dl.Ports["Ethernet8"].Neighbors
	if len(n8) != 1 || n8[0] != (linktruth.Neighbor{SystemName: "78m3", ChassisID: "2c60.0cad.30de", PortID: "000f.532e.ced1", PortIDSubtype: "macAddress", PortDesc: "eth3"}) {
		t.Fatalf("Ethernet8 neighbours %+v", n8)
	}
	if n := dl.Ports["Ethernet27/1"].Neighbors; len(n) != 1 || n[0].PortID != "et-0/0/20" || n[0].SystemName != "some-switch" {
		t.Fatalf("Ethernet27/1 neighbours %+v", n)
	}
	if o := dl.Ports["Ethernet12"]; o.Oper != linktruth.Down || o.AdminDown || len(o.Neighbors) != 0 || dl.Ports["Ethernet8"].SpeedMbps != 10000 {
		t.Fatalf("Ethernet12 %+v", o)
	}
	// A shut port's status is "disabled" (NAPALM's get_interfaces).
	dl, err = ParseLinks(`{"interfaces": {"Ethernet4": {"interfaceStatus": "disabled", "lineProtocolStatus": "down"}}}`, `{"lldpNeighbors": {}}`)
	if err != nil || !dl.Ports["Ethernet4"].AdminDown || dl.Ports["Ethernet4"].Oper != linktruth.Down {
		t.Fatalf("disabled port: %+v %v", dl, err)
	}
}

// Output that is not the models' JSON is an error naming the command,
// never an empty report that would read as "nothing heard".
func TestParseLinksRefuses(t *testing.T) {
	for _, tc := range [][2]string{
		{"% Invalid input", `{"lldpNeighbors": {}}`},
		{`{"interfaces": {}}`, "% LLDP is not enabled"},
		{`{}`, `{"lldpNeighbors": {}}`},
		{`{"interfaces": {"Ethernet1": {"bandwidth": "fast"}}}`, `{"lldpNeighbors": {}}`},
		{`{"interfaces": {"Ethernet1": null}}`, `{"lldpNeighbors": {}}`},
		{`{"interfaces": {"Ethernet1": {"bandwidth": -5}}}`, `{"lldpNeighbors": {}}`},
		{`{"interfaces": {}}`, `[]`},
	} {
		if dl, err := ParseLinks(tc[0], tc[1]); err == nil || !strings.Contains(err.Error(), "show ") {
			t.Errorf("ParseLinks(%q, %q) = %+v, %v", tc[0], tc[1], dl, err)
		}
	}
}

func FuzzParseLinks(f *testing.F) {
	f.Add(corpusBody(f, "napalm-show-interfaces.json"), corpusBody(f, "napalm-show-lldp-neighbors-detail.json"))
	f.Add(`{"interfaces": {"Ethernet1": {"lineProtocolStatus": "up", "bandwidth": 100000000000}}}`, `{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": "h1", "neighborInterfaceInfo": {"interfaceId": "\"eth1\""}}]}}}`)
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

// TestLinks: examples/testbed's leaf2 against eosemu answering from the
// cabling (Options.Links): clean as the spec draws it, a miswire, a port
// down, a lower speed and errors each named by port in plan's links
// stage (the switch read, not listed as "link truth not read"), and
// every port down without cabling.
func TestLinks(t *testing.T) {
	s, _ := load(t, "testbed")
	switchtest.RunLinks(t, s, "leaf2", func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target) {
		emu, err := eosemu.Start(eosemu.Options{Hostname: sw.Name, Password: switchtest.Password, Ports: 8, Links: src})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { emu.Close() })
		target, opts := switchtest.Connect(t, emu, sw, "admin")
		return NewWith(opts), target
	})
}
