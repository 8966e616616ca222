package ibfabric

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Partition is an intended partition: its 15-bit P_Key and member ports.
type Partition struct {
	Name    string
	PKey    uint16 // base P_Key (the low 15 bits are used)
	Members []Member
}

// Member is a partition's member port.
type Member struct {
	Port PortRef // an adapter port of the topology
	Full bool
}

// PortWant is what the subnet manager should have programmed into one
// cabled port: the P_Keys (by base P_Key: partition name and membership;
// nil: the port's P_Key table is not checked, as on inter-switch ports,
// where opensm turns enforcement off), the SL-to-VL table (nil: not
// checked) and the VL arbitration tables (nil: not checked; compared
// without zero-weight entries).
type PortWant struct {
	PKeys     map[uint16]PKeyWant
	SL2VL     []int
	VLArbHigh []VLWeight
	VLArbLow  []VLWeight
}

// PKeyWant is one P_Key a port should hold.
type PKeyWant struct {
	Partition string
	Full      bool
}

// Intent is what the fabric should look like: the cabling, the tables
// opensm should have programmed into each port, and the MTU. Zero values
// are not checked.
type Intent struct {
	Topology *Topology
	// Tables are the port tables to check, by port. When nil they are
	// derived from Partitions, Enforce, SL2VL and VLArbHigh/Low: every
	// member adapter port holds its partitions' P_Keys (and, with
	// Enforce, so does the switch port facing it: opensm copies the
	// adapter's table there, osm_pkey_mgr.c pkey_mgr_update_peer_port);
	// every cabled port has the SL2VL and VL arbitration tables; the
	// default P_Key (0x7fff) is not checked.
	Tables     map[PortRef]PortWant
	Partitions []Partition
	Enforce    bool
	// SL2VL is the VL of SL 0..15 on every port (opensm qos_sl2vl).
	SL2VL []int
	// VLArbHigh and VLArbLow are the VL arbitration tables (opensm
	// qos_vlarb_high/low).
	VLArbHigh, VLArbLow []VLWeight
	// MTU is the operational MTU in bytes every link should run at.
	MTU int
}

// Kind classifies a finding.
type Kind string

// The finding kinds.
const (
	KindUnreachable Kind = "unreachable"     // an intended node the tools did not reach
	KindUnknownNode Kind = "unknown-node"    // a node the spec does not declare
	KindLinkDown    Kind = "link-down"       // an intended cable with no link
	KindMiswired    Kind = "miswired"        // a port cabled to another port than intended
	KindExtraLink   Kind = "extra-link"      // a link between ports the spec leaves uncabled
	KindNotActive   Kind = "not-active"      // a link up but not Active (no SM, or the SM refused it)
	KindWidth       Kind = "width"           // trained at another width than intended
	KindSpeed       Kind = "speed"           // trained at another speed than intended
	KindMTU         Kind = "mtu"             // operational MTU differs
	KindUnreadable  Kind = "unreadable"      // a port the tools could not (wholly) read
	KindPKeyMissing Kind = "pkey-missing"    // a member port lacks the partition's P_Key
	KindPKeyMember  Kind = "pkey-membership" // full where limited is intended, or the reverse
	KindPKeyExtra   Kind = "pkey-extra"      // a port holds a P_Key of a partition it is not in
	KindSwitchPKey  Kind = "switch-pkey"     // the switch port facing a member lacks the P_Key (enforcement)
	KindSL2VL       Kind = "sl2vl"           // SL-to-VL table differs
	KindVLArb       Kind = "vlarb"           // VL arbitration differs
	KindNotQueried  Kind = "not-queried"     // a check needed data Discover did not read
	defaultPKey          = 0x7fff
	fullMember           = 0x8000
	pkeyMask             = 0x7fff
)

// Restorable reports whether the subnet manager programs what the
// finding is about, so a change can restore it (its files, a resweep, or
// the port table set back to the SM's record); every other kind is
// cabling, links or nodes, which no change fixes.
func (k Kind) Restorable() bool {
	switch k {
	case KindPKeyMissing, KindPKeyMember, KindPKeyExtra, KindSwitchPKey, KindSL2VL, KindVLArb:
		return true
	}
	return false
}

// Finding is one difference between intent and fabric. Where names the
// port the spec's way ("cn02:ib0", "leaf1 port 2"; a node: "leaf1",
// "cn02 mlx5_0"); Node and Port are the topology's names, for code.
type Finding struct {
	Kind    Kind
	Node    string
	Port    int
	Where   string
	Message string
	// Subject is what the finding is about beyond its port: the
	// partition's name (pkey-* and switch-pkey kinds), "high" or "low"
	// (vlarb); "" otherwise.
	Subject string
	// Attr, Want and Have are a port-table finding's setting
	// ("pkey/storage", "sl2vl", "vlarb_high") and its intended and live
	// values as TableValues writes them ("" when absent).
	Attr, Want, Have string
	// NodeGUID, PortGUID and LID identify the node and port in the
	// fabric (0 when unknown: a node the tools did not reach has the
	// spec's GUID and no LID).
	NodeGUID, PortGUID uint64
	LID                int
}

func (f Finding) String() string {
	w := f.Where
	if w == "" {
		w = f.Node
		if f.Port > 0 {
			w += " port " + strconv.Itoa(f.Port)
		}
	}
	return w + ": " + f.Message + " [" + string(f.Kind) + "]"
}

// Compare compares a discovered fabric with the intent. The topology must
// be valid (Topology.Validate).
func Compare(in Intent, f *Fabric) ([]Finding, error) {
	if in.Topology == nil {
		return nil, fmt.Errorf("the intent has no topology")
	}
	ix, err := in.Topology.index()
	if err != nil {
		return nil, err
	}
	c := &comparer{in: in, f: f, ix: ix}
	c.nodes()
	c.links()
	c.unreadable()
	c.tables()
	sort.SliceStable(c.out, func(i, j int) bool {
		a, b := c.out[i], c.out[j]
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.Kind < b.Kind
	})
	return c.out, nil
}

type comparer struct {
	in  Intent
	f   *Fabric
	ix  *index
	out []Finding
	// peers is each cabled port of the topology's far end (the first
	// link that names it), built once: CabledAsIntended scans every
	// link for every port.
	peers map[PortRef]PeerRef
}

// add records a finding about an intended node's port (or the node:
// port 0) with the fabric's identifiers of it.
func (c *comparer) add(k Kind, node string, port int, format string, args ...any) *Finding {
	fd := Finding{Kind: k, Node: node, Port: port, Where: c.in.Topology.PortName(PortRef{node, port}), Message: fmt.Sprintf(format, args...)}
	if ni, ok := c.ix.byName[node]; ok {
		fd.NodeGUID = ni.guid
		if port > 0 {
			fd.PortGUID = c.ix.portGUID(PortRef{node, port})
		}
		if n := c.f.Nodes[ni.guid]; n != nil {
			fd.LID = n.LID
			if p := n.Ports[port]; p != nil && p.LID != 0 {
				fd.LID = p.LID
			}
		}
	}
	c.out = append(c.out, fd)
	return &c.out[len(c.out)-1]
}

// addNode records a finding about a discovered node the spec does not
// name (an undeclared node, or a link from one).
func (c *comparer) addNode(k Kind, guid uint64, port int, format string, args ...any) *Finding {
	fd := Finding{Kind: k, Node: c.name(guid), Port: port, Where: c.where(guid, port), Message: fmt.Sprintf(format, args...), NodeGUID: guid}
	if n := c.f.Nodes[guid]; n != nil {
		fd.LID = n.LID
		if p := n.Ports[port]; p != nil {
			fd.PortGUID = p.GUID
			if p.LID != 0 {
				fd.LID = p.LID
			}
		}
	}
	c.out = append(c.out, fd)
	return &c.out[len(c.out)-1]
}

// name is the topology's name of a discovered node, else its description
// and GUID.
func (c *comparer) name(guid uint64) string {
	if n, ok := c.ix.byGUID[guid]; ok {
		return n
	}
	if n := c.f.Nodes[guid]; n != nil && n.Desc != "" {
		return fmt.Sprintf("%q (%s)", n.Desc, GUID(guid))
	}
	return GUID(guid)
}

// where names a discovered node's port the spec's way.
func (c *comparer) where(guid uint64, port int) string {
	if n, ok := c.ix.byGUID[guid]; ok {
		return c.in.Topology.PortName(PortRef{n, port})
	}
	s := c.name(guid)
	if port > 0 {
		s += " port " + strconv.Itoa(port)
	}
	return s
}

func (c *comparer) peerName(p PeerRef) string { return c.where(p.Node, p.Port) }

// port returns the discovered port of an intended port, or nil.
func (c *comparer) port(p PortRef) *Port {
	n := c.f.Nodes[c.ix.byName[p.Node].guid]
	if n == nil {
		return nil
	}
	return n.Ports[p.Port]
}

func (c *comparer) reached(node string) bool { return c.f.Nodes[c.ix.byName[node].guid] != nil }

func (c *comparer) nodes() {
	for _, s := range c.in.Topology.Switches {
		if !c.reached(s.Name) {
			c.add(KindUnreachable, s.Name, 0, "switch %s not found in the fabric (all its links down, or another GUID)", GUID(s.SwitchGUID()))
		}
	}
	for _, h := range c.in.Topology.HCAs {
		if !c.reached(h.Name) {
			c.add(KindUnreachable, h.Name, 0, "adapter %s not found in the fabric (its links down, or another GUID)", GUID(h.NodeGUID()))
		}
	}
	for _, n := range c.f.sortedNodes() {
		if _, ok := c.ix.byGUID[n.GUID]; !ok {
			c.addNode(KindUnknownNode, n.GUID, 0, "%s %s is in the fabric but not in the spec", n.Type, GUID(n.GUID))
		}
	}
}

func (c *comparer) links() {
	intendedEnd := map[PeerRef]bool{}
	for _, l := range c.in.Topology.Links {
		intendedEnd[PeerRef{c.ix.byName[l.A.Node].guid, l.A.Port}] = true
		intendedEnd[PeerRef{c.ix.byName[l.B.Node].guid, l.B.Port}] = true
	}
	name := c.in.Topology.PortName
	for _, l := range c.in.Topology.Links {
		// Report at the switch end when there is one: that is where a
		// technician looks.
		a, b := l.A, l.B
		if c.ix.byName[a.Node].typ != Switch && c.ix.byName[b.Node].typ == Switch {
			a, b = b, a
		}
		want := map[PortRef]PeerRef{
			a: {c.ix.byName[b.Node].guid, b.Port},
			b: {c.ix.byName[a.Node].guid, a.Port},
		}
		da, db := c.port(a), c.port(b)
		if da != nil && da.Peer != nil && *da.Peer == want[a] {
			c.linkQuality(a, b, l, da)
			continue
		}
		miswired := false
		for _, e := range []struct {
			end, other PortRef
			d          *Port
		}{{a, b, da}, {b, a, db}} {
			if e.d != nil && e.d.Peer != nil && *e.d.Peer != want[e.end] {
				miswired = true
				c.add(KindMiswired, e.end.Node, e.end.Port, "cabled to %s; the spec cables it to %s", c.peerName(*e.d.Peer), name(e.other))
			}
		}
		if miswired {
			continue
		}
		switch {
		case da != nil && da.Err != "" || db != nil && db.Err != "":
			// The port was not (wholly) read: unreadable() says so.
		case c.reached(a.Node):
			c.add(KindLinkDown, a.Node, a.Port, "no link to %s (link down, or no cable)", name(b))
		case c.reached(b.Node):
			c.add(KindLinkDown, b.Node, b.Port, "no link to %s (link down, or no cable)", name(a))
		default:
			c.add(KindLinkDown, a.Node, a.Port, "no link to %s: neither end was reached", name(b))
		}
	}
	for _, l := range c.f.Links {
		if intendedEnd[l.A] || intendedEnd[l.B] {
			continue // a miswired cable: reported at its intended end
		}
		c.addNode(KindExtraLink, l.A.Node, l.A.Port, "linked to %s, which the spec does not cable (%s%s)", c.peerName(l.B), l.Width, l.Speed)
	}
}

// linkQuality checks an intended link that is cabled right: state,
// width, speed, MTU. d is the discovered port at end a.
func (c *comparer) linkQuality(a, b PortRef, l LinkSpec, d *Port) {
	name := c.in.Topology.PortName(b)
	w, s := d.Width, d.Speed
	if d.Info != nil {
		if d.Info.State != "Active" {
			c.add(KindNotActive, a.Node, a.Port, "link to %s is %s/%s, not Active (is the subnet manager running and sweeping?)", name, d.Info.State, d.Info.PhysState)
		}
		if d.Info.Width != 0 {
			w = d.Info.Width
		}
		if d.Info.Speed != 0 {
			s = d.Info.Speed
		}
	}
	if l.Width != 0 && w != 0 && w != l.Width {
		adj := "lower"
		if w > l.Width {
			adj = "higher"
		}
		c.add(KindWidth, a.Node, a.Port, "link to %s trained at %s, %s than the spec's %s (%.0f of %.0f Gb/s): check the cable and both ports",
			name, w, adj, l.Width, Gbps(w, s), Gbps(l.Width, s))
	}
	if l.Speed != 0 && s != 0 && s != l.Speed {
		adj := "lower"
		if s > l.Speed {
			adj = "higher"
		}
		c.add(KindSpeed, a.Node, a.Port, "link to %s trained at %s, %s than the spec's %s", name, s, adj, l.Speed)
	}
	if c.in.MTU > 0 {
		if d.Info == nil {
			if d.Err == "" {
				c.add(KindNotQueried, a.Node, a.Port, "MTU not checked: PortInfo was not read")
			}
		} else if d.Info.NeighborMTU != c.in.MTU {
			c.add(KindMTU, a.Node, a.Port, "link to %s runs at MTU %d, the spec says %d (port MTU cap %d)", name, d.Info.NeighborMTU, c.in.MTU, d.Info.MTUCap)
		}
	}
}

// unreadable reports every port of an intended node that the tools
// could not (wholly) read: a finding on that port, the rest is judged.
func (c *comparer) unreadable() {
	for _, n := range c.f.sortedNodes() {
		for _, pn := range sortedKeys(n.Ports) {
			p := n.Ports[pn]
			if p.Err == "" {
				continue
			}
			if name, ok := c.ix.byGUID[n.GUID]; ok {
				c.add(KindUnreadable, name, pn, "could not be read: %s", p.Err)
			} else {
				c.addNode(KindUnreadable, n.GUID, pn, "could not be read: %s", p.Err)
			}
		}
	}
}

// wants returns the port tables to check: the intent's, or derived.
func (c *comparer) wants() map[PortRef]PortWant {
	if c.in.Tables != nil {
		return c.in.Tables
	}
	out := map[PortRef]PortWant{}
	get := func(r PortRef) PortWant { return out[r] }
	facing := map[PortRef]PortRef{} // adapter port -> switch port
	for _, l := range c.in.Topology.Links {
		for _, e := range [][2]PortRef{{l.A, l.B}, {l.B, l.A}} {
			if c.ix.byName[e[0].Node].typ != Switch && c.ix.byName[e[1].Node].typ == Switch {
				facing[e[0]] = e[1]
			}
			w := get(e[0])
			if w.PKeys == nil && c.ix.byName[e[0].Node].typ != Switch {
				w.PKeys = map[uint16]PKeyWant{} // extras are checked on every adapter port
			}
			if c.in.SL2VL != nil {
				w.SL2VL = c.in.SL2VL
			}
			if c.in.VLArbHigh != nil {
				w.VLArbHigh = c.in.VLArbHigh
			}
			if c.in.VLArbLow != nil {
				w.VLArbLow = c.in.VLArbLow
			}
			out[e[0]] = w
		}
	}
	for _, p := range c.in.Partitions {
		for _, m := range p.Members {
			refs := []PortRef{m.Port}
			if sw, ok := facing[m.Port]; ok && c.in.Enforce {
				refs = append(refs, sw)
			}
			for _, r := range refs {
				w := get(r)
				if w.PKeys == nil {
					w.PKeys = map[uint16]PKeyWant{}
				}
				base := p.PKey & pkeyMask
				if have, ok := w.PKeys[base]; !ok || !have.Full {
					w.PKeys[base] = PKeyWant{Partition: p.Name, Full: m.Full || have.Full}
				}
				out[r] = w
			}
		}
	}
	// Derived wants leave the default P_Key alone, and the P_Key
	// tables of ports in no partition.
	return out
}

// tables compares every intended port's tables with what was read.
func (c *comparer) tables() {
	wants := c.wants()
	refs := make([]PortRef, 0, len(wants))
	for r := range wants {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Node != refs[j].Node {
			return refs[i].Node < refs[j].Node
		}
		return refs[i].Port < refs[j].Port
	})
	names := c.pkeyNames()
	for _, r := range refs {
		ni, ok := c.ix.byName[r.Node]
		if !ok {
			continue
		}
		n := c.f.Nodes[ni.guid]
		if n == nil {
			continue // unreachable: reported by nodes()
		}
		p := n.Ports[r.Port]
		if p == nil || p.Peer == nil {
			continue // link down or miswired: reported by links()
		}
		w := wants[r]
		if n.Type == Switch && !c.cabledAsIntended(r, p) {
			// A switch port's P_Keys follow the adapter it faces: on a
			// miswired port (a finding of its own) they are not judged.
			w.PKeys = nil
		}
		want := WantValues(w)
		have := TableValues(n, p, w, names, c.in.Tables == nil)
		isSwitch := n.Type == Switch
		keys := make([]string, 0, len(want)+len(have))
		for k := range want {
			keys = append(keys, k)
		}
		for k := range have {
			if _, ok := want[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			w, h := want[k], have[k]
			if w == h {
				continue
			}
			c.tableFinding(r, p, isSwitch, k, w, h)
		}
	}
}

// cabledAsIntended is CabledAsIntended for port r, found in the fabric
// as p, with the topology's links indexed once.
func (c *comparer) cabledAsIntended(r PortRef, p *Port) bool {
	if c.peers == nil {
		c.peers = make(map[PortRef]PeerRef, 2*len(c.in.Topology.Links))
		for _, l := range c.in.Topology.Links {
			for _, e := range [][2]PortRef{{l.A, l.B}, {l.B, l.A}} {
				if _, dup := c.peers[e[0]]; dup {
					continue
				}
				c.peers[e[0]] = PeerRef{Node: c.ix.byName[e[1].Node].guid, Port: e[1].Port}
			}
		}
	}
	want, ok := c.peers[r]
	return ok && p.Peer != nil && *p.Peer == want
}

// CabledAsIntended reports whether a port of the topology is linked to
// the port the topology cables it to.
func CabledAsIntended(t *Topology, f *Fabric, r PortRef) bool {
	g, ok := t.NodeGUID(r.Node)
	if !ok {
		return false
	}
	n := f.Nodes[g]
	if n == nil || n.Ports[r.Port] == nil || n.Ports[r.Port].Peer == nil {
		return false
	}
	got := *n.Ports[r.Port].Peer
	for _, l := range t.Links {
		for _, e := range [][2]PortRef{{l.A, l.B}, {l.B, l.A}} {
			if e[0] != r {
				continue
			}
			pg, _ := t.NodeGUID(e[1].Node)
			return got == PeerRef{Node: pg, Port: e[1].Port}
		}
	}
	return false
}

// tableFinding reports one port-table setting that differs.
func (c *comparer) tableFinding(r PortRef, p *Port, isSwitch bool, attr, want, have string) {
	var fd *Finding
	switch {
	case attr == "sl2vl":
		if have == "" {
			if p.Err == "" {
				c.add(KindNotQueried, r.Node, r.Port, "SL2VL not checked: the table was not read")
			}
			return
		}
		fd = c.add(KindSL2VL, r.Node, r.Port, "SL-to-VL table is %s, the spec says %s", have, want)
	case strings.HasPrefix(attr, "vlarb_"):
		label := strings.TrimPrefix(attr, "vlarb_")
		if p.VLArb == nil {
			if p.Err == "" {
				c.add(KindNotQueried, r.Node, r.Port, "VL arbitration not checked: the table was not read")
			}
			return
		}
		fd = c.add(KindVLArb, r.Node, r.Port, "%s-priority VL arbitration is %s, the spec says %s", label, orEmpty(have), orEmpty(want))
		fd.Subject = label
	case strings.HasPrefix(attr, "pkey/"):
		part := strings.TrimPrefix(attr, "pkey/")
		if p.PKeys == nil {
			if p.Err == "" {
				c.add(KindNotQueried, r.Node, r.Port, "P_Keys not checked: the P_Key table was not read")
			}
			return
		}
		base := c.pkeyOf(part)
		switch {
		case have == "" && isSwitch:
			fd = c.add(KindSwitchPKey, r.Node, r.Port, "lacks P_Key 0x%04x of partition %s %s: with enforcement on, the switch drops the partition's packets from %s",
				base, part, pkeyList(p.PKeys), c.facingName(r))
		case have == "":
			fd = c.add(KindPKeyMissing, r.Node, r.Port, "lacks P_Key 0x%04x of partition %s %s: the port is not in the partition (its port GUID %s)",
				base, part, pkeyList(p.PKeys), GUID(p.GUID))
		case want == "":
			fd = c.add(KindPKeyExtra, r.Node, r.Port, "holds P_Key 0x%04x (%s member) of partition %s, which the spec does not put it in", base, have, part)
		default:
			fd = c.add(KindPKeyMember, r.Node, r.Port, "partition %s (0x%04x): the port is a %s member, the spec says %s", part, base, have, want)
		}
		fd.Subject = part
	default:
		return
	}
	fd.Attr, fd.Want, fd.Have = attr, want, have
}

func orEmpty(s string) string {
	if s == "" {
		return "empty"
	}
	return s
}

// facingName names the adapter port a switch port faces.
func (c *comparer) facingName(r PortRef) string {
	p := c.port(r)
	if p == nil || p.Peer == nil {
		return "the adapter it faces"
	}
	return c.peerName(*p.Peer)
}

// pkeyNames maps base P_Keys to the intent's partition names.
func (c *comparer) pkeyNames() map[uint16]string {
	m := map[uint16]string{}
	for _, p := range c.in.Partitions {
		m[p.PKey&pkeyMask] = p.Name
	}
	for _, w := range c.in.Tables {
		for k, pw := range w.PKeys {
			m[k&pkeyMask] = pw.Partition
		}
	}
	return m
}

func (c *comparer) pkeyOf(part string) uint16 {
	for k, n := range c.pkeyNames() {
		if n == part {
			return k
		}
	}
	v, _ := strconv.ParseUint(strings.TrimPrefix(part, "0x"), 16, 16)
	return uint16(v)
}

// WantValues is a port's intended tables as state values: "pkey/<partition>"
// full or limited, "sl2vl" the VL of SL 0..15 ("0,1,2,..."),
// "vlarb_high"/"vlarb_low" the non-zero entries ("0:64,1:64"; "" empty).
func WantValues(w PortWant) map[string]string {
	out := map[string]string{}
	for _, pw := range w.PKeys {
		out["pkey/"+pw.Partition] = membership(pw.Full)
	}
	if len(w.SL2VL) == 16 {
		out["sl2vl"] = intsString(w.SL2VL)
	}
	if w.VLArbHigh != nil {
		out["vlarb_high"] = vlwString(nonZero(w.VLArbHigh))
	}
	if w.VLArbLow != nil {
		out["vlarb_low"] = vlwString(nonZero(w.VLArbLow))
	}
	return out
}

// TableValues is what a discovered port holds of the settings a PortWant
// checks, as WantValues writes them: a P_Key of no known partition is
// "pkey/0x<base>"; a switch port's SL2VL is the table every cabled input
// port has, or "mixed: in N: ...; in M: ..." when they differ (the
// tables from port 0, the switch's management port, and from uncabled
// ports carry none of the fabric's traffic: not judged, and fabctl's MAD
// client does not read them). A table that was not read is absent. skipDefault leaves the
// default P_Key out (derived intents do not check it).
func TableValues(n *Node, p *Port, w PortWant, names map[uint16]string, skipDefault bool) map[string]string {
	out := map[string]string{}
	if w.PKeys != nil && p.PKeys != nil {
		mem := map[uint16]bool{}
		for _, k := range p.PKeys {
			base := k & pkeyMask
			mem[base] = mem[base] || k&fullMember != 0
		}
		for base, full := range mem {
			if skipDefault && base == defaultPKey {
				if _, wanted := w.PKeys[base]; !wanted {
					continue
				}
			}
			name := names[base]
			if name == "" {
				name = fmt.Sprintf("0x%04x", base)
			}
			out["pkey/"+name] = membership(full)
		}
	}
	if len(w.SL2VL) == 16 && p.SL2VL != nil {
		if v, ok := sl2vlValue(n, p); ok {
			out["sl2vl"] = v
		}
	}
	if p.VLArb != nil {
		if w.VLArbHigh != nil {
			out["vlarb_high"] = vlwString(p.VLArb.High)
		}
		if w.VLArbLow != nil {
			out["vlarb_low"] = vlwString(p.VLArb.Low)
		}
	}
	return out
}

// sl2vlValue is a port's SL2VL setting as TableValues writes it (false:
// no table of a cabled input was read). A switch port holds a table per
// input port (16 cabled on a 16-port leaf): they are grouped by value
// before any is written out, so a port whose inputs agree costs one
// string, not one per input.
func sl2vlValue(n *Node, p *Port) (string, bool) {
	type group struct {
		t   [16]int
		ins []int
	}
	var groups []group
	for in, t := range p.SL2VL {
		if n.Type == Switch {
			if ip := n.Ports[in]; in == 0 || ip == nil || ip.Peer == nil {
				continue // no traffic of the fabric enters there
			}
		}
		i := 0
		for i < len(groups) && groups[i].t != t {
			i++
		}
		if i == len(groups) {
			groups = append(groups, group{t: t})
		}
		groups[i].ins = append(groups[i].ins, in)
	}
	switch len(groups) {
	case 0:
		return "", false
	case 1:
		return intsString(groups[0].t[:]), true
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		sort.Ints(g.ins)
		s := make([]string, len(g.ins))
		for i, in := range g.ins {
			s[i] = strconv.Itoa(in)
		}
		parts = append(parts, "in "+strings.Join(s, ",")+": "+intsString(g.t[:]))
	}
	sort.Strings(parts)
	return "mixed: " + strings.Join(parts, "; "), true
}

func intsString(v []int) string {
	b := make([]byte, 0, 3*len(v))
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}

func membership(full bool) string {
	if full {
		return "full"
	}
	return "limited"
}

func pkeyList(keys []uint16) string {
	var s []string
	for _, k := range keys {
		s = append(s, fmt.Sprintf("0x%04x", k))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func nonZero(in []VLWeight) []VLWeight {
	out := []VLWeight{}
	for _, w := range in {
		if w.Weight != 0 {
			out = append(out, w)
		}
	}
	return out
}

// vlwString writes VL arbitration entries as opensm.conf does ("0:64,1:64").
func vlwString(ws []VLWeight) string {
	return string(appendVLWeights(make([]byte, 0, 6*len(ws)), ws))
}

// appendVLWeights appends entries as vlwString writes them.
func appendVLWeights(b []byte, ws []VLWeight) []byte {
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(w.VL), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(w.Weight), 10)
	}
	return b
}
