package lint

import (
	"fmt"
	"sort"
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
	Title: "rdma_cm's priority for the host's ToS reaches the RDMA class's PCP (through the VLAN egress map, or the NIC's prio->TC map on ice and bnxt), without moving other traffic",
	Rationale: `On a VLAN netdev rdma_cm sets a RoCE connection's 802.1p PCP (its SL) to
egress_qos_map[rt_tos2priority(tos)] (drivers/infiniband/core/cma.c iboe_tos_to_sl), and
rt_tos2priority only yields 0, 2, 4 or 6 (net/ipv4/route.c ip_tos2prio): ToS 0 gives skb priority 0,
8 gives 2, 24 gives 4, 16 gives 6. fabctl therefore maps that skb priority to the RDMA class's PCP on
each RDMA VLAN interface (besides priority p -> PCP p for the classes). When that skb priority is 0, every
other packet the host sends on the VLAN with the default priority (NFS, iSCSI, ssh) rides the lossless
RDMA PCP too; when it is another class's priority, that class's traffic moves to the RDMA PCP. Pick an
rdma_tos whose skb priority is free. On a PCP-trusting fabric a RoCE NIC without a VLAN sends untagged
frames: no PCP at all, so the switch classifies RDMA by its port default, outside the lossless class.
That egress-map path is mlx5's. cma.c takes the SL from the real netdev's own prio->TC map instead
whenever its driver set a TC count on it (get_vlan_ndev_tc: "if (dev->num_tc) return
netdev_get_prio_tc_map(dev, prio)"): Intel E810 (ice) does on every DCB change, mapping each priority
to its ETS TC (ice_vsi_cfg_netdev_tc), so the SL is a TC number, the priority itself in DSCP mode and
the class's compacted TC in VLAN mode; Broadcom (bnxt) does once an ETS is set (bnxt_setup_mq_tc) and
never sets the map, so the SL is 0. On those NICs (by model) the rule checks that path: an SL other
than the RDMA class's priority is reported, and the egress map does not help.`,
	Reference: "Linux drivers/infiniband/core/cma.c iboe_tos_to_sl/get_vlan_ndev_tc; include/net/route.h rt_tos2priority; net/ipv4/route.c ip_tos2prio; drivers/net/ethernet/intel/ice/ice_lib.c ice_vsi_cfg_netdev_tc; drivers/net/ethernet/broadcom/bnxt/bnxt.c bnxt_setup_mq_tc",
	Check:     checkHOST7,
}

// cmPrioTCSL is the SL rdma_cm takes from the prio->TC map of an ice or
// bnxt NIC for skb priority prio, in the ETS layout fabctl gives it
// (drivers/host changes.go; intent.NIC.CMSL is the same model on the
// compiled intent).
func cmPrioTCSL(s *spec.Spec, n *spec.NIC, fam string, prio int) int {
	if fam == spec.FamilyBNXT {
		return 0
	}
	if s.NICTrust(n) == spec.TrustDSCP {
		return prio // ice DSCP mode: prio_tc is the identity
	}
	var prios []int
	seen := map[int]bool{}
	for _, c := range s.Classes {
		if c.Priority >= 0 && c.Priority < 8 && !seen[c.Priority] {
			seen[c.Priority] = true
			prios = append(prios, c.Priority)
		}
	}
	sort.Ints(prios)
	for i, p := range prios {
		if p == prio {
			return i
		}
	}
	return 0 // other priorities share the lowest class's TC, TC 0
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
			if fam := spec.NICFamily(n.Model); n.VLAN != 0 && (fam == spec.FamilyICE || fam == spec.FamilyBNXT) {
				if sl := cmPrioTCSL(s, n, fam, skb); sl != rdma.Priority {
					why := fmt.Sprintf("ice maps each priority to its ETS TC there (ice_vsi_cfg_netdev_tc), and skb priority %d is on TC %d", skb, sl)
					if fam == spec.FamilyBNXT {
						why = "bnxt sets a TC count once the ETS is set (bnxt_setup_mq_tc) but never a prio->TC map, so every priority is on TC 0"
					}
					c.Reportf(Warning, n.Src.Block, addr, append(sc, h.Ignore), "rdma_cm takes the NIC's prio->TC map, not the VLAN egress map",
						"nic %s:%s (%s, %s) has a TC count on its netdev, so rdma_cm gives RoCE connections for ToS %d (skb priority %d) SL %d from the NIC's own prio->TC map (cma.c get_vlan_ndev_tc), not PCP %d of class %q from the egress map fabctl writes on %s: %s. Whether the NIC sends that SL as the PCP is the driver's (unverified on hardware); RoCE traffic that relies on it leaves on the wrong PCP. Prefer DSCP trust for RoCE on this NIC, or check the wire.",
						h.Name, n.Name, n.Model, fam, tos, skb, sl, rdma.Priority, rdma.Name, n.RDMANetdev(), why)
				}
				continue
			}
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

// mlx5MaxCableLen is MLX5E_MAX_CABLE_LENGTH: mlx5 takes a cable length
// (ieee_pfc.delay) below it only (en_dcbnl.c mlx5e_dcbnl_ieee_setpfc).
const mlx5MaxCableLen spec.Length = 1000

var ruleHOST8 = Rule{
	ID:    "HOST-8",
	Title: "A ConnectX NIC's lossless link is shorter than the 1000 m mlx5 takes as its PFC cable length",
	Rationale: `A ConnectX NIC computes the PFC headroom of its lossless receive buffers from the cable length it
was given (mlnx_qos --cable_len, dcbnl ieee_pfc.delay): xoff = (301 + 2.16 x cable_len) x speed [Gbit/s]
+ 2.72 x MTU bytes before the buffer is full, so the pause goes out while the cable still has room
for what is in flight (en/port_buffer.c calculate_xoff, update_xoff_threshold). mlx5 accepts a cable
length below 1000 m only (MLX5E_MAX_CABLE_LENGTH; mlx5e_dcbnl_ieee_setpfc ignores anything else) and
keeps its default of 7 m (MLX5E_DEFAULT_CABLE_LEN) or what it had: on a longer link the NIC pauses too
late and drops on a lossless priority under load. fabctl sizes the receive buffers for the declared
length, but cannot make the NIC send its pause frames earlier; the plan lists the cable length as not
expressible. Shorten the link, make the class lossy with ECN, or silence the rule with the reason.`,
	Reference: "Linux drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c mlx5e_dcbnl_ieee_setpfc (MLX5E_MAX_CABLE_LENGTH 1000); en/port_buffer.c calculate_xoff, update_xoff_threshold; en/port_buffer.h MLX5E_DEFAULT_CABLE_LEN 7",
	Check:     checkHOST8,
}

// isConnectX says whether a NIC model is driven by mlx5 (the host
// driver's family rule, drivers/host nicfamily.go).
func isConnectX(model string) bool { return spec.NICFamily(model) == spec.FamilyMLX5 }

func checkHOST8(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsRoCE() {
		return
	}
	for _, l := range s.Links {
		if l.CableLength < mlx5MaxCableLen {
			continue
		}
		_, _, ha, na := l.EndA()
		_, _, hb, nb := l.EndB()
		for _, e := range []struct {
			h *spec.Host
			n *spec.NIC
		}{{ha, na}, {hb, nb}} {
			if e.n == nil || !isConnectX(e.n.Model) || len(s.NICPFC(e.n)) == 0 {
				continue
			}
			c.Reportf(Warning, l.Src.Attr("cable_length"), hostNICAddress(e.h, e.n), append(hostNICScopes(e.h, e.n), l.Ignore), "Cable longer than the NIC's PFC headroom can cover",
				"%s is %s long and nic %s:%s (%s) carries lossless %s on it, but mlx5 takes a cable length below %s only (MLX5E_MAX_CABLE_LENGTH) and computes its pause threshold with 7 m or what it had: the NIC pauses too late for this cable and drops under load. Shorten the link or make the class lossy with ECN.",
				l.Address(), l.CableLength, e.h.Name, e.n.Name, e.n.Model, prioNoun(s.NICPFC(e.n)), mlx5MaxCableLen)
		}
	}
}
