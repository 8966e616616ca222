package ibfabric

import (
	"fmt"
	"sort"
	"strconv"
)

// Fabric is a fabric as read back from the tools.
type Fabric struct {
	// Nodes by node GUID.
	Nodes map[uint64]*Node
	// Links, each once, from ibnetdiscover (A is the end seen first).
	Links []Link
	// From is the port the tools ran from (ibnetdiscover's
	// "Initiated from" line).
	From uint64
	// Via is what read the fabric ("fabctl ibmad" or "infiniband-diags");
	// Note why the MAD client did not ("" when it did).
	Via, Note string
	// MADs is how many MADs the MAD client sent (0: not known).
	MADs int
}

// Node is a discovered switch, adapter or router.
type Node struct {
	GUID     uint64
	Type     NodeType
	Desc     string // NodeDescription
	NumPorts int
	LID      int // a switch's base LID (port 0); 0 for adapters (see Port.LID)
	// PKeyCap is NodeInfo's PartitionCap (an adapter port's P_Key
	// entries) and EnforceCap SwitchInfo's PartitionEnforcementCap (a
	// switch's external ports'); 0 when not read.
	PKeyCap, EnforceCap int
	// Ports by number: the cabled ports ibnetdiscover lists (and, after
	// Discover, what smpquery read of them).
	Ports map[int]*Port
}

// Name is the node's description, or its GUID when it has none.
func (n *Node) Name() string {
	if n.Desc != "" {
		return n.Desc
	}
	return GUID(n.GUID)
}

// Port is a discovered port.
type Port struct {
	Num  int
	GUID uint64 // port GUID (a switch's ports share the node GUID)
	LID  int
	// Peer is the port at the other end of the cable (nil: none seen).
	Peer *PeerRef
	// Width and Speed: the trained link as ibnetdiscover (or PortInfo)
	// reports it.
	Width Width
	Speed Speed
	// Info is the port's PortInfo (nil: not queried).
	Info *PortInfo
	// PKeys is the port's P_Key table without empty (0x0000) entries,
	// in table order (nil: not queried).
	PKeys []uint16
	// SL2VL holds SL-to-VL tables: for an adapter port the port's one
	// table under key 0; for a switch port (the output port) one table
	// per input port, keyed by input port (nil: not queried).
	SL2VL map[int][16]int
	// VLArb is the port's VL arbitration (nil: not queried).
	VLArb *VLArb
	// Err says what of the port could not be read and why ("" when all
	// of it was): a finding on the port; the rest of the fabric is
	// still judged.
	Err string
}

// PeerRef is the far end of a cable.
type PeerRef struct {
	Node uint64 // node GUID
	Port int
}

// Link is a discovered cable.
type Link struct {
	A, B  PeerRef
	Width Width
	Speed Speed
}

// PortInfo is what fabctl reads of a port's PortInfo attribute
// (smpquery portinfo).
type PortInfo struct {
	LID          int    `json:"lid"`
	State        string `json:"state"`        // LinkState: Down, Initialize, Armed, Active
	PhysState    string `json:"phys_state"`   // PhysLinkState: LinkUp, Polling, Disabled, ...
	Width        Width  `json:"width"`        // LinkWidthActive
	Speed        Speed  `json:"speed"`        // from LinkSpeedActive and LinkSpeedExtActive
	NeighborMTU  int    `json:"neighbor_mtu"` // bytes: the link's operational MTU
	MTUCap       int    `json:"mtu_cap"`      // bytes
	OperVLs      int    `json:"oper_vls"`     // number of data VLs in use (OperVLs VL0-3 -> 4)
	VLCap        int    `json:"vl_cap"`
	PartEnfInb   bool   `json:"part_enf_inb"`
	PartEnfOutb  bool   `json:"part_enf_outb"`
	PKeyViolates int    `json:"pkey_violations"`
	// VLArbHighCap and VLArbLowCap are the VL arbitration tables'
	// sizes; HasSLMap the capability bit of an SL-to-VL table (IsSLMappingSupported).
	VLArbHighCap int  `json:"vlarb_high_cap"`
	VLArbLowCap  int  `json:"vlarb_low_cap"`
	HasSLMap     bool `json:"sl_map"`
}

// VLArb is a port's VL arbitration tables, without the zero-weight
// entries, in table order.
type VLArb struct {
	High    []VLWeight `json:"high"`
	Low     []VLWeight `json:"low"`
	HighCap int        `json:"high_cap"`
	LowCap  int        `json:"low_cap"`
}

// Node returns the node with a GUID, or nil.
func (f *Fabric) Node(guid uint64) *Node {
	if f == nil {
		return nil
	}
	return f.Nodes[guid]
}

// PortByGUID finds a port by its port GUID: an adapter's port or a
// switch (whose ports all carry the node GUID; port 0 is returned).
func (f *Fabric) PortByGUID(guid uint64) (*Node, *Port) {
	for _, n := range f.Nodes {
		if n.GUID == guid && n.Type == Switch {
			return n, n.Ports[0]
		}
		for _, p := range n.Ports {
			if p.GUID == guid && n.Type != Switch {
				return n, p
			}
		}
	}
	return nil, nil
}

// sortedNodes returns the nodes switches first, then by description and GUID.
func (f *Fabric) sortedNodes() []*Node {
	out := make([]*Node, 0, len(f.Nodes))
	for _, n := range f.Nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type == Switch
		}
		if out[i].Desc != out[j].Desc {
			return out[i].Desc < out[j].Desc
		}
		return out[i].GUID < out[j].GUID
	})
	return out
}

// Summary is a one-line description: node and link counts.
func (f *Fabric) Summary() string {
	sw, ca := 0, 0
	for _, n := range f.Nodes {
		if n.Type == Switch {
			sw++
		} else {
			ca++
		}
	}
	return strconv.Itoa(sw) + " switches, " + strconv.Itoa(ca) + " adapters, " + strconv.Itoa(len(f.Links)) + " links"
}

// ParseError is a parser's complaint: which command's output, about which
// node and port, at which line, and the line itself.
type ParseError struct {
	Cmd  string // "ibnetdiscover", "smpquery pkeys 3 1"
	Node string // node name or GUID ("" when unknown)
	Port int    // 0 when not port-specific
	Line int    // 1-based line number in the output (0: whole output)
	Text string // the offending line
	Msg  string
}

func (e *ParseError) Error() string {
	s := e.Cmd
	if e.Node != "" {
		s += ": " + e.Node
		if e.Port > 0 {
			s += " port " + strconv.Itoa(e.Port)
		}
	}
	if e.Line > 0 {
		s += fmt.Sprintf(": line %d %q", e.Line, clip(e.Text))
	}
	return s + ": " + e.Msg
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}
