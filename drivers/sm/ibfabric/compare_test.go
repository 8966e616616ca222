package ibfabric

import (
	"sort"
	"strconv"
	"strings"
	"testing"
)

// fixtureTopology is the intended form of the fixtures' fabric, plus a
// third inter-switch cable (ports 5) that is not there.
func fixtureTopology() *Topology {
	t := &Topology{Switches: []SwitchSpec{{Name: "sw1", Ports: 8, GUID: fxSW1}, {Name: "sw2", Ports: 8, GUID: fxSW2}}}
	sw := []string{"sw1", "sw1", "sw2", "sw2"}
	for i := 1; i <= 4; i++ {
		n := "cn0" + strconv.Itoa(i)
		t.HCAs = append(t.HCAs, HCASpec{Name: n, Host: n, GUID: uint64(0x0002c90000000000 + i*0x10000)})
		t.Links = append(t.Links, LinkSpec{A: PortRef{n, 1}, B: PortRef{sw[i-1], 2 - i%2}, Width: 4, Speed: QDR})
	}
	for _, p := range []int{3, 4, 5} {
		t.Links = append(t.Links, LinkSpec{A: PortRef{"sw1", p}, B: PortRef{"sw2", p}, Width: 4, Speed: QDR})
	}
	return t
}

func TestCompareOffline(t *testing.T) {
	f, err := ParseTopology(fixture(t, "ibnetdiscover.txt"))
	if err != nil {
		t.Fatal(err)
	}
	topo := fixtureTopology()
	if err := topo.Validate(); err != nil {
		t.Fatal(err)
	}
	fs, err := Compare(Intent{Topology: topo}, f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range fs {
		got = append(got, string(x.Kind)+" "+x.Node+":"+strconv.Itoa(x.Port))
	}
	sort.Strings(got)
	want := []string{"link-down sw1:5", "width sw2:1", "width sw2:2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestComparePartitions(t *testing.T) {
	f, err := ParseTopology(fixture(t, "ibnetdiscover.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// P_Key tables as Discover would store them.
	f.Nodes[fxCN1].Ports[1].PKeys = []uint16{0xffff, 0x8001, 0x0003}
	f.Nodes[fxSW1].Ports[1].PKeys = []uint16{0xffff}
	in := Intent{Topology: fixtureTopology(), Enforce: true, Partitions: []Partition{
		{Name: "storage", PKey: 1, Members: []Member{{Port: PortRef{"cn01", 1}, Full: false}}},
	}}
	fs, err := Compare(in, f)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]Finding{}
	for _, x := range fs {
		kinds[x.Kind] = x
	}
	for k, where := range map[Kind]string{KindPKeyMember: "cn01 port 1", KindPKeyExtra: "cn01 port 1", KindSwitchPKey: "sw1 port 1"} {
		if x, ok := kinds[k]; !ok || !strings.HasPrefix(x.String(), where) {
			t.Errorf("%s: got %+v, want at %s (all: %v)", k, x, where, fs)
		}
	}
}

func TestTopologyValidate(t *testing.T) {
	bad := fixtureTopology()
	bad.HCAs[1].GUID = bad.HCAs[0].GUID + 1 // overlaps cn01's port GUID
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("overlapping GUIDs: %v", err)
	}
	bad = fixtureTopology()
	bad.Links = append(bad.Links, LinkSpec{A: PortRef{"cn01", 1}, B: PortRef{"sw2", 8}})
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "cn01 port 1 is already cabled") {
		t.Errorf("double cabling: %v", err)
	}
	if a, b := DeriveGUID(CA, "x"), DeriveGUID(Switch, "x"); a == b || a&0xff != 0 {
		t.Errorf("derived GUIDs %s %s", GUID(a), GUID(b))
	}
}

// TestTableValuesSL2VL: a switch port's SL2VL setting is the table its
// cabled inputs agree on, or each group of inputs with its table; an
// uncabled input and port 0 (the management port) are not judged.
func TestTableValuesSL2VL(t *testing.T) {
	a := [16]int{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}
	z := [16]int{}
	sw := &Node{Type: Switch, NumPorts: 4, Ports: map[int]*Port{}}
	for pn := 0; pn <= 4; pn++ {
		sw.Ports[pn] = &Port{Num: pn}
		if pn == 1 || pn == 2 || pn == 3 {
			sw.Ports[pn].Peer = &PeerRef{Node: 7, Port: pn}
		}
	}
	ca := &Node{Type: CA, NumPorts: 1, Ports: map[int]*Port{1: {Num: 1, Peer: &PeerRef{Node: 8, Port: 1}}}}
	w := PortWant{SL2VL: a[:]}
	for _, tc := range []struct {
		name string
		n    *Node
		tbl  map[int][16]int
		want string
	}{
		{"agree", sw, map[int][16]int{0: a, 1: a, 2: a, 3: a}, "0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3"},
		{"uncabled input not judged", sw, map[int][16]int{0: a, 1: a, 2: a, 3: a, 4: z}, "0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3"},
		{"port 0 not judged", sw, map[int][16]int{0: z, 1: a, 2: a, 3: a}, "0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3"},
		{"mixed", sw, map[int][16]int{0: a, 1: z, 2: a, 3: z},
			"mixed: in 1,3: 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0; in 2: 0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3"},
		{"adapter", ca, map[int][16]int{0: z}, "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"},
		{"only uncabled inputs read", sw, map[int][16]int{0: z, 4: z}, ""},
	} {
		p := &Port{Num: 1, Peer: &PeerRef{Node: 9, Port: 1}, SL2VL: tc.tbl}
		got := TableValues(tc.n, p, w, nil, true)["sl2vl"]
		if got != tc.want {
			t.Errorf("%s: sl2vl = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := vlwString([]VLWeight{{VL: 0, Weight: 64}, {VL: 12, Weight: 255}}); got != "0:64,12:255" {
		t.Errorf("vlwString = %q", got)
	}
}
