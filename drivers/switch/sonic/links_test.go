package sonic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// TestLinks: examples/testbed's leaf1 against its emulator answering its
// ports' state and LLDP neighbours from the cabling: clean as the spec
// draws it, each fault named by port in plan's links stage, and every
// port down without cabling.
func TestLinks(t *testing.T) {
	s, _ := load(t, "testbed")
	switchtest.RunLinks(t, s, "leaf1", func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target) {
		emu, err := sonicemu.Start(sonicemu.Options{Password: switchtest.Password, Ports: 32, BufferModel: "dynamic", Links: src})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { emu.Close() })
		target, opts := switchtest.Connect(t, emu, sw, "admin")
		return NewWith(opts), target
	})
}

// linkFixtures are the sections of testdata/vendor/sonic/show-links.txt
// (sonic-utilities' test expectations) by command.
func linkFixtures(t testing.TB) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vendor", "sonic", "show-links.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	cur := ""
	for _, l := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			cur = strings.TrimSpace(strings.TrimPrefix(l, "## "))
		case cur != "" && !strings.HasPrefix(l, "#"):
			out[cur] += l
		}
	}
	return out
}

// TestParseLinks: the sourced outputs read as the tools print them:
// speeds in intfutil's words, FEC, oper and admin state, a LAG left out,
// counters with thousands separators and N/A, two neighbours on one port
// with a description holding a space.
func TestParseLinks(t *testing.T) {
	fx := linkFixtures(t)
	dl, err := ParseLinks(fx[showIntStatus], fx[showIntCounters], fx[showLLDPTable])
	if err != nil {
		t.Fatal(err)
	}
	e0 := dl.Ports["Ethernet0"]
	if e0 == nil || e0.Oper != linktruth.Down || e0.SpeedMbps != 25_000 || e0.FEC != "rs" || e0.AdminDown ||
		e0.Counters == nil || e0.Counters.InErrors != 10 || e0.Counters.InDiscards != 100 || e0.Counters.OutErrors != 0 {
		t.Fatalf("Ethernet0: %+v %+v", e0, e0.Counters)
	}
	if len(e0.Neighbors) != 2 || e0.Neighbors[1].SystemName != "dummy" || e0.Neighbors[1].PortDesc != "Second MAC" ||
		e0.Neighbors[1].PortID != "00:00:00:00:00:02" || e0.Neighbors[1].PortIDSubtype != "mac" {
		t.Fatalf("Ethernet0 neighbours: %+v", e0.Neighbors)
	}
	if o := dl.Ports["Ethernet16"]; o == nil || o.Oper != linktruth.Up || o.SpeedMbps != 100 || o.FEC != "" || o.Counters != nil {
		t.Fatalf("Ethernet16: %+v", o)
	}
	// lldpmgrd advertises the alias as the Port ID (linktruth.DeviceLinks.PortIDs):
	// Ethernet16's is etp5; Ethernet0's alias is its name, nothing to say.
	if dl.PortIDs["Ethernet16"] != "etp5" || dl.PortIDs["Ethernet32"] != "etp9" || dl.PortIDs["Ethernet0"] != "" {
		t.Fatalf("advertised Port IDs: %v", dl.PortIDs)
	}
	if _, ok := dl.Ports["PortChannel1001"]; ok || !dl.LLDP {
		t.Fatalf("LAG or LLDP: %+v", dl)
	}
	// hostile and broken output: an error naming the command and port
	for _, c := range []struct{ status, counters, want string }{
		{"", fx[showIntCounters], "show interfaces status: no Interface table"},
		{strings.Replace(fx[showIntStatus], "    25G", "   fast", 1), fx[showIntCounters], `port Ethernet0: Speed "fast"`},
		{fx[showIntStatus], strings.Replace(fx[showIntCounters], "      10  ", "     -10  ", 1), `port Ethernet0: RX_ERR "-10"`},
		{strings.Replace(fx[showIntStatus], "   down", "   flap", 1), fx[showIntCounters], `port Ethernet0: Oper "flap"`},
	} {
		if _, err := ParseLinks(c.status, c.counters, fx[showLLDPTable]); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	// lldpshow's error (lldpctl failed): the ports, no neighbours, why
	dl, err = ParseLinks(fx[showIntStatus], fx[showIntCounters], "Error: lldp container is not running\n")
	if err != nil || dl.LLDP || !strings.Contains(dl.LLDPNote, "lldp container is not running") || dl.Ports["Ethernet0"] == nil {
		t.Fatalf("no LLDP: %+v %v", dl, err)
	}
}

// FuzzParseLinks: any three outputs read as ports or an error, never a
// panic; every port under its own name. Seeds: the sourced outputs.
func FuzzParseLinks(f *testing.F) {
	fx := linkFixtures(f)
	f.Add(fx[showIntStatus], fx[showIntCounters], fx[showLLDPTable])
	f.Add(fx[showIntStatus], "", "Error: x")
	f.Add("Interface\n---\nE  up", "IFACE  RX_ERR  TX_ERR  RX_DRP  TX_DRP\n--  --  --  --  --\nE  1  2  3", "LocalPort\n--\n")
	f.Fuzz(func(t *testing.T, status, counters, lldp string) {
		dl, err := ParseLinks(status, counters, lldp)
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
