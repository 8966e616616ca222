package traffic

import (
	"fmt"
	"net/netip"
	"path"
	"time"

	"github.com/fabctl/fabctl/internal/rdmagid"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

// Endpoint is one NIC of one host taking part in a test.
type Endpoint struct {
	Host *spec.Host
	NIC  *spec.NIC
	// Addr is the NIC's address the test uses (the first IPv4 one, else
	// the first global IPv6 one: rdmagid.Preferred, the address whose GID
	// the host driver writes as NCCL_IB_GID_INDEX): the control channel,
	// the GID and rdma_cm follow it.
	Addr netip.Addr
	// GIDType is the RoCE GID type of the fabric ("v2", "v1"; "" off
	// RoCE): with Addr, the GID a raw-verbs side (marking = "self") uses
	// is the one NCCL_IB_GID_INDEX names on the host.
	GIDType string
}

func (e Endpoint) String() string { return e.Host.Name + ":" + e.NIC.Name }

// PairRef is one scheduled client -> server test.
type PairRef struct{ Client, Server Endpoint }

// Criteria are a test's pass conditions, from its validate block and class.
type Criteria struct {
	// Percent of the pair's line rate, or an absolute rate (0: none).
	Percent float64
	Rate    spec.BitRate
	MaxP99  time.Duration
	// Lossless: the class is PFC no-drop, so no packet may be lost.
	Lossless bool
	// Priority and DSCP the traffic must carry (-1: not checked).
	Priority int
	DSCP     int
	// NoWire says why the wire cannot show the class ("" = it can, on
	// software RDMA over IPv4): the wire check counts RoCEv2 packets.
	NoWire string `json:",omitempty"`
	// SL is the service level rdma_cm's path must carry (-1: not
	// checked): on RoCEv1 the class's priority, which a RoCE NIC sends as
	// the PCP; on InfiniBand the class's SL.
	SL int
	// Transport names what the SL is (RoCE PCP or InfiniBand SL).
	Transport spec.Transport `json:",omitempty"`
	// SelfMarked: the test set the ToS/SL itself (marking "self"), so
	// rdma_cm's route says nothing about the host's defaults.
	SelfMarked bool `json:",omitempty"`
	// NGC applies NVIDIA's cluster acceptance figures: bandwidth at least
	// 90 % of the rate the ports trained at (twice that bidirectional),
	// average latency at most 2.5 us (4.5 us for RDMA READ).
	NGC bool `json:",omitempty"`
	// Bidirectional: both directions at once, the bandwidth summed.
	Bidirectional bool `json:",omitempty"`
}

// Test is one traffic test: a validate block, for one class, in one mode,
// scheduled into rounds.
type Test struct {
	Name     string // validate block name
	Block    *spec.Validation
	Class    *spec.Class // nil: the fabric has no RDMA class to test
	Verbs    verbs.Test
	Criteria Criteria
	Rounds   [][]PairRef
	// LeftOut are endpoints the pattern could not pair.
	LeftOut []Endpoint
	// Skip says why the test cannot be scheduled at all (too few hosts).
	Skip string
}

// Label is the test's name in reports: "ring-bandwidth [roce] write bw".
func (t *Test) Label() string {
	c := ""
	if t.Class != nil {
		c = " [" + t.Class.Name + "]"
	}
	return fmt.Sprintf("%s%s %s %s", t.Name, c, t.Verbs.Op, t.Verbs.Mode)
}

// Pairs counts the scheduled pairs.
func (t *Test) Pairs() int {
	n := 0
	for _, r := range t.Rounds {
		n += len(r)
	}
	return n
}

// Plan turns every validate block into tests: one per class (the block's
// class, or every RDMA class) and per measure (bandwidth when the block
// has min_bandwidth or no threshold at all, latency when it has max_p99).
// Endpoints are the selected hosts' NICs grouped into rails (the k-th NIC
// of every host), each rail scheduled on its own and the rails' rounds
// run together.
func Plan(s *spec.Spec) []*Test {
	var out []*Test
	for _, v := range s.Validations {
		classes := []*spec.Class{s.Class(v.Class)}
		if v.Class == "" {
			classes = s.ClassesByRole(spec.RoleRDMA)
			if len(classes) == 0 {
				classes = []*spec.Class{nil}
			}
		}
		var modes []verbs.Mode
		if v.MinBandwidth.Percent > 0 || v.MinBandwidth.Rate > 0 || v.MaxP99 == 0 {
			modes = append(modes, verbs.ModeBandwidth)
		}
		if v.MaxP99 > 0 {
			modes = append(modes, verbs.ModeLatency)
		}
		rails := endpoints(s, v.Hosts)
		for _, c := range classes {
			for _, m := range modes {
				t := &Test{Name: v.Name, Block: v, Class: c, Verbs: testFor(s, v, c, m), Criteria: criteriaFor(s, v, c, m)}
				schedule(t, v.Pattern, rails)
				out = append(out, t)
			}
		}
	}
	return out
}

// endpoints returns the selected hosts' NICs that have an address, by
// rail (NIC position on its host), hosts in spec order.
func endpoints(s *spec.Spec, globs []string) [][]Endpoint {
	var rails [][]Endpoint
	for _, h := range s.Hosts {
		if !selected(h.Name, globs) {
			continue
		}
		k := 0
		gidType := ""
		switch s.Fabric.Transport {
		case spec.RoCEv2:
			gidType = "v2"
		case spec.RoCEv1:
			gidType = "v1"
		}
		for _, n := range h.NICs {
			a, ok := nicAddr(n)
			if !ok {
				continue
			}
			if k == len(rails) {
				rails = append(rails, nil)
			}
			rails[k] = append(rails[k], Endpoint{Host: h, NIC: n, Addr: a, GIDType: gidType})
			k++
		}
	}
	return rails
}

func selected(name string, globs []string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

func nicAddr(n *spec.NIC) (netip.Addr, bool) {
	addrs := make([]netip.Addr, len(n.Addresses))
	for i, p := range n.Addresses {
		addrs[i] = p.Addr()
	}
	if pref := rdmagid.Preferred(addrs); len(pref) > 0 {
		return pref[0], true
	}
	if len(n.Addresses) > 0 {
		return n.Addresses[0].Addr(), true
	}
	return netip.Addr{}, false
}

func schedule(t *Test, pattern string, rails [][]Endpoint) {
	for _, rail := range rails {
		rounds, left, err := Rounds(pattern, len(rail))
		if err != nil {
			t.Skip = err.Error()
			return
		}
		for _, i := range left {
			t.LeftOut = append(t.LeftOut, rail[i])
		}
		for ri, r := range rounds {
			if ri == len(t.Rounds) {
				t.Rounds = append(t.Rounds, nil)
			}
			for _, p := range r {
				t.Rounds[ri] = append(t.Rounds[ri], PairRef{Client: rail[p.Client], Server: rail[p.Server]})
			}
		}
	}
	if len(t.Rounds) == 0 {
		t.Skip = "fewer than two hosts with an addressed NIC match the block's hosts"
	}
}

// testFor builds the verbs test of a block, class and mode.
//
// By default the test carries what an application on the host carries: it
// connects through rdma_cm and sets no ToS, SL or PCP, so the host's
// defaults decide the marking (drivers/infiniband/core/cma.c
// cma_resolve_iboe_route: the port's configfs default_roce_tos, the SL from
// the VLAN egress map of rt_tos2priority(ToS), the GID from
// default_roce_mode), and the wire and route checks prove the class.
// marking = "self" sets the class's ToS/SL in the test itself, with the
// out-of-band QP exchange, to tell a switch problem from a host one.
func testFor(s *spec.Spec, v *spec.Validation, c *spec.Class, m verbs.Mode) verbs.Test {
	t := verbs.Test{Op: verbs.Op(v.Op), Mode: m, Size: int(v.MessageSize), Iterations: v.Iterations, Duration: v.Duration,
		QPs: v.QPs, TClass: -1, MTU: s.Fabric.RDMAMTU}
	if m == verbs.ModeLatency {
		t.QPs = 1 // a ping-pong runs on one QP
	}
	if v.Marking != spec.MarkSelf {
		t.Conn = verbs.ConnCM
		if MTUFor(t.MTU) == 0 {
			t.MTU = 0
		}
		t.Fill()
		return t
	}
	switch s.Fabric.Transport {
	case spec.IWARP:
		t.Conn = verbs.ConnCM
		if c != nil && len(c.DSCP) > 0 {
			t.TClass = c.DSCP[0] << 2
		}
	case spec.InfiniBand:
		if c != nil && c.SL != nil {
			t.SL = *c.SL
		}
	case spec.RoCEv1:
		// No IP header: the priority travels in the VLAN PCP, which the
		// NIC takes from the service level.
		if c != nil {
			t.SL = c.Priority
		}
	default: // RoCEv2
		if c != nil && len(c.DSCP) > 0 {
			t.TClass = c.DSCP[0]<<2 | ecnBits(s, c)
		}
	}
	if MTUFor(t.MTU) == 0 {
		t.MTU = 0 // lint MTU-2 reports a non-RDMA value; the test then takes what the ports have
	}
	t.Fill()
	return t
}

// MTUFor is the RDMA MTU the spec's rdma_mtu names, 0 when it is none.
func MTUFor(n int) int {
	if verbs.MTUEnum(n) == 0 {
		return 0
	}
	return n
}

// ecnBits are ECT(0) when the class is ECN-capable: DCQCN NICs send RoCE
// data as ECT so switches can mark it.
func ecnBits(s *spec.Spec, c *spec.Class) int {
	if c.ECN != nil || s.Fabric.CongestionControl == spec.CCDCQCN || s.Fabric.CongestionControl == spec.CCECNOnly {
		return 0b10
	}
	return 0
}

func criteriaFor(s *spec.Spec, v *spec.Validation, c *spec.Class, m verbs.Mode) Criteria {
	cr := Criteria{Priority: -1, DSCP: -1, SL: -1, Transport: s.Fabric.Transport, SelfMarked: v.Marking == spec.MarkSelf,
		NGC: v.Criteria == spec.CriteriaNGC, Bidirectional: v.Bidirectional && m == verbs.ModeBandwidth}
	if s.Fabric.Transport == spec.IWARP {
		// iWARP is RDMA over TCP; Linux's soft-iWARP (siw) and its iw_cm
		// do not even carry rdma_cm's ToS to the socket (6.1).
		cr.NoWire = "iWARP runs over TCP, which the wire check (RoCEv2 packets) does not count"
	}
	if m == verbs.ModeBandwidth {
		cr.Percent, cr.Rate = v.MinBandwidth.Percent, v.MinBandwidth.Rate
	} else {
		cr.MaxP99 = v.MaxP99
	}
	if c != nil {
		cr.Lossless = c.Lossless
		cr.Priority = c.Priority
		if len(c.DSCP) > 0 && s.Fabric.Transport != spec.RoCEv1 && s.Fabric.Transport != spec.InfiniBand {
			cr.DSCP = c.DSCP[0]
		}
		switch s.Fabric.Transport {
		case spec.RoCEv1:
			cr.SL = c.Priority
		case spec.InfiniBand:
			if c.SL != nil {
				cr.SL = *c.SL
			}
		}
	}
	return cr
}
