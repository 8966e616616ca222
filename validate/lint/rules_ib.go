package lint

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// InfiniBand rules. TR-4 already keeps Ethernet QoS (DSCP, PFC, ECN,
// trust, pause, PFC watchdog) out of InfiniBand specs and requires a
// subnet manager; MTU-2 keeps partition MTUs in the IB MTU enum; service
// levels outside 0..15 and VL weights outside 0..255 do not load. These
// rules check what the opensm driver writes: partitions.conf names ports
// by GUID, the SL2VL and VL arbitration tables, the IPoIB groups.
func ibRules() []Rule {
	return []Rule{
		{
			ID:    "IB-1",
			Title: "InfiniBand partitions name their ports: members have port GUIDs, P_Keys and names are unique",
			Rationale: `opensm's partitions.conf lists members by port GUID (or ALL, SELF, ...), so every host:nic member
needs the NIC's guid (ibstat -p prints it); without one the partition cannot be written. Two NICs with
one GUID are a typo that would put the wrong port in a partition. Two partitions with one P_Key are one
partition to opensm, which merges them under the first name, and a port listed both as a full and a
limited member is a full member (both only with allow_both_pkeys). opensm's parser splits names on
'=', ',', ':', ';' and '#' and keeps 31 characters.`,
			Reference: "opensm(8) PARTITION CONFIGURATION; linux-rdma/opensm doc/partition-config.txt and opensm/osm_prtn_config.c (parse_name_token, partition_add_port)",
			Check:     checkIB1,
		},
		{
			ID:    "IB-2",
			Title: "VL arbitration weights are multiples of one MTU-sized packet's credits (64 for a 4 KB MTU)",
			Rationale: `A VL arbitration weight counts 64-byte credits the VL may send when its turn comes, and a port
sends whole packets: a 4 KB packet takes 64 credits. OpenSM's QoS guide: "for 4KB MTU a single packet
will require 64 credits, so in order to achieve effective VL arbitration for packets of 4KB MTU, the
weighting values for each VL should be multiples of 64." A weight of 16 or 96 still sends one or two
whole packets per turn, so the shares the table was written for do not hold. The same arithmetic
applies to smaller MTUs (32 credits for 2 KB). The MTU is the fabric's rdma_mtu or the largest
partition MTU. A weight of 0 skips the entry and is fine.`,
			Reference: "linux-rdma/opensm doc/QoS_management_in_OpenSM.txt, section 7 \"SL2VL Mapping and VL Arbitration\"; IBA 7.6.9",
			Check:     checkIB2,
		},
		{
			ID:    "IB-3",
			Title: "Every service level in use maps to a VL that is not dropped and has arbitration weight",
			Rationale: `Traffic is classified by service level (SL 0..15, set per QP or path record); sl2vl maps each SL to
a virtual lane, and VL 15 there means drop. VL arbitration transmits only VLs that have a non-zero
weight in the high or the low table: a VL missing from both is never sent, and its credits back up to
the sender. So the SL of every class and partition must map to a VL other than 15 that the arbitration
tables serve, and, when the spec sets max_vls, a VL below it: a port runs VL0..max_vls-1 and
discards packets whose SL maps to a VL it does not run. Checked when the spec sets sl2vl, VL
arbitration or max_vls; without any of them opensm's defaults serve every SL.`,
			Reference: "linux-rdma/opensm doc/QoS_management_in_OpenSM.txt, section 7; opensm(8) QOS CONFIGURATION (qos_sl2vl: \"VL15 used here means drop this SL\"); IBA 7.6.6, 7.6.9",
			Check:     checkIB3,
		},
		{
			ID:    "IB-4",
			Title: "Partition IPoIB groups fit their members: an opensm rate no member is slower than, an MTU the IPoIB MTU fits",
			Rationale: `An ipoib partition gets an IPoIB broadcast group with the partition's rate and MTU. The rate must be
one opensm can express (IB rates 2.5G .. 600G); a member whose link is slower than the group's rate
cannot join it, and IPoIB on that partition never comes up there. In datagram mode the IPoIB MTU is the
group MTU minus the 4-byte IPoIB header, so a fabric mtu of 4092 needs 4096-byte groups (fabctl gives
the default partition the fabric's rdma_mtu).`,
			Reference: "opensm(8) PARTITION CONFIGURATION (rate, mtu); linux-rdma/opensm include/iba/ib_types.h IB_PATH_RECORD_RATE_*; RFC 4391 (IPoIB datagram MTU)",
			Check:     checkIB4,
		},
	}
}

func ibFabric(s *spec.Spec) *spec.InfiniBandConfig {
	if s.Fabric.Transport != spec.InfiniBand {
		return nil
	}
	return s.InfiniBand
}

func partitionAddress(p *spec.Partition) string { return "infiniband.partition." + p.Name }

// opensmPartitionName is what opensm's partitions.conf parser can take.
var opensmPartitionName = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,31}$`)

// memberNICs resolves a member to its NICs ("host" is every NIC).
func memberNICs(s *spec.Spec, ep string) (*spec.Host, []*spec.NIC) {
	node, nic, hasNIC := strings.Cut(ep, ":")
	h := s.Host(node)
	if h == nil {
		return nil, nil
	}
	if !hasNIC {
		return h, h.NICs
	}
	if n := h.NIC(nic); n != nil {
		return h, []*spec.NIC{n}
	}
	return h, nil
}

func isPartitionKeyword(ep string) bool {
	switch ep {
	case "ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF":
		return true
	}
	return false
}

func memberAttr(full bool) string {
	if full {
		return "members"
	}
	return "limited_members"
}

func checkIB1(c *Context) {
	s := c.Spec
	ib := ibFabric(s)
	if ib == nil {
		c.NotApplicable("the fabric has no InfiniBand part")
		return
	}
	// GUIDs unique over the spec's NICs.
	byGUID := map[string]string{}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			if n.GUID == "" {
				continue
			}
			if other, dup := byGUID[n.GUID]; dup {
				c.Reportf(Error, n.Src.Attr("guid"), hostNICAddress(h, n), hostNICScopes(h, n), "Two NICs with one port GUID",
					"nic %s:%s has guid %s, which nic %s also has. A port GUID names one port of the fabric: opensm would put one of them in the other's partitions. Check both with ibstat -p.",
					h.Name, n.Name, n.GUID, other)
				continue
			}
			byGUID[n.GUID] = h.Name + ":" + n.Name
		}
	}
	pkeys := map[int]*spec.Partition{}
	for _, p := range ib.Partitions {
		if !opensmPartitionName.MatchString(p.Name) {
			c.Reportf(Error, p.Src.Block, partitionAddress(p), nil, "Partition name opensm cannot parse",
				"partition %q: opensm's partitions.conf parser splits on '=', ',', ':', ';', starts comments at '#' and keeps 31 characters. Use 1-31 letters, digits, '_', '.', '+' or '-'.", p.Name)
		}
		if other := pkeys[p.PKey]; other != nil {
			c.Reportf(Error, p.Src.Attr("pkey"), partitionAddress(p), nil, "Two partitions with one P_Key",
				"partitions %q and %q both have P_Key %s (the membership bit aside): opensm merges them into one partition named %q with both member lists. Give each partition its own P_Key, or merge them in the spec.",
				other.Name, p.Name, intent.PKeyString(p.PKey), other.Name)
		} else {
			pkeys[p.PKey] = p
		}
		noGUID := map[bool][]string{}
		full := map[string]bool{}
		var both []string
		for _, m := range p.Members {
			if isPartitionKeyword(m.Endpoint) {
				continue
			}
			h, nics := memberNICs(s, m.Endpoint)
			for _, n := range nics {
				ep := h.Name + ":" + n.Name
				if n.GUID == "" {
					noGUID[m.Full] = append(noGUID[m.Full], ep)
				}
				if m.Full {
					full[ep] = true
				} else if full[ep] {
					both = append(both, ep)
				}
			}
		}
		for _, isFull := range []bool{true, false} {
			if eps := noGUID[isFull]; len(eps) > 0 {
				c.Reportf(Error, p.Src.Attr(memberAttr(isFull)), partitionAddress(p), nil, "Partition member without a port GUID",
					"partition %q lists %s, which %s no guid: opensm's partitions.conf names members by port GUID, so fabctl cannot write the partition. Set guid = \"0x...\" on each NIC (ibstat -p on the host prints it).",
					p.Name, joinCapped(eps), hasHave(len(eps)))
			}
		}
		if len(both) > 0 {
			c.Reportf(Warning, p.Src.Attr("limited_members"), partitionAddress(p), nil, "Port both a full and a limited member",
				"partition %q lists %s as full and as limited members: opensm makes them full members (both only with allow_both_pkeys). Keep each port in one list.",
				p.Name, joinCapped(both))
		}
	}
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// ibMaxMTU is the largest MTU packets on the fabric have: rdma_mtu or a
// partition's (IPoIB) MTU.
func ibMaxMTU(s *spec.Spec, ib *spec.InfiniBandConfig) int {
	m := s.Fabric.RDMAMTU
	for _, p := range ib.Partitions {
		if p.GroupMTU() > m {
			m = p.GroupMTU()
		}
	}
	return m
}

func checkIB2(c *Context) {
	s := c.Spec
	ib := ibFabric(s)
	if ib == nil {
		c.NotApplicable("the fabric has no InfiniBand part")
		return
	}
	mtu := ibMaxMTU(s, ib)
	credits := mtu / 64
	if credits <= 1 {
		return
	}
	for _, t := range []struct {
		attr  string
		table []spec.VLWeight
	}{{"vl_arb_high", ib.VLArbHigh}, {"vl_arb_low", ib.VLArbLow}} {
		var bad []string
		for _, w := range t.table {
			if w.Weight%credits != 0 {
				bad = append(bad, fmt.Sprintf("VL%d = %d", w.VL, w.Weight))
			}
		}
		if len(bad) == 0 {
			continue
		}
		c.Reportf(Warning, ib.Src.Attr(t.attr), "infiniband", nil, "VL arbitration weight not a whole number of packets",
			"%s has %s: a weight counts 64-byte credits, and with a %d-byte MTU one packet is %d credits, so the port sends whole packets and the shares differ from the weights. Use multiples of %d (%d, %d or %d; 0 skips an entry).",
			t.attr, strings.Join(bad, ", "), mtu, credits, credits, credits, 2*credits, 3*credits)
	}
}

// opensmDefaultSL2VL is opensm's built-in qos_sl2vl (opensm(8) QOS
// CONFIGURATION): used when the spec sets VL arbitration but no sl2vl.
var opensmDefaultSL2VL = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7}

func checkIB3(c *Context) {
	s := c.Spec
	ib := ibFabric(s)
	if ib == nil {
		c.NotApplicable("the fabric has no InfiniBand part")
		return
	}
	if len(ib.SL2VL) == 0 && len(ib.VLArbHigh) == 0 && len(ib.VLArbLow) == 0 && ib.MaxVLs == 0 {
		c.NotApplicable("the spec sets no SL-to-VL map, VL arbitration or max_vls")
		return
	}
	sl2vl, mapSrc := ib.SL2VL, "sl2vl"
	if len(sl2vl) != 16 {
		sl2vl, mapSrc = opensmDefaultSL2VL, "opensm's default SL-to-VL map"
	}
	arbitrated := func(vl int) bool {
		if len(ib.VLArbHigh) == 0 && len(ib.VLArbLow) == 0 {
			return true // opensm's default tables serve VL0-14
		}
		for _, t := range [][]spec.VLWeight{ib.VLArbHigh, ib.VLArbLow} {
			for _, w := range t {
				if w.VL == vl && w.Weight > 0 {
					return true
				}
			}
		}
		return false
	}
	check := func(sl int, what string, subject hcl.Range, address string, scopes []spec.LintIgnores) {
		if sl < 0 || sl > 15 {
			return // does not load
		}
		vl := sl2vl[sl]
		switch {
		case vl == 15:
			c.Reportf(Error, subject, address, scopes, "Service level mapped to VL 15 (dropped)",
				"%s uses SL %d, which %s maps to VL 15: VL 15 in an SL-to-VL map means drop, so every packet on SL %d is discarded. Map SL %d to a data VL in sl2vl.",
				what, sl, mapSrc, sl, sl)
		case ib.MaxVLs > 0 && vl >= ib.MaxVLs:
			c.Reportf(Error, subject, address, scopes, "Service level mapped to a VL the ports do not run",
				"%s uses SL %d, which %s maps to VL %d, but max_vls = %d runs VL0..VL%d only: a port discards packets whose SL maps to a VL it does not run. Map SL %d to one of VL0..VL%d, or raise max_vls.",
				what, sl, mapSrc, vl, ib.MaxVLs, ib.MaxVLs-1, sl, ib.MaxVLs-1)
		case !arbitrated(vl):
			c.Reportf(Error, subject, address, scopes, "Service level on a VL without arbitration weight",
				"%s uses SL %d, which %s maps to VL %d, but VL %d has no weight in vl_arb_high or vl_arb_low: the port never transmits it and the traffic stalls. Give VL %d a weight (a multiple of 64 for a 4 KB MTU), or map SL %d to a served VL.",
				what, sl, mapSrc, vl, vl, vl, sl)
		}
	}
	for _, cl := range s.Classes {
		if cl.SL == nil {
			continue
		}
		check(*cl.SL, fmt.Sprintf("class %q", cl.Name), cl.Src.Attr("sl"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore})
	}
	for _, p := range ib.Partitions {
		subj := p.Src.Attr("sl") // the default SL 0 points at the block
		check(p.SL, fmt.Sprintf("partition %q", p.Name), subj, partitionAddress(p), nil)
	}
}

func checkIB4(c *Context) {
	s := c.Spec
	ib := ibFabric(s)
	if ib == nil {
		c.NotApplicable("the fabric has no InfiniBand part")
		return
	}
	f := s.Fabric
	datagram := f.MTU <= 4092 // above, IPoIB runs in connected mode (up to 65520)
	hasDefault := false
	for _, p := range ib.Partitions {
		hasDefault = hasDefault || p.PKey == intent.DefaultPKey
		if p.Rate > 0 {
			if _, ok := intent.IBRateCode(p.Rate); !ok {
				var rates []string
				for _, r := range intent.IBRates() {
					rates = append(rates, r.String())
				}
				c.Reportf(Error, p.Src.Attr("rate"), partitionAddress(p), nil, "Partition rate opensm cannot set",
					"partition %q has rate = %q, but an IPoIB group's rate is an IB rate code and opensm knows %s. Use one of them.",
					p.Name, p.Rate, strings.Join(rates, ", "))
				continue
			}
		}
		if !p.IPoIB {
			continue
		}
		if p.Rate > 0 {
			var slow []string
			for _, m := range p.Members {
				if isPartitionKeyword(m.Endpoint) {
					continue
				}
				h, nics := memberNICs(s, m.Endpoint)
				for _, n := range nics {
					if sp := nicSpeed(c, h, n); sp > 0 && sp < p.Rate {
						slow = append(slow, fmt.Sprintf("%s:%s (%s)", h.Name, n.Name, sp))
					}
				}
			}
			if len(slow) > 0 {
				c.Reportf(Error, p.Src.Attr("rate"), partitionAddress(p), nil, "Partition IPoIB rate above a member's link speed",
					"partition %q's IPoIB group runs at %s, faster than %s: a port slower than a multicast group's rate cannot join it, so IPoIB on this partition never comes up there. Lower rate to the slowest member's speed.",
					p.Name, p.Rate, joinCapped(slow))
			}
		}
		if gm := p.GroupMTU(); datagram && f.MTU > gm-4 {
			c.Reportf(Warning, p.Src.Attr("mtu"), partitionAddress(p), nil, "Partition IPoIB MTU below the fabric's IPoIB MTU",
				"partition %q's IPoIB group MTU is %d, so its datagram-mode IPoIB interfaces get %d (the group MTU minus the 4-byte IPoIB header), not the fabric's mtu = %d. Raise the partition's mtu to %d, or lower the fabric mtu.",
				p.Name, gm, gm-4, f.MTU, ceilIBMTU(f.MTU+4))
		}
	}
	if !hasDefault && datagram && f.MTU > f.RDMAMTU-4 {
		c.Reportf(Warning, f.Src.Attr("mtu"), "fabric", nil, "IPoIB MTU above the default partition's group MTU",
			"The spec declares no default partition (P_Key 0x7fff), so fabctl gives it an IPoIB group MTU of rdma_mtu = %d and datagram-mode ib0 interfaces get %d, not mtu = %d. Raise rdma_mtu, lower mtu to %d, or declare the default partition with its mtu.",
			f.RDMAMTU, f.RDMAMTU-4, f.MTU, f.RDMAMTU-4)
	}
}

// ceilIBMTU is the smallest IB MTU not below m (4096 at most).
func ceilIBMTU(m int) int {
	for _, v := range ibMTUs {
		if v >= m {
			return v
		}
	}
	return ibMTUs[len(ibMTUs)-1]
}

// nicSpeed is a NIC's declared speed, else its link's.
func nicSpeed(c *Context, h *spec.Host, n *spec.NIC) spec.BitRate {
	if n.Speed > 0 {
		return n.Speed
	}
	if l := n.Link(); l != nil {
		return l.Speed
	}
	if l := c.Topo.PortLink(h.Name, n.Name); l != nil {
		return l.Speed
	}
	return 0
}
