package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// InfiniBand cabling rules: the switches (platform "infiniband") and the
// links to them. Two ends that disagree on the rate and a port cabled
// twice do not load (spec: "Speed mismatch", "Endpoint used twice").
func ibFabricRules() []Rule {
	return []Rule{
		{
			ID:    "IB-5",
			Title: "InfiniBand cables fit the switches: numbered ports within the port count, a width and a speed on every link",
			Rationale: `An InfiniBand switch numbers its ports 1..N (ibnetdiscover, opensm and ibsim all do), so a cable on
port 0, on a port past the switch's port count or on a named port cannot exist. Every cable to an
InfiniBand switch states its width (4x) and speed (HDR): validate compares the trained link with
them and reports a link that came up narrower or slower (a bad cable or optic), which it can only do
when the spec says what the link should be. Two adapters cabled back to back need a subnet manager
on one of them and are not a fabric fabctl reads back.`,
			Reference: "IBA 14.2.5.6 (PortInfo LinkWidthActive, LinkSpeedActive); ibnetdiscover(8)",
			Check:     checkIB5,
		},
		{
			ID:    "IB-6",
			Title: "The InfiniBand fabric carries the partitions and QoS: members cabled, SL2VL within the switches' VLs, partition MTUs within rdma_mtu",
			Rationale: `When the spec cables an InfiniBand fabric, a partition member whose NIC has no cable to it is a port
opensm never sees: the partition is silently smaller than the spec. The SL2VL table may only use VLs
every switch port runs (a switch's vls, 8 by default; max_vls when set): a packet on an SL mapped to a
VL the port does not run is dropped. A partition MTU above the fabric's rdma_mtu (the MTU the links run)
is an IPoIB group no port can join at that size.`,
			Reference: "opensm(8) PARTITION CONFIGURATION, QOS CONFIGURATION; IBA 7.6.6 (SL to VL mapping), 7.9 (MTU)",
			Check:     checkIB6,
		},
		{
			ID:    "IB-7",
			Title: "The InfiniBand fat tree keeps its up/down structure: no credit loops, adapters on the lowest tier",
			Rationale: `InfiniBand is lossless on every VL: a packet holds its input buffer's credits until the next link has
room, so buffers that wait on each other in a cycle (a credit loop) can deadlock the fabric exactly like
a PFC cycle on Ethernet. opensm routes with Min Hop unless told otherwise, and ftree expects a pure fat
tree; both take routes over a loop when the cabling has one. fabctl applies SAFE-2's buffer dependency
analysis to the InfiniBand cabling (every cable to an InfiniBand switch, switches forwarding up/down by
tier, hosts terminating): a cable between two switches of one tier (leaf-leaf, spine-spine) or a switch
without a tier lets a packet that came down climb again, which closes a cycle; each cycle is an error
naming its cables. An adapter cabled to a switch above the leaf tier breaks the fat tree's ranks (ftree
needs every adapter on the lowest tier): a warning.`,
			Reference: "opensm(8) ROUTING (Min Hop is the default; UPDN \"should be chosen if the subnet is not a pure Fat Tree, and deadlock may occur due to a loop in the subnet\"); " +
				"Hu et al., HotNets 2016 (cyclic buffer dependency)",
			Check: checkIB7,
		},
	}
}

func ibSwitchOf(s *spec.Spec, e spec.Endpoint) *spec.Switch {
	if sw := s.Switch(e.Node); sw != nil && sw.InfiniBand {
		return sw
	}
	return nil
}

func checkIB5(c *Context) {
	s := c.Spec
	c.NotApplicable("the spec has no InfiniBand switch") // a link to one reports below
	for _, l := range s.Links {
		a, b := ibSwitchOf(s, l.A), ibSwitchOf(s, l.B)
		if a == nil && b == nil {
			continue
		}
		scopes := linkScopes(s, l)
		for _, x := range []struct {
			sw *spec.Switch
			e  spec.Endpoint
		}{{a, l.A}, {b, l.B}} {
			if x.sw == nil {
				continue
			}
			n, err := strconv.Atoi(x.e.Port)
			switch {
			case err != nil || n < 1:
				c.Reportf(Error, x.e.Src, l.Address(), scopes, "InfiniBand switch port not a number",
					"%s: switch %s is an InfiniBand switch, whose ports are numbered 1..%d; %q is not one.", l.Address(), x.sw.Name, x.sw.PortCount, x.e.Port)
			case x.sw.PortCount > 0 && n > x.sw.PortCount:
				c.Reportf(Error, x.e.Src, l.Address(), scopes, "Port beyond the switch's port count",
					"%s: switch %s has ports = %d; port %d does not exist.", l.Address(), x.sw.Name, x.sw.PortCount, n)
			}
		}
		if l.Width == 0 || l.IBSpeed == "" {
			c.Reportf(Warning, l.Src.Attr("endpoints"), l.Address(), scopes, "InfiniBand link without width and speed",
				"%s: set width = \"4x\" and speed = one of SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, so validate can tell a link that trained narrower or slower.", l.Address())
		}
	}
}

func checkIB6(c *Context) {
	s := c.Spec
	ib := ibFabric(s)
	if ib == nil {
		c.NotApplicable("the fabric has no InfiniBand part")
		return
	}
	vls, hasIB := 0, false
	for _, sw := range s.Switches {
		if sw.InfiniBand {
			if !hasIB || sw.VLs < vls {
				vls = sw.VLs
			}
			hasIB = true
		}
	}
	if !hasIB {
		return
	}
	cabled := map[string]bool{}
	for _, l := range s.Links {
		if ibSwitchOf(s, l.A) != nil || ibSwitchOf(s, l.B) != nil {
			cabled[l.A.String()], cabled[l.B.String()] = true, true
		}
	}
	for _, p := range ib.Partitions {
		for _, m := range p.Members {
			if isPartitionKeyword(m.Endpoint) {
				continue
			}
			h, nics := memberNICs(s, m.Endpoint)
			for _, n := range nics {
				if !cabled[h.Name+":"+n.Name] {
					c.Reportf(Error, p.Src.Attr(memberAttr(m.Full)), partitionAddress(p), nil, "Partition member not cabled",
						"partition %q: member %s:%s has no cable to an InfiniBand switch in the spec, so opensm never sees the port.", p.Name, h.Name, n.Name)
				}
			}
		}
		if p.GroupMTU() > s.Fabric.RDMAMTU && s.Fabric.RDMAMTU > 0 {
			c.Reportf(Error, p.Src.Attr("mtu"), partitionAddress(p), nil, "Partition MTU above the fabric's",
				"partition %q: mtu %d is above the fabric's rdma_mtu %d, the MTU its links run.", p.Name, p.GroupMTU(), s.Fabric.RDMAMTU)
		}
	}
	limit, why := vls, "the InfiniBand switches run VL0-"+strconv.Itoa(vls-1)
	if ib.MaxVLs > 0 && ib.MaxVLs < limit {
		limit, why = ib.MaxVLs, "max_vls = "+strconv.Itoa(ib.MaxVLs)
	}
	for sl, vl := range ib.SL2VL {
		if vl != 15 && vl >= limit {
			c.Reportf(Error, ib.Src.Attr("sl2vl"), "infiniband", nil, "SL2VL beyond the fabric's VLs",
				"sl2vl maps SL %d to VL %d, but %s: packets on SL %d are dropped.", sl, vl, why, sl)
			break
		}
	}
}

// maxIBLoopReports bounds the credit loops IB-7 reports in one run.
const maxIBLoopReports = 20

func checkIB7(c *Context) {
	s := c.Spec
	if ibFabric(s) == nil && (s.Fabric == nil || s.Fabric.Transport != spec.InfiniBand) {
		c.NotApplicable("the fabric has no InfiniBand part")
		return
	}
	nodes := newDLNodes(s)
	var links []*spec.Link
	var ends [][2]int32
	for _, l := range s.Links {
		a, b := ibSwitchOf(s, l.A), ibSwitchOf(s, l.B)
		if a == nil && b == nil {
			continue
		}
		links = append(links, l)
		ends = append(ends, [2]int32{nodes.id[l.A.Node], nodes.id[l.B.Node]})
		// An adapter on a switch above the leaf tier.
		for _, x := range []struct {
			sw   *spec.Switch
			host spec.Endpoint
		}{{a, l.B}, {b, l.A}} {
			if x.sw != nil && x.host.Kind == spec.KindHost && x.sw.Tier > 1 {
				c.Reportf(Warning, l.Src.Attr("endpoints"), l.Address(), linkScopes(s, l), "Adapter above the leaf tier",
					"%s: %s is cabled to %s, a tier-%d switch (role %q): a fat tree has every adapter on its leaves; opensm's ftree routing refuses the fabric and Min Hop may route over loops.",
					l.Address(), x.host, x.sw.Name, x.sw.Tier, x.sw.Role)
			}
		}
	}
	if len(links) == 0 {
		return
	}
	// InfiniBand switches forward up/down by tier whatever their
	// Ethernet forwarding says; hosts terminate traffic.
	for i, sw := range nodes.switches {
		if sw != nil && sw.InfiniBand {
			nodes.mode[i] = fwdUpDown
		} else if h := nodes.hosts[i]; h != nil {
			nodes.mode[i] = fwdNone
		}
	}
	var res deadlockResult
	g := buildDLGraph(nodes, links, ends)
	g.analyse(nil, maxIBLoopReports, &res)
	for _, dc := range res.Cycles {
		l := dc.Culprit
		hops := make([]string, 0, len(dc.Hops))
		for i, h := range dc.Hops {
			if i == maxCycleHops {
				hops = append(hops, fmt.Sprintf("... %d more", len(dc.Hops)-maxCycleHops))
				break
			}
			hops = append(hops, h.String())
		}
		why := "a cable between two switches of the same tier"
		if dc.Kind != kindLateral {
			why = "the cabling"
		}
		c.Reportf(Error, l.Src.Attr("endpoints"), l.Address(), linkScopes(s, l), "InfiniBand credit loop",
			"%s closes a cycle of buffer dependencies (%s): %s. Credits can deadlock the loop under load; opensm's default Min Hop routing uses it. Recable it as a fat tree (leaves up to spines only), or give every switch its tier (role or tier).",
			l.Address(), why, strings.Join(hops, ", "))
	}
	for _, r := range res.Unreported {
		l := r.Next
		c.Reportf(Error, l.Src.Attr("endpoints"), l.Address(), linkScopes(s, l), "More InfiniBand credit loops",
			"IB-7 stopped after reporting %d credit loops; %s are still in loops, among them the one through %s.", maxIBLoopReports, plural(r.Channels, "link direction"), l.Address())
	}
}
