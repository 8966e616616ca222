package ibfabric

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture returns a testdata file without its header (the lines up to
// and including "----"): real output of the tools against ibsim.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(b), "\n----\n")
	if !ok {
		t.Fatalf("%s: no header end (----)", name)
	}
	return body
}

// The fixtures' fabric: sw1 0x0002c90000001000, sw2 ...2000; cn0N's node
// GUID 0x0002c900000N0000, port 1 GUID +1.
const (
	fxSW1 = 0x0002c90000001000
	fxSW2 = 0x0002c90000002000
	fxCN1 = 0x0002c90000010000
	fxCN4 = 0x0002c90000040000
)

func TestParseTopology(t *testing.T) {
	f, err := ParseTopology(fixture(t, "ibnetdiscover.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Summary(); got != "2 switches, 4 adapters, 6 links" {
		t.Errorf("summary %q", got)
	}
	if f.From != fxCN1+1 {
		t.Errorf("from %s", GUID(f.From))
	}
	sw2 := f.Nodes[fxSW2]
	if sw2 == nil || sw2.Type != Switch || sw2.Desc != "sw2" || sw2.NumPorts != 8 || sw2.LID != 3 {
		t.Fatalf("sw2 %+v", sw2)
	}
	p := sw2.Ports[2]
	if p == nil || p.Width != 1 || p.Speed != QDR || *p.Peer != (PeerRef{fxCN4, 1}) {
		t.Errorf("sw2 port 2 %+v", p)
	}
	cn4 := f.Nodes[fxCN4]
	if cn4 == nil || cn4.Type != CA || cn4.Desc != "cn04 mlx5_0" || cn4.Ports[1].GUID != fxCN4+1 || cn4.Ports[1].LID != 6 {
		t.Errorf("cn04 %+v %+v", cn4, cn4.Ports[1])
	}
	if p := f.Nodes[fxSW1].Ports[3]; p.Width != 4 || *p.Peer != (PeerRef{fxSW2, 3}) {
		t.Errorf("sw1 port 3 %+v", p)
	}
}

func TestParsePortInfo(t *testing.T) {
	pi, err := ParsePortInfo(fixture(t, "portinfo-ca.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := PortInfo{LID: 6, State: "Active", PhysState: "LinkUp", Width: 1, Speed: QDR, NeighborMTU: 2048, MTUCap: 2048, OperVLs: 8, VLCap: 8}
	if *pi != want {
		t.Errorf("got %+v\nwant %+v", *pi, want)
	}
	pi, err = ParsePortInfo(fixture(t, "portinfo-switch.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if pi.State != "Active" || pi.Width != 1 || pi.NeighborMTU != 2048 {
		t.Errorf("switch port %+v", *pi)
	}
}

func TestParseTables(t *testing.T) {
	keys, err := ParsePKeys(fixture(t, "pkeys.txt"))
	if err != nil || !reflect.DeepEqual(keys, []uint16{0xffff, 0x8001}) {
		t.Errorf("pkeys %#v %v", keys, err)
	}
	rows, err := ParseSL2VL(fixture(t, "sl2vl-switch.txt"))
	want := [16]int{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}
	if err != nil || len(rows) != 9 || rows[8].In != 8 || rows[8].Out != 3 || rows[8].VL != want {
		t.Errorf("sl2vl switch %+v %v", rows, err)
	}
	rows, err = ParseSL2VL(fixture(t, "sl2vl-ca.txt"))
	if err != nil || len(rows) != 1 || rows[0].In != 0 || rows[0].VL != want {
		t.Errorf("sl2vl CA %+v %v", rows, err)
	}
	va, err := ParseVLArb(fixture(t, "vlarb.txt"))
	wantVA := &VLArb{High: []VLWeight{{0, 64}, {1, 64}}, Low: []VLWeight{{0, 32}, {1, 32}, {2, 64}, {3, 64}}, HighCap: 8, LowCap: 8}
	if err != nil || !reflect.DeepEqual(va, wantVA) {
		t.Errorf("vlarb %+v %v", va, err)
	}
}

// TestParseErrors: broken output is an error naming the line, never a
// panic or a silently wrong fabric.
func TestParseErrors(t *testing.T) {
	topo := fixture(t, "ibnetdiscover.txt")
	cases := []struct {
		name, in, want string
		parse          func(string) error
	}{
		{"width", strings.Replace(topo, `lid 6 1xQDR`, `lid 6 3xQDR`, 1), `ibnetdiscover: sw2: line 12`, topoErr},
		{"speed", strings.Replace(topo, `lid 5 1xQDR`, `lid 5 1xQQR`, 1), `link speed "QQR"`, topoErr},
		{"port range", strings.Replace(topo, "[8]", "[9]", 1) + "\n", "", topoErr}, // no port 8 line: fine
		{"peer missing", strings.Replace(topo, `Ca	1 "H-0002c90000040000"`, `Ca	1 "H-0002c900000f0000"`, 1), "", topoErr},
		{"empty", "", "no nodes", topoErr},
		{"pkeys", "   0: 0xffff 0x8001 0xzz\n", `line 1 "   0: 0xffff 0x8001 0xzz": "0xzz" is not`, func(s string) error { _, err := ParsePKeys(s); return err }},
		{"sl2vl", "ports: in  0, out  3: | 0| 1| 2|\n", "3 VL entries, want 16", func(s string) error { _, err := ParseSL2VL(s); return err }},
		{"vlarb", "# Low priority VL Arbitration Table:\nWEIGHT: |0x20|\n", "WEIGHT row without the VL row", func(s string) error { _, err := ParseVLArb(s); return err }},
		{"portinfo", "Lid:....3\n", "no LinkState field", func(s string) error { _, err := ParsePortInfo(s); return err }},
		{"portinfo mtu", strings.Replace(fixture(t, "portinfo-ca.txt"), "NeighborMTU:.....................2048", "NeighborMTU:.....................big", 1), `"NeighborMTU: big": not a number`, func(s string) error { _, err := ParsePortInfo(s); return err }},
	}
	for _, c := range cases {
		err := c.parse(c.in)
		if c.want == "" {
			continue // only: must not panic
		}
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a ParseError containing %q", c.name, err, c.want)
		}
	}
}

func topoErr(s string) error { _, err := ParseTopology(s); return err }

func fuzzSeeds(f *testing.F, names ...string) {
	for _, n := range names {
		f.Add(fixture(f, n))
	}
	f.Add("")
}

func FuzzParseTopology(f *testing.F) {
	fuzzSeeds(f, "ibnetdiscover.txt")
	f.Fuzz(func(t *testing.T, s string) {
		fab, err := ParseTopology(s)
		if err == nil {
			for _, l := range fab.Links {
				if fab.Nodes[l.A.Node] == nil || fab.Nodes[l.B.Node] == nil {
					t.Fatalf("link to an unlisted node: %+v", l)
				}
			}
			_ = fab.Describe()
		}
	})
}

func FuzzParsePortInfo(f *testing.F) {
	fuzzSeeds(f, "portinfo-ca.txt", "portinfo-switch.txt")
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParsePortInfo(s) })
}

func FuzzParseTables(f *testing.F) {
	fuzzSeeds(f, "pkeys.txt", "sl2vl-switch.txt", "sl2vl-ca.txt", "vlarb.txt")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParsePKeys(s)
		_, _ = ParseSL2VL(s)
		_, _ = ParseVLArb(s)
	})
}

// FuzzParseDump: the MAD client's output comes from the SM host; no
// input may panic the parser, and what parses re-marshals to a dump
// that parses to the same fabric.
func FuzzParseDump(f *testing.F) {
	f.Add([]byte(`{"format":1,"nodes":[{"guid":"0x1","type":2,"desc":"sw","ports":2,"lid":1,"port":[{"num":0},{"num":1,"peer":{"guid":"0x10","port":1},"info":{"lid":1,"state":"Active","phys_state":"LinkUp","width":"4x","speed":"QDR","neighbor_mtu":2048},"pkeys":[65535],"sl2vl":{"0":"0123456789abcdef"},"vlarb":{"high":[{"vl":0,"weight":1}],"low":[],"high_cap":8,"low_cap":8}}]},{"guid":"0x10","type":1,"desc":"ca","ports":1,"port":[{"num":1,"guid":"0x11","lid":2,"peer":{"guid":"0x1","port":1},"error":"x"}]}]}`))
	f.Add([]byte(`{"format":2,"nodes":[{"guid":"0x1","type":2,"desc":"sw","ports":3,"lid":1,"port":[{"num":0,"sl2vl_tables":null},{"num":1,"peer":{"guid":"0x10","port":1},"pkeys":[65535],"sl2vl_tables":{"0123456789abcdef":[0,1],"00000000000000ff":[3]}}]},{"guid":"0x10","type":1,"desc":"ca","ports":1,"port":[{"num":1,"guid":"0x11","lid":2,"peer":{"guid":"0x1","port":1},"sl2vl_tables":{"0101010101010101":[0]}}]}]}`))
	f.Add([]byte(`{"format":2,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1,"sl2vl_tables":{"0123456789abcdef":[0,0]}}]}]}`))
	f.Add([]byte(`{"format":1,"nodes":[]}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte("fabctl-ibmad-dump 3 0x10 12\nnode 0x1 2 3 1 0 64 \"sw \\\"a\\\"\"\nport 0 - 1 - 0\ninfo 1 \"Active\" \"LinkUp\" 4x SDR 256 2048 4 4 0 0 0 8 8 1\nport 1 - 1 0x10 1\ninfo 0 \"Active\" \"LinkUp\" 4x EDR 2048 2048 4 4 1 1 3 8 8 0\npkeys ffff 8010\nsl2vl 0123012301230123:1,3 00000000000000ff:2\nvlarb 8 8 0:64,1:64 -\nnode 0x10 1 1 0 32 0 \"ca\"\nport 1 0x11 2 0x1 1\npkeys\nsl2vl\nerror \"SLtoVLMappingTable: timeout\"\n"))
	f.Add([]byte(`{"format":1,"nodes":[{"guid":"0x1","type":2,"ports":1,"port":[{"num":1,"peer":{"guid":"0x9","port":1}}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fab, err := ParseDump(b)
		if err != nil {
			return
		}
		again, err := fab.MarshalDump()
		if err != nil {
			t.Fatal(err)
		}
		g, err := ParseDump(again)
		if err != nil {
			t.Fatalf("a parsed dump does not parse again: %v\n%s", err, again)
		}
		if g.Describe() != fab.Describe() {
			t.Errorf("round trip differs:\n%s\n%s", fab.Describe(), g.Describe())
		}
		if third, err := g.MarshalDump(); err != nil || string(third) != string(again) {
			t.Errorf("the re-parsed dump marshals otherwise (%v):\n%s\n%s", err, again, third)
		}
	})
}

// TestDumpSL2VLFormats: format 1's tables by input port and format 2's
// grouped tables read as the same ports' tables; MarshalDump writes
// format 3, each distinct table once, and it reads back the same; bad
// dumps of each format are refused.
func TestDumpSL2VLFormats(t *testing.T) {
	v1 := `{"format":1,"nodes":[{"guid":"0x1","type":2,"desc":"sw","ports":3,"port":[{"num":1,"sl2vl":{"0":"0123012301230123","1":"0123012301230123","2":"00000000000000ff","3":"0123012301230123"}}]}]}`
	v2 := `{"format":2,"nodes":[{"guid":"0x1","type":2,"desc":"sw","ports":3,"port":[{"num":1,"sl2vl_tables":{"0123012301230123":[0,1,3],"00000000000000ff":[2]}}]}]}`
	a, err := ParseDump([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseDump([]byte(v2))
	if err != nil {
		t.Fatal(err)
	}
	ta, tb := a.Nodes[1].Ports[1].SL2VL, b.Nodes[1].Ports[1].SL2VL
	if len(ta) != 4 || fmt.Sprint(ta) != fmt.Sprint(tb) {
		t.Fatalf("format 1 read %v, format 2 %v", ta, tb)
	}
	if ta[2] != [16]int{14: 15, 15: 15} {
		t.Errorf("input 2's table %v", ta[2])
	}
	out, err := a.MarshalDump()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "fabctl-ibmad-dump 3 ") || !strings.Contains(string(out), "\nsl2vl 00000000000000ff:2 0123012301230123:0,1,3\n") {
		t.Errorf("MarshalDump wrote %s", out)
	}
	c, err := ParseDump(out)
	if err != nil {
		t.Fatal(err)
	}
	if tc := c.Nodes[1].Ports[1].SL2VL; fmt.Sprint(tc) != fmt.Sprint(ta) {
		t.Errorf("format 3 read %v, format 1 %v", tc, ta)
	}
	for _, bad := range []string{
		`{"format":2,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1,"sl2vl_tables":{"0123012301230123":[0],"0000000000000000":[0]}}]}]}`,
		`{"format":2,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1,"sl2vl":{"0":"0123012301230123"}}]}]}`,
		`{"format":1,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1,"sl2vl_tables":{"0123012301230123":[0]}}]}]}`,
		`{"format":2,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1,"sl2vl_tables":{"012301230123012g":[0]}}]}]}`,
		`{"format":2,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1,"sl2vl_tables":{"0123012301230123":[2]}}]}]}`,
		`{"format":3,"nodes":[{"guid":"0x1","type":1,"ports":1,"port":[{"num":1}]}]}`,
		"fabctl-ibmad-dump 2 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\nsl2vl 0123012301230123:0 0123012301230123:1\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\nsl2vl 0123012301230123\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\nsl2vl 0123012301230123:2\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\npkeys ffff\npkeys 8001\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0 7\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\nerror \"x\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\n\nport 1 - 0 - 0\n",
		"fabctl-ibmad-dump 3 - 0\nport 1 - 0 - 0\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\nvlarb 8 8 0:1,x -\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\ncolour red\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\ninfo 1 \"Active\" \"LinkUp\" 3x EDR 2048 2048 4 4 0 0 0 8 8 1\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 \"ca\"\nport 1 - 0 - 0\ninfo 1 \"Active\" \"LinkUp\" 4x EDR 2048 2048 4 4 2 0 0 8 8 1\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1 1 1 0 0 0 ca\n",
		"fabctl-ibmad-dump 3 - 0\nnode 0x1  1 1 0 0 0 \"ca\"\n",
	} {
		if _, err := ParseDump([]byte(bad)); err == nil {
			t.Errorf("ParseDump accepted %s", bad)
		}
	}
}
