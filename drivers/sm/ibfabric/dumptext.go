package ibfabric

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Dump format 3 is text, one line per node, port and what was read of a
// port: the JSON of formats 1 and 2 cost the reading fabctl more time to
// decode (about 12 ms for 16 switches and 64 adapters, make bench-ib)
// than the MAD client took to write it, on the path of every plan,
// drift and validate. Fields are separated by one space; a text field
// (a description, a port state, an error) is a Go-quoted string
// (strconv.Quote); "-" is a value that is absent. In order:
//
//	fabctl-ibmad-dump 3 <from GUID|-> <MADs sent>
//	node <GUID> <type 1..3> <ports> <LID> <PartitionCap> <PartitionEnforcementCap> <"description">
//	port <num> <port GUID|-> <LID> <peer GUID|-> <peer port>
//	info <LID> <"LinkState"> <"PhysLinkState"> <width|-> <speed|-> <NeighborMTU> <MTUCap> <OperVLs> <VLCap> <PartEnfInb 0|1> <PartEnfOutb 0|1> <P_Key violations> <VLArbHighCap> <VLArbLowCap> <IsSLMappingSupported 0|1>
//	pkeys [<P_Key in hex>]...
//	sl2vl [<VL of SL 0..15, one hex digit each>:<input port>[,<input port>]...]...
//	vlarb <high cap> <low cap> <high: VL:weight[,VL:weight]...|-> <low: the same|->
//	error <"text">
//
// A node's ports follow its node line, and a port's info, pkeys, sl2vl,
// vlarb and error lines (each at most once, each only when that was
// read) follow its port line. A pkeys or sl2vl line without entries is
// a table read and empty. What the lines say is then checked as the
// JSON formats' fields are (ParseDump).

const dumpHeader = "fabctl-ibmad-dump"

// marshalDumpText writes f in format 3.
func (f *Fabric) marshalDumpText() []byte {
	var b []byte
	b = append(b, dumpHeader...)
	b = append(b, " 3 "...)
	b = appendGUIDOrDash(b, f.From)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(f.MADs), 10)
	b = append(b, '\n')
	for _, n := range f.sortedNodes() {
		b = append(b, "node "...)
		b = appendGUIDOrDash(b, n.GUID)
		b = appendInts(b, int(n.Type), n.NumPorts, n.LID, n.PKeyCap, n.EnforceCap)
		b = append(b, ' ')
		b = strconv.AppendQuoteToASCII(b, n.Desc)
		b = append(b, '\n')
		for _, pn := range sortedKeys(n.Ports) {
			b = appendDumpPort(b, pn, n.Ports[pn])
		}
	}
	return b
}

func appendDumpPort(b []byte, pn int, p *Port) []byte {
	b = append(b, "port "...)
	b = strconv.AppendInt(b, int64(pn), 10)
	b = append(b, ' ')
	b = appendGUIDOrDash(b, p.GUID)
	b = appendInts(b, p.LID)
	b = append(b, ' ')
	if p.Peer != nil {
		b = appendGUIDOrDash(b, p.Peer.Node)
		b = appendInts(b, p.Peer.Port)
	} else {
		b = append(b, "- 0"...)
	}
	b = append(b, '\n')
	if pi := p.Info; pi != nil {
		b = append(b, "info "...)
		b = strconv.AppendInt(b, int64(pi.LID), 10)
		b = append(b, ' ')
		b = strconv.AppendQuoteToASCII(b, pi.State)
		b = append(b, ' ')
		b = strconv.AppendQuoteToASCII(b, pi.PhysState)
		b = append(b, ' ')
		b = appendTextOrDash(b, pi.Width)
		b = append(b, ' ')
		b = appendTextOrDash(b, pi.Speed)
		b = appendInts(b, pi.NeighborMTU, pi.MTUCap, pi.OperVLs, pi.VLCap, bit(pi.PartEnfInb), bit(pi.PartEnfOutb),
			pi.PKeyViolates, pi.VLArbHighCap, pi.VLArbLowCap, bit(pi.HasSLMap))
		b = append(b, '\n')
	}
	if p.PKeys != nil {
		b = append(b, "pkeys"...)
		for _, k := range p.PKeys {
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(k), 16)
		}
		b = append(b, '\n')
	}
	if p.SL2VL != nil {
		b = append(b, "sl2vl"...)
		byTable := map[string][]int{}
		for _, in := range sortedKeys(p.SL2VL) {
			var h [16]byte
			for sl, vl := range p.SL2VL[in] {
				h[sl] = "0123456789abcdef"[vl&0xf]
			}
			byTable[string(h[:])] = append(byTable[string(h[:])], in)
		}
		tables := make([]string, 0, len(byTable))
		for h := range byTable {
			tables = append(tables, h)
		}
		slices.Sort(tables)
		for _, h := range tables {
			b = append(b, ' ')
			b = append(b, h...)
			for i, in := range byTable[h] {
				b = append(b, ":,"[min(i, 1)])
				b = strconv.AppendInt(b, int64(in), 10)
			}
		}
		b = append(b, '\n')
	}
	if va := p.VLArb; va != nil {
		b = append(b, "vlarb"...)
		b = appendInts(b, va.HighCap, va.LowCap)
		b = appendWeights(b, va.High)
		b = appendWeights(b, va.Low)
		b = append(b, '\n')
	}
	if p.Err != "" {
		b = append(b, "error "...)
		b = strconv.AppendQuoteToASCII(b, p.Err)
		b = append(b, '\n')
	}
	return b
}

func bit(v bool) int {
	if v {
		return 1
	}
	return 0
}

func appendInts(b []byte, vs ...int) []byte {
	for _, v := range vs {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return b
}

func appendGUIDOrDash(b []byte, g uint64) []byte {
	if g == 0 {
		return append(b, '-')
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, g, 16)
}

// appendTextOrDash writes a width or speed by its name ("4x", "EDR"),
// "-" when unknown.
func appendTextOrDash(b []byte, v interface{ MarshalText() ([]byte, error) }) []byte {
	t, err := v.MarshalText()
	if err != nil || len(t) == 0 || bytes.ContainsAny(t, " \n") {
		return append(b, '-')
	}
	return append(b, t...)
}

func appendWeights(b []byte, ws []VLWeight) []byte {
	b = append(b, ' ')
	if len(ws) == 0 {
		return append(b, '-')
	}
	return appendVLWeights(b, ws)
}

// isDumpText tells format 3 from the JSON formats.
func isDumpText(b []byte) bool { return bytes.HasPrefix(b, []byte(dumpHeader+" ")) }

// decodeDumpText reads format 3 into the JSON formats' document, which
// ParseDump then checks field by field as it checks theirs.
func decodeDumpText(b []byte) (dumpDoc, error) {
	var doc dumpDoc
	var node *dumpNode
	var port *dumpPort
	seen := map[string]bool{} // the current port's lines
	var f []string
	for ln := 1; len(b) > 0; ln++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		var err error
		f, err = dumpFields(f[:0], string(line))
		if err != nil {
			return doc, fmt.Errorf("line %d: %v", ln, err)
		}
		if len(f) == 0 {
			return doc, fmt.Errorf("line %d is empty", ln)
		}
		r := fieldReader{f: f[1:]}
		switch kw := f[0]; {
		case ln == 1:
			if kw != dumpHeader || len(f) != 4 {
				return doc, errors.New("line 1 is not a dump header")
			}
			doc.Format = r.int()
			doc.From = r.guid()
			doc.MADs = r.int()
		case kw == "node":
			if len(doc.Nodes) >= maxDumpNodes {
				return doc, fmt.Errorf("more than %d nodes", maxDumpNodes)
			}
			doc.Nodes = append(doc.Nodes, dumpNode{GUID: r.guid(), Type: r.int(), Ports: r.int(), LID: r.int(),
				PKeyCap: r.int(), EnforceCap: r.int(), Desc: r.text(), Port: []dumpPort{}})
			node, port = &doc.Nodes[len(doc.Nodes)-1], nil
		case kw == "port":
			if node == nil {
				return doc, fmt.Errorf("line %d: a port before any node", ln)
			}
			if len(node.Port) > 254 {
				return doc, fmt.Errorf("line %d: more than 255 ports of node %s", ln, node.GUID)
			}
			node.Port = append(node.Port, dumpPort{Num: r.int(), GUID: r.guid(), LID: r.int()})
			port = &node.Port[len(node.Port)-1]
			if g, pp := r.guid(), r.int(); g != "" {
				port.Peer = &dumpPeer{GUID: g, Port: pp}
			}
			clear(seen)
		default:
			if port == nil {
				return doc, fmt.Errorf("line %d: %q before any port", ln, clip(kw))
			}
			if seen[kw] {
				return doc, fmt.Errorf("line %d: a second %q line for one port", ln, clip(kw))
			}
			seen[kw] = true
			if err := port.readLine(kw, &r); err != nil {
				return doc, fmt.Errorf("line %d: %v", ln, err)
			}
		}
		if err := r.done(); err != nil {
			return doc, fmt.Errorf("line %d (%s): %v", ln, clip(f[0]), err)
		}
	}
	if doc.Format != 3 {
		return doc, fmt.Errorf("dump format %d in the text form of format 3", doc.Format)
	}
	return doc, nil
}

// readLine reads one of a port's lines after its keyword.
func (dp *dumpPort) readLine(kw string, r *fieldReader) error {
	switch kw {
	case "info":
		pi := &PortInfo{LID: r.int(), State: r.text(), PhysState: r.text()}
		if w := r.word(); w != "-" {
			r.fail(pi.Width.UnmarshalText([]byte(w)))
		}
		if s := r.word(); s != "-" {
			r.fail(pi.Speed.UnmarshalText([]byte(s)))
		}
		pi.NeighborMTU, pi.MTUCap, pi.OperVLs, pi.VLCap = r.int(), r.int(), r.int(), r.int()
		pi.PartEnfInb, pi.PartEnfOutb, pi.PKeyViolates = r.bool(), r.bool(), r.int()
		pi.VLArbHighCap, pi.VLArbLowCap, pi.HasSLMap = r.int(), r.int(), r.bool()
		dp.Info = pi
	case "pkeys":
		if len(r.f) > 65536 {
			return fmt.Errorf("%d P_Keys", len(r.f))
		}
		dp.PKeys = make([]uint16, 0, len(r.f))
		for len(r.f) > 0 {
			k, err := strconv.ParseUint(r.word(), 16, 16)
			r.fail(err)
			dp.PKeys = append(dp.PKeys, uint16(k))
		}
	case "sl2vl":
		dp.SL2VLTables = map[string][]int{}
		for len(r.f) > 0 {
			h, list, ok := strings.Cut(r.word(), ":")
			if !ok {
				return errors.New("an SL2VL table without its input ports")
			}
			if _, dup := dp.SL2VLTables[h]; dup {
				return fmt.Errorf("SL2VL table %q listed twice", clip(h))
			}
			ins := []int{}
			for _, s := range strings.Split(list, ",") {
				in, err := strconv.Atoi(s)
				r.fail(err)
				ins = append(ins, in)
			}
			dp.SL2VLTables[h] = ins
		}
	case "vlarb":
		dp.VLArb = &VLArb{HighCap: r.int(), LowCap: r.int(), High: r.weights(), Low: r.weights()}
	case "error":
		dp.Err = r.text()
	default:
		return fmt.Errorf("unknown line %q", clip(kw))
	}
	return nil
}

// dumpFields splits a line at single spaces; a field that starts with
// a double quote is a Go-quoted string and ends where the string does.
func dumpFields(out []string, s string) ([]string, error) {
	for len(s) > 0 {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("a quoted text does not end: %s", clip(s))
			}
			out = append(out, q)
			s = s[len(q):]
		} else {
			i := strings.IndexByte(s, ' ')
			if i < 0 {
				i = len(s)
			}
			out = append(out, s[:i])
			s = s[i:]
		}
		if len(s) == 0 {
			break
		}
		if s[0] != ' ' || len(s) == 1 {
			return nil, errors.New("fields are not separated by one space")
		}
		s = s[1:]
	}
	return out, nil
}

// fieldReader takes a line's fields in order; the first error sticks.
type fieldReader struct {
	f   []string
	err error
}

func (r *fieldReader) fail(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}

func (r *fieldReader) word() string {
	if len(r.f) == 0 {
		r.fail(errors.New("too few fields"))
		return "-"
	}
	w := r.f[0]
	r.f = r.f[1:]
	return w
}

func (r *fieldReader) int() int {
	w := r.word()
	n, err := strconv.Atoi(w)
	if err != nil {
		r.fail(fmt.Errorf("%q is not a number", clip(w)))
	}
	return n
}

func (r *fieldReader) bool() bool {
	switch w := r.word(); w {
	case "0":
		return false
	case "1":
		return true
	default:
		r.fail(fmt.Errorf("%q is not 0 or 1", clip(w)))
		return false
	}
}

// guid returns the GUID field as the JSON formats carry it ("" for -);
// ParseDump checks it.
func (r *fieldReader) guid() string {
	if w := r.word(); w != "-" {
		return w
	}
	return ""
}

func (r *fieldReader) text() string {
	w := r.word()
	s, err := strconv.Unquote(w)
	if err != nil || !strings.HasPrefix(w, `"`) {
		r.fail(fmt.Errorf("%q is not a quoted text", clip(w)))
	}
	return s
}

func (r *fieldReader) weights() []VLWeight {
	ws := []VLWeight{}
	w := r.word()
	if w == "-" {
		return ws
	}
	for _, e := range strings.Split(w, ",") {
		vl, wt, ok := strings.Cut(e, ":")
		a, err1 := strconv.Atoi(vl)
		c, err2 := strconv.Atoi(wt)
		if !ok || err1 != nil || err2 != nil {
			r.fail(fmt.Errorf("VL arbitration entry %q is not VL:weight", clip(e)))
			return ws
		}
		if len(ws) >= 64 {
			r.fail(errors.New("more than 64 VL arbitration entries"))
			return ws
		}
		ws = append(ws, VLWeight{VL: a, Weight: c})
	}
	return ws
}

func (r *fieldReader) done() error {
	if r.err == nil && len(r.f) > 0 {
		return fmt.Errorf("%d more fields than the line has", len(r.f))
	}
	return r.err
}
