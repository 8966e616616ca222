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

// Intent is what the fabric should look like: the cabling, the
// partitions opensm should have programmed from partitions.conf, and the
// QoS tables from opensm.conf. Zero values are not checked.
type Intent struct {
	Topology   *Topology
	Partitions []Partition
	// Enforce: the switch port facing each member must also hold the
	// P_Key (opensm part_enforce both, in or out: its default is both).
	Enforce bool
	// SL2VL is the VL of SL 0..15 on every port (opensm qos_sl2vl).
	SL2VL []int
	// VLArbHigh and VLArbLow are the VL arbitration tables (opensm
	// qos_vlarb_high/low), compared without zero-weight entries.
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

// Finding is one difference between intent and fabric, named by node
// (the topology's name, else the node description and GUID) and port.
type Finding struct {
	Kind    Kind
	Node    string
	Port    int
	Message string
	// Subject is what the finding is about beyond its port: the
	// partition's name (pkey-* and switch-pkey kinds), "high" or "low"
	// (vlarb); "" otherwise.
	Subject string
}

func (f Finding) String() string {
	s := f.Node
	if f.Port > 0 {
		s += " port " + strconv.Itoa(f.Port)
	}
	return s + ": " + f.Message + " [" + string(f.Kind) + "]"
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
	c.partitions()
	c.qos()
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
}

func (c *comparer) add(k Kind, node string, port int, format string, args ...any) {
	c.out = append(c.out, Finding{Kind: k, Node: node, Port: port, Message: fmt.Sprintf(format, args...)})
}

// about sets the Subject of the finding add just made.
func (c *comparer) about(subject string) { c.out[len(c.out)-1].Subject = subject }

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

func (c *comparer) peerName(p PeerRef) string {
	return c.name(p.Node) + " port " + strconv.Itoa(p.Port)
}

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
			c.add(KindUnreachable, h.Name, 0, "adapter %s (%s) not found in the fabric (its links down, or another GUID)", GUID(h.NodeGUID()), h.Description())
		}
	}
	for _, n := range c.f.sortedNodes() {
		if _, ok := c.ix.byGUID[n.GUID]; !ok {
			c.add(KindUnknownNode, c.name(n.GUID), 0, "%s %s is in the fabric but not in the spec", n.Type, GUID(n.GUID))
		}
	}
}

func (c *comparer) links() {
	intendedEnd := map[PeerRef]bool{}
	for _, l := range c.in.Topology.Links {
		intendedEnd[PeerRef{c.ix.byName[l.A.Node].guid, l.A.Port}] = true
		intendedEnd[PeerRef{c.ix.byName[l.B.Node].guid, l.B.Port}] = true
	}
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
				c.add(KindMiswired, e.end.Node, e.end.Port, "cabled to %s; the spec cables it to %s", c.peerName(*e.d.Peer), e.other)
			}
		}
		if miswired {
			continue
		}
		switch {
		case c.reached(a.Node):
			c.add(KindLinkDown, a.Node, a.Port, "no link to %s (link down, or no cable)", b)
		case c.reached(b.Node):
			c.add(KindLinkDown, b.Node, b.Port, "no link to %s (link down, or no cable)", a)
		default:
			c.add(KindLinkDown, a.Node, a.Port, "no link to %s: neither end was reached", b)
		}
	}
	for _, l := range c.f.Links {
		if intendedEnd[l.A] || intendedEnd[l.B] {
			continue // a miswired cable: reported at its intended end
		}
		c.add(KindExtraLink, c.name(l.A.Node), l.A.Port, "linked to %s, which the spec does not cable (%s%s)", c.peerName(l.B), l.Width, l.Speed)
	}
}

// linkQuality checks an intended link that is cabled right: state,
// width, speed, MTU. d is the discovered port at end a.
func (c *comparer) linkQuality(a, b PortRef, l LinkSpec, d *Port) {
	w, s := d.Width, d.Speed
	if d.Info != nil {
		if d.Info.State != "Active" {
			c.add(KindNotActive, a.Node, a.Port, "link to %s is %s/%s, not Active (is the subnet manager running and sweeping?)", b, d.Info.State, d.Info.PhysState)
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
			b, w, adj, l.Width, Gbps(w, s), Gbps(l.Width, s))
	}
	if l.Speed != 0 && s != 0 && s != l.Speed {
		adj := "lower"
		if s > l.Speed {
			adj = "higher"
		}
		c.add(KindSpeed, a.Node, a.Port, "link to %s trained at %s, %s than the spec's %s", b, s, adj, l.Speed)
	}
	if c.in.MTU > 0 {
		if d.Info == nil {
			c.add(KindNotQueried, a.Node, a.Port, "MTU not checked: PortInfo was not read")
		} else if d.Info.NeighborMTU != c.in.MTU {
			c.add(KindMTU, a.Node, a.Port, "link to %s runs at MTU %d, the spec says %d (port MTU cap %d)", b, d.Info.NeighborMTU, c.in.MTU, d.Info.MTUCap)
		}
	}
}

func hasBase(keys []uint16, base uint16) (found bool, full bool) {
	for _, k := range keys {
		if k&pkeyMask == base&pkeyMask {
			found = true
			full = full || k&fullMember != 0
		}
	}
	return found, full
}

func (c *comparer) partitions() {
	member := map[PortRef]map[uint16]bool{} // port -> base P_Keys it should hold
	for _, p := range c.in.Partitions {
		base := p.PKey & pkeyMask
		for _, m := range p.Members {
			if member[m.Port] == nil {
				member[m.Port] = map[uint16]bool{}
			}
			member[m.Port][base] = true
			d := c.port(m.Port)
			if d == nil {
				continue // unreachable or link down: reported by links()
			}
			if d.PKeys == nil {
				c.add(KindNotQueried, m.Port.Node, m.Port.Port, "partition %s not checked: the P_Key table was not read", p.Name)
				continue
			}
			found, full := hasBase(d.PKeys, base)
			switch {
			case !found:
				c.add(KindPKeyMissing, m.Port.Node, m.Port.Port, "P_Key 0x%04x of partition %s is not in the port's P_Key table %s: the port is not in the partition (check partitions.conf and the port GUID %s)",
					base, p.Name, pkeyList(d.PKeys), GUID(d.GUID))
				c.about(p.Name)
			case full != m.Full:
				c.add(KindPKeyMember, m.Port.Node, m.Port.Port, "partition %s (0x%04x): the port is a %s member, the spec says %s", p.Name, base, membership(full), membership(m.Full))
				c.about(p.Name)
			}
			if c.in.Enforce && found && d.Peer != nil {
				sn := c.f.Nodes[d.Peer.Node]
				if sn == nil || sn.Type != Switch {
					continue
				}
				sp := sn.Ports[d.Peer.Port]
				if sp == nil || sp.PKeys == nil {
					c.add(KindNotQueried, c.name(sn.GUID), d.Peer.Port, "enforcement of partition %s not checked: the P_Key table was not read", p.Name)
					continue
				}
				if ok, _ := hasBase(sp.PKeys, base); !ok {
					c.add(KindSwitchPKey, c.name(sn.GUID), d.Peer.Port, "faces partition %s member %s but lacks P_Key 0x%04x %s: with enforcement on, the switch drops the partition's packets",
						p.Name, m.Port, base, pkeyList(sp.PKeys))
					c.about(p.Name)
				}
			}
		}
	}
	// Adapter ports that hold P_Keys of partitions they are not in.
	for _, h := range c.in.Topology.HCAs {
		for pn := 1; pn <= h.NumPorts(); pn++ {
			ref := PortRef{h.Name, pn}
			d := c.port(ref)
			if d == nil || d.PKeys == nil {
				continue
			}
			for _, k := range d.PKeys {
				base := k & pkeyMask
				if base == defaultPKey || member[ref][base] {
					continue
				}
				c.add(KindPKeyExtra, h.Name, pn, "holds P_Key 0x%04x (%s member), a partition the spec does not put it in", base, membership(k&fullMember != 0))
			}
		}
	}
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

func (c *comparer) qos() {
	if c.in.SL2VL == nil && c.in.VLArbHigh == nil && c.in.VLArbLow == nil {
		return
	}
	for _, n := range c.f.sortedNodes() {
		for _, pn := range sortedKeys(n.Ports) {
			p := n.Ports[pn]
			if pn == 0 || p.Peer == nil {
				continue
			}
			name := c.name(n.GUID)
			if c.in.SL2VL != nil {
				c.sl2vl(n, p, name)
			}
			if c.in.VLArbHigh != nil || c.in.VLArbLow != nil {
				if p.VLArb == nil {
					c.add(KindNotQueried, name, pn, "VL arbitration not checked: the table was not read")
					continue
				}
				for _, t := range []struct {
					label     string
					want, got []VLWeight
				}{{"high", c.in.VLArbHigh, p.VLArb.High}, {"low", c.in.VLArbLow, p.VLArb.Low}} {
					if t.want == nil {
						continue
					}
					want := nonZero(t.want)
					if !equalVLW(want, t.got) {
						c.add(KindVLArb, name, pn, "%s-priority VL arbitration is %s, the spec says %s", t.label, vlwString(t.got), vlwString(want))
						c.about(t.label)
					}
				}
			}
		}
	}
}

func (c *comparer) sl2vl(n *Node, p *Port, name string) {
	if len(c.in.SL2VL) != 16 {
		c.add(KindNotQueried, name, p.Num, "SL2VL not checked: the intended table has %d entries, not 16", len(c.in.SL2VL))
		return
	}
	if p.SL2VL == nil {
		c.add(KindNotQueried, name, p.Num, "SL2VL not checked: the table was not read")
		return
	}
	var want [16]int
	copy(want[:], c.in.SL2VL)
	for _, in := range sortedKeys(p.SL2VL) {
		if n.Type == Switch && in != 0 {
			if ip := n.Ports[in]; ip == nil || ip.Peer == nil {
				continue // no traffic enters at an uncabled port
			}
		}
		if got := p.SL2VL[in]; got != want {
			where := "the port's SL2VL table"
			if n.Type == Switch {
				where = fmt.Sprintf("SL2VL from input port %d", in)
			}
			c.add(KindSL2VL, name, p.Num, "%s is %v, the spec says %v", where, got, want)
			return // one finding per port
		}
	}
}

func nonZero(in []VLWeight) []VLWeight {
	var out []VLWeight
	for _, w := range in {
		if w.Weight != 0 {
			out = append(out, w)
		}
	}
	return out
}

func equalVLW(a, b []VLWeight) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func vlwString(ws []VLWeight) string {
	if len(ws) == 0 {
		return "empty"
	}
	var s []string
	for _, w := range ws {
		s = append(s, fmt.Sprintf("%d:%d", w.VL, w.Weight))
	}
	return strings.Join(s, ",")
}
