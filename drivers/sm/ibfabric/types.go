// Package ibfabric reads an InfiniBand fabric back and compares it with
// the intended one. It runs the infiniband-diags tools (ibnetdiscover and
// smpquery) through an injectable Runner, so the same code reads a fabric
// simulated by ibsim (the tools run locally under LD_PRELOAD=libumad2sim.so,
// see testbed/ibsim) or a real one (the tools run on the subnet manager host
// over SSH), parses their text into a typed Fabric (nodes, ports, links,
// P_Key tables, SL-to-VL tables, VL arbitration tables) and compares it with
// a Topology plus the partitions and QoS the spec asks for.
//
// The package is a driver helper: it imports nothing from fabctl but the
// standard library, so drivers/sm/opensm and the validate engine can both
// use it.
package ibfabric

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// NodeType is an InfiniBand node type (NodeInfo:NodeType).
type NodeType int

// The node types ibnetdiscover reports.
const (
	CA     NodeType = 1
	Switch NodeType = 2
	Router NodeType = 3
)

func (t NodeType) String() string {
	switch t {
	case CA:
		return "CA"
	case Switch:
		return "switch"
	case Router:
		return "router"
	}
	return "node type " + strconv.Itoa(int(t))
}

// Width is a link width in lanes: 1, 2, 4, 8 or 12 (0: unknown).
type Width int

// ParseWidth reads "4x", "4X" or "4".
func ParseWidth(s string) (Width, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "x"), "X")
	n, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("link width %q is not 1x, 2x, 4x, 8x or 12x", s)
	}
	switch n {
	case 1, 2, 4, 8, 12:
		return Width(n), nil
	}
	return 0, fmt.Errorf("link width %q is not 1x, 2x, 4x, 8x or 12x", s)
}

func (w Width) String() string {
	if w == 0 {
		return "unknown width"
	}
	return strconv.Itoa(int(w)) + "x"
}

// Speed is a per-lane signalling rate. The order is the generations'
// order, so a lower Speed is a slower link.
type Speed int

// The IBTA speeds (FDR10 is Mellanox's 10 Gb/s-per-lane FDR signalling).
const (
	SpeedUnknown Speed = iota
	SDR
	DDR
	QDR
	FDR10
	FDR
	EDR
	HDR
	NDR
)

var speedNames = []string{"unknown speed", "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"}

func (s Speed) String() string {
	if s < 0 || int(s) >= len(speedNames) {
		return "speed " + strconv.Itoa(int(s))
	}
	return speedNames[s]
}

// ParseSpeed reads a speed name ("QDR", case-insensitive).
func ParseSpeed(s string) (Speed, error) {
	for i, n := range speedNames {
		if i > 0 && strings.EqualFold(strings.TrimSpace(s), n) {
			return Speed(i), nil
		}
	}
	return 0, fmt.Errorf("link speed %q is not one of SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR", s)
}

// laneGbps is the data rate per lane (after encoding) of each speed,
// rounded as vendors quote it.
var laneGbps = map[Speed]float64{SDR: 2, DDR: 4, QDR: 8, FDR10: 10, FDR: 13.64, EDR: 25, HDR: 50, NDR: 100}

// Gbps is the link's data rate: lanes times the per-lane rate.
func Gbps(w Width, s Speed) float64 { return float64(w) * laneGbps[s] }

// VLWeight is one VL arbitration table entry.
type VLWeight struct {
	VL     int `json:"vl"`
	Weight int `json:"weight"`
}

// GUID formats a GUID the way opensm's files and fabctl's specs carry
// it: "0x" and 16 lower-case hex digits.
func GUID(g uint64) string { return fmt.Sprintf("0x%016x", g) }

// PortRef names a port of a node of the intended topology by the node's
// name.
type PortRef struct {
	Node string
	Port int
}

func (p PortRef) String() string { return p.Node + " port " + strconv.Itoa(p.Port) }

// SwitchSpec is an intended switch.
type SwitchSpec struct {
	Name  string
	Ports int    // external ports (1..Ports)
	GUID  uint64 // node GUID (0: derived from Name, see DeriveGUID)
	Desc  string // NodeDescription (default Name)
}

// HCASpec is an intended host channel adapter.
type HCASpec struct {
	Name  string // unique name of the adapter in the topology ("cn01-mlx5_0")
	Host  string // the host it sits in ("cn01"), for messages
	Ports int    // default 1
	// GUID is the node GUID (0: derived from Name). Port n's GUID is
	// GUID+n, the way ibsim numbers them and most adapters do.
	GUID uint64
	Desc string // NodeDescription (default "<Host> <Name>")
}

// LinkSpec is an intended cable between two ports, at a width and speed.
type LinkSpec struct {
	A, B  PortRef
	Width Width // 0: not checked
	Speed Speed // 0: not checked
}

// Topology is the intended physical fabric: switches, adapters, cables.
type Topology struct {
	Switches []SwitchSpec
	HCAs     []HCASpec
	Links    []LinkSpec
	// Names are the spec's names of adapter ports ("cn02:ib0"), which
	// findings use (PortName).
	Names map[PortRef]string
}

// NodeGUID is the node GUID of the topology's node of that name.
func (t *Topology) NodeGUID(name string) (uint64, bool) {
	for _, s := range t.Switches {
		if s.Name == name {
			return s.SwitchGUID(), true
		}
	}
	for _, h := range t.HCAs {
		if h.Name == name {
			return h.NodeGUID(), true
		}
	}
	return 0, false
}

// PortName names a port of the topology the spec's way: an adapter port
// by its Names entry ("cn02:ib0", else "cn02 mlx5_0 port 1"), a switch
// port as "leaf1 port 2", a node (port 0) by its switch name or its
// adapter's description ("cn02 mlx5_0").
func (t *Topology) PortName(r PortRef) string {
	if r.Port > 0 {
		if n, ok := t.Names[r]; ok {
			return n
		}
	}
	for _, h := range t.HCAs {
		if h.Name == r.Node {
			label := h.Name
			if h.Host != "" && h.Host != h.Name {
				label = h.Description()
			}
			if r.Port == 0 {
				return label
			}
			return label + " port " + strconv.Itoa(r.Port)
		}
	}
	if r.Port == 0 {
		return r.Node
	}
	return r.String()
}

// DeriveGUID returns the GUID a node gets when its spec names none: a
// 32-bit FNV-1a hash of the name under a fixed, locally administered
// prefix, with the low byte zero so a CA's port GUIDs (node GUID + port)
// stay inside the node's block. Switches and CAs hash into different
// prefixes, so a switch and an adapter of the same name do not collide.
func DeriveGUID(t NodeType, name string) uint64 {
	h := fnv.New32a()
	h.Write([]byte(name))
	prefix := uint64(0x0200_0000_0000_0000)
	if t == Switch {
		prefix = 0x0210_0000_0000_0000
	}
	return prefix | uint64(h.Sum32())<<8
}

// SwitchGUID is the node GUID of an intended switch (its every port has it).
func (s SwitchSpec) SwitchGUID() uint64 {
	if s.GUID != 0 {
		return s.GUID
	}
	return DeriveGUID(Switch, s.Name)
}

// NodeGUID is the node GUID of an intended adapter.
func (h HCASpec) NodeGUID() uint64 {
	if h.GUID != 0 {
		return h.GUID
	}
	return DeriveGUID(CA, h.Name)
}

// PortGUID is the GUID of the adapter's port n.
func (h HCASpec) PortGUID(n int) uint64 { return h.NodeGUID() + uint64(n) }

// NumPorts is the adapter's port count (default 1).
func (h HCASpec) NumPorts() int {
	if h.Ports <= 0 {
		return 1
	}
	return h.Ports
}

// Description is the adapter's NodeDescription.
func (h HCASpec) Description() string {
	if h.Desc != "" {
		return h.Desc
	}
	if h.Host == "" {
		return h.Name
	}
	return h.Host + " " + h.Name
}

// Description is the switch's NodeDescription.
func (s SwitchSpec) Description() string {
	if s.Desc != "" {
		return s.Desc
	}
	return s.Name
}

// Clone returns a deep copy, for tests and fault injection that derive
// an actual topology from the intended one.
func (t *Topology) Clone() *Topology {
	c := &Topology{
		Switches: append([]SwitchSpec(nil), t.Switches...),
		HCAs:     append([]HCASpec(nil), t.HCAs...),
		Links:    append([]LinkSpec(nil), t.Links...),
	}
	if t.Names != nil {
		c.Names = make(map[PortRef]string, len(t.Names))
		for k, v := range t.Names {
			c.Names[k] = v
		}
	}
	return c
}

// nodeInfo is what Validate and Compare know of an intended node.
type nodeInfo struct {
	name  string
	typ   NodeType
	ports int
	guid  uint64 // node GUID
}

// index maps the topology's names and GUIDs to its nodes.
type index struct {
	byName map[string]nodeInfo
	byGUID map[uint64]string // node GUID -> name
}

// Validate checks the topology: unique names and GUIDs, ports in range,
// every port cabled at most once, links between known nodes, CA-to-CA
// links refused (ibsim and real fabrics need a switch between adapters
// for this tool's purposes).
func (t *Topology) Validate() error {
	_, err := t.index()
	return err
}

func (t *Topology) index() (*index, error) {
	ix := &index{byName: map[string]nodeInfo{}, byGUID: map[uint64]string{}}
	add := func(n nodeInfo, span int) error {
		if n.name == "" {
			return fmt.Errorf("a %s has no name", n.typ)
		}
		if strings.ContainsAny(n.name, "\"#@[] \t\n") {
			return fmt.Errorf("%s %q: names cannot hold quotes, '#', '@', brackets or spaces (ibsim's net file reserves them)", n.typ, n.name)
		}
		if _, dup := ix.byName[n.name]; dup {
			return fmt.Errorf("node name %q is used twice", n.name)
		}
		if n.ports < 1 || n.ports > 254 {
			return fmt.Errorf("%s %q: %d ports (want 1..254)", n.typ, n.name, n.ports)
		}
		for g := n.guid; g <= n.guid+uint64(span); g++ {
			if other, dup := ix.byGUID[g]; dup {
				return fmt.Errorf("%s %q: GUID %s is already %q's", n.typ, n.name, GUID(g), other)
			}
		}
		ix.byName[n.name] = n
		for g := n.guid; g <= n.guid+uint64(span); g++ {
			ix.byGUID[g] = n.name
		}
		return nil
	}
	for _, s := range t.Switches {
		if err := add(nodeInfo{name: s.Name, typ: Switch, ports: s.Ports, guid: s.SwitchGUID()}, 0); err != nil {
			return nil, err
		}
	}
	for _, h := range t.HCAs {
		if err := add(nodeInfo{name: h.Name, typ: CA, ports: h.NumPorts(), guid: h.NodeGUID()}, h.NumPorts()); err != nil {
			return nil, err
		}
	}
	used := map[PortRef]int{}
	for i, l := range t.Links {
		for _, e := range []PortRef{l.A, l.B} {
			n, ok := ix.byName[e.Node]
			if !ok {
				return nil, fmt.Errorf("link %d (%s - %s): no node named %q", i+1, l.A, l.B, e.Node)
			}
			if e.Port < 1 || e.Port > n.ports {
				return nil, fmt.Errorf("link %d (%s - %s): %s has ports 1..%d", i+1, l.A, l.B, e.Node, n.ports)
			}
			if j, dup := used[e]; dup {
				return nil, fmt.Errorf("link %d (%s - %s): %s is already cabled by link %d", i+1, l.A, l.B, e, j+1)
			}
			used[e] = i
		}
		if l.A == l.B {
			return nil, fmt.Errorf("link %d: %s is cabled to itself", i+1, l.A)
		}
		if ix.byName[l.A.Node].typ == CA && ix.byName[l.B.Node].typ == CA {
			return nil, fmt.Errorf("link %d (%s - %s): two adapters cabled back to back; put a switch between them", i+1, l.A, l.B)
		}
	}
	return ix, nil
}

// guidOfPort returns the port GUID of a port of an intended node.
func (ix *index) portGUID(p PortRef) uint64 {
	n := ix.byName[p.Node]
	if n.typ == Switch {
		return n.guid
	}
	return n.guid + uint64(p.Port)
}

// sortedKeys returns a map's int keys in order.
func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
