package lint

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/fabctl/fabctl/spec"
)

// Issue 21's lint misses: the path MTU along RDMA paths (MTU-4), NIC
// address uniqueness and overlapping subnets on one host (HOST-4), and an
// RDMA ToS without ECT under DCQCN (ECN-4). Each rule is listed in
// Rules() through mtuRules, hostRules and ecnRules.

var ruleMTU4 = Rule{
	ID:    "MTU-4",
	Title: "Every switch-to-switch hop on an RDMA path carries the hosts' RDMA packets",
	Rationale: `MTU-1 compares the two ends of each link and MTU-3 each NIC with the RDMA MTU; neither sees a
hop in the middle of the path. A leaf-spine link set to 1500 on both ends is consistent, yet every RoCE
packet of a 4096 RDMA MTU (4096 payload plus IP, UDP, BTH, extended header and ICRC: up to 4156 bytes of
IP packet) that crosses it is dropped as oversize: RDMA between hosts on different leaves stalls while
traffic within a leaf works. RoCE sets DF and has no fragmentation or path-MTU discovery, so the RDMA MTU
must fit the smallest hop of every path. fabctl checks each switch-to-switch link that lies between two
RoCE hosts (in the same connected part of the fabric, behind different switches) against the fabric's
RDMA MTU (an error) and against the largest host IP MTU (a warning: TCP bulk transfers then depend on
ICMP "fragmentation needed", which fabrics often filter).`,
	Reference: "IBTA Annex A17 RoCEv2 (no IP fragmentation, DF set); RFC 1191 path MTU discovery; torvalds/linux include/rdma/ib_addr.h iboe_get_mtu()",
	Check:     checkMTU4,
}

func checkMTU4(c *Context) {
	s := c.Spec
	t := s.Fabric.Transport
	if !t.IsRoCE() || !ibMTUValid(s.Fabric.RDMAMTU) {
		return
	}
	// Connected parts of the fabric over all links; the RoCE hosts in each,
	// with the switch each hangs off. Devices are numbered as the links
	// name them, so the union-find runs on slices (one name lookup per
	// endpoint; a map of names to names took most of this rule's time at
	// 16,384 hosts).
	idx := make(map[string]int32, len(s.Switches)+len(s.Hosts))
	var parent []int32
	id := func(name string) int32 {
		if i, ok := idx[name]; ok {
			return i
		}
		i := int32(len(parent))
		idx[name] = i
		parent = append(parent, i)
		return i
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	ends := make([][2]int32, len(s.Links))
	for i, l := range s.Links {
		a, b := id(l.A.Node), id(l.B.Node)
		ends[i] = [2]int32{a, b}
		parent[find(a)] = find(b)
	}
	type part struct {
		hosts    []string
		switches map[string]bool
		hostMTU  int
		who      string // "first and last" host by name, made once per part
	}
	parts := map[int32]*part{}
	// Each NIC has at most one link (the loader rejects a second), so
	// walking the links visits every linked NIC once, without an index.
	for i, l := range s.Links {
		a, b := Ends(s, l)
		for _, pair := range [2][2]End{{a, b}, {b, a}} {
			h, peer := pair[0], pair[1]
			if h.Host == nil || peer.EP.Kind != spec.KindSwitch {
				continue
			}
			root := find(ends[i][0]) // both ends are in one part
			p := parts[root]
			if p == nil {
				p = &part{switches: map[string]bool{}}
				parts[root] = p
			}
			p.hosts = append(p.hosts, h.Host.Name)
			p.switches[peer.EP.Node] = true
			p.hostMTU = max(p.hostMTU, s.NICMTU(h.NIC))
		}
	}
	var g findingGroups
	for i, l := range s.Links {
		if l.A.Kind != spec.KindSwitch || l.B.Kind != spec.KindSwitch {
			continue
		}
		p := parts[find(ends[i][0])]
		if p == nil || len(p.switches) < 2 || len(p.hosts) < 2 {
			continue // no RDMA path between hosts behind different switches
		}
		a, b := Ends(s, l)
		ma, mb := endMTU(s, a), endMTU(s, b)
		low, lowM := a, ma
		if mb < ma {
			low, lowM = b, mb
		}
		need := s.Fabric.RDMAMTU + roceWireOverhead(t, false)
		if lowM >= need && lowM >= p.hostMTU {
			continue // no finding: the origin is only for the message
		}
		o := endMTUOrigin(s, low, l)
		if p.who == "" {
			// Once per part, not per link: sorting every host for each
			// leaf-spine link made the rule quadratic (hosts x uplinks).
			hosts := uniqueSorted(p.hosts)
			p.who = fmt.Sprintf("%s and %s", hosts[0], hosts[len(hosts)-1])
		}
		who := p.who
		switch {
		case lowM < need:
			g.add(c, "rdma", Error, "RDMA path MTU hole", o, "links", groupItem{label: l.A.String() + "--" + l.B.String(), address: low.Address(), scopes: low.Scopes(l),
				detail: fmt.Sprintf("RDMA between hosts behind different switches (e.g. %s) crosses %s--%s, whose IP MTU is %d (%s), but an RDMA MTU of %d makes IP packets of up to %d bytes: the switch drops every full-size RoCE packet on this hop (RoCE sets DF and has no path-MTU discovery), so RDMA across it stalls while traffic within one switch works. Set %s to at least %d (the hosts use %d).",
					who, l.A, l.B, lowM, o.What, s.Fabric.RDMAMTU, need, o.What, need, p.hostMTU)})
		case lowM < p.hostMTU:
			g.add(c, "ip", Warning, "Path MTU below the hosts' MTU", o, "links", groupItem{label: l.A.String() + "--" + l.B.String(), address: low.Address(), scopes: low.Scopes(l),
				detail: fmt.Sprintf("Hosts on this fabric (e.g. %s) send IP packets of up to %d bytes, but %s--%s carries at most %d (%s): RDMA fits, but full-size TCP packets across it rely on ICMP \"fragmentation needed\", often filtered, and stall. Set %s to %d.",
					who, p.hostMTU, l.A, l.B, lowM, o.What, o.What, p.hostMTU)})
		}
	}
	g.flush(c)
}

func uniqueSorted(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

var ruleHOST4 = Rule{
	ID:    "HOST-4",
	Title: "NIC addresses are unique, and one host's NICs are on distinct subnets",
	Rationale: `Two NICs with the same IP address answer ARP for each other: traffic for one reaches the
other at random, RDMA connections (rdma_cm resolves the address to a GID) land on the wrong host and the
lossless configuration is tested on a machine that does not carry the job. On one host, two NICs in
overlapping subnets make the kernel route every destination in the overlap through one of them (the
first matching route), so the other NIC's RDMA traffic leaves through the wrong port or is answered on
it (ARP flux); rail-optimised fabrics give each NIC its own subnet. Duplicates are errors; overlaps on
one host are warnings (policy routing can make them work).`,
	Reference: "RFC 5227 IPv4 address conflict detection; Linux ip-rule(8) and arp_ignore/arp_announce (Documentation/networking/ip-sysctl.rst); NVIDIA rail-optimised topology",
	Check:     checkHOST4,
}

func checkHOST4(c *Context) {
	s := c.Spec
	type owner struct {
		h *spec.Host
		n *spec.NIC
	}
	n := 0
	for _, h := range s.Hosts {
		for _, nic := range h.NICs {
			n += len(nic.Addresses)
		}
	}
	first := make(map[netip.Addr]owner, n) // sized once: 131k addresses at 16,384 hosts
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			for _, p := range n.Addresses {
				a := p.Addr()
				if o, dup := first[a]; dup {
					c.Reportf(Error, n.Src.Attr("addresses"), hostNICAddress(h, n), hostNICScopes(h, n), "Duplicate NIC address",
						"%s is on host %q NIC %s and on host %q NIC %s: both answer ARP for it, so traffic and RDMA connections for one reach the other at random. Give each NIC its own address.",
						a, o.h.Name, o.n.Name, h.Name, n.Name)
					continue
				}
				first[a] = owner{h, n}
			}
		}
		for i, n := range h.NICs {
			for _, m := range h.NICs[:i] {
				if p, q, ok := overlap(m.Addresses, n.Addresses); ok {
					c.Reportf(Warning, n.Src.Attr("addresses"), hostNICAddress(h, n), hostNICScopes(h, n), "Overlapping subnets on one host",
						"host %q has %s on NIC %s and %s on NIC %s: the subnets overlap, so the kernel routes the overlap through one NIC and the other's RDMA traffic leaves through the wrong port (ARP flux). Put each NIC on its own subnet, or configure policy routing and silence HOST-4 with a reason.",
						h.Name, q, n.Name, p, m.Name)
				}
			}
		}
	}
}

// overlap finds a pair of overlapping prefixes of the same family.
func overlap(a, b []netip.Prefix) (netip.Prefix, netip.Prefix, bool) {
	for _, p := range a {
		for _, q := range b {
			if p.Addr().Is4() == q.Addr().Is4() && p.Masked().Overlaps(q.Masked()) {
				return p, q, true
			}
		}
	}
	return netip.Prefix{}, netip.Prefix{}, false
}

var ruleECN4 = Rule{
	ID:    "ECN-4",
	Title: "Under DCQCN the hosts' RDMA ToS has ECT set",
	Rationale: `Switches mark congestion by rewriting the ECN field (the low two bits of the ToS byte) from
ECT(0) or ECT(1) to CE; a packet sent Not-ECT (00) cannot be marked, and RED-style queues drop it
instead. With congestion_control = "dcqcn", the ToS rdma_cm (default_roce_tos) and NCCL (NCCL_IB_TC)
put on RDMA packets must therefore carry ECT: rdma_tos = 104 (DSCP 26, Not-ECT) looks right in QOS-8's
DSCP check, yet no switch ever marks those flows, no CNP is sent and DCQCN never slows a sender, leaving
PFC to absorb all congestion. Use DSCP << 2 | 2 (ECT(0)), e.g. 106 for DSCP 26.`,
	Reference: "RFC 3168 section 5 (ECN field: Not-ECT, ECT(0), ECT(1), CE); " + dcqcnReference + "; NVIDIA default_roce_tos (https://enterprise-support.nvidia.com/s/article/howto-set-the-default-roce-mode-when-using-rdma-cm)",
	Check:     checkECN4,
}

func checkECN4(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsRoCE() || s.Fabric.CongestionControl != spec.CCDCQCN {
		return
	}
	detail := func(who string, tos int, o settingOrigin) string {
		return fmt.Sprintf("%s uses ToS %d (%s): its ECN bits are 00 (Not-ECT), so under DCQCN no switch can mark its RDMA packets, no CNP is sent and senders never slow down. Set rdma_tos = %d (DSCP %d << 2 | ECT(0)).",
			who, tos, o.What, tos&^3|2, tos>>2)
	}
	var g findingGroups
	for _, h := range s.Hosts {
		tos, explicit := s.HostTos(h)
		if !explicit || tos&3 != 0 {
			continue
		}
		o := hostTosOrigin(s, h)
		g.add(c, "ect", Error, "RDMA ToS without ECT under DCQCN", o, "hosts",
			groupItem{label: h.Name, address: "host." + h.Name, scopes: []spec.LintIgnores{h.Ignore}, detail: detail(fmt.Sprintf("host %q", h.Name), tos, o)})
	}
	if tos, explicit := s.HostTos(nil); explicit && len(s.Hosts) == 0 && tos&3 == 0 {
		o := hostTosOrigin(s, nil)
		c.Reportf(Error, o.Range, "fabric", nil, "RDMA ToS without ECT under DCQCN", "%s", detail("The fabric", tos, o))
	}
	g.flush(c)
}
