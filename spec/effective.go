package spec

import "github.com/hashicorp/hcl/v2"

// Effective values: what a device ends up with once fabric defaults,
// device overrides and port/NIC overrides are combined. This file is the
// one definition of each value's precedence: the planner's compiler asks
// for the value, the lint rules also for its Origin (where it was set) so
// that a finding points at the attribute to change. Each value's
// precedence is one small unexported function that returns the Level the
// value is set at; the value accessor reads the value at that level, the
// Origin accessor names it. Both are cheap enough for every port of a
// large fabric.
//
// A nil port or NIC stands for one that sets nothing itself: the value it
// inherits from its switch or the fabric.

// Level is where an effective value was set, innermost first.
type Level uint8

const (
	// FromObject: the port's, NIC's or host's own attribute.
	FromObject Level = iota
	// FromSwitch: the switch's attribute, which its ports inherit.
	FromSwitch
	// FromFabric: the fabric's attribute, set or defaulted.
	FromFabric
	// FromClasses: derived from the traffic classes (no attribute sets
	// it): the PFC set from the lossless classes, the ToS from the first
	// RDMA class.
	FromClasses
)

// Origin says where an effective value came from. It is cheap to get (no
// lookup until Range is asked for), so rules may ask it for every port.
type Origin struct {
	Level Level
	src   *Source // the block whose attribute set the value
	attr  string  // that attribute; "" for a value derived from the classes
}

// Range is the expression of the attribute that set the value; for a
// fabric default, the block header of the block that would set it (the
// fabric, or its pfc_watchdog block); for a value derived from the
// classes, the fabric's block header.
func (o Origin) Range() hcl.Range {
	switch {
	case o.src == nil:
		return hcl.Range{}
	case o.attr == "":
		return o.src.Block
	}
	return o.src.Attr(o.attr)
}

// portOrigin is the Origin of a port's setting attr at level l.
func (s *Spec) portOrigin(l Level, sw *Switch, p *Port, attr string) Origin {
	switch l {
	case FromObject:
		return Origin{l, &p.Src, attr}
	case FromSwitch:
		return Origin{l, &sw.Src, attr}
	}
	return s.fabricOrigin(l, attr)
}

// nicOrigin is the Origin of a NIC's setting attr at level l.
func (s *Spec) nicOrigin(l Level, n *NIC, attr string) Origin {
	if l == FromObject {
		return Origin{l, &n.Src, attr}
	}
	return s.fabricOrigin(l, attr)
}

func (s *Spec) fabricOrigin(l Level, attr string) Origin {
	if l == FromClasses {
		return Origin{l, &s.Fabric.Src, ""}
	}
	return Origin{l, &s.Fabric.Src, attr}
}

func portMTULevel(sw *Switch, p *Port) Level {
	switch {
	case p != nil && p.MTU != 0:
		return FromObject
	case sw.MTU != 0:
		return FromSwitch
	}
	return FromFabric
}

// PortMTU is the IP MTU of a switch port: the port's or switch's mtu
// when the spec sets one. Otherwise it is a floor (PortMTUFloor): the
// least the port must carry, the fabric's mtu, or the MTU of the host NIC
// on its link when that is larger; the device may have more (a NOS's
// jumbo default), and fabctl leaves that alone.
func (s *Spec) PortMTU(sw *Switch, p *Port) int {
	switch portMTULevel(sw, p) {
	case FromObject:
		return p.MTU
	case FromSwitch:
		return sw.MTU
	}
	m := s.Fabric.MTU
	if p != nil {
		if n := p.link.peerNIC(p); n != nil && n.MTU > m {
			m = n.MTU
		}
	}
	return m
}

// PortMTUFloor reports whether a port's PortMTU is only a floor: neither
// the port nor its switch sets mtu. A switch port may carry a larger MTU
// than the hosts it faces (harmless: it accepts what they send), so the
// plan raises a port below the floor and leaves one above it as it is.
func (s *Spec) PortMTUFloor(sw *Switch, p *Port) bool { return portMTULevel(sw, p) == FromFabric }

// PortMTUOrigin says where PortMTU comes from.
func (s *Spec) PortMTUOrigin(sw *Switch, p *Port) Origin {
	return s.portOrigin(portMTULevel(sw, p), sw, p, "mtu")
}

func nicMTULevel(n *NIC) Level {
	if n != nil && n.MTU != 0 {
		return FromObject
	}
	return FromFabric
}

// NICMTU is the IP MTU of a host NIC.
func (s *Spec) NICMTU(n *NIC) int {
	if nicMTULevel(n) == FromObject {
		return n.MTU
	}
	return s.Fabric.MTU
}

// NICMTUOrigin says where NICMTU comes from.
func (s *Spec) NICMTUOrigin(n *NIC) Origin {
	return s.nicOrigin(nicMTULevel(n), n, "mtu")
}

func portPFCLevel(sw *Switch, p *Port) Level {
	switch {
	case p != nil && p.PFC != nil:
		return FromObject
	case sw.PFC != nil:
		return FromSwitch
	}
	return FromClasses
}

// PortPFC is the PFC enable set of a switch port. Callers must not modify
// it.
func (s *Spec) PortPFC(sw *Switch, p *Port) []int {
	switch portPFCLevel(sw, p) {
	case FromObject:
		return p.PFC
	case FromSwitch:
		return sw.PFC
	}
	return s.LosslessPriorities()
}

// PortPFCOrigin says where PortPFC comes from.
func (s *Spec) PortPFCOrigin(sw *Switch, p *Port) Origin {
	return s.portOrigin(portPFCLevel(sw, p), sw, p, "pfc")
}

func nicPFCLevel(n *NIC) Level {
	if n != nil && n.PFC != nil {
		return FromObject
	}
	return FromClasses
}

// NICPFC is the PFC enable set of a host NIC. Callers must not modify it.
func (s *Spec) NICPFC(n *NIC) []int {
	if nicPFCLevel(n) == FromObject {
		return n.PFC
	}
	return s.LosslessPriorities()
}

// NICPFCOrigin says where NICPFC comes from.
func (s *Spec) NICPFCOrigin(n *NIC) Origin {
	return s.nicOrigin(nicPFCLevel(n), n, "pfc")
}

func portTrustLevel(sw *Switch, p *Port) Level {
	switch {
	case p != nil && p.Trust != "":
		return FromObject
	case sw.Trust != "":
		return FromSwitch
	}
	return FromFabric
}

// PortTrust is the trust mode of a switch port.
func (s *Spec) PortTrust(sw *Switch, p *Port) string {
	switch portTrustLevel(sw, p) {
	case FromObject:
		return p.Trust
	case FromSwitch:
		return sw.Trust
	}
	return s.Fabric.Trust
}

// PortTrustOrigin says where PortTrust comes from.
func (s *Spec) PortTrustOrigin(sw *Switch, p *Port) Origin {
	return s.portOrigin(portTrustLevel(sw, p), sw, p, "trust")
}

func nicTrustLevel(n *NIC) Level {
	if n != nil && n.Trust != "" {
		return FromObject
	}
	return FromFabric
}

// NICTrust is the trust mode of a host NIC.
func (s *Spec) NICTrust(n *NIC) string {
	if nicTrustLevel(n) == FromObject {
		return n.Trust
	}
	return s.Fabric.Trust
}

// NICTrustOrigin says where NICTrust comes from.
func (s *Spec) NICTrustOrigin(n *NIC) Origin {
	return s.nicOrigin(nicTrustLevel(n), n, "trust")
}

// NICECN reports whether DCQCN reaction/notification points are enabled on
// the NIC.
func (s *Spec) NICECN(n *NIC) bool {
	if n != nil && n.ECN != nil {
		return *n.ECN
	}
	return s.Fabric.CongestionControl == CCDCQCN || s.Fabric.CongestionControl == CCECNOnly
}

// NICDCQCNPriorities are the priorities whose DCQCN reaction and
// notification points are on (nil when NICECN is off): the NIC's
// dcqcn_priorities plus every RDMA class's priority (RoCE always gets
// congestion control), or when not given the vendor default, every
// priority (mlx5 firmware ROCE_CC_PRIO_MASK_P1 = 0xff; NVIDIA's
// nic-configuration-operator README "roceOptimized" keeps 255). Never only
// the lossless priorities: a lossy RoCE class (ecn-only) needs DCQCN most.
func (s *Spec) NICDCQCNPriorities(n *NIC) []int {
	if !s.NICECN(n) {
		return nil
	}
	if n == nil || n.DCQCNPrios == nil {
		return []int{0, 1, 2, 3, 4, 5, 6, 7}
	}
	on := [8]bool{}
	for _, p := range n.DCQCNPrios {
		if p >= 0 && p < 8 {
			on[p] = true
		}
	}
	for _, c := range s.ClassesByRole(RoleRDMA) {
		if c.Priority >= 0 && c.Priority < 8 {
			on[c.Priority] = true
		}
	}
	var out []int
	for p, ok := range on {
		if ok {
			out = append(out, p)
		}
	}
	return out
}

func portWatchdogLevel(p *Port) Level {
	if p != nil && p.PFCWatchdog != nil {
		return FromObject
	}
	return FromFabric
}

// PortWatchdog reports whether the PFC watchdog runs on a switch port.
func (s *Spec) PortWatchdog(p *Port) bool {
	if portWatchdogLevel(p) == FromObject {
		return *p.PFCWatchdog
	}
	return s.Fabric.PFCWatchdog.Enabled
}

// PortWatchdogOrigin says where PortWatchdog comes from: the port's
// pfc_watchdog, or the enabled attribute of the fabric's pfc_watchdog
// block.
func (s *Spec) PortWatchdogOrigin(p *Port) Origin {
	if l := portWatchdogLevel(p); l == FromObject {
		return Origin{l, &p.Src, "pfc_watchdog"}
	}
	return Origin{FromFabric, &s.Fabric.PFCWatchdog.Src, "enabled"}
}

func (s *Spec) hostTosLevel(h *Host) Level {
	switch {
	case h != nil && h.RDMATos != nil:
		return FromObject
	case s.Fabric.RDMATos != nil:
		return FromFabric
	}
	return FromClasses
}

// HostTos is the ToS byte rdma_cm and NCCL use on a host: the host
// override, the fabric's, or DSCP<<2 | ECT(0) of the first RDMA class.
// explicit is false for the one derived from the classes.
func (s *Spec) HostTos(h *Host) (tos int, explicit bool) {
	switch s.hostTosLevel(h) {
	case FromObject:
		return *h.RDMATos, true
	case FromFabric:
		return *s.Fabric.RDMATos, true
	}
	for _, c := range s.ClassesByRole(RoleRDMA) {
		if len(c.DSCP) > 0 {
			return c.DSCP[0]<<2 | 0b10, false
		}
	}
	return 0, false
}

// HostTosOrigin says where HostTos comes from.
func (s *Spec) HostTosOrigin(h *Host) Origin {
	l := s.hostTosLevel(h)
	if l == FromObject {
		return Origin{l, &h.Src, "rdma_tos"}
	}
	return s.fabricOrigin(l, "rdma_tos")
}
