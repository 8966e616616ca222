package lint

import (
	"fmt"

	"github.com/fabctl/fabctl/spec"
)

func mtuRules() []Rule {
	return []Rule{
		{
			ID:    "MTU-1",
			Title: "Each link end accepts what the other end sends: a switch port at least its host's IP MTU",
			Rationale: `A port drops received frames longer than its own MTU (plus Ethernet header, FCS and
VLAN tags) as oversize, without telling the sender. When a host's NIC has a larger MTU than the switch
port it is cabled to (or two hosts cabled back to back differ), everything works until the first
full-size packet: pings and small RPCs pass, bulk transfers and RDMA writes stall. A switch port larger
than the host it faces is normal and harmless (9100 or 9216 facing hosts at 9000): it accepts what the
host sends, and the hosts' path MTU (MTU-4) bounds what reaches the host. Between two routed switches a
difference is a warning: OSPF and IS-IS refuse the adjacency when the neighbours' MTUs differ. fabctl
compares the effective IP MTU of both ends (port or NIC override, then switch, then fabric; a switch
port the spec gives no mtu must carry at least the fabric's or its host's MTU, and keeps a larger one);
VLAN tags on the link add 4 bytes per tag to the frame on both ends alike. The finding points at the
setting that deviates: the lower end's MTU, or the override that raised one end above the fabric
value.`,
			Reference: "Dell PowerConnect configuration guide: IP MTU ≤ max frame − 18 (https://www.manualowl.com/m/Dell/PowerConnect-B-RX/Manual/353899?page=257); RFC 2328 §10.6 (OSPF drops a Database Description whose interface MTU exceeds the receiver's); containerlab link `mtu` (srl-labs/containerlab docs/manual/topo-def-file.md)",
			Check:     checkMTU1,
		},
		{
			ID:    "MTU-2",
			Title: "The RDMA MTU is an IB MTU: 256, 512, 1024, 2048 or 4096",
			Rationale: `RoCE and InfiniBand carry the path MTU as an enum (enum ibv_mtu: IBV_MTU_256 ..
IBV_MTU_4096); any other number cannot be configured on a QP, reported by ibv_query_port or set in an
opensm partition (mtu=1..5). A value such as 9000 or 3000 in fabric.rdma_mtu or an infiniband partition
would be rejected by the NIC driver or silently rounded by whatever renders it.`,
			Reference: "linux-rdma/rdma-core libibverbs/verbs.h `enum ibv_mtu`; linux-rdma/opensm doc/partition-config.txt (mtu=1..5)",
			Check:     checkMTU2,
		},
		{
			ID:    "MTU-3",
			Title: "Each RoCE NIC's IP MTU is large enough for the RDMA MTU and its headers",
			Rationale: `A RoCEv2 packet carries the RDMA payload plus IPv4 20 / IPv6 40, UDP 8, BTH 12, an extended
transport header of up to 16 (RETH) and the ICRC 4 inside the IP MTU (RoCEv1: GRH 40 instead of
IP+UDP). The kernel is stricter still: iboe_get_mtu() (mlx5, bnxt_re) subtracts 96 bytes from the netdev
MTU and picks the largest IB MTU that fits as the port's active_mtu (Soft-RoCE rxe subtracts 80).
rdma_cm, NCCL and perftest use active_mtu, so a 4096 RDMA MTU needs a netdev MTU of at least 4192 (4176
on rxe); with 4150 every connection silently runs at 2048. The rule errors when the declared RDMA MTU
cannot become active on a NIC, and warns when jumbo-frame hosts (IP MTU ≥ 9000) are held to a smaller
RDMA MTU, which doubles the packet rate for no gain. Not checked for iWARP (TCP segments) or
InfiniBand (no IP MTU).`,
			Reference: "IBTA Annex A17 RoCEv2 (header table: https://losslessnetwork.com/learn/roce-v2/understanding-rocev2); torvalds/linux include/rdma/ib_addr.h iboe_get_mtu(); drivers/infiniband/sw/rxe/rxe_param.h eth_mtu_int_to_enum()",
			Check:     checkMTU3,
		},
		ruleMTU4,
	}
}

func checkMTU1(c *Context) {
	s := c.Spec
	var g findingGroups
	for _, l := range s.Links {
		a, b := Ends(s, l)
		ma, mb := endMTU(s, a), endMTU(s, b)
		if ma == mb {
			continue
		}
		low, lowM, high, highM := a, ma, b, mb
		if mb < ma {
			low, lowM, high, highM = b, mb, a, ma
		}
		switchLink := a.Switch != nil && b.Switch != nil
		switch {
		case low.Switch == nil && high.Switch != nil:
			// A switch port above the host it faces accepts everything the
			// host sends, and sends the host only what other hosts send:
			// the path's hosts (MTU-4) are what matter.
			continue
		case switchLink && (a.Switch.Forwarding != spec.Routed || b.Switch.Forwarding != spec.Routed):
			// A bridged link forwards the hosts' frames, which fit both
			// ends (MTU-4 checks the hosts' path); no adjacency forms.
			continue
		}
		lowO, highO := endMTUOrigin(s, low, l), endMTUOrigin(s, high, l)
		// Blame the lower end, unless it merely follows the fabric and the
		// higher end is an override: then the override is the odd one out.
		blame, blameO, target := low, lowO, highM
		if lowO.Level == spec.FromFabric && highO.Level != spec.FromFabric {
			blame, blameO, target = high, highO, lowM
		}
		if switchLink {
			detail := fmt.Sprintf("%s has IP MTU %d (%s) but %s has %d (%s). The hosts' packets fit both (MTU-4 checks their path), "+
				"but OSPF and IS-IS compare the neighbours' MTUs and do not form an adjacency over a routed link whose ends differ (OSPF stays in ExStart), "+
				"and BGP sessions over it stall on full-size updates. Set %s to %d so both ends agree, if a routing protocol runs over the link.",
				low.EP, lowM, lowO.What, high.EP, highM, highO.What, blameO.What, target)
			g.add(c, "routed", Warning, "MTU differs across a routed switch-to-switch link", blameO, "links",
				groupItem{label: l.A.String() + "--" + l.B.String(), address: blame.Address(), scopes: blame.Scopes(l), detail: detail})
			continue
		}
		tags := ""
		if l.VLANTags > 0 {
			tags = fmt.Sprintf(" + %d for %d VLAN tag(s)", 4*l.VLANTags, l.VLANTags)
		}
		frame := func(m int) int { return m + 18 + 4*l.VLANTags }
		detail := fmt.Sprintf("%s has IP MTU %d (%s) but %s has %d (%s). %s can send frames of up to %d bytes (IP MTU + 18 for Ethernet header and FCS%s) that %s drops as oversize, since it accepts at most %d: "+
			"small packets pass while full-size RDMA and bulk packets are lost. Set %s to %d so %s accepts what %s sends (a switch port may be larger than the host it faces).",
			low.EP, lowM, lowO.What, high.EP, highM, highO.What, high.EP, frame(highM), tags, low.EP, frame(lowM), blameO.What, target, low.EP, high.EP)
		g.add(c, "mtu", Error, "MTU too small for what the link's other end sends", blameO, "links",
			groupItem{label: l.A.String() + "--" + l.B.String(), address: blame.Address(), scopes: blame.Scopes(l), detail: detail})
	}
	g.flush(c)
}

func checkMTU2(c *Context) {
	s := c.Spec
	f := s.Fabric
	if !ibMTUValid(f.RDMAMTU) {
		c.Reportf(Error, f.Src.Attr("rdma_mtu"), "fabric", nil, "RDMA MTU is not an IB MTU",
			"rdma_mtu = %d, but RDMA path MTUs are an enum (enum ibv_mtu): 256, 512, 1024, 2048 or 4096. No NIC or subnet manager can be set to %d. Use %s.",
			f.RDMAMTU, f.RDMAMTU, rdmaMTUHint(f.RDMAMTU, f.Transport))
	}
	if ib := s.InfiniBand; ib != nil {
		for _, p := range ib.Partitions {
			if p.MTU == 0 || ibMTUValid(p.MTU) {
				continue // 0: opensm's default group MTU
			}
			c.Reportf(Error, p.Src.Attr("mtu"), "infiniband.partition."+p.Name, nil, "Partition MTU is not an IB MTU",
				"partition %q has mtu = %d, but opensm partitions take an IB MTU (partitions.conf mtu=1..5 for 256, 512, 1024, 2048, 4096). Use %d.",
				p.Name, p.MTU, floorIBMTU(p.MTU))
		}
	}
}

// floorIBMTU is the largest IB MTU not above m (256 at least).
func floorIBMTU(m int) int {
	best := ibMTUs[0]
	for _, v := range ibMTUs {
		if v <= m {
			best = v
		}
	}
	return best
}

// rdmaMTUHint names the IB MTUs around an invalid value m.
func rdmaMTUHint(m int, t spec.Transport) string {
	lo := floorIBMTU(m)
	hint := fmt.Sprint(lo)
	for _, v := range ibMTUs {
		if v > m {
			hint += fmt.Sprintf(" or %d", v)
			if t.IsRoCE() {
				hint += fmt.Sprintf(" (which needs a netdev MTU of at least %d, see MTU-3)", v+kernelRoCEReserve)
			}
			break
		}
	}
	return hint
}

// roceGoodput is the share of line rate a stream of full packets of payload m
// carries as payload, with overhead bytes of RDMA headers per packet plus
// Ethernet header, FCS, preamble and inter-frame gap (38).
func roceGoodput(m, overhead int) float64 {
	return 100 * float64(m) / float64(m+overhead+38)
}

func checkMTU3(c *Context) {
	s := c.Spec
	t := s.Fabric.Transport
	rdma := s.Fabric.RDMAMTU
	if !t.IsRoCE() || !ibMTUValid(rdma) {
		return // MTU-2 reports an invalid RDMA MTU
	}
	var g findingGroups
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			ip := s.NICMTU(n)
			reserve, how := roceReserve(n.Model)
			small := ip-reserve < rdma
			if !small && (ip < 9000 || rdma >= 4096) {
				continue
			}
			v6 := nicIPv6(n)
			ovh := roceWireOverhead(t, v6)
			item := groupItem{label: h.Name + ":" + n.Name, address: hostNICAddress(h, n), scopes: hostNICScopes(h, n)}
			if small {
				o := nicMTUOrigin(s, h, n)
				active := activeRoCEMTU(ip, reserve)
				hdr := fmt.Sprintf("A full RDMA packet needs %d + %d bytes of %s headers = %d", rdma, ovh, roceHeaderName(t, v6), rdma+ovh)
				if rdma+ovh > ip {
					hdr += ", more than the IP MTU, and"
				} else {
					hdr += ", which fits, but"
				}
				result := fmt.Sprintf("so active_mtu becomes %d, not %d, and every RDMA connection on this NIC runs with %d-byte packets (rdma_cm, NCCL and perftest take active_mtu)", active, rdma, active)
				if active == 0 {
					result = "no IB MTU fits at all: RoCE cannot run on this NIC"
				}
				alt := ""
				if active > 0 {
					alt = fmt.Sprintf(", or lower rdma_mtu to %d", active)
				}
				item.detail = fmt.Sprintf("nic %s:%s has IP MTU %d (%s). %s %s picks the largest IB MTU ≤ %d − %d = %d, %s. Set the NIC's IP MTU to at least %d (9000 is usual)%s.",
					h.Name, n.Name, ip, o.What, hdr, how, ip, reserve, ip-reserve, result, rdma+reserve, alt)
				g.add(c, "small", Error, "IP MTU too small for the RDMA MTU", o, "NICs", item)
				continue
			}
			{
				item.detail = fmt.Sprintf("rdma_mtu = %d while nic %s:%s has IP MTU %d, enough for an RDMA MTU of 4096 (needs %d). Each RDMA message is cut into %d× as many packets, costing NIC packet rate and goodput (%.1f%% of line rate instead of %.1f%%). Set rdma_mtu = 4096 unless a peer outside the spec limits it.",
					rdma, h.Name, n.Name, ip, 4096+reserve, 4096/rdma, roceGoodput(rdma, ovh), roceGoodput(4096, ovh))
				g.add(c, "jumbo", Warning, "RDMA MTU below 4096 on jumbo-frame hosts", fabricOrigin(s, "rdma_mtu"), "NICs", item)
			}
		}
	}
	g.flush(c)
}

func roceHeaderName(t spec.Transport, v6 bool) string {
	switch {
	case t == spec.RoCEv1:
		return "RoCEv1 (GRH 40, BTH 12, RETH 16, ICRC 4)"
	case v6:
		return "RoCEv2/IPv6 (IPv6 40, UDP 8, BTH 12, RETH 16, ICRC 4)"
	}
	return "RoCEv2/IPv4 (IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4)"
}
