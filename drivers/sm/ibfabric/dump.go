package ibfabric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The dump is how `fabctl ibmad read` (drivers/sm/ibfabric/ibmad), run on
// the subnet manager host, hands a fabric to the fabctl that asked: the
// nodes, their ports, what was read of each and what could not be (text
// since format 3, dumptext.go; JSON before). It is device output from another machine, so ParseDump checks every
// field before the fabric is judged: node and port numbers in range,
// GUIDs unique, cables ending at listed nodes, table entries in range.

// DumpFormat is the dump's version, the one MarshalDump writes: text
// (dumptext.go). ParseDump reads it and the JSON of formats 1 and 2
// (what an older fabctl on the SM host writes): format 1's ports list
// their SL2VL tables by input port ("sl2vl"); format 2 lists each
// distinct table once with the input ports that hold it
// ("sl2vl_tables"): a switch port's inputs normally share one table, and
// per input they were most of the dump's bytes and of its parsing.
// Format 3 keeps format 2's grouping.
const DumpFormat = 3

type dumpDoc struct {
	Format int        `json:"format"`
	From   string     `json:"from,omitempty"`
	MADs   int        `json:"mads,omitempty"`
	Nodes  []dumpNode `json:"nodes"`
}

type dumpNode struct {
	GUID       string     `json:"guid"`
	Type       int        `json:"type"`
	Desc       string     `json:"desc"`
	Ports      int        `json:"ports"`
	LID        int        `json:"lid,omitempty"`
	PKeyCap    int        `json:"pkey_cap,omitempty"`
	EnforceCap int        `json:"enforce_cap,omitempty"`
	Port       []dumpPort `json:"port"`
}

type dumpPort struct {
	Num   int       `json:"num"`
	GUID  string    `json:"guid,omitempty"`
	LID   int       `json:"lid,omitempty"`
	Peer  *dumpPeer `json:"peer,omitempty"`
	Info  *PortInfo `json:"info,omitempty"`
	PKeys []uint16  `json:"pkeys"`
	// SL2VL (format 1): input port -> the VL of SL 0..15, one hex digit
	// each.
	SL2VL map[int]string `json:"sl2vl,omitempty"`
	// SL2VLTables (format 2): the VL of SL 0..15, one hex digit each ->
	// the input ports whose table it is; null: not read.
	SL2VLTables map[string][]int `json:"sl2vl_tables"`
	VLArb       *VLArb           `json:"vlarb,omitempty"`
	Err         string           `json:"error,omitempty"`
}

type dumpPeer struct {
	GUID string `json:"guid"`
	Port int    `json:"port"`
}

// MarshalDump writes the fabric as a dump, in format 3 (dumptext.go).
func (f *Fabric) MarshalDump() ([]byte, error) {
	return f.marshalDumpText(), nil
}

// Limits of a dump ParseDump accepts: far above any fabric one subnet
// manager runs (48K LIDs), far below what would exhaust memory.
const (
	maxDumpNodes = 65536
	maxDumpBytes = 256 << 20
	maxErrText   = 500
)

// ParseDump reads a dump.
func ParseDump(b []byte) (*Fabric, error) {
	fail := func(format string, args ...any) error {
		return &ParseError{Cmd: "fabctl ibmad read", Msg: fmt.Sprintf(format, args...)}
	}
	if len(b) > maxDumpBytes {
		return nil, fail("%d bytes of output (at most %d)", len(b), maxDumpBytes)
	}
	var doc dumpDoc
	if isDumpText(b) {
		var err error
		if doc, err = decodeDumpText(b); err != nil {
			return nil, fail("not a fabric dump: %v", err)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			return nil, fail("not a fabric dump: %v", err)
		}
		if doc.Format != 1 && doc.Format != 2 {
			return nil, fail("dump format %d; this fabctl reads 1, 2 and %d (the SM host runs another fabctl version)", doc.Format, DumpFormat)
		}
	}
	if len(doc.Nodes) == 0 {
		return nil, fail("no nodes")
	}
	if len(doc.Nodes) > maxDumpNodes {
		return nil, fail("%d nodes (at most %d)", len(doc.Nodes), maxDumpNodes)
	}
	f := &Fabric{Nodes: map[uint64]*Node{}, MADs: max(doc.MADs, 0)}
	if doc.From != "" {
		g, err := parseGUID(doc.From)
		if err != nil {
			return nil, fail("from: %v", err)
		}
		f.From = g
	}
	for i, dn := range doc.Nodes {
		g, err := parseGUID(dn.GUID)
		if err != nil {
			return nil, fail("node %d: %v", i+1, err)
		}
		if _, dup := f.Nodes[g]; dup {
			return nil, fail("node GUID %s is listed twice", GUID(g))
		}
		if dn.Type < 1 || dn.Type > 3 {
			return nil, fail("node %s: type %d", GUID(g), dn.Type)
		}
		if dn.Ports < 1 || dn.Ports > 254 {
			return nil, fail("node %s: %d ports (want 1..254)", GUID(g), dn.Ports)
		}
		n := &Node{GUID: g, Type: NodeType(dn.Type), Desc: printable(dn.Desc, 64), NumPorts: dn.Ports,
			LID: dn.LID, PKeyCap: dn.PKeyCap, EnforceCap: dn.EnforceCap, Ports: map[int]*Port{}}
		if err := checkLID(dn.LID); err != nil || dn.PKeyCap < 0 || dn.PKeyCap > 65535 || dn.EnforceCap < 0 || dn.EnforceCap > 65535 {
			return nil, fail("node %s: LID %d, P_Key caps %d/%d out of range", GUID(g), dn.LID, dn.PKeyCap, dn.EnforceCap)
		}
		for _, dp := range dn.Port {
			p, err := dumpedPort(n, dp, doc.Format)
			if err != nil {
				return nil, fail("node %s (%q) port %d: %v", GUID(g), n.Desc, dp.Num, err)
			}
			if _, dup := n.Ports[dp.Num]; dup {
				return nil, fail("node %s port %d is listed twice", GUID(g), dp.Num)
			}
			n.Ports[dp.Num] = p
		}
		f.Nodes[g] = n
	}
	// Cables end at listed nodes, on ports they have.
	for _, n := range f.sortedNodes() {
		for _, pn := range sortedKeys(n.Ports) {
			p := n.Ports[pn]
			if p.Peer == nil {
				continue
			}
			peer := f.Nodes[p.Peer.Node]
			if peer == nil {
				return nil, fail("node %s port %d is cabled to %s, which the dump does not list", GUID(n.GUID), pn, GUID(p.Peer.Node))
			}
			if p.Peer.Port > peer.NumPorts {
				return nil, fail("node %s port %d is cabled to port %d of %s, which has %d", GUID(n.GUID), pn, p.Peer.Port, GUID(peer.GUID), peer.NumPorts)
			}
			a, b := PeerRef{n.GUID, pn}, *p.Peer
			if b.Node < a.Node || (b.Node == a.Node && b.Port < a.Port) {
				if q := peer.Ports[b.Port]; q != nil && q.Peer != nil && *q.Peer == a {
					continue // listed from the other end
				}
			}
			f.Links = append(f.Links, Link{A: a, B: b, Width: p.Width, Speed: p.Speed})
		}
	}
	return f, nil
}

func dumpedPort(n *Node, dp dumpPort, format int) (*Port, error) {
	first := 1
	if n.Type == Switch {
		first = 0
	}
	if dp.Num < first || dp.Num > n.NumPorts {
		return nil, fmt.Errorf("outside the node's %d..%d", first, n.NumPorts)
	}
	p := &Port{Num: dp.Num, LID: dp.LID, Info: dp.Info, PKeys: dp.PKeys, VLArb: dp.VLArb, Err: printable(dp.Err, maxErrText)}
	if err := checkLID(dp.LID); err != nil {
		return nil, err
	}
	if dp.GUID != "" {
		g, err := parseGUID(dp.GUID)
		if err != nil {
			return nil, err
		}
		p.GUID = g
	} else if n.Type == Switch {
		p.GUID = n.GUID
	}
	if dp.Peer != nil {
		g, err := parseGUID(dp.Peer.GUID)
		if err != nil {
			return nil, fmt.Errorf("peer: %v", err)
		}
		if dp.Peer.Port < 1 || dp.Peer.Port > 254 || dp.Num == 0 {
			return nil, fmt.Errorf("cabled to port %d", dp.Peer.Port)
		}
		p.Peer = &PeerRef{Node: g, Port: dp.Peer.Port}
	}
	if pi := dp.Info; pi != nil {
		if err := checkLID(pi.LID); err != nil {
			return nil, err
		}
		if pi.NeighborMTU < 0 || pi.NeighborMTU > 4096 || pi.MTUCap < 0 || pi.MTUCap > 4096 || pi.OperVLs < 0 || pi.OperVLs > 15 ||
			pi.VLCap < 0 || pi.VLCap > 15 || pi.VLArbHighCap < 0 || pi.VLArbHighCap > 64 || pi.VLArbLowCap < 0 || pi.VLArbLowCap > 64 {
			return nil, fmt.Errorf("PortInfo values out of range")
		}
		pi.State, pi.PhysState = printable(pi.State, 32), printable(pi.PhysState, 32)
		p.Width, p.Speed = pi.Width, pi.Speed
	}
	if len(dp.PKeys) > 65536 {
		return nil, fmt.Errorf("%d P_Keys", len(dp.PKeys))
	}
	if format == 1 && dp.SL2VLTables != nil || format != 1 && dp.SL2VL != nil {
		return nil, fmt.Errorf("SL2VL tables in the form of another dump format than %d", format)
	}
	add := func(in int, h string) error {
		if in < 0 || in > n.NumPorts {
			return fmt.Errorf("an SL2VL table from input port %d", in)
		}
		if _, dup := p.SL2VL[in]; dup {
			return fmt.Errorf("two SL2VL tables from input port %d", in)
		}
		t, ok := sl2vlHex(h)
		if !ok {
			return fmt.Errorf("SL2VL from input port %d: %q is not 16 hex digits", in, clip(h))
		}
		p.SL2VL[in] = t
		return nil
	}
	if dp.SL2VL != nil {
		p.SL2VL = map[int][16]int{}
		for in, h := range dp.SL2VL {
			if err := add(in, h); err != nil {
				return nil, err
			}
		}
	}
	if dp.SL2VLTables != nil {
		n := 0
		for _, ins := range dp.SL2VLTables {
			n += len(ins)
		}
		p.SL2VL = make(map[int][16]int, min(n, 255)) // a port has at most 255 inputs
		for h, ins := range dp.SL2VLTables {
			for _, in := range ins {
				if err := add(in, h); err != nil {
					return nil, err
				}
			}
		}
	}
	if va := dp.VLArb; va != nil {
		if len(va.High) > 64 || len(va.Low) > 64 {
			return nil, fmt.Errorf("VL arbitration tables of %d/%d entries", len(va.High), len(va.Low))
		}
		for _, w := range append(append([]VLWeight(nil), va.High...), va.Low...) {
			if w.VL < 0 || w.VL > 15 || w.Weight < 0 || w.Weight > 255 {
				return nil, fmt.Errorf("VL arbitration entry %d:%d", w.VL, w.Weight)
			}
		}
	}
	return p, nil
}

// sl2vlHex reads 16 hex digits, the VL of SL 0..15.
func sl2vlHex(h string) ([16]int, bool) {
	var t [16]int
	if len(h) != 16 {
		return t, false
	}
	for sl := range t {
		c := h[sl]
		switch {
		case c >= '0' && c <= '9':
			t[sl] = int(c - '0')
		case c >= 'a' && c <= 'f':
			t[sl] = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			t[sl] = int(c-'A') + 10
		default:
			return t, false
		}
	}
	return t, true
}

func checkLID(l int) error {
	if l < 0 || l > 0xffff {
		return fmt.Errorf("LID %d", l)
	}
	return nil
}

func parseGUID(s string) (uint64, error) {
	t, ok := strings.CutPrefix(s, "0x")
	if !ok || len(t) == 0 || len(t) > 16 {
		return 0, fmt.Errorf("GUID %q is not 0x and up to 16 hex digits", clip(s))
	}
	g, err := strconv.ParseUint(t, 16, 64)
	if err != nil || g == 0 {
		return 0, fmt.Errorf("GUID %q is not a non-zero hex number", clip(s))
	}
	return g, nil
}

// printable keeps printable ASCII (device text lands in messages and
// terminals), at most max bytes.
func printable(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MarshalText writes a width as "4x".
func (w Width) MarshalText() ([]byte, error) {
	if w == 0 {
		return []byte(""), nil
	}
	return []byte(w.String()), nil
}

// UnmarshalText reads a width ("" is unknown).
func (w *Width) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*w = 0
		return nil
	}
	v, err := ParseWidth(string(b))
	*w = v
	return err
}

// MarshalText writes a speed as its name ("QDR").
func (s Speed) MarshalText() ([]byte, error) {
	if s == SpeedUnknown {
		return []byte(""), nil
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a speed name ("" is unknown).
func (s *Speed) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = SpeedUnknown
		return nil
	}
	v, err := ParseSpeed(string(b))
	*s = v
	return err
}
