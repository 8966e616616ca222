package lint

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// roceV2Port is the IANA UDP destination port of RoCEv2.
const roceV2Port = 4791

func transportRules() []Rule {
	return []Rule{
		{
			ID:    "TR-1",
			Title: "RoCEv1 runs in one L2 domain: no routed switch, hosts in one subnet",
			Rationale: `RoCEv1 is an Ethernet link-layer protocol (Ethertype 0x8915) with a GRH but no IP header: a router
neither forwards nor re-writes it, so two hosts can talk RoCEv1 only when a chain of bridges connects
them. A switch set to forwarding = "routed" in a RoCEv1 fabric cuts the fabric into islands. Hosts must
also share an IP subnet: rdma_cm resolves an off-subnet peer through its gateway, addresses the RoCEv1
frames to the router's MAC, and the router drops them. Use RoCEv2 when the fabric is routed.`,
			Reference: "RoCE overview (mirror http://piglix.com/piglix/RDMA_over_Converged_Ethernet); RHEL networking guide, RoCE section (mirror https://d2bhdhkti9t3uj.cloudfront.net/html/d416aded-5982-4f0e-97d5-d61eb08b0e35/3dac9bbd8f6f18361045e903179e1281.html)",
			Check:     checkTR1,
		},
		{
			ID:    "TR-2",
			Title: "RoCEv2 reaches every hop: UDP 4791 not denied, RDMA and CNP DSCP not remarked",
			Rationale: `RoCEv2 data and CNPs are UDP datagrams to port 4791. An ACL whose first matching entry denies
UDP 4791 black-holes RDMA while TCP keeps working, which looks like an application bug. Remarking is
just as quiet: a switch that rewrites the RDMA class's DSCP (for example to 0 at a trust boundary)
moves every later hop's RoCE traffic into a lossy queue without ECN, so PFC and DCQCN act on the wrong
queue; rewriting the CNP DSCP delays congestion notifications behind bulk traffic. ACL entries are
evaluated in spec order, first match wins.`,
			Reference: "NVIDIA WinOF RoCEv2 UDP port (https://docs.nvidia.com/networking/display/winofv55054000/roce+v2+udp+port); IBTA Annex A17 RoCEv2; RoCE overview (TR-1 sources)",
			Check:     checkTR2,
		},
		{
			ID:    "TR-3",
			Title: "iWARP does not need lossless classes or PFC",
			Rationale: `iWARP runs over TCP, which recovers losses and has its own flow control; Intel's E810 guide calls
Ethernet flow control optional for iWARP. A lossless class or PFC enable set kept only for iWARP still
costs headroom on every port (per lossless priority, sized for cable length and speed) and brings PFC's
risks (pause storms, head-of-line blocking, deadlock) for little gain. When PFC is wanted anyway, Intel
irdma in iWARP mode enables it only with a VLAN fully configured on the RDMA interface, because the
priority travels in the 802.1Q tag.`,
			Reference: "Intel Ethernet 800 Series Linux Flow Control Configuration Guide for RDMA, \"Flow Control in RDMA Networks\" (https://edc.intel.com/content/www/us/en/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/flow-control-in-rdma-networks/)",
			Check:     checkTR3,
		},
		{
			ID:    "TR-4",
			Title: "InfiniBand has no DSCP, PFC, ECN or trust settings, and needs a subnet manager",
			Rationale: `InfiniBand links are lossless by credit-based link-level flow control; traffic is classified by
service level (SL) and virtual lane (SL2VL, VL arbitration), not by DSCP or PCP, and congestion
control is IB CCA configured through the subnet manager. DSCP maps, PFC sets, ECN profiles, trust
modes, 802.3x pause and a PFC watchdog written into an InfiniBand spec are never applied and mislead
the reader about how the fabric behaves. Without a subnet manager no port leaves INIT: LIDs, routes
and partitions all come from it.`,
			Reference: "Understanding RoCEv2, IB vs RoCE comparison (https://losslessnetwork.com/learn/roce-v2/understanding-rocev2); linux-rdma/opensm doc/QoS_management_in_OpenSM.txt",
			Check:     checkTR4,
		},
		{
			ID:    "TR-5",
			Title: "RoCEv2 has some flow control: a lossless class or ECN-based congestion control",
			Rationale: `RoCEv2 rides on UDP and its go-back-N recovery collapses under loss. A fabric with neither PFC (no
lossless class) nor ECN-based congestion control (DCQCN, ECN-only) drops under the first incast.
Intel irdma goes further: in RoCEv2 mode with no flow control detected it deliberately de-tunes itself
for lower, loss-tolerant performance.`,
			Reference: "Intel Ethernet 800 Series Linux Flow Control Configuration Guide for RDMA, \"Flow Control in RDMA Networks\" and \"QoS/Flow Control Limitations\" (https://edc.intel.com/content/www/us/en/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/flow-control-in-rdma-networks/)",
			Check:     checkTR5,
		},
	}
}

func checkTR1(c *Context) {
	s := c.Spec
	if s.Fabric.Transport != spec.RoCEv1 {
		return
	}
	// Connected components of the link graph (union-find over devices).
	idx := make(map[string]int, len(s.Switches)+len(s.Hosts))
	for i, sw := range s.Switches {
		idx[sw.Name] = i
	}
	for i, h := range s.Hosts {
		idx[h.Name] = len(s.Switches) + i
	}
	parent := make([]int, len(idx))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, l := range s.Links {
		a, b := find(idx[l.A.Node]), find(idx[l.B.Node])
		if a != b {
			parent[a] = b
		}
	}

	// Host NICs per component, with their subnets.
	type nicNet struct {
		h    *spec.Host
		n    *spec.NIC
		nets []netip.Prefix
	}
	comp := map[int][]nicNet{}
	for _, l := range s.Links {
		for _, ep := range []spec.Endpoint{l.A, l.B} {
			if ep.Kind != spec.KindHost {
				continue
			}
			h := s.Host(ep.Node)
			n := h.NIC(ep.Port)
			nn := nicNet{h: h, n: n}
			for _, p := range n.Addresses {
				nn.nets = append(nn.nets, p.Masked())
			}
			r := find(idx[h.Name])
			comp[r] = append(comp[r], nn)
		}
	}

	for i, sw := range s.Switches {
		if sw.Forwarding != spec.Routed {
			continue
		}
		nics := comp[find(i)]
		if len(nics) == 0 {
			continue // carries no host traffic
		}
		c.Reportf(Error, sw.Src.Attr("forwarding"), "switch."+sw.Name, []spec.LintIgnores{sw.Ignore}, "Routed switch in a RoCEv1 fabric",
			"switch %q has forwarding = %q, but the fabric runs RoCEv1 (Ethertype 0x8915, no IP header), which a router does not forward. "+
				"RoCEv1 between the host NICs on either side of it (%d in its part of the fabric: %s) cannot cross it. Set forwarding = %q, or use transport = \"rocev2\" for a routed fabric.",
			sw.Name, sw.Forwarding, len(nics), nicLabels(nics, func(x nicNet) string { return x.h.Name + ":" + x.n.Name }), spec.Bridged)
	}

	// One subnet per L2 domain: flag NICs outside the domain's most common subnet.
	for _, nics := range comp {
		count := map[netip.Prefix]int{}
		var order []netip.Prefix
		for _, x := range nics {
			for _, p := range x.nets {
				if count[p] == 0 {
					order = append(order, p)
				}
				count[p]++
			}
		}
		if len(order) < 2 {
			continue
		}
		major := order[0]
		for _, p := range order {
			if count[p] > count[major] {
				major = p
			}
		}
		var inMajor []string
		for _, x := range nics {
			for _, p := range x.nets {
				if p == major {
					inMajor = append(inMajor, x.h.Name+":"+x.n.Name)
					break
				}
			}
		}
		for _, x := range nics {
			if len(x.nets) == 0 {
				continue
			}
			in := false
			var mine []string
			for _, p := range x.nets {
				in = in || p == major
				mine = append(mine, p.String())
			}
			if in {
				continue
			}
			c.Reportf(Error, x.n.Src.Attr("addresses"), hostNICAddress(x.h, x.n), hostNICScopes(x.h, x.n), "RoCEv1 host outside the L2 domain's subnet",
				"nic %s:%s is in %s, but the other RoCEv1 NICs of its L2 domain are in %s (%s). rdma_cm reaches a peer outside its own subnet through the gateway, addressing RoCEv1 frames to the router's MAC, and the router drops them. "+
					"Give every NIC of the domain an address in one subnet (not per-host /31s), or use RoCEv2.",
				x.h.Name, x.n.Name, strings.Join(mine, ", "), major, joinCapped(inMajor))
		}
	}
}

func nicLabels[T any](xs []T, name func(T) string) string {
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = name(x)
	}
	return joinCapped(names)
}

// aclMatchesRoCE reports whether an ACL entry matches RoCEv2 (UDP dst 4791).
func aclMatchesRoCE(a *spec.ACL) bool {
	if a.Protocol != "udp" && a.Protocol != "any" {
		return false
	}
	if len(a.DstPorts) == 0 {
		return true
	}
	for _, r := range a.DstPorts {
		if r.Contains(roceV2Port) {
			return true
		}
	}
	return false
}

func checkTR2(c *Context) {
	s := c.Spec
	if s.Fabric.Transport != spec.RoCEv2 {
		return
	}
	byDSCP := classOfDSCP(s)
	for _, sw := range s.Switches {
		scopes := []spec.LintIgnores{sw.Ignore}
		for _, a := range sw.ACLs {
			if !aclMatchesRoCE(a) {
				continue
			}
			if a.Action == "deny" {
				subj := a.Src.Attr("dst_ports")
				match := "every destination port"
				if a.Src.Has("dst_ports") {
					var r []string
					for _, p := range a.DstPorts {
						if p.From == p.To {
							r = append(r, fmt.Sprint(p.From))
						} else {
							r = append(r, fmt.Sprintf("%d-%d", p.From, p.To))
						}
					}
					match = "destination ports " + strings.Join(r, ", ")
				} else if a.Src.Has("protocol") {
					subj = a.Src.Attr("protocol")
				}
				quiet, fix := "", "Add a permit for UDP 4791 before it."
				if a.Protocol == "udp" {
					quiet = " while TCP still works"
				}
				if a.Src.Has("dst_ports") {
					fix = "Exclude 4791 from its dst_ports, or add a permit for UDP 4791 before it."
				}
				c.Reportf(Error, subj, "switch."+sw.Name+".acl."+a.Name, scopes, "ACL denies RoCEv2 (UDP 4791)",
					"switch %q acl %q denies protocol %s, %s, and is the first entry that matches RoCEv2 (UDP destination port 4791): RDMA data and CNPs through %s are dropped%s. %s",
					sw.Name, a.Name, a.Protocol, match, sw.Name, quiet, fix)
			}
			break // first match decides
		}
		var bad []string
		for _, from := range sortedIntKeys(sw.RemarkDSCP) {
			to := sw.RemarkDSCP[from]
			cl := byDSCP[from]
			if cl == nil || (cl.Role != spec.RoleRDMA && cl.Role != spec.RoleCNP) || classHasDSCP(cl, to) {
				continue
			}
			bad = append(bad, fmt.Sprintf("DSCP %d → %d (class %q, %s, priority %d%s → %s)", from, to, cl.Name, cl.Role, cl.Priority, classLosslessNote(cl), describeDSCP(s, byDSCP, to)))
		}
		if len(bad) > 0 {
			c.Reportf(Error, sw.Src.Attr("remark_dscp"), "switch."+sw.Name, scopes, "Switch remarks RDMA or CNP DSCP",
				"switch %q rewrites %s. Every hop after %s classifies these packets by the new code point, so RoCE lands in a queue without PFC or ECN and CNPs queue behind bulk traffic. "+
					"Remove the entries, or remark only within the class's own code points.",
				sw.Name, strings.Join(bad, "; "), sw.Name)
		}
	}
}

func classLosslessNote(c *spec.Class) string {
	if c.Lossless {
		return ", lossless"
	}
	return ""
}

// intelIRDMA reports whether a NIC model is driven by Intel irdma.
func intelIRDMA(model string) bool { return model == "e810" || model == "x722" }

func checkTR3(c *Context) {
	s := c.Spec
	if s.Fabric.Transport != spec.IWARP {
		return
	}
	const why = "iWARP runs over TCP, which recovers losses itself, so PFC is optional (Intel: \"Ethernet flow control is optional, but can be beneficial for iWARP\"); a lossless priority still costs PFC headroom on every port that enables it and brings pause storms and head-of-line blocking with it."
	for _, cl := range s.Lossless() {
		c.Reportf(Warning, cl.Src.Attr("lossless"), trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "Lossless class on an iWARP fabric",
			"class %q is lossless (PFC on priority %d). "+why+" Set lossless = false unless the fabric also carries RoCE or FCoE; with Intel E810/X722 NICs, PFC for iWARP additionally needs a VLAN on the RDMA interface.",
			cl.Name, cl.Priority)
	}
	for _, sw := range s.Switches {
		if len(sw.PFC) > 0 {
			c.Reportf(Warning, sw.Src.Attr("pfc"), "switch."+sw.Name, []spec.LintIgnores{sw.Ignore}, "PFC enabled on an iWARP fabric",
				"switch %q enables PFC on priorities %s for every port. "+why+" Remove pfc or set pfc = [].", sw.Name, prioSetString(sw.PFC))
		}
		for _, p := range sw.Ports {
			if len(p.PFC) > 0 {
				c.Reportf(Warning, p.Src.Attr("pfc"), switchPortAddress(sw, p), []spec.LintIgnores{p.Ignore, sw.Ignore}, "PFC enabled on an iWARP fabric",
					"port %s:%s enables PFC on priorities %s. "+why+" Remove pfc or set pfc = [].", sw.Name, p.Name, prioSetString(p.PFC))
			}
		}
	}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			pfc := s.NICPFC(n)
			switch {
			case n.PFC != nil && len(n.PFC) > 0:
				c.Reportf(Warning, n.Src.Attr("pfc"), hostNICAddress(h, n), hostNICScopes(h, n), "PFC enabled on an iWARP fabric",
					"nic %s:%s enables PFC on priorities %s. "+why+"%s Remove pfc or set pfc = [].", h.Name, n.Name, prioSetString(n.PFC), intelVLANNote(n))
			case len(pfc) > 0 && intelIRDMA(n.Model) && n.VLAN == 0:
				c.Reportf(Warning, n.Src.Attr("vlan"), hostNICAddress(h, n), hostNICScopes(h, n), "Intel iWARP with PFC needs a VLAN",
					"nic %s:%s (%s) gets PFC on priorities %s from the lossless classes but has no vlan: Intel irdma in iWARP mode requires a VLAN fully configured to enable PFC, so the NIC neither sends nor honours pause for this traffic. Set vlan = N on the NIC (and tag the switch port), or make the classes lossy.",
					h.Name, n.Name, n.Model, prioSetString(pfc))
			}
		}
	}
}

func intelVLANNote(n *spec.NIC) string {
	if intelIRDMA(n.Model) && n.VLAN == 0 {
		return " This NIC is Intel irdma with no vlan: iWARP mode enables PFC only with a VLAN configured, so the setting has no effect as written."
	}
	return ""
}

func checkTR4(c *Context) {
	s := c.Spec
	f := s.Fabric
	if f.Transport != spec.InfiniBand {
		if ib := s.InfiniBand; ib != nil {
			c.Reportf(Error, ib.Src.Block, "infiniband", nil, "InfiniBand settings on an Ethernet fabric",
				"The fabric's transport is %q, but the spec has an infiniband block (subnet manager, partitions, SL-to-VL): none of it is applied to an Ethernet fabric. Remove the block, or set transport = \"infiniband\" on the fabric.", f.Transport)
		}
		return
	}
	const cbfc = "InfiniBand links are lossless by credit-based flow control and classify by SL/VL, not by DSCP, PCP or PFC; "
	for _, cl := range s.Classes {
		sc := []spec.LintIgnores{cl.Ignore}
		if len(cl.DSCP) > 0 {
			c.Reportf(Error, cl.Src.Attr("dscp"), trafficClassAddress(cl), sc, "DSCP on an InfiniBand fabric",
				cbfc+"class %q's dscp is never applied. Remove dscp and select the class by sl (and the infiniband sl2vl map).", cl.Name)
		}
		if cl.Lossless {
			c.Reportf(Error, cl.Src.Attr("lossless"), trafficClassAddress(cl), sc, "PFC class on an InfiniBand fabric",
				cbfc+"class %q's lossless = true asks for PFC, which InfiniBand does not have: every IB class is already lossless. Remove lossless.", cl.Name)
		}
		if cl.ECN != nil {
			c.Reportf(Error, cl.ECN.Src.Block, trafficClassAddress(cl), sc, "ECN profile on an InfiniBand fabric",
				cbfc+"class %q's ecn block configures RED/ECN marking of IP headers, which IB packets do not have (IB congestion control marks FECN in the BTH and is configured through the subnet manager). Remove the ecn block.", cl.Name)
		}
	}
	if f.Src.Has("trust") {
		c.Reportf(Error, f.Src.Attr("trust"), "fabric", nil, "Trust mode on an InfiniBand fabric", cbfc+"trust = %q is never applied. Remove it.", f.Trust)
	}
	if wd := f.PFCWatchdog; wd.Src.Block != f.Src.Block {
		c.Reportf(Error, wd.Src.Block, "fabric", nil, "PFC watchdog on an InfiniBand fabric", cbfc+"there is no PFC to watch. Remove the pfc_watchdog block.")
	}
	if f.Src.Has("congestion_control") && f.CongestionControl != spec.CCNone {
		c.Reportf(Error, f.Src.Attr("congestion_control"), "fabric", nil, "Ethernet congestion control on an InfiniBand fabric",
			cbfc+"congestion_control = %q names an Ethernet scheme (DCQCN, ECN, PFC). IB congestion control (CCA) is configured in the subnet manager. Remove it or set \"none\".", f.CongestionControl)
	}
	for _, sw := range s.Switches {
		sc := []spec.LintIgnores{sw.Ignore}
		for _, attr := range []string{"pfc", "trust", "dscp_map", "remark_dscp"} {
			if sw.Src.Has(attr) {
				c.Reportf(Error, sw.Src.Attr(attr), "switch."+sw.Name, sc, "Ethernet QoS setting on an InfiniBand fabric",
					cbfc+"switch %q's %s is never applied. Remove it.", sw.Name, attr)
			}
		}
		for _, p := range sw.Ports {
			for _, attr := range []string{"pfc", "trust", "pause", "pfc_watchdog"} {
				if p.Src.Has(attr) {
					c.Reportf(Error, p.Src.Attr(attr), switchPortAddress(sw, p), []spec.LintIgnores{p.Ignore, sw.Ignore}, "Ethernet QoS setting on an InfiniBand fabric",
						cbfc+"port %s:%s's %s is never applied. Remove it.", sw.Name, p.Name, attr)
				}
			}
		}
	}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			for _, attr := range []string{"pfc", "trust", "dscp_map", "ecn", "pause"} {
				if n.Src.Has(attr) {
					c.Reportf(Error, n.Src.Attr(attr), hostNICAddress(h, n), hostNICScopes(h, n), "Ethernet QoS setting on an InfiniBand fabric",
						cbfc+"nic %s:%s's %s is never applied. Remove it.", h.Name, n.Name, attr)
				}
			}
		}
	}
	switch ib := s.InfiniBand; {
	case ib == nil:
		c.Reportf(Error, f.Src.Attr("transport"), "fabric", nil, "InfiniBand fabric without a subnet manager",
			"transport = \"infiniband\" but the spec has no infiniband block. Without a subnet manager no port leaves INIT: LIDs, routes and partitions come from it. Add infiniband { subnet_manager = \"<host running opensm>\" }.")
	case ib.SubnetManager == "":
		c.Reportf(Error, ib.Src.Block, "infiniband", nil, "InfiniBand fabric without a subnet manager",
			"The infiniband block names no subnet_manager. Without a subnet manager no port leaves INIT: LIDs, routes and partitions come from it. Set subnet_manager = \"<host running opensm>\".")
	}
}

func checkTR5(c *Context) {
	s := c.Spec
	f := s.Fabric
	if f.Transport != spec.RoCEv2 || len(s.Lossless()) > 0 {
		return
	}
	if f.CongestionControl != spec.CCNone && f.CongestionControl != spec.CCPFCOnly {
		return
	}
	c.Reportf(Warning, f.Src.Attr("congestion_control"), "fabric", nil, "RoCEv2 without flow control",
		"The fabric runs RoCEv2 with congestion_control = %q and no lossless class: nothing slows a sender before the switch drops, and RoCE's go-back-N recovery collapses under loss. Intel irdma detects the missing flow control and de-tunes itself. "+
			"Make the RDMA class lossless (PFC), or set congestion_control = \"dcqcn\" with an ECN profile on the RDMA class.", f.CongestionControl)
}
