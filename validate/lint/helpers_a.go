package lint

// Helpers shared by the MTU, TR, QOS and HOST rules: where an effective
// setting comes from, priority-set arithmetic, RoCE header math, and
// grouping of findings whose subject is one shared setting.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/spec"
	"github.com/hashicorp/hcl/v2"
)

// Levels a setting can come from, innermost first.
const (
	originObject = iota // port or NIC
	originDevice        // switch
	originFabric        // fabric block or the classes
)

// settingOrigin says where an effective setting comes from.
type settingOrigin struct {
	Range  hcl.Range          // the attribute (or block header for a default)
	What   string             // for messages: `port "Ethernet0" mtu`, `fabric mtu (default)`
	Owner  string             // address of the block holding the setting
	Scopes []spec.LintIgnores // lint_ignore maps of that block, innermost first
	Level  int
}

func fabricOrigin(s *spec.Spec, attr string) settingOrigin {
	what := "fabric " + attr
	if !s.Fabric.Src.Has(attr) {
		what = "default fabric " + attr
	}
	return settingOrigin{Range: s.Fabric.Src.Attr(attr), What: what, Owner: "fabric", Level: originFabric}
}

func switchOrigin(sw *spec.Switch, attr string) settingOrigin {
	return settingOrigin{Range: sw.Src.Attr(attr), What: fmt.Sprintf("switch %q %s", sw.Name, attr),
		Owner: "switch." + sw.Name, Scopes: []spec.LintIgnores{sw.Ignore}, Level: originDevice}
}

func objectOrigin(e End, l *spec.Link, attr string) settingOrigin {
	o := settingOrigin{Owner: e.Address(), Scopes: e.Scopes(l), Level: originObject}
	if e.Switch != nil {
		o.Range, o.What = e.Port.Src.Attr(attr), fmt.Sprintf("port %s %s", e.EP, attr)
	} else {
		o.Range, o.What = e.NIC.Src.Attr(attr), fmt.Sprintf("nic %s %s", e.EP, attr)
	}
	return o
}

// The effective settings of a link end come in two parts: the value, cheap
// enough to compute for every link, and its origin, built only for a
// finding.

// endMTU is the IP MTU of a link end.
func endMTU(s *spec.Spec, e End) int {
	if e.Switch != nil {
		return s.PortMTU(e.Switch, e.Port)
	}
	return s.NICMTU(e.NIC)
}

// endMTUOrigin says where endMTU comes from.
func endMTUOrigin(s *spec.Spec, e End, l *spec.Link) settingOrigin {
	switch {
	case e.Port != nil && e.Port.MTU != 0, e.NIC != nil && e.NIC.MTU != 0:
		return objectOrigin(e, l, "mtu")
	case e.Switch != nil && e.Switch.MTU != 0:
		return switchOrigin(e.Switch, "mtu")
	}
	return fabricOrigin(s, "mtu")
}

// endPFC is the PFC enable set of a link end; derived is the fabric's set
// (Spec.LosslessPriorities, computed once by the caller).
func endPFC(e End, derived []int) []int {
	switch {
	case e.Port != nil && e.Port.PFC != nil:
		return e.Port.PFC
	case e.NIC != nil && e.NIC.PFC != nil:
		return e.NIC.PFC
	case e.Switch != nil && e.Switch.PFC != nil:
		return e.Switch.PFC
	}
	return derived
}

// endPFCOrigin says where endPFC comes from.
func endPFCOrigin(s *spec.Spec, e End, l *spec.Link) settingOrigin {
	switch {
	case e.Port != nil && e.Port.PFC != nil, e.NIC != nil && e.NIC.PFC != nil:
		return objectOrigin(e, l, "pfc")
	case e.Switch != nil && e.Switch.PFC != nil:
		return switchOrigin(e.Switch, "pfc")
	}
	return settingOrigin{Range: s.Fabric.Src.Block, What: "the lossless classes", Owner: "fabric", Level: originFabric}
}

// endTrust is the trust mode of a link end.
func endTrust(s *spec.Spec, e End) string {
	if e.Switch != nil {
		return s.PortTrust(e.Switch, e.Port)
	}
	return s.NICTrust(e.NIC)
}

// endTrustOrigin says where endTrust comes from.
func endTrustOrigin(s *spec.Spec, e End, l *spec.Link) settingOrigin {
	switch {
	case e.Port != nil && e.Port.Trust != "", e.NIC != nil && e.NIC.Trust != "":
		return objectOrigin(e, l, "trust")
	case e.Switch != nil && e.Switch.Trust != "":
		return switchOrigin(e.Switch, "trust")
	}
	return fabricOrigin(s, "trust")
}

// nicPFC is a NIC's PFC enable set given the fabric's derived set.
func nicPFC(n *spec.NIC, derived []int) []int {
	if n.PFC != nil {
		return n.PFC
	}
	return derived
}

// hostNICAddress is the model address of a host NIC.
func hostNICAddress(h *spec.Host, n *spec.NIC) string { return "host." + h.Name + ".nic." + n.Name }

// hostNICScopes are the lint_ignore maps of a NIC, innermost first.
func hostNICScopes(h *spec.Host, n *spec.NIC) []spec.LintIgnores {
	return []spec.LintIgnores{n.Ignore, h.Ignore}
}

// switchPortAddress is the model address of a switch port.
func switchPortAddress(sw *spec.Switch, p *spec.Port) string {
	return "switch." + sw.Name + ".port." + p.Name
}

// trafficClassAddress is the model address of a traffic class.
func trafficClassAddress(c *spec.Class) string { return "class." + c.Name }

// prioSetString renders a priority set: "{3}", "{3, 4}", "{}".
func prioSetString(p []int) string {
	return "{" + joinIntList(p, ", ") + "}"
}

// hclIntList renders a set as the HCL list that sets it: "[3, 4]".
func hclIntList(p []int) string {
	return "[" + joinIntList(p, ", ") + "]"
}

func joinIntList(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, sep)
}

// prioSetMinus returns the elements of a (sorted) not in b.
func prioSetMinus(a, b []int) []int {
	var in [8]bool
	for _, x := range b {
		if x >= 0 && x < 8 {
			in[x] = true
		}
	}
	var out []int
	for _, x := range a {
		if x < 0 || x >= 8 || !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func prioSetEqual(a, b []int) bool {
	return len(prioSetMinus(a, b)) == 0 && len(prioSetMinus(b, a)) == 0
}

// losslessClassNames names the lossless classes on priority p.
func losslessClassNames(s *spec.Spec, prios []int) string {
	var names []string
	for _, c := range s.Classes {
		if !c.Lossless {
			continue
		}
		for _, p := range prios {
			if c.Priority == p {
				names = append(names, fmt.Sprintf("%q (priority %d)", c.Name, c.Priority))
				break
			}
		}
	}
	if len(names) == 0 {
		return "no class"
	}
	if len(names) == 1 {
		return "class " + names[0]
	}
	return "classes " + strings.Join(names, ", ")
}

// IB MTUs (enum ibv_mtu, rdma-core libibverbs/verbs.h): the only RDMA path
// MTUs RoCE and InfiniBand know.
var ibMTUs = []int{256, 512, 1024, 2048, 4096}

func ibMTUValid(m int) bool {
	for _, v := range ibMTUs {
		if v == m {
			return true
		}
	}
	return false
}

// RoCE header sizes (IBTA Annex A16/A17).
const (
	ipv4Header   = 20
	ipv6Header   = 40
	udpHeader    = 8
	grhHeader    = 40 // RoCEv1 global route header (an IPv6-shaped header)
	bthHeader    = 12
	extHeaderMax = 16 // largest extended transport header a data packet carries (RETH 16)
	icrcTrailer  = 4
	// kernelRoCEReserve is what iboe_get_mtu() (include/rdma/ib_addr.h;
	// mlx5, bnxt_re, ...) subtracts from the netdev MTU before picking the
	// active RDMA MTU: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4.
	kernelRoCEReserve = 96
	// rxeRoCEReserve is Soft-RoCE's RXE_MAX_HDR_LENGTH (drivers/infiniband/sw/rxe/rxe_hdr.h,
	// eth_mtu_int_to_enum in rxe_param.h).
	rxeRoCEReserve = 80
)

// roceWireOverhead is the bytes an RDMA packet of a full path MTU adds in
// the IP MTU: IPv4/IPv6 + UDP + BTH + extended header + ICRC for RoCEv2,
// GRH + BTH + extended header + ICRC for RoCEv1.
func roceWireOverhead(t spec.Transport, ipv6 bool) int {
	if t == spec.RoCEv1 {
		return grhHeader + bthHeader + extHeaderMax + icrcTrailer
	}
	ip := ipv4Header
	if ipv6 {
		ip = ipv6Header
	}
	return ip + udpHeader + bthHeader + extHeaderMax + icrcTrailer
}

// roceReserve is what the NIC's driver subtracts from the netdev MTU before
// choosing active_mtu, and the function that does it.
func roceReserve(model string) (int, string) {
	if model == "rxe" {
		return rxeRoCEReserve, "Soft-RoCE (eth_mtu_int_to_enum reserves RXE_MAX_HDR_LENGTH = 80 bytes)"
	}
	return kernelRoCEReserve, "the kernel (iboe_get_mtu reserves 96 bytes for GRH, UDP, BTH, XRC, AtomicETH and ICRC)"
}

// activeRoCEMTU is the RDMA MTU the driver picks for a netdev MTU: the
// largest IB MTU that is at most netdevMTU - reserve, or 0 when none fits.
func activeRoCEMTU(netdevMTU, reserve int) int {
	best := 0
	for _, m := range ibMTUs {
		if m <= netdevMTU-reserve {
			best = m
		}
	}
	return best
}

// nicIPv6 reports whether RoCEv2 on the NIC runs over IPv6: it has IPv6
// addresses and no IPv4 ones.
func nicIPv6(n *spec.NIC) bool {
	v6 := false
	for _, p := range n.Addresses {
		if p.Addr().Is4() || p.Addr().Is4In6() {
			return false
		}
		v6 = true
	}
	return v6
}

// silencedBy reports whether a lint_ignore in scopes (or the fabric's) silences
// the running rule, and counts the suppression as Report would.
func (c *Context) silencedBy(scopes []spec.LintIgnores) bool {
	return c.silencedFor(append(scopes, c.Spec.Fabric.Ignore)...)
}

// findingGroups collects findings whose subject is one shared setting (a
// switch-wide or fabric-wide value that many ports, NICs or links inherit)
// and reports each setting once, naming how many objects it affects. A
// setting held by a single object is reported as a plain finding. Each
// object's own lint_ignore still silences its part.
type findingGroups struct {
	order []groupKey
	m     map[groupKey]*findingGroup
}

type groupKey struct {
	rng  hcl.Range
	kind string
}

type findingGroup struct {
	sev     Severity
	summary string
	src     settingOrigin
	noun    string // plural noun for the objects, e.g. "links", "NICs" (singular: drop the "s")
	items   []groupItem
}

type groupItem struct {
	label   string // short name, e.g. "leaf1:Ethernet0--gpu01:ens1f0"
	address string
	scopes  []spec.LintIgnores
	detail  string
}

// add records one object affected by the setting at o. kind separates
// different problems with the same setting.
func (g *findingGroups) add(c *Context, kind string, sev Severity, summary string, o settingOrigin, noun string, it groupItem) {
	if c.silencedBy(it.scopes) {
		return
	}
	if g.m == nil {
		g.m = map[groupKey]*findingGroup{}
	}
	k := groupKey{o.Range, kind}
	fg := g.m[k]
	if fg == nil {
		fg = &findingGroup{sev: sev, summary: summary, src: o, noun: noun}
		g.m[k] = fg
		g.order = append(g.order, k)
	}
	fg.items = append(fg.items, it)
}

// groupMaxListed bounds the objects a grouped finding names.
const groupMaxListed = 5

func (g *findingGroups) flush(c *Context) {
	for _, k := range g.order {
		fg := g.m[k]
		first := fg.items[0]
		if len(fg.items) == 1 || fg.src.Level == originObject {
			for _, it := range fg.items {
				c.Report(Finding{Severity: fg.sev, Subject: fg.src.Range, Address: it.address, Scopes: it.scopes, Summary: fg.summary, Detail: it.detail})
			}
			continue
		}
		var names []string
		for _, it := range fg.items[1:] {
			if len(names) == groupMaxListed {
				names = append(names, fmt.Sprintf("and %d more", len(fg.items)-1-groupMaxListed))
				break
			}
			names = append(names, it.label)
		}
		noun := fg.noun
		if len(fg.items) == 2 {
			noun = strings.TrimSuffix(noun, "s")
		}
		detail := fmt.Sprintf("%s\n\nThe same %s also affects %d more %s: %s.", first.detail, fg.src.What, len(fg.items)-1, noun, strings.Join(names, ", "))
		c.Report(Finding{Severity: fg.sev, Subject: fg.src.Range, Address: fg.src.Owner, Scopes: fg.src.Scopes, Summary: fg.summary, Detail: detail})
	}
	g.order, g.m = nil, nil
}

// sortedIntKeys returns a map's int keys in order.
func sortedIntKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// classOfDSCP returns, per code point, the first class that lists it (nil
// for code points no class lists).
func classOfDSCP(s *spec.Spec) [64]*spec.Class {
	var out [64]*spec.Class
	for _, c := range s.Classes {
		for _, d := range c.DSCP {
			if d >= 0 && d < 64 && out[d] == nil {
				out[d] = c
			}
		}
	}
	return out
}

// fabricDefaultClass returns the class that receives unclaimed code points, or nil.
func fabricDefaultClass(s *spec.Spec) *spec.Class {
	for _, c := range s.Classes {
		if c.Default {
			return c
		}
	}
	return nil
}

// describeDSCP names the class a code point lands in under the fabric map.
func describeDSCP(s *spec.Spec, byDSCP [64]*spec.Class, d int) string {
	if c := byDSCP[d]; c != nil {
		return fmt.Sprintf("class %q, priority %d", c.Name, c.Priority)
	}
	if c := fabricDefaultClass(s); c != nil {
		return fmt.Sprintf("default class %q, priority %d", c.Name, c.Priority)
	}
	return "no class, priority 0"
}

// dscpClassName names the class a code point lands in under the fabric map.
func dscpClassName(s *spec.Spec, byDSCP [64]*spec.Class, d int) string {
	if c := byDSCP[d]; c != nil {
		return fmt.Sprintf("class %q", c.Name)
	}
	if c := fabricDefaultClass(s); c != nil {
		return fmt.Sprintf("default class %q", c.Name)
	}
	return "no class"
}

// classHasDSCP reports whether c lists code point d.
func classHasDSCP(c *spec.Class, d int) bool {
	for _, x := range c.DSCP {
		if x == d {
			return true
		}
	}
	return false
}

// joinCapped joins names, naming at most groupMaxListed.
func joinCapped(names []string) string { return capList(names, groupMaxListed) }

// nicOrigin is the origin of a NIC attribute that the NIC sets itself.
func nicOrigin(h *spec.Host, n *spec.NIC, attr string) settingOrigin {
	return settingOrigin{Range: n.Src.Attr(attr), What: fmt.Sprintf("nic %s:%s %s", h.Name, n.Name, attr),
		Owner: hostNICAddress(h, n), Scopes: hostNICScopes(h, n), Level: originObject}
}

// nicMTUOrigin says where a NIC's IP MTU comes from.
func nicMTUOrigin(s *spec.Spec, h *spec.Host, n *spec.NIC) settingOrigin {
	if n.MTU != 0 {
		return nicOrigin(h, n, "mtu")
	}
	return fabricOrigin(s, "mtu")
}
