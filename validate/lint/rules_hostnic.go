package lint

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// HOST-6 and HOST-7: what a RoCE NIC does with the classes, beyond
// mirroring the fabric (HOST-3).

var ruleHOST6 = Rule{
	ID:    "HOST-6",
	Title: "Every RoCE class has congestion control on the hosts: PFC (lossless) or DCQCN on its priority",
	Rationale: `RoCE's go-back-N recovery collapses under loss, so RDMA traffic needs either PFC (a lossless
class) or an ECN-based rate control at the NICs: DCQCN, whose reaction and notification points are
enabled per priority on the NIC (MLNX_OFED /sys/class/net/<if>/ecn/roce_{rp,np}/enable/<prio>; on
upstream mlx5 the firmware's ROCE_CC_PRIO_MASK, default all priorities). A lossy RDMA class whose
priority is outside a NIC's DCQCN priorities (dcqcn_priorities, or ecn = false on the NIC, or
congestion_control "pfc-only"/"none", or RoCEv1, whose frames carry no IP ECN bits) has no congestion
control on that NIC at all: incast drops packets and every drop costs a whole window of retransmission.
fabctl always adds the RDMA classes' priorities to a NIC's DCQCN priorities (default: all eight, the
vendor default), TR-5 reports a RoCEv2 fabric with neither PFC nor ECN-based control and HOST-3 a NIC
with ecn = false under one; this rule reports the remaining case, a lossy RoCEv1 class.`,
	Reference: "NVIDIA nic-configuration-operator README (ROCE_CC_PRIO_MASK_P1=255, roce_np/roce_rp enable files); " + dcqcnReference,
	Check:     checkHOST6,
}

func checkHOST6(c *Context) {
	s := c.Spec
	f := s.Fabric
	if !f.Transport.IsRoCE() {
		return
	}
	for _, cl := range s.ClassesByRole(spec.RoleRDMA) {
		if cl.Lossless {
			continue // PFC is its flow control
		}
		if f.Transport == spec.RoCEv1 {
			c.Reportf(Warning, cl.Src.Attr("lossless"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "RoCE class without congestion control",
				"class %q carries RoCEv1 lossy (lossless = false) on priority %d: RoCEv1 frames have no IP header, so no ECN mark can reach them and DCQCN cannot run; without PFC nothing slows the senders, and under incast every drop costs a whole window of retransmission. Make the class lossless.",
				cl.Name, cl.Priority)
			continue
		}
		// RoCEv2: TR-5 reports a fabric without PFC or ECN-based control and
		// HOST-3 a NIC with ecn = false under one; intent always adds the
		// RDMA classes' priorities to a NIC's DCQCN priorities.
	}
}

var ruleHOST7 = Rule{
	ID:    "HOST-7",
	Title: "rdma_cm's priority for the host's ToS reaches the RDMA class's PCP through the VLAN egress map, without moving other traffic",
	Rationale: `On a VLAN netdev rdma_cm sets a RoCE connection's 802.1p PCP (its SL) to
egress_qos_map[rt_tos2priority(tos)] (drivers/infiniband/core/cma.c iboe_tos_to_sl), and
rt_tos2priority only yields 0, 2, 4 or 6 (net/ipv4/route.c ip_tos2prio): ToS 0 gives skb priority 0,
8 gives 2, 24 gives 4, 16 gives 6. fabctl therefore maps that skb priority to the RDMA class's PCP on
each RDMA VLAN interface (besides priority p -> PCP p for the classes). When that skb priority is 0, every
other packet the host sends on the VLAN with the default priority (NFS, iSCSI, ssh) rides the lossless
RDMA PCP too; when it is another class's priority, that class's traffic moves to the RDMA PCP. Pick an
rdma_tos whose skb priority is free. On a PCP-trusting fabric a RoCE NIC without a VLAN sends untagged
frames: no PCP at all, so the switch classifies RDMA by its port default, outside the lossless class.`,
	Reference: "Linux drivers/infiniband/core/cma.c iboe_tos_to_sl/get_vlan_ndev_tc; include/net/route.h rt_tos2priority; net/ipv4/route.c ip_tos2prio",
	Check:     checkHOST7,
}

func checkHOST7(c *Context) {
	s := c.Spec
	f := s.Fabric
	if !f.Transport.IsRoCE() {
		return
	}
	rc := s.ClassesByRole(spec.RoleRDMA)
	if len(rc) == 0 {
		return
	}
	rdma := rc[0]
	byPrio := map[int]*spec.Class{}
	for _, cl := range s.Classes {
		if _, ok := byPrio[cl.Priority]; !ok {
			byPrio[cl.Priority] = cl
		}
	}
	for _, h := range s.Hosts {
		tos, _ := s.HostTos(h)
		skb := intent.RTTos2Priority(tos)
		for _, n := range h.NICs {
			addr, sc := hostNICAddress(h, n), hostNICScopes(h, n)
			if n.VLAN == 0 {
				// RoCEv2 trusting PCP is QOS-2's (and HOST-3's for a NIC override).
				if f.Transport == spec.RoCEv1 && rdma.Lossless {
					c.Reportf(Error, n.Src.Block, addr, sc, "RoCE leaves untagged on a PCP-trusting fabric",
						"nic %s:%s carries RoCE without a VLAN, but the fabric classifies by PCP: untagged frames have no PCP, so the switches put RDMA on their port default priority, not on lossless class %q (priority %d). Set vlan = N on the nic (fabctl creates the VLAN interface and its egress map).",
						h.Name, n.Name, rdma.Name, rdma.Priority)
				}
				continue
			}
			if skb == rdma.Priority {
				continue // the identity entry already carries it
			}
			o := hostTosOrigin(s, h)
			subject := n.Src.Block
			if o.Level != spec.FromClasses {
				subject = o.Range
			}
			free := freeToS(byPrio)
			switch other := byPrio[skb]; {
			case skb == 0:
				c.Reportf(Warning, subject, addr, append(sc, h.Ignore), "RDMA shares skb priority 0 with all other traffic on the VLAN",
					"host %s uses ToS %d, which rt_tos2priority maps to skb priority 0, so rdma_cm's RoCE on %s gets PCP %d only through an egress map entry 0:%d, and that entry also sends every other default-priority packet on %s (NFS, iSCSI, ssh) on the lossless RDMA PCP. %s",
					h.Name, tos, n.RDMANetdev(), rdma.Priority, rdma.Priority, n.RDMANetdev(), free)
			case other != nil && other != rdma:
				c.Reportf(Warning, subject, addr, append(sc, h.Ignore), "rdma_cm's priority is another class's",
					"host %s uses ToS %d, which rt_tos2priority maps to skb priority %d, the priority of class %q: the egress map entry %d:%d that carries rdma_cm's RoCE to the RDMA PCP also moves that class's traffic on %s onto it. %s",
					h.Name, tos, skb, other.Name, skb, rdma.Priority, n.RDMANetdev(), free)
			}
		}
	}
}

// freeToS suggests an rdma_tos whose rt_tos2priority no class uses.
func freeToS(byPrio map[int]*spec.Class) string {
	var opts []string
	for _, t := range []int{8, 24, 16} {
		if p := intent.RTTos2Priority(t); byPrio[p] == nil {
			opts = append(opts, fmt.Sprintf("rdma_tos = %d (skb priority %d)", t, p))
		}
	}
	if len(opts) == 0 {
		return "Every skb priority rdma_cm can produce (0, 2, 4, 6) is a class's; move a class off one of them."
	}
	return "Set " + strings.Join(opts, " or ") + "."
}
