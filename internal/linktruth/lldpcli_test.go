package linktruth

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Real lldpcli output (testdata/README.md): one neighbour (interface as
// an object), two (an array of one-key objects), none.
func TestParseLLDPCLI(t *testing.T) {
	for _, tc := range []struct {
		file string
		want map[string][]Neighbor
	}{
		{"lldpcli-none.json", map[string][]Neighbor{}},
		{"lldpcli-one.json", map[string][]Neighbor{"eth1": {{SystemName: "leaf1", ChassisID: "7e:a3:5e:05:e6:ae", PortID: "Ethernet0", PortIDSubtype: "local", PortDesc: "leaf1-Ethernet0"}}}},
		{"lldpcli-two.json", map[string][]Neighbor{
			"leaf1-Ethernet0": {{SystemName: "h1", ChassisID: "26:a7:6f:80:7b:c4", PortID: "26:a7:6f:80:7b:c4", PortIDSubtype: "mac", PortDesc: "eth1"}},
			"leaf1-e124":      {{SystemName: "spine1", ChassisID: "82:41:7c:d4:6c:4a", PortID: "Ethernet0", PortIDSubtype: "local", PortDesc: "spine1-e0"}},
		}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseLLDPCLI(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
}

func TestParseLLDPCLIShapes(t *testing.T) {
	// Two neighbours on one port (lldpd keeps one entry per chassis, the
	// interface repeated), and a chassis that sent no system name.
	got, err := ParseLLDPCLI([]byte(`{"lldp":{"interface":[{"eth0":{"chassis":{"a":{"id":{"type":"mac","value":"m1"}}},"port":{"id":{"type":"ifname","value":"Ethernet1"}}}},
		{"eth0":{"chassis":{"id":{"type":"mac","value":"m2"}},"port":{"id":{"type":"ifname","value":"swp2"},"descr":"x"}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Neighbor{"eth0": {
		{SystemName: "a", ChassisID: "m1", PortID: "Ethernet1", PortIDSubtype: "ifname"},
		{ChassisID: "m2", PortID: "swp2", PortIDSubtype: "ifname", PortDesc: "x"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"lldp":null}`, `{"lldp":[1]}`, `{"lldp":{"interface":3}}`,
		`{"lldp":{"interface":{"e":{"chassis":{"a":{},"b":{}}}}}}`, `{"lldp":{"interface":{"e":{"port":{"id":"x"}}}}}`} {
		if _, err := ParseLLDPCLI([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParseLLDPCLI: any bytes give neighbours or an error, never a
// panic; a port named in the result has at least one neighbour.
func FuzzParseLLDPCLI(f *testing.F) {
	for _, n := range []string{"lldpcli-none.json", "lldpcli-one.json", "lldpcli-two.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"lldp":{"interface":[{"eth0":{"chassis":{"id":{"type":"mac","value":"m"}}}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseLLDPCLI(b)
		if err != nil {
			return
		}
		for port, ns := range got {
			if len(ns) == 0 {
				t.Fatalf("port %q with no neighbour", port)
			}
		}
	})
}
