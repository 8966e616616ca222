package lint

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/spec"
	"github.com/hashicorp/hcl/v2"
)

const sigcomm2016 = "Guo et al., \"RDMA over Commodity Ethernet at Scale\", SIGCOMM 2016 (doi:10.1145/2934872.2934908)"

const cumulusRoCE = "NVIDIA Cumulus Linux RoCE defaults (https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-510/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE)"

func qosRules() []Rule {
	return []Rule{
		{
			ID:    "QOS-1",
			Title: "Every lossless priority has PFC on both switch ends of every RoCE link",
			Rationale: `PFC is hop by hop: a priority is lossless only if every port on the path pauses its upstream
neighbour when that priority's ingress queue fills and honours the pause frames it receives. One port
whose PFC set lacks the lossless priority (a port or switch pfc override) silently turns the class
lossy at that hop: under incast it drops, and RoCE's go-back-N recovery turns a few drops into a
throughput collapse. QOS-1 checks every switch port at either end of a link against the lossless
classes' priorities; host NICs are checked against the fabric intent by HOST-3, so a NIC override is
reported once.`,
			Reference: sigcomm2016 + " (PFC is hop-by-hop); " + cumulusRoCE + " (PFC on priority 3)",
			Check:     checkQOS1,
		},
		{
			ID:    "QOS-2",
			Title: "Both ends of a link trust the same field; DSCP on routed RoCEv2, PCP on RoCEv1",
			Rationale: `A port classifies received traffic either by DSCP (IP header) or by PCP (802.1Q tag), never both. When
the two ends of a link disagree, one end's RoCE packets arrive at the other without the field it reads
and land on the default priority, where PFC and ECN do not act. DCBX does not carry DSCP maps, so
nothing negotiates this; on mlx5 hosts, trust follows from whether DSCP app entries exist. On a routed
RoCEv2 fabric the PCP bits exist only on tagged frames and are rewritten at every routed hop, which is
why DSCP-based PFC was introduced (SIGCOMM 2016); fabctl warns on trust = "pcp" there. RoCEv1 has no IP
header, so trust = "dscp" cannot classify it at all. A NIC whose trust differs from the fabric is
reported by HOST-3 instead.`,
			Reference: sigcomm2016 + " (DSCP-based PFC); Intel, \"Determining PFC Priority Mode (PCP vs DSCP)\" (https://edc.intel.com/content/www/us/en/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/determining-pfc-priority-mode-pcp-vs-dscp/)",
			Check:     checkQOS2,
		},
		{
			ID:    "QOS-3",
			Title: "One DSCP→priority map everywhere",
			Rationale: `Every device must put a code point on the same priority, or the class changes at each hop: RoCE
that is lossless on the leaf is lossy on the spine, and PFC pauses whatever else shares the priority.
fabctl derives the map from the classes, so it fails in three ways: one DSCP listed in two classes
(the renderer can only honour one); two classes on one priority where one is lossless and the other is
not (PFC is per priority, so both become lossless or neither is); and a brownfield dscp_map entry on a
switch or NIC that differs from the classes. The common default is RoCE DSCP 26 → priority 3, CNP
DSCP 48 → priority 6.`,
			Reference: cumulusRoCE + "; ETS/PFC/DSCP trust quick start (https://kubernetes.recipes/recipes/networking/ets-pfc-dscp-trust-mellanox-quickstart/)",
			Check:     checkQOS3,
		},
		{
			ID:    "QOS-4",
			Title: "With DCQCN, CNPs have their own strict, lossy priority",
			Rationale: `DCQCN reacts to congestion notification packets: the receiver NIC turns ECN marks into CNPs that tell
the sender to slow down. A CNP that waits behind the congested RDMA data, or is paused with it by PFC,
arrives too late, so the sender keeps pushing and PFC storms follow. Vendors therefore give CNPs their
own priority (DSCP 48 → priority 6 on NVIDIA, SONiC and Dell), schedule it strict priority, and keep it
lossy. The rule warns when no class has role "cnp", when the CNP class shares its priority with RDMA data
or a lossless class, when it is not strict, or when it is lossless.`,
			Reference: cumulusRoCE + " (TC6 strict for CNP); NVIDIA Onyx `show roce` (https://docs.nvidia.com/networking/display/onyxv3103004/roce+commands); Zhu et al., \"Congestion Control for Large-Scale RDMA Deployments\" (DCQCN), SIGCOMM 2015",
			Check:     checkQOS4,
		},
		{
			ID:    "QOS-5",
			Title: "At most max_lossless_priorities lossless priorities per port",
			Rationale: `Each lossless priority needs its own PFC headroom on every port, sized for cable length, speed and
MTU, taken out of a shared buffer of 9–12 MB on common datacenter ASICs. Microsoft found room for only
two lossless classes with 300 m cables; Dell N-series switches allow at most two per interface, and
Intel E810 NICs support PFC on one traffic class per port. More lossless priorities than that either
fail to apply or leave headroom too small to be lossless. The limit is fabric.max_lossless_priorities
(default 2).`,
			Reference: sigcomm2016 + "; Dell N-series reference: \"maximum number of lossless priorities per interface is two\" (https://manualshive.com/en/manual/dell/n1100-on/n1100-on_reference-manual_86012-1179.html); Intel E810 \"QoS/Flow Control Limitations on the 800 Series\" (https://edc.intel.com/content/www/us/en/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/qos-flow-control-limitations-on-the-800-series/)",
			Check:     checkQOS5,
		},
		{
			ID:    "QOS-6",
			Title: "PFC and 802.3x global pause are not both enabled on a port or NIC",
			Rationale: `IEEE 802.3x link pause stops all traffic on a link; PFC (802.1Qbb) pauses single priorities. A port
cannot run both: NOSes reject the combination or let one silently win, and NIC drivers need link
pause off before PFC applies (Intel: "LFC and PFC cannot co-exist"). With global pause winning, one
congested lossless class stops every class on the link, including CNPs and control traffic.`,
			Reference: "Nokia SR Linux PFC documentation; Dell N-series PFC commands; Intel E810 flow-control guide, back-to-back PFC example (https://edc.intel.com/content/www/us/en/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/example-1-800-series-800-series-back-to-back-pcp-pfc-with-single-tc/)",
			Check:     checkQOS6,
		},
		{
			ID:    "QOS-7",
			Title: "ETS shares of the non-strict classes sum to 100, and lossless classes get a share",
			Rationale: `ETS divides the bandwidth left after strict-priority traffic between traffic classes by guaranteed
share. Devices require the shares of ETS classes to sum to exactly 100 (the mlx5 driver and Intel E810
reject anything else), so a spec that does not sum to 100 is either rejected or renormalised
differently per vendor. A lossless class with a 0 % share is starved whenever other classes are busy;
its queue stays full, PFC keeps pausing upstream and the pause spreads through the fabric. Classes that
share a priority share one traffic class and must agree on its share. (A CNP class that is not strict is
QOS-4's finding.) A sum other than 100 is an error when a host NIC of the mlx5 family (ConnectX,
BlueField) or an Intel E810 is in the spec, since their drivers refuse it and the host apply fails; a
warning otherwise.`,
			Reference: cumulusRoCE + " (TC3 50 %, TC0 50 %, TC6 strict); torvalds/linux drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c mlx5e_dbcnl_validate_ets (-EINVAL: \"BW sum is illegal\"); drivers/net/ethernet/intel/ice/ice_dcb_lib.c ice_dcb_bwchk (-EINVAL unless the shares total 100)",
			Check:     checkQOS7,
		},
		{
			ID:    "QOS-8",
			Title: "The hosts' RDMA ToS lands in an RDMA class",
			Rationale: `rdma_cm applications take their IP ToS from default_roce_tos (configfs) and NCCL from NCCL_IB_TC;
the switch classifies by the DSCP in that byte (ToS >> 2). If the host's ToS names a code point outside
the RDMA classes, every host-initiated RDMA flow travels in the default class: no PFC, no ECN marking,
no DCQCN, and the fabric's lossless configuration is never used. The usual value is the RDMA class's
DSCP << 2 | ECT(0), e.g. 106 for DSCP 26.`,
			Reference: "RHEL rdma_cm configfs default_roce_tos (TR-1 RHEL source); host-side lossless configuration (https://losslessnetwork.com/learn/host-networking/host-side-lossless); NVIDIA/nccl src/transport/net_ib (NCCL_IB_TC)",
			Check:     checkQOS8,
		},
		{
			ID:    "QOS-9",
			Title: "Lossless classes on OpenConfig switches need PFC configured outside OpenConfig",
			Rationale: `The OpenConfig QoS models have no PFC, PFC watchdog or headroom leaves (only 802.3x flow
control), so the openconfig gNMI driver configures classification, queues, ECN marking, scheduling and
the MTU, and lists PFC, the watchdog and headroom as not expressible in the plan. A port with PFC in the
spec is then lossless on paper only: unless PFC is configured natively on the switch, the lossless class
drops under congestion on that hop. This is a warning per OpenConfig switch whose ports carry PFC. Drive
the switch with its native driver (srlinux has PFC over gNMI; sonic, eos, nxos and cumulus over SSH), or
configure PFC, the watchdog and headroom on the switch by other means and silence the rule with a reason.`,
			Reference: "openconfig/public release/models/qos (no PFC leaves; openconfig/public#1044, 802.3x enable-flow-control only); ../shared/reference/switches.md section 3",
			Check:     checkQOS9,
		},
		ruleQOS10,
	}
}

func checkQOS1(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsRoCE() {
		return
	}
	want := s.LosslessPriorities()
	if len(want) == 0 {
		return
	}
	var g findingGroups
	for _, l := range s.Links {
		a, b := Ends(s, l)
		for _, pair := range [2][2]End{{a, b}, {b, a}} {
			e, peer := pair[0], pair[1]
			if e.Switch == nil {
				continue // a NIC's PFC set is HOST-3's
			}
			have := endPFC(s, e)
			if len(have) >= len(want) && (&have[0] == &want[0] || prioSetEqual(have, want)) {
				continue // the derived set, or an override equal to it
			}
			miss := prioSetMinus(want, have)
			if len(miss) == 0 {
				continue
			}
			o := endPFCOrigin(s, e, l)
			detail := fmt.Sprintf("%s has %s (%s), but %s %s lossless. On priority %s the port neither pauses %s when its ingress queue fills nor honours %s's pause frames, "+
				"so the class drops at this hop under load and RoCE falls back to go-back-N retransmission. "+
				"Add %s to %s, or remove the override so the port takes its PFC set from the classes.",
				e.EP, pfcPhrase(have), o.What, losslessClassNames(s, miss), isAre(len(miss)), joinIntList(miss, ", "), peer.EP, peer.EP, joinIntList(miss, ", "), o.What)
			g.add(c, "missing", Error, "Lossless priority without PFC", o, "ports",
				groupItem{label: e.EP.String(), address: e.Address(), scopes: e.Scopes(l), detail: detail})
		}
	}
	g.flush(c)
}

// pfcPhrase describes a PFC enable set: "PFC off" or "PFC on priorities {3, 4}".
func pfcPhrase(set []int) string {
	if len(set) == 0 {
		return "PFC off"
	}
	return "PFC on priorities " + prioSetString(set)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func checkQOS2(c *Context) {
	s := c.Spec
	t := s.Fabric.Transport
	if !t.IsEthernet() {
		return
	}
	ft := s.Fabric.Trust
	var g findingGroups
	reported := map[hcl.Range]bool{}
	for _, l := range s.Links {
		a, b := Ends(s, l)
		ta, tb := endTrust(s, a), endTrust(s, b)
		if ta == tb {
			continue
		}
		oa, ob := endTrustOrigin(s, a, l), endTrustOrigin(s, b, l)
		// Exactly one end differs from the fabric's trust: that end's override is the cause.
		dev, devT, devO, peer, peerT, peerO := a, ta, oa, b, tb, ob
		if ta == ft {
			dev, devT, devO, peer, peerT, peerO = b, tb, ob, a, ta, oa
		}
		if dev.NIC != nil {
			continue // a NIC trust that differs from the fabric is HOST-3's
		}
		reported[devO.Range] = true
		detail := fmt.Sprintf("%s classifies received traffic by %s (%s) but %s classifies by %s (%s). Traffic that %s classified by %s is queued by %s on whatever priority its %s says (often none: the default priority), so PFC pauses the wrong priority and the lossless class drops. DCBX does not carry DSCP maps, so nothing negotiates this. Set %s to %q.",
			dev.EP, strings.ToUpper(devT), devO.What, peer.EP, strings.ToUpper(peerT), peerO.What, peer.EP, strings.ToUpper(peerT), dev.EP, strings.ToUpper(devT), devO.What, peerT)
		g.add(c, "mismatch", Error, "Trust mode differs across a link", devO, "links",
			groupItem{label: l.A.String() + "--" + l.B.String(), address: dev.Address(), scopes: dev.Scopes(l), detail: detail})
	}
	g.flush(c)

	var bad, sev = "", Warning
	var summary, why string
	switch t {
	case spec.RoCEv2:
		bad, summary = spec.TrustPCP, "PCP trust on a RoCEv2 fabric"
		why = "PCP lives in the 802.1Q tag, which routed RoCEv2 links usually do not carry and every routed hop rewrites, so the class is lost on the way; DSCP travels end to end in the IP header (DSCP-based PFC). Set trust = \"dscp\"."
	case spec.RoCEv1:
		bad, sev, summary = spec.TrustDSCP, Error, "DSCP trust on a RoCEv1 fabric"
		why = "RoCEv1 frames (Ethertype 0x8915) have no IP header and so no DSCP: every RoCE frame lands on the default priority, outside the lossless class. Set trust = \"pcp\" and carry RDMA on a VLAN so the PCP exists."
	default:
		return
	}
	report := func(rng hcl.Range, addr string, scopes []spec.LintIgnores, what string) {
		if reported[rng] {
			return
		}
		c.Reportf(sev, rng, addr, scopes, summary, "%s sets trust = %q. %s", what, bad, why)
	}
	if ft == bad {
		report(s.Fabric.Src.Attr("trust"), "fabric", nil, "The fabric")
	}
	for _, sw := range s.Switches {
		if sw.Trust == bad && sw.Trust != ft {
			report(sw.Src.Attr("trust"), "switch."+sw.Name, []spec.LintIgnores{sw.Ignore}, fmt.Sprintf("switch %q", sw.Name))
		}
		for _, p := range sw.Ports {
			if p.Trust == bad && s.PortTrust(sw, &spec.Port{}) != bad {
				report(p.Src.Attr("trust"), switchPortAddress(sw, p), []spec.LintIgnores{p.Ignore, sw.Ignore}, fmt.Sprintf("port %s:%s", sw.Name, p.Name))
			}
		}
	}
}

func checkQOS3(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	var owner [64]*spec.Class
	var byPrio [8]*spec.Class
	for _, cl := range s.Classes {
		var dups []string
		for _, d := range cl.DSCP {
			if o := owner[d]; o != nil {
				dups = append(dups, fmt.Sprintf("%d (class %q, priority %d)", d, o.Name, o.Priority))
				continue
			}
			owner[d] = cl
		}
		if len(dups) > 0 {
			c.Reportf(Error, cl.Src.Attr("dscp"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "DSCP claimed by two classes",
				"class %q (priority %d) lists DSCP %s, already claimed by another class. A code point maps to one priority; which one a device gets depends on render order, so the classes differ from hop to hop. Keep each code point in one class.",
				cl.Name, cl.Priority, strings.Join(dups, ", "))
		}
		if cl.Priority < 0 || cl.Priority > 7 {
			continue
		}
		if f := byPrio[cl.Priority]; f == nil {
			byPrio[cl.Priority] = cl
		} else if f.Lossless != cl.Lossless {
			ll, lossy := f, cl
			if cl.Lossless {
				ll, lossy = cl, f
			}
			c.Reportf(Error, cl.Src.Attr("priority"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "Lossless and lossy class on one priority",
				"classes %q and %q share priority %d, but %q is lossless and %q is not. PFC works per priority, so %q's traffic is paused too and fills the lossless headroom, or PFC is off and %q drops. Put them on different priorities, or make both the same.",
				f.Name, cl.Name, cl.Priority, ll.Name, lossy.Name, lossy.Name, ll.Name)
		}
	}

	m := s.DSCPMap()
	byDSCP := classOfDSCP(s)
	diff := func(dm map[int]int) []string {
		var out []string
		for _, d := range sortedIntKeys(dm) {
			if d < 0 || d > 63 || dm[d] == m[d] {
				continue
			}
			out = append(out, fmt.Sprintf("DSCP %d → priority %d, but the classes put it on priority %d (%s)", d, dm[d], m[d], dscpClassName(s, byDSCP, d)))
		}
		return out
	}
	const fix = "Every hop must put a code point on the same priority, or the class changes along the path. Remove the entries (the classes define the map) or make them agree."
	for _, sw := range s.Switches {
		if bad := diff(sw.DSCPMap); len(bad) > 0 {
			c.Reportf(Error, sw.Src.Attr("dscp_map"), "switch."+sw.Name, []spec.LintIgnores{sw.Ignore}, "dscp_map differs from the classes",
				"switch %q maps %s. %s", sw.Name, strings.Join(bad, "; "), fix)
		}
	}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			if bad := diff(n.DSCPMap); len(bad) > 0 {
				c.Reportf(Error, n.Src.Attr("dscp_map"), hostNICAddress(h, n), hostNICScopes(h, n), "dscp_map differs from the classes",
					"nic %s:%s maps %s. %s", h.Name, n.Name, strings.Join(bad, "; "), fix)
			}
		}
	}
}

// cnpDSCP is the DSCP mlx5 NICs send CNPs with by default (np_cnp_dscp).
const cnpDSCP = 48

func checkQOS4(c *Context) {
	s := c.Spec
	f := s.Fabric
	if f.Transport != spec.RoCEv2 || f.CongestionControl != spec.CCDCQCN {
		return
	}
	cnps := s.ClassesByRole(spec.RoleCNP)
	if len(cnps) == 0 {
		c.Reportf(Warning, f.Src.Attr("congestion_control"), "fabric", nil, "DCQCN without a CNP class",
			"congestion_control = %q, but no class has role = \"cnp\". NICs send CNPs with DSCP %d by default, which here lands in %s, queued behind the traffic being throttled, so rate reductions arrive late. "+
				"Add class \"cnp\" { role = \"cnp\", priority = 6, dscp = [48], strict = true }.",
			f.CongestionControl, cnpDSCP, describeDSCP(s, classOfDSCP(s), cnpDSCP))
		return
	}
	for _, cnp := range cnps {
		sc := []spec.LintIgnores{cnp.Ignore}
		var shared []string
		for _, cl := range s.Classes {
			if cl != cnp && cl.Priority == cnp.Priority && (cl.Role == spec.RoleRDMA || cl.Lossless) {
				shared = append(shared, fmt.Sprintf("%q (%s%s)", cl.Name, cl.Role, classLosslessNote(cl)))
			}
		}
		if len(shared) > 0 {
			c.Reportf(Warning, cnp.Src.Attr("priority"), trafficClassAddress(cnp), sc, "CNP class shares a priority with RDMA data",
				"CNP class %q is on priority %d together with class %s. CNPs then wait behind (or are paused with) the very data whose congestion they report, and DCQCN reacts too late. Give the CNP class a priority of its own (6 is the common choice).",
				cnp.Name, cnp.Priority, strings.Join(shared, ", "))
		}
		if !cnp.Strict {
			c.Reportf(Warning, cnp.Src.Attr("strict"), trafficClassAddress(cnp), sc, "CNP class is not strict priority",
				"CNP class %q is scheduled by ETS (bandwidth %d%%), so under load its CNPs wait for their share behind other traffic. CNPs are tiny and latency-critical: set strict = true (and drop bandwidth).",
				cnp.Name, cnp.Bandwidth)
		}
		if cnp.Lossless {
			c.Reportf(Warning, cnp.Src.Attr("lossless"), trafficClassAddress(cnp), sc, "CNP class is lossless",
				"CNP class %q is lossless, so PFC can pause CNPs exactly when the fabric is congested, and its headroom counts against the lossless priorities (QOS-5). A lost CNP costs nothing; set lossless = false.", cnp.Name)
		}
	}
}

func checkQOS5(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	max := s.Fabric.MaxLosslessPriorities
	limitNote := fmt.Sprintf("max_lossless_priorities is %d", max)
	if s.Fabric.Src.Has("max_lossless_priorities") {
		limitNote = fmt.Sprintf("fabric max_lossless_priorities is %d", max)
	} else {
		limitNote += " (default)"
	}
	const why = "Each lossless priority needs its own PFC headroom on every port; shallow datacenter buffers hold it for about two (SIGCOMM 2016), and many switches allow no more than two per interface."
	all := s.LosslessPriorities()
	if len(all) > max {
		seen := map[int]bool{}
		for _, cl := range s.Lossless() {
			if seen[cl.Priority] {
				continue
			}
			seen[cl.Priority] = true
			if len(seen) == max+1 {
				c.Reportf(Warning, cl.Src.Attr("lossless"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "Too many lossless priorities",
					"The lossless classes use %d priorities %s (%s), and every port and NIC gets PFC on all of them, but %s. %s Merge lossless classes onto fewer priorities, or raise max_lossless_priorities if every platform's buffer allows it (see BUF-2).",
					len(all), prioSetString(all), losslessClassNames(s, all), limitNote, why)
				break
			}
		}
	}
	over := func(rng hcl.Range, addr string, scopes []spec.LintIgnores, what string, set []int) {
		c.Reportf(Warning, rng, addr, scopes, "Too many lossless priorities",
			"%s enables PFC on %d priorities %s, but %s. %s Reduce the set to the lossless classes' priorities %s.", what, len(set), prioSetString(set), limitNote, why, prioSetString(all))
	}
	for _, sw := range s.Switches {
		if len(sw.PFC) > max {
			over(sw.Src.Attr("pfc"), "switch."+sw.Name, []spec.LintIgnores{sw.Ignore}, fmt.Sprintf("switch %q", sw.Name), sw.PFC)
		}
		for _, p := range sw.Ports {
			if len(p.PFC) > max {
				over(p.Src.Attr("pfc"), switchPortAddress(sw, p), []spec.LintIgnores{p.Ignore, sw.Ignore}, fmt.Sprintf("port %s:%s", sw.Name, p.Name), p.PFC)
			}
		}
	}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			if len(n.PFC) > max {
				over(n.Src.Attr("pfc"), hostNICAddress(h, n), hostNICScopes(h, n), fmt.Sprintf("nic %s:%s", h.Name, n.Name), n.PFC)
				continue
			}
			if pfc := s.NICPFC(n); n.Model == "e810" && len(pfc) > 1 {
				what := fmt.Sprintf("nic %s:%s", h.Name, n.Name)
				c.Reportf(Warning, n.Src.Attr("pfc"), hostNICAddress(h, n), hostNICScopes(h, n), "Too many lossless priorities for the NIC",
					"%s is an Intel E810, which supports PFC on only one traffic class per port, but gets PFC on %d priorities %s. The driver rejects the configuration or enables PFC on one of them only. Keep one lossless priority for these hosts.",
					what, len(pfc), prioSetString(pfc))
			}
		}
	}
}

func checkQOS6(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	const why = "IEEE 802.3x global pause and PFC cannot run on the same port: the device rejects the pair or one silently wins, and with link pause a single congested class stops every class on the link, CNPs included. Set pause = false."
	for _, sw := range s.Switches {
		for _, p := range sw.Ports {
			if !p.Pause {
				continue
			}
			if pfc := s.PortPFC(sw, p); len(pfc) > 0 {
				c.Reportf(Error, p.Src.Attr("pause"), switchPortAddress(sw, p), []spec.LintIgnores{p.Ignore, sw.Ignore}, "PFC and global pause on one port",
					"port %s:%s has pause = true and PFC on priorities %s. %s", sw.Name, p.Name, prioSetString(pfc), why)
			}
		}
	}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			if pfc := s.NICPFC(n); n.Pause && len(pfc) > 0 {
				c.Reportf(Error, n.Src.Attr("pause"), hostNICAddress(h, n), hostNICScopes(h, n), "PFC and global pause on one NIC",
					"nic %s:%s has pause = true and PFC on priorities %s. %s", h.Name, n.Name, prioSetString(pfc), why)
			}
		}
	}
}

func checkQOS7(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	var tc [8]*spec.Class
	sum := 0
	var last *spec.Class
	var parts []string
	for _, cl := range s.Classes {
		if cl.Strict || cl.Priority < 0 || cl.Priority > 7 {
			continue
		}
		if f := tc[cl.Priority]; f != nil {
			if cl.Bandwidth != f.Bandwidth {
				c.Reportf(Warning, cl.Src.Attr("bandwidth"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "Classes on one priority disagree on bandwidth",
					"classes %q and %q share priority %d, which is one ETS traffic class, but give bandwidth %d%% and %d%%. The traffic class gets %d%% (from %q). Give both the same share.",
					f.Name, cl.Name, cl.Priority, f.Bandwidth, cl.Bandwidth, f.Bandwidth, f.Name)
			}
			continue
		}
		tc[cl.Priority] = cl
		sum += cl.Bandwidth
		last = cl
		parts = append(parts, fmt.Sprintf("%q (priority %d) %d%%", cl.Name, cl.Priority, cl.Bandwidth))
	}
	if last != nil && sum != 100 {
		// The NIC drivers refuse the setting outright: mlx5
		// (drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c,
		// mlx5e_dbcnl_validate_ets: "Failed to validate ETS: BW sum is
		// illegal", -EINVAL when the ETS traffic classes' tc_tx_bw do not
		// sum to 100) and ice (drivers/net/ethernet/intel/ice/ice_dcb_lib.c,
		// ice_dcb_bwchk: -EINVAL unless the shares total 100). With such a
		// NIC in the spec the host apply fails, so the rule is an error;
		// switches alone renormalise, a warning.
		sev, refusers := Warning, etsStrictNICs(s)
		tail := "Devices need exactly 100 (mlx5 and Intel E810 reject other sums; switches renormalise each their own way)."
		if len(refusers) > 0 {
			sev = Error
			tail = fmt.Sprintf("The host NICs %s refuse it: their drivers (mlx5, ice) return EINVAL for ETS shares that do not sum to 100, so the host apply would fail.", strings.Join(refusers, ", "))
		}
		c.Reportf(sev, last.Src.Attr("bandwidth"), trafficClassAddress(last), []spec.LintIgnores{last.Ignore}, "ETS shares do not sum to 100",
			"The ETS (non-strict) classes get %s: %d%% in all. %s Adjust the bandwidth values to sum to 100.",
			strings.Join(parts, ", "), sum, tail)
	}
	for _, cl := range s.Classes {
		if cl.Lossless && !cl.Strict && cl.Bandwidth == 0 {
			c.Reportf(Warning, cl.Src.Attr("bandwidth"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "Lossless class without a bandwidth share",
				"class %q is lossless and scheduled by ETS with bandwidth 0%%: whenever other classes are busy it is starved, its queue stays full, and PFC keeps pausing upstream until the pause spreads (or the PFC watchdog drops it). Give it a share (50%% is the common RoCE split).",
				cl.Name)
		}
	}
}

// etsStrictNICs lists (at most three, then a count) the host NICs whose
// driver refuses ETS shares that do not sum to 100: the mlx5 family and
// Intel E810 (ice); see checkQOS7.
func etsStrictNICs(s *spec.Spec) []string {
	var out []string
	n := 0
	for _, h := range s.Hosts {
		for _, nic := range h.NICs {
			switch nic.Model {
			case "connectx-6", "connectx-6dx", "connectx-7", "connectx-8", "bluefield-2", "bluefield-3", "e810":
			default:
				continue
			}
			n++
			if len(out) < 3 {
				out = append(out, fmt.Sprintf("%s:%s (%s)", h.Name, nic.Name, nic.Model))
			}
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("%d more", n-len(out)))
	}
	return out
}

func checkQOS8(c *Context) {
	s := c.Spec
	t := s.Fabric.Transport
	if t != spec.RoCEv2 && t != spec.IWARP {
		return
	}
	var rdma []*spec.Class
	var codes []string
	for _, cl := range s.ClassesByRole(spec.RoleRDMA) {
		if len(cl.DSCP) > 0 {
			rdma = append(rdma, cl)
			codes = append(codes, fmt.Sprintf("%q: DSCP %s", cl.Name, joinIntList(cl.DSCP, ", ")))
		}
	}
	if len(rdma) == 0 {
		return
	}
	ok := func(tos int) bool {
		for _, cl := range rdma {
			if classHasDSCP(cl, tos>>2) {
				return true
			}
		}
		return false
	}
	right := rdma[0].DSCP[0]<<2 | 0b10
	byDSCP := classOfDSCP(s)
	detail := func(who string, tos int, o settingOrigin) string {
		return fmt.Sprintf("%s uses ToS %d (%s) for rdma_cm (default_roce_tos) and NCCL (NCCL_IB_TC). Its DSCP is %d (ToS >> 2), which lands in %s, not in an RDMA class (%s): RDMA connections %s opens travel without PFC or ECN. Set rdma_tos = %d (DSCP %d << 2 | ECT(0)).",
			who, tos, o.What, tos>>2, describeDSCP(s, byDSCP, tos>>2), strings.Join(codes, "; "), who, right, rdma[0].DSCP[0])
	}
	var g findingGroups
	for _, h := range s.Hosts {
		tos, explicit := s.HostTos(h)
		if !explicit || ok(tos) {
			continue
		}
		o := hostTosOrigin(s, h)
		g.add(c, "tos", Warning, "RDMA ToS outside the RDMA classes", o, "hosts",
			groupItem{label: h.Name, address: "host." + h.Name, scopes: []spec.LintIgnores{h.Ignore}, detail: detail(fmt.Sprintf("host %q", h.Name), tos, o)})
	}
	if tos, explicit := s.HostTos(nil); explicit && len(s.Hosts) == 0 && !ok(tos) {
		o := hostTosOrigin(s, nil)
		c.Reportf(Warning, o.Range, "fabric", nil, "RDMA ToS outside the RDMA classes", "%s", detail("The fabric", tos, o))
	}
	g.flush(c)
}

func checkQOS9(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	for _, sw := range s.Switches {
		plat := s.PlatformOf(sw)
		if plat.Limits.NoPFC == "" {
			continue
		}
		var ports []string
		for _, p := range sw.Ports {
			if len(s.PortPFC(sw, p)) > 0 {
				ports = append(ports, p.Name)
			}
		}
		if len(ports) == 0 {
			continue
		}
		what := "PFC and the PFC watchdog"
		if sw.Buffer != nil && sw.Buffer.Headroom > 0 {
			what = "PFC, the PFC watchdog and the buffer headroom"
		}
		c.Reportf(Warning, sw.Src.Attr("platform"), switchAddress(sw), []spec.LintIgnores{sw.Ignore}, "PFC is not expressible in "+plat.Title,
			"switch %s has PFC on %s (%s), but the %s driver cannot configure %s: %s. Those ports are lossless only if PFC "+
				"is configured natively on the switch; if it is, silence QOS-9 here with a reason.",
			sw.Name, plural(len(ports), "port"), capList(ports, 8), sw.Platform, what, plat.Limits.NoPFC)
	}
}
