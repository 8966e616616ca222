package ibmad

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
)

// Discovery by directed route, the way a subnet manager sweeps (IBTA
// 14.2.2; opensm's osm_state_mgr.c heavy sweep, libibnetdisc's
// ibnetdisc.c): NodeInfo of this port (no hops), then of every node at
// the end of every up port of every switch found, one hop further each
// time. Every node gets its NodeDescription, a switch its SwitchInfo and
// the PortInfo of port 0 and every port, an adapter the PortInfo of the
// port it was reached by. Then the tables opensm programs, each read by
// directed route too (no LIDs needed), of the cabled ports only:
//
//   - P_KeyTable blocks of adapter ports (PartitionCap entries,
//     NodeInfo) and of the switch ports facing adapters
//     (PartitionEnforcementCap entries, SwitchInfo); attribute modifier
//     block, or port<<16|block on a switch port (opensm
//     osm_port_info_rcv.c get_pkey_table);
//   - SLtoVLMappingTable of adapter ports (modifier 0) and, per cabled
//     output port of a switch, from every cabled input port (modifier
//     in<<8|out, the form opensm programs each pair with: osm_qos.c
//     qos_extports_setup). A Get reads one table: the all-ports
//     modifier bits (0x30000) are opensm's optimized Set only. The table
//     from an uncabled input carries no traffic, and neither does the
//     one from port 0, the switch's management port (what enters there
//     is the switch's own management datagrams, not the fabric's
//     traffic): neither is read, and a 16-port leaf costs 256 reads
//     instead of 272;
//   - VLArbitrationTable low (blocks 1, 2) and high (3, 4) of every
//     cabled port whose VLCap is above VL0, as many blocks as
//     VLArbLowCap/HighCap need (modifier block<<16|port; osm_qos.c
//     vlarb_update). An adapter port's table is the one of the port the
//     SMP arrives by, so each adapter port is read by the path that
//     reached it.
//
// A node's tables are queued as soon as its cabling is known (every
// PortInfo of it and every NodeInfo at the far end of its ports
// answered), while the rest of the fabric is still being discovered: the
// window stays full instead of idling through the hops of discovery. A
// last pass after discovery queues whatever a cable found later adds.
//
// A MAD that fails marks its port (Port.Err); the rest is still read.

// ReadOptions choose what Read reads beyond the topology.
type ReadOptions struct {
	PortInfo bool // the PortInfo of cabled ports (always read while discovering)
	Tables   bool // P_Key, SL2VL and VL arbitration tables
	Options
}

type scanNode struct {
	n       *ibfabric.Node
	path    []int         // how the node was first reached
	entry   int           // the port it was first reached by
	caPaths map[int][]int // adapter: the path that reaches each port
	portErr map[int][]string
	raw     map[int]PortInfo // PortInfo as read, for speeds (finish)

	// pending counts the discovery requests in flight whose answers
	// can change what is known of the node's cabling: its SwitchInfo,
	// the PortInfo of its ports, the NodeInfo at their far ends. At 0
	// the node's tables are queued.
	pending int
	queued  map[int]bool        // ports whose P_Key, VL arbitration (and adapter SL2VL) reads are queued
	pairs   map[[2]int]bool     // switch: {in, out} SL2VL reads queued
	sl2vl   map[int]*sl2vlReads // switch: per output port, its tables as they come
}

// sl2vlReads gathers a switch output port's SL2VL tables; the port gets
// them when the last one is in and none failed.
type sl2vlReads struct {
	tbl    map[int][16]int
	left   int
	failed bool
}

type scanner struct {
	e     *engine
	o     ReadOptions
	f     *ibfabric.Fabric
	nodes map[uint64]*scanNode
	errs  []string
}

// Read discovers the fabric from port p.
func Read(ctx context.Context, p Port, o ReadOptions) (*ibfabric.Fabric, error) {
	s := &scanner{e: newEngine(p, o.Options), o: o, f: &ibfabric.Fabric{Nodes: map[uint64]*ibfabric.Node{}}, nodes: map[uint64]*scanNode{}}
	var rootErr error
	s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrNodeInfo, Path: []int{}}, func(r *Response, err error) {
		if err != nil {
			rootErr = fmt.Errorf("NodeInfo of this port: %w", err)
			return
		}
		ni, err := DecodeNodeInfo(r.Data)
		if err != nil {
			rootErr = err
			return
		}
		s.f.From = ni.PortGUID
		s.found(ni, []int{}, nil, 0)
	})
	if err := s.e.run(ctx); err != nil {
		return nil, err
	}
	if rootErr != nil {
		return nil, rootErr
	}
	if o.Tables {
		// Normally every table was queued during discovery; a cable
		// whose far end answered after its node was judged complete
		// (a node at the hop limit) adds its reads here.
		for _, sn := range s.sortedNodes() {
			s.nodeTables(sn)
		}
		if err := s.e.run(ctx); err != nil {
			return nil, err
		}
	}
	for _, sn := range s.nodes {
		sn.finish()
		for pn, msgs := range sn.portErr {
			p := sn.port(pn)
			sort.Strings(msgs)
			p.Err = strings.Join(msgs, "; ")
		}
	}
	s.f.Links = links(s.f)
	s.f.MADs = s.e.sent
	return s.f, nil
}

// port returns a node's port record, creating it.
func (sn *scanNode) port(pn int) *ibfabric.Port {
	p := sn.n.Ports[pn]
	if p == nil {
		p = &ibfabric.Port{Num: pn}
		if sn.n.Type == ibfabric.Switch {
			p.GUID = sn.n.GUID
		}
		sn.n.Ports[pn] = p
	}
	return p
}

func (sn *scanNode) fail(pn int, what string, err error) {
	if sn.portErr == nil {
		sn.portErr = map[int][]string{}
	}
	sn.portErr[pn] = append(sn.portErr[pn], what+": "+err.Error())
}

func extend(path []int, port int) []int {
	out := make([]int, len(path)+1)
	copy(out, path)
	out[len(path)] = port
	return out
}

// found handles the NodeInfo answered at path, reached from (from, fromPort)
// (nil for this port).
func (s *scanner) found(ni NodeInfo, path []int, from *scanNode, fromPort int) {
	sn, known := s.nodes[ni.NodeGUID]
	if !known {
		sn = &scanNode{n: &ibfabric.Node{GUID: ni.NodeGUID, Type: ibfabric.NodeType(ni.Type), NumPorts: ni.NumPorts,
			PKeyCap: ni.PartitionCap, Ports: map[int]*ibfabric.Port{}}, path: path, entry: ni.LocalPort}
		s.nodes[ni.NodeGUID] = sn
		s.f.Nodes[ni.NodeGUID] = sn.n
	}
	if sn.n.Type != ibfabric.Switch {
		if sn.caPaths == nil {
			sn.caPaths = map[int][]int{}
		}
		if _, ok := sn.caPaths[ni.LocalPort]; !ok {
			sn.caPaths[ni.LocalPort] = path
			sn.port(ni.LocalPort).GUID = ni.PortGUID
			s.portInfo(sn, path, ni.LocalPort)
		}
	}
	if from != nil {
		a, b := from.port(fromPort), sn.port(ni.LocalPort)
		a.Peer = &ibfabric.PeerRef{Node: sn.n.GUID, Port: ni.LocalPort}
		b.Peer = &ibfabric.PeerRef{Node: from.n.GUID, Port: fromPort}
	}
	if known {
		return
	}
	s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrNodeDesc, Path: path}, func(r *Response, err error) {
		if err != nil {
			sn.fail(0, "NodeDescription", err)
			return
		}
		sn.n.Desc = DecodeNodeDesc(r.Data)
	})
	if sn.n.Type != ibfabric.Switch {
		return
	}
	s.hold(sn) // EnforceCap sizes the P_Key reads of its ports
	s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrSwitchInfo, Path: path}, func(r *Response, err error) {
		defer s.release(sn)
		if err != nil {
			sn.fail(0, "SwitchInfo", err)
			return
		}
		si, err := DecodeSwitchInfo(r.Data)
		if err != nil {
			sn.fail(0, "SwitchInfo", err)
			return
		}
		sn.n.EnforceCap = si.EnforceCap
	})
	for pn := 0; pn <= sn.n.NumPorts; pn++ {
		s.portInfo(sn, path, pn)
	}
}

// portInfo reads a port's PortInfo at path; on a switch's up port other
// than the one it was reached by, it goes one hop further.
func (s *scanner) portInfo(sn *scanNode, path []int, pn int) {
	s.hold(sn)
	s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrPortInfo, Mod: uint32(pn), Path: path}, func(r *Response, err error) {
		defer s.release(sn)
		if err == nil {
			var pi PortInfo
			pi, err = DecodePortInfo(r.Data)
			if err == nil {
				s.storePortInfo(sn, pn, pi)
				if sn.n.Type == ibfabric.Switch && pn > 0 && pi.State > 1 && (pn != sn.entry || len(sn.path) == 0) && len(path) < maxHops {
					s.explore(sn, pn)
				}
				if len(path) == 0 && sn.n.Type != ibfabric.Switch && pn == sn.entry && pi.State > 1 {
					s.explore(sn, pn) // this port's own cable
				}
				return
			}
		}
		sn.fail(pn, "PortInfo", err)
	})
}

// explore asks for the NodeInfo at the far end of a port.
func (s *scanner) explore(sn *scanNode, pn int) {
	next := extend(sn.path, pn)
	s.hold(sn)
	s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrNodeInfo, Path: next}, func(r *Response, err error) {
		defer s.release(sn)
		if err != nil {
			sn.fail(pn, "NodeInfo of the node at the far end", err)
			return
		}
		ni, err := DecodeNodeInfo(r.Data)
		if err != nil {
			sn.fail(pn, "NodeInfo of the node at the far end", err)
			return
		}
		s.found(ni, next, sn, pn)
	})
}

func (s *scanner) storePortInfo(sn *scanNode, pn int, pi PortInfo) {
	p := sn.port(pn)
	info := &ibfabric.PortInfo{
		LID: pi.LID, State: portState(pi.State), PhysState: physState(pi.PhysState),
		NeighborMTU: mtuBytes(pi.NeighborMTU), MTUCap: mtuBytes(pi.MTUCap),
		OperVLs: vlCount(pi.OperVLs), VLCap: vlCount(pi.VLCap),
		PartEnfInb: pi.PartEnfInb, PartEnfOutb: pi.PartEnfOutb, PKeyViolates: pi.PKeyViol,
		VLArbHighCap: pi.VLArbHighCap, VLArbLowCap: pi.VLArbLowCap, HasSLMap: pi.CapMask&capSLMap != 0,
	}
	if pi.State > 1 {
		info.Width = width(pi.WidthActive)
	}
	if sn.raw == nil {
		sn.raw = map[int]PortInfo{}
	}
	sn.raw[pn] = pi
	p.Info = info
	if sn.n.Type == ibfabric.Switch {
		if pn == 0 {
			sn.n.LID = pi.LID
			for _, q := range sn.n.Ports {
				q.LID = pi.LID
			}
		}
		p.LID = sn.n.LID
	} else {
		p.LID = pi.LID
	}
	p.Width = info.Width
}

// finish sets the ports' speeds once every PortInfo is in: a switch's
// external ports have no CapabilityMask of their own (IBTA 14.2.5.6: it
// is port 0's), so whether LinkSpeedExtActive counts is port 0's
// IsExtendedSpeedsSupported bit, as libibnetdisc decides it (rdma-core
// v44.0 libibnetdisc/ibnetdisc.c debug_port, ibnetdiscover's speeds).
func (sn *scanNode) finish() {
	for pn, pi := range sn.raw {
		p := sn.n.Ports[pn]
		if pi.State <= 1 || p == nil || p.Info == nil {
			continue
		}
		cm := pi.CapMask
		if sn.n.Type == ibfabric.Switch {
			cm = sn.raw[0].CapMask
		}
		ext := 0
		if cm&capExtSpeeds != 0 {
			ext = pi.SpeedExt
		}
		p.Info.Speed = speed(pi.SpeedActive, ext)
		p.Speed = p.Info.Speed
	}
}

// capSLMap is IB_PORT_CAP_HAS_SL_MAP: the port has an SL-to-VL table.
const capSLMap = 0x00000040

func portState(c int) string {
	return [...]string{"NoChange", "Down", "Initialize", "Armed", "Active", "ActiveDefer"}[min(max(c, 0), 5)]
}

func physState(c int) string {
	names := [...]string{"NoChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
	if c < 0 || c >= len(names) {
		return fmt.Sprintf("?(%d)", c)
	}
	return names[c]
}

func mtuBytes(c int) int {
	if c < 1 || c > 5 {
		return 0
	}
	return 128 << c
}

func vlCount(c int) int {
	return [...]int{0, 1, 2, 4, 8, 15}[min(max(c, 0), 5)]
}

func width(c int) ibfabric.Width {
	switch c {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	case 16:
		return 2
	}
	return 0
}

func speed(active, ext int) ibfabric.Speed {
	switch ext {
	case 1:
		return ibfabric.FDR
	case 2:
		return ibfabric.EDR
	case 4:
		return ibfabric.HDR
	case 8:
		return ibfabric.NDR
	}
	switch active {
	case 1:
		return ibfabric.SDR
	case 2:
		return ibfabric.DDR
	case 4:
		return ibfabric.QDR
	}
	return ibfabric.SpeedUnknown
}

// hold counts a discovery request about sn's cabling; release ends it
// and, at the last one, queues the node's tables.
func (s *scanner) hold(sn *scanNode) { sn.pending++ }

func (s *scanner) release(sn *scanNode) {
	if sn.pending--; sn.pending == 0 && s.o.Tables {
		s.nodeTables(sn)
	}
}

func (s *scanner) sortedNodes() []*scanNode {
	guids := make([]uint64, 0, len(s.nodes))
	for g := range s.nodes {
		guids = append(guids, g)
	}
	sort.Slice(guids, func(i, j int) bool { return guids[i] < guids[j] })
	out := make([]*scanNode, len(guids))
	for i, g := range guids {
		out[i] = s.nodes[g]
	}
	return out
}

// cabled: a port with a node at its far end.
func cabled(n *ibfabric.Node, pn int) bool {
	p := n.Ports[pn]
	return p != nil && p.Peer != nil
}

// nodeTables queues the table reads of the node's cabled ports not
// queued yet.
func (s *scanner) nodeTables(sn *scanNode) {
	n := sn.n
	for pn := 1; pn <= n.NumPorts; pn++ {
		p := n.Ports[pn]
		if !cabled(n, pn) || p.Info == nil {
			continue
		}
		path := sn.path
		if n.Type != ibfabric.Switch {
			cp, ok := sn.caPaths[pn]
			if !ok {
				continue
			}
			path = cp
		}
		if n.Type == ibfabric.Switch {
			s.switchSL2VL(sn, path, pn)
		}
		if sn.queued[pn] {
			continue
		}
		if sn.queued == nil {
			sn.queued = map[int]bool{}
		}
		sn.queued[pn] = true
		peer := s.f.Nodes[p.Peer.Node]
		facesCA := peer != nil && peer.Type != ibfabric.Switch
		if n.Type != ibfabric.Switch || facesCA {
			s.pkeys(sn, path, pn)
		}
		if n.Type != ibfabric.Switch {
			s.adapterSL2VL(sn, path, pn)
		}
		s.vlarb(sn, path, pn)
	}
}

func (s *scanner) pkeys(sn *scanNode, path []int, pn int) {
	n := sn.n
	cap, shift := n.PKeyCap, uint32(0)
	if n.Type == ibfabric.Switch {
		cap, shift = n.EnforceCap, uint32(pn)<<16
	}
	blocks := (cap + 31) / 32
	if blocks == 0 {
		return
	}
	got := make([][]uint16, blocks)
	left := blocks
	p := sn.port(pn)
	for b := 0; b < blocks; b++ {
		s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrPKeyTable, Mod: shift | uint32(b), Path: path}, func(r *Response, err error) {
			if err == nil {
				got[b], err = DecodePKeyBlock(r.Data)
			}
			if err != nil {
				sn.fail(pn, fmt.Sprintf("P_KeyTable block %d", b), err)
				return
			}
			if left--; left == 0 {
				keys := []uint16{}
				for _, blk := range got {
					for _, k := range blk {
						if k&0x7fff != 0 {
							keys = append(keys, k)
						}
					}
				}
				p.PKeys = keys
			}
		})
	}
}

func (s *scanner) adapterSL2VL(sn *scanNode, path []int, pn int) {
	p := sn.port(pn)
	if !p.Info.HasSLMap {
		return
	}
	s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrSL2VL, Path: path}, func(r *Response, err error) {
		var vl [16]int
		if err == nil {
			vl, err = DecodeSL2VL(r.Data)
		}
		if err != nil {
			sn.fail(pn, "SLtoVLMappingTable", err)
			return
		}
		p.SL2VL = map[int][16]int{0: vl}
	})
}

// switchSL2VL queues the SL2VL reads of output port out from each
// cabled input port not queued yet.
func (s *scanner) switchSL2VL(sn *scanNode, path []int, out int) {
	n := sn.n
	if p0 := n.Ports[0]; p0 == nil || p0.Info == nil || !p0.Info.HasSLMap {
		return
	}
	p := sn.port(out)
	ins := 0
	for in := 1; in <= n.NumPorts; in++ {
		if cabled(n, in) {
			ins++
		}
	}
	for in := 1; in <= n.NumPorts; in++ {
		if !cabled(n, in) || sn.pairs[[2]int{in, out}] {
			continue
		}
		if sn.pairs == nil {
			sn.pairs, sn.sl2vl = make(map[[2]int]bool, ins*ins), map[int]*sl2vlReads{}
		}
		sn.pairs[[2]int{in, out}] = true
		acc := sn.sl2vl[out]
		if acc == nil {
			acc = &sl2vlReads{tbl: make(map[int][16]int, ins)}
			sn.sl2vl[out] = acc
		}
		acc.left++
		s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrSL2VL, Mod: uint32(in)<<8 | uint32(out), Path: path}, func(r *Response, err error) {
			var vl [16]int
			if err == nil {
				vl, err = DecodeSL2VL(r.Data)
			}
			acc.left--
			if err != nil {
				acc.failed = true
				sn.fail(out, fmt.Sprintf("SLtoVLMappingTable from input port %d", in), err)
				return
			}
			acc.tbl[in] = vl
			if acc.left == 0 && !acc.failed {
				p.SL2VL = acc.tbl
			}
		})
	}
}

func (s *scanner) vlarb(sn *scanNode, path []int, pn int) {
	n := sn.n
	p := sn.port(pn)
	if p.Info.VLCap <= 1 {
		return // one data VL: no arbitration (osm_qos.c vlarb_update)
	}
	mod := uint32(pn)
	if n.Type != ibfabric.Switch {
		mod = 0
	}
	type part struct {
		block int
		high  bool
		n     int // entries of the block in use
	}
	var parts []part
	lo, hi := p.Info.VLArbLowCap, p.Info.VLArbHighCap
	if lo > 0 {
		parts = append(parts, part{1, false, min(lo, 32)})
	}
	if lo > 32 {
		parts = append(parts, part{2, false, lo - 32})
	}
	if hi > 0 {
		parts = append(parts, part{3, true, min(hi, 32)})
	}
	if hi > 32 {
		parts = append(parts, part{4, true, hi - 32})
	}
	if len(parts) == 0 {
		return
	}
	got := map[int][]VLWeight{}
	left := len(parts)
	for _, pt := range parts {
		s.e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrVLArb, Mod: uint32(pt.block)<<16 | mod, Path: path}, func(r *Response, err error) {
			var ws []VLWeight
			if err == nil {
				ws, err = DecodeVLArbBlock(r.Data)
			}
			if err != nil {
				sn.fail(pn, fmt.Sprintf("VLArbitrationTable block %d", pt.block), err)
				return
			}
			got[pt.block] = ws[:pt.n]
			if left--; left > 0 {
				return
			}
			va := &ibfabric.VLArb{LowCap: lo, HighCap: hi, Low: []ibfabric.VLWeight{}, High: []ibfabric.VLWeight{}}
			for _, b := range []int{1, 2, 3, 4} {
				for _, w := range got[b] {
					if w.Weight == 0 {
						continue
					}
					vw := ibfabric.VLWeight{VL: w.VL, Weight: w.Weight}
					if b >= 3 {
						va.High = append(va.High, vw)
					} else {
						va.Low = append(va.Low, vw)
					}
				}
			}
			p.VLArb = va
		})
	}
}

// links lists each cable once, from the port with the lower (GUID, port).
func links(f *ibfabric.Fabric) []ibfabric.Link {
	var out []ibfabric.Link
	for _, n := range f.Nodes {
		for pn, p := range n.Ports {
			if p.Peer == nil || pn == 0 {
				continue
			}
			a, b := ibfabric.PeerRef{Node: n.GUID, Port: pn}, *p.Peer
			if b.Node < a.Node || (b.Node == a.Node && b.Port < a.Port) {
				continue
			}
			out = append(out, ibfabric.Link{A: a, B: b, Width: p.Width, Speed: p.Speed})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].A.Node != out[j].A.Node {
			return out[i].A.Node < out[j].A.Node
		}
		return out[i].A.Port < out[j].A.Port
	})
	return out
}
