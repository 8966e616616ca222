package ibmad

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
)

// fakeNode is a node of fakeFabric: what its SMA answers. The engine's
// logic (window, matching, retries, per-port failures, the directed-route
// walk) is tested against it; the real thing runs on ibsim
// (testbed/ibsim).
type fakeNode struct {
	guid  uint64
	typ   int
	ports int
	desc  string
	peer  map[int][2]int // port -> {node index, port}
	lid   int
	// drop: attributes this node never answers.
	drop map[uint16]bool
}

// fakeFabric answers SMPs by walking the directed route from node 0,
// port 1, the way a subnet's SMAs would.
type fakeFabric struct {
	nodes []*fakeNode
	queue [][]byte
	sent  int
	// reads: the attribute and modifier of each SMP that reached a
	// node, by node index.
	reads map[int][]fakeRead
	order []uint16 // the attribute of each SMP sent, in order
	rbuf  [MADSize]byte
}

type fakeRead struct {
	attr uint16
	mod  uint32
}

func (f *fakeFabric) Send(mad []byte, dlid, dqp int, qkey uint32, timeout time.Duration) error {
	f.sent++
	f.order = append(f.order, binary.BigEndian.Uint16(mad[16:]))
	if mad[1] != ClassSMIDR {
		return nil // only directed route here: nothing answers
	}
	hops := int(mad[7])
	cur, in := 0, 1
	for i := 1; i <= hops; i++ {
		out := int(mad[128+i])
		n := f.nodes[cur]
		if i == 1 && cur == 0 {
			out = in // the CA sends out of its own port
		}
		p, ok := n.peer[out]
		if !ok {
			return nil // no link: the SMP is lost
		}
		cur, in = p[0], p[1]
	}
	n := f.nodes[cur]
	attr := binary.BigEndian.Uint16(mad[16:])
	if n.drop[attr] {
		return nil
	}
	mod := binary.BigEndian.Uint32(mad[20:])
	if f.reads == nil {
		f.reads = map[int][]fakeRead{}
	}
	f.reads[cur] = append(f.reads[cur], fakeRead{attr, mod})
	resp := append([]byte(nil), mad...)
	resp[3] = MethodGetResp
	binary.BigEndian.PutUint16(resp[4:], directionBit)
	d := resp[64:128]
	for i := range d {
		d[i] = 0
	}
	switch attr {
	case AttrNodeInfo:
		d[0], d[1], d[2], d[3] = 1, 1, byte(n.typ), byte(n.ports)
		binary.BigEndian.PutUint64(d[12:], n.guid)
		binary.BigEndian.PutUint64(d[20:], n.guid+uint64(in))
		binary.BigEndian.PutUint16(d[28:], 64)
		d[36] = byte(in)
	case AttrNodeDesc:
		copy(d, n.desc)
	case AttrSwitchInfo:
		binary.BigEndian.PutUint16(d[14:], 32)
	case AttrPortInfo:
		pn := int(mod)
		binary.BigEndian.PutUint16(d[16:], uint16(n.lid))
		binary.BigEndian.PutUint32(d[20:], capSLMap)
		d[31] = 2 // 4x
		state, phys := byte(1), byte(2)
		if _, ok := n.peer[pn]; ok || pn == 0 {
			state, phys = 4, 5
		}
		d[32] = 0x40 | state
		d[33] = phys << 4
		d[35] = 0x40 // QDR
		d[36] = 4 << 4
		d[37] = 4 << 4
		d[39], d[40] = 8, 8
		d[41] = 4
		d[43] = 3 << 4
	case AttrPKeyTable:
		binary.BigEndian.PutUint16(d[0:], 0xffff)
	case AttrSL2VL:
		d[0] = 0x01
	case AttrVLArb:
		d[0], d[1] = 0, 32
	}
	f.queue = append(f.queue, resp)
	return nil
}

func (f *fakeFabric) Recv(timeout time.Duration) ([]byte, int, error) {
	if len(f.queue) == 0 {
		time.Sleep(min(timeout, 2*time.Millisecond))
		return nil, 0, nil
	}
	// One buffer for every answer, as libibumad's port (umad_cgo.go):
	// what the engine keeps of an answer must be a copy.
	n := copy(f.rbuf[:], f.queue[0])
	clear(f.queue[0])
	f.queue = f.queue[1:]
	return f.rbuf[:n], 0, nil
}

func (f *fakeFabric) Close() error { return nil }

// smallFabric: ca1 - sw1 - sw2 - ca2, ca3 on sw1.
func smallFabric() *fakeFabric {
	ca1 := &fakeNode{guid: 0x100, typ: 1, ports: 1, desc: "ca1", lid: 5, peer: map[int][2]int{1: {1, 1}}}
	sw1 := &fakeNode{guid: 0x200, typ: 2, ports: 4, desc: "sw1", lid: 1, peer: map[int][2]int{1: {0, 1}, 2: {2, 3}, 3: {4, 1}}}
	sw2 := &fakeNode{guid: 0x300, typ: 2, ports: 4, desc: "sw2", lid: 2, peer: map[int][2]int{3: {1, 2}, 1: {3, 1}}}
	ca2 := &fakeNode{guid: 0x400, typ: 1, ports: 1, desc: "ca2", lid: 6, peer: map[int][2]int{1: {2, 1}}}
	ca3 := &fakeNode{guid: 0x500, typ: 1, ports: 1, desc: "ca3", lid: 7, peer: map[int][2]int{1: {1, 3}}}
	return &fakeFabric{nodes: []*fakeNode{ca1, sw1, sw2, ca2, ca3}}
}

func TestReadWalksTheFabric(t *testing.T) {
	ff := smallFabric()
	f, err := Read(context.Background(), ff, ReadOptions{Tables: true, Options: Options{Window: 4, Timeout: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Summary(); got != "2 switches, 3 adapters, 4 links" {
		t.Fatalf("summary %q\n%s", got, f.Describe())
	}
	sw2 := f.Nodes[0x300]
	if sw2 == nil || sw2.Desc != "sw2" || sw2.LID != 2 || sw2.EnforceCap != 32 {
		t.Fatalf("sw2 %+v", sw2)
	}
	p := sw2.Ports[1]
	if p.Peer == nil || *p.Peer != (ibfabric.PeerRef{Node: 0x400, Port: 1}) || p.Width != 4 || p.Speed != ibfabric.QDR || p.Err != "" {
		t.Errorf("sw2 port 1 %+v", p)
	}
	if len(p.PKeys) != 1 || p.PKeys[0] != 0xffff || p.SL2VL == nil || p.VLArb == nil || len(p.VLArb.Low) != 1 {
		t.Errorf("sw2 port 1 tables %+v %+v", p.PKeys, p.VLArb)
	}
	if ca := f.Nodes[0x400].Ports[1]; ca.GUID != 0x401 || ca.LID != 6 || ca.Info.NeighborMTU != 2048 {
		t.Errorf("ca2 port 1 %+v %+v", ca, ca.Info)
	}
	if f.From != 0x101 || f.MADs == 0 {
		t.Errorf("from %x, %d MADs", f.From, f.MADs)
	}
}

// A switch's SL2VL tables are read for cabled input x cabled output
// ports only: not from port 0 or an uncabled port, not to an uncabled
// port; an adapter's once (modifier 0).
func TestReadSL2VLCabledPairs(t *testing.T) {
	ff := smallFabric()
	f, err := Read(context.Background(), ff, ReadOptions{Tables: true, Options: Options{Window: 4, Timeout: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	pairs := func(node int) []string {
		var out []string
		for _, r := range ff.reads[node] {
			if r.attr == AttrSL2VL {
				out = append(out, fmt.Sprintf("%d>%d", r.mod>>8, r.mod&0xff))
			}
		}
		sort.Strings(out)
		return out
	}
	// sw1: ports 1, 2, 3 cabled, 4 not; sw2: 1 and 3.
	for _, tc := range []struct {
		node int
		want string
	}{
		{1, "1>1 1>2 1>3 2>1 2>2 2>3 3>1 3>2 3>3"},
		{2, "1>1 1>3 3>1 3>3"},
		{0, "0>0"}, {3, "0>0"}, {4, "0>0"},
	} {
		if got := strings.Join(pairs(tc.node), " "); got != tc.want {
			t.Errorf("node %d SL2VL reads %q, want %q", tc.node, got, tc.want)
		}
	}
	p := f.Nodes[0x200].Ports[2]
	if len(p.SL2VL) != 3 || p.Err != "" {
		t.Errorf("sw1 port 2 SL2VL %v (%s)", p.SL2VL, p.Err)
	}
	if p := f.Nodes[0x200].Ports[4]; p != nil && p.SL2VL != nil {
		t.Errorf("uncabled sw1 port 4 has SL2VL tables %v", p.SL2VL)
	}
}

// A node's tables are read as soon as its cabling is known, while the
// rest of the fabric is still being discovered: the first table read
// goes out before the last discovery SMP.
func TestReadTablesDuringDiscovery(t *testing.T) {
	ff := smallFabric()
	if _, err := Read(context.Background(), ff, ReadOptions{Tables: true, Options: Options{Window: 4, Timeout: 20 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	firstTable, lastDiscovery := -1, -1
	for i, a := range ff.order {
		switch a {
		case AttrPKeyTable, AttrSL2VL, AttrVLArb:
			if firstTable < 0 {
				firstTable = i
			}
		default:
			lastDiscovery = i
		}
	}
	if firstTable < 0 || firstTable > lastDiscovery {
		t.Errorf("the first table read is SMP %d, the last discovery SMP %d: the tables waited for the whole discovery", firstTable, lastDiscovery)
	}
}

// One node that answers no SL-to-VL query: its port says so, the rest
// of the fabric is read; the retries are bounded.
func TestReadOnePortUnreadable(t *testing.T) {
	ff := smallFabric()
	ff.nodes[3].drop = map[uint16]bool{AttrSL2VL: true}
	start := time.Now()
	f, err := Read(context.Background(), ff, ReadOptions{Tables: true, Options: Options{Window: 8, Timeout: 20 * time.Millisecond, Retries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("a dead port held the read for %s", time.Since(start))
	}
	p := f.Nodes[0x400].Ports[1]
	if !strings.Contains(p.Err, "SLtoVLMappingTable") || !strings.Contains(p.Err, "no answer") {
		t.Errorf("ca2 port 1 error %q", p.Err)
	}
	if p.PKeys == nil || p.VLArb == nil {
		t.Errorf("ca2's other tables were not read: %+v", p)
	}
	if q := f.Nodes[0x500].Ports[1]; q.Err != "" || q.SL2VL == nil {
		t.Errorf("ca3 port 1 %+v", q)
	}
	// A node that answers nothing: the switch port facing it says so.
	ff = smallFabric()
	ff.nodes[4].drop = map[uint16]bool{AttrNodeInfo: true}
	f, err = Read(context.Background(), ff, ReadOptions{Options: Options{Timeout: 10 * time.Millisecond, Retries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if e := f.Nodes[0x200].Ports[3].Err; !strings.Contains(e, "NodeInfo of the node at the far end") {
		t.Errorf("sw1 port 3 error %q", e)
	}
	if f.Nodes[0x500] != nil {
		t.Errorf("a silent node was listed")
	}
}

// The dump the command writes (Main's standard output, as the fabctl
// that ran it reads it) is what ParseDump reads back.
func TestDumpRoundTrip(t *testing.T) {
	f, err := Read(context.Background(), smallFabric(), ReadOptions{Tables: true, Options: Options{Timeout: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer func(o func() (Port, error)) { openPort = o }(openPort)
	openPort = func() (Port, error) { return smallFabric(), nil }
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"read", "--tables", "--timeout", "20ms"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	g, err := ibfabric.ParseDump(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Describe() != g.Describe() || len(f.Links) != len(g.Links) || g.MADs != f.MADs {
		t.Errorf("round trip:\n%s\nvs\n%s", f.Describe(), g.Describe())
	}
}

// TestRecordTablePKeyBlock: opensm answers a PKeyTableRecord with the
// block number in host order although the query's is in network order
// (osm_sa_pkey_record.c); the record of the asked block is accepted in
// either order, another block or port is refused.
func TestRecordTablePKeyBlock(t *testing.T) {
	q := PKeyRecordQuery(2, 1, 2)
	rec := func(lid uint16, block []byte, port byte) []byte {
		b := make([]byte, 72)
		binary.BigEndian.PutUint16(b, lid)
		copy(b[2:4], block)
		b[4] = port
		b[8] = 0xff
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"host order (opensm)", rec(2, []byte{1, 0}, 2), true},
		{"network order", rec(2, []byte{0, 1}, 2), true},
		{"another block", rec(2, []byte{2, 0}, 2), false},
		{"another port", rec(2, []byte{1, 0}, 3), false},
		{"another LID", rec(3, []byte{1, 0}, 2), false},
	} {
		tbl, err := RecordTable(AttrPKeyRecord, q, c.data, 4)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.ok && (len(tbl) != 64 || tbl[0] != 0xff) {
			t.Errorf("%s: table %x", c.name, tbl)
		}
	}
}

// lossyPort answers NodeInfo of this port, but loses the first send of
// every request (by attribute modifier) and counts what is in flight.
type lossyPort struct {
	queue    [][]byte
	seen     map[uint32]bool
	inFlight int
	most     int
}

func (l *lossyPort) Send(mad []byte, dlid, dqp int, qkey uint32, timeout time.Duration) error {
	mod := binary.BigEndian.Uint32(mad[20:])
	l.inFlight++
	l.most = max(l.most, l.inFlight)
	if !l.seen[mod] {
		l.seen[mod] = true
		return nil // lost: the engine must send it again
	}
	resp := append([]byte(nil), mad...)
	resp[3] = MethodGetResp
	binary.BigEndian.PutUint16(resp[4:], directionBit)
	binary.BigEndian.PutUint32(resp[64:], mod) // the answer says which request it was
	l.queue = append(l.queue, resp)
	return nil
}

func (l *lossyPort) Recv(timeout time.Duration) ([]byte, int, error) {
	if len(l.queue) == 0 {
		// everything sent and not answered is lost
		l.inFlight = 0
		time.Sleep(min(timeout, time.Millisecond))
		return nil, 0, nil
	}
	m := l.queue[0]
	l.queue = l.queue[1:]
	l.inFlight--
	return m, 0, nil
}

func (l *lossyPort) Close() error { return nil }

// TestEngineRetriesInOrder: requests whose first send is lost are sent
// again once their deadline passes, each answer reaches its own request,
// and the window never exceeds MaxWindow however large it is asked (nor
// is smaller unless asked: Options.Window's measurement).
func TestEngineRetriesInOrder(t *testing.T) {
	if w := (Options{}).withDefaults().Window; w != MaxWindow {
		t.Errorf("default window %d, want %d", w, MaxWindow)
	}
	p := &lossyPort{seen: map[uint32]bool{}}
	e := newEngine(p, Options{Window: 10 * MaxWindow, Timeout: 20 * time.Millisecond, Retries: 1})
	if e.o.Window != MaxWindow {
		t.Fatalf("window %d, want it bounded at %d", e.o.Window, MaxWindow)
	}
	const n = 3 * MaxWindow
	got := make([]int, n)
	for i := 0; i < n; i++ {
		e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrNodeInfo, Mod: uint32(i), Path: []int{}}, func(r *Response, err error) {
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			got[i] = int(binary.BigEndian.Uint32(r.Data)) + 1
		})
	}
	if err := e.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != i+1 {
			t.Fatalf("request %d got the answer of request %d", i, g-1)
		}
	}
	if e.sent != 2*n {
		t.Errorf("%d MADs sent, want %d (each twice)", e.sent, 2*n)
	}
	if p.most > MaxWindow {
		t.Errorf("%d MADs in flight at once, more than %d", p.most, MaxWindow)
	}
}

// fakeFatTree is make bench-ib's 16-switch, 64-adapter fat tree (8
// leaves with 8 adapters each, 8 spines) as a fakeFabric: adapters
// 0..63, leaves 64..71, spines 72..79.
func fakeFatTree() *fakeFabric {
	const leaves, spines, per = 8, 8, 8
	f := &fakeFabric{}
	for h := 0; h < leaves*per; h++ {
		f.nodes = append(f.nodes, &fakeNode{guid: 0x1000 + uint64(h)*0x10, typ: 1, ports: 1, desc: fmt.Sprintf("cn%03d mlx5_0", h+1),
			lid: 100 + h, peer: map[int][2]int{1: {leaves*per + h/per, h%per + 1}}})
	}
	for l := 0; l < leaves; l++ {
		n := &fakeNode{guid: 0x100000 + uint64(l)*0x100, typ: 2, ports: per + spines, desc: fmt.Sprintf("leaf%02d", l+1), lid: 1 + l, peer: map[int][2]int{}}
		for h := 0; h < per; h++ {
			n.peer[h+1] = [2]int{l*per + h, 1}
		}
		for s := 0; s < spines; s++ {
			n.peer[per+s+1] = [2]int{leaves*per + leaves + s, l + 1}
		}
		f.nodes = append(f.nodes, n)
	}
	for s := 0; s < spines; s++ {
		n := &fakeNode{guid: 0x200000 + uint64(s)*0x100, typ: 2, ports: leaves, desc: fmt.Sprintf("spine%02d", s+1), lid: 20 + s, peer: map[int][2]int{}}
		for l := 0; l < leaves; l++ {
			n.peer[l+1] = [2]int{leaves*per + l, per + s + 1}
		}
		f.nodes = append(f.nodes, n)
	}
	return f
}

// BenchmarkReadFatTree is the MAD client's own CPU for a whole read of
// make bench-ib's 16/64 fat tree, the port answering at once (no
// syscalls, no simulator): the engine, the discovery, the decoders and
// the tables, per read and per MAD.
func BenchmarkReadFatTree(b *testing.B) {
	var mads int
	for b.Loop() {
		f, err := Read(context.Background(), fakeFatTree(), ReadOptions{Tables: true, Options: Options{Timeout: time.Second}})
		if err != nil {
			b.Fatal(err)
		}
		mads = f.MADs
	}
	b.ReportMetric(float64(mads), "MADs")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(mads), "ns/MAD")
}
