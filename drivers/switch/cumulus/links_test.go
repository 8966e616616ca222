package cumulus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// nvueInterfaceJSON is the corpus's GET /nvue_v1/interface excerpt
// (nvue-show-interface-json.txt, part 1) closed where NVIDIA's page
// elides the rest ("..."): the link object, eth0 and the document.
func nvueInterfaceJSON(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vendor", "cumulus", "nvue-show-interface-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "# ---- (1)")
	start += strings.Index(text[start:], "\n") + 1
	end := start + strings.Index(text[start:], "...")
	return text[start:end] + "}\n}\n}\n"
}

// NVIDIA's real GET /interface output parses: eth0 up, its stats as
// counters, no speed (the excerpt has none), no neighbour.
func TestParseLinksCorpus(t *testing.T) {
	dl, err := ParseLinks(nvueInterfaceJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	o := dl.Ports["eth0"]
	if !dl.LLDP || dl.Source != showInterfaces || o == nil || o.Oper != linktruth.Up || o.Counters == nil || *o.Counters != (linktruth.Counters{}) || len(o.Neighbors) != 0 {
		t.Fatalf("report %+v, eth0 %+v", dl, o)
	}
	// The LLDP neighbour tree of the reference's example, as JSON.
	dl, err = ParseLinks(`{"swp51": {"link": {"state": {"up": {}}, "speed": "1G", "stats": {"in-errors": 3, "out-drops": 4}},
	  "lldp": {"neighbor": {"spine01": {"chassis": {"chassis-id": "44:38:39:22:01:82", "system-name": "spine01"},
	    "port": {"description": "swp1", "name": "swp1", "ttl": 120, "type": "ifname"}}}}},
	  "swp2": {"link": {"state": {"down": {}}}}, "lo": {"type": "loopback"}}`)
	if err != nil {
		t.Fatal(err)
	}
	s51 := dl.Ports["swp51"]
	if s51.SpeedMbps != 1000 || *s51.Counters != (linktruth.Counters{InErrors: 3, OutDiscards: 4}) || len(s51.Neighbors) != 1 ||
		s51.Neighbors[0] != (linktruth.Neighbor{SystemName: "spine01", ChassisID: "44:38:39:22:01:82", PortID: "swp1", PortIDSubtype: "ifname", PortDesc: "swp1"}) {
		t.Fatalf("swp51 %+v", s51)
	}
	if dl.Ports["swp2"].Oper != linktruth.Down || dl.Ports["lo"] != nil {
		t.Fatalf("swp2 %+v, lo %+v", dl.Ports["swp2"], dl.Ports["lo"])
	}
}

// Output that is not NVUE's interface tree is an error naming the
// command, never an empty report.
func TestParseLinksRefuses(t *testing.T) {
	for _, out := range []string{
		"Error: Invalid Command: nv show interface -o json",
		`[]`,
		`null`,
		`{"swp1": {"link": {"state": {"sideways": {}}}}}`,
		`{"swp1": {"link": {"state": {"up": {}, "down": {}}}}}`,
		`{"swp1": {"link": {"speed": "fast"}}}`,
		`{"swp1": {"link": {"stats": {"in-errors": -1}}}}`,
		`{"swp1": {"lldp": {"neighbor": []}}}`,
	} {
		if dl, err := ParseLinks(out); err == nil || !strings.Contains(err.Error(), showInterfaces) {
			t.Errorf("ParseLinks(%q) = %+v, %v", out, dl, err)
		}
	}
}

func FuzzParseLinks(f *testing.F) {
	f.Add(nvueInterfaceJSON(f))
	f.Add(`{"swp1": {"link": {"state": {"up": {}}, "speed": "100G", "stats": {"in-errors": 0}}, "lldp": {"neighbor": {"h1": {"chassis": {"system-name": "h1"}, "port": {"name": "aa:bb:cc:dd:ee:ff", "description": "eth1", "type": "mac"}}}}}}`)
	f.Fuzz(func(t *testing.T, out string) {
		dl, err := ParseLinks(out)
		if err == nil && (dl == nil || dl.Ports == nil) {
			t.Fatal("no error and no report")
		}
		if err != nil && !strings.Contains(err.Error(), showInterfaces) {
			t.Fatalf("error names no command: %v", err)
		}
	})
}

// TestLinks: examples/testbed's leaf4 against cumulusemu answering from the
// cabling (Options.Links): clean as the spec draws it, a miswire, a port
// down, a lower speed and errors each named by port in plan's links
// stage (the switch read, not listed as "link truth not read"), and
// every port down without cabling.
func TestLinks(t *testing.T) {
	s, _ := load(t, filepath.Join("..", "..", "..", "examples", "testbed"))
	switchtest.RunLinks(t, s, "leaf4", func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target) {
		emu, err := cumulusemu.Start(cumulusemu.Options{Hostname: sw.Name, Password: switchtest.Password, Ports: 8, Links: src})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { emu.Close() })
		target, opts := switchtest.Connect(t, emu, sw, "cumulus")
		return NewWith(opts), target
	})
}
