package spec

import "github.com/hashicorp/hcl/v2"

// Effective values: what a device ends up with once fabric defaults,
// device overrides and port/NIC overrides are combined. The planner's
// compiler and the lint rules both use these, so they agree.

// PortMTU is the IP MTU of a switch port.
func (s *Spec) PortMTU(sw *Switch, p *Port) int {
	switch {
	case p != nil && p.MTU != 0:
		return p.MTU
	case sw.MTU != 0:
		return sw.MTU
	}
	return s.Fabric.MTU
}

// PortMTUSource is the range of the setting PortMTU came from.
func (s *Spec) PortMTUSource(sw *Switch, p *Port) hcl.Range {
	switch {
	case p != nil && p.MTU != 0:
		return p.Src.Attr("mtu")
	case sw.MTU != 0:
		return sw.Src.Attr("mtu")
	}
	return s.Fabric.Src.Attr("mtu")
}

// NICMTU is the IP MTU of a host NIC.
func (s *Spec) NICMTU(n *NIC) int {
	if n.MTU != 0 {
		return n.MTU
	}
	return s.Fabric.MTU
}

// NICMTUSource is the range of the setting NICMTU came from.
func (s *Spec) NICMTUSource(n *NIC) hcl.Range {
	if n.MTU != 0 {
		return n.Src.Attr("mtu")
	}
	return s.Fabric.Src.Attr("mtu")
}

// PortPFC is the PFC enable set of a switch port.
func (s *Spec) PortPFC(sw *Switch, p *Port) []int {
	switch {
	case p != nil && p.PFC != nil:
		return p.PFC
	case sw.PFC != nil:
		return sw.PFC
	}
	return s.LosslessPriorities()
}

// PortPFCSource is the range of the setting PortPFC came from.
func (s *Spec) PortPFCSource(sw *Switch, p *Port) hcl.Range {
	switch {
	case p != nil && p.PFC != nil:
		return p.Src.Attr("pfc")
	case sw.PFC != nil:
		return sw.Src.Attr("pfc")
	}
	return s.Fabric.Src.Block
}

// NICPFC is the PFC enable set of a host NIC.
func (s *Spec) NICPFC(n *NIC) []int {
	if n.PFC != nil {
		return n.PFC
	}
	return s.LosslessPriorities()
}

// PortTrust is the trust mode of a switch port.
func (s *Spec) PortTrust(sw *Switch, p *Port) string {
	switch {
	case p != nil && p.Trust != "":
		return p.Trust
	case sw.Trust != "":
		return sw.Trust
	}
	return s.Fabric.Trust
}

// PortTrustSource is the range of the setting PortTrust came from.
func (s *Spec) PortTrustSource(sw *Switch, p *Port) hcl.Range {
	switch {
	case p != nil && p.Trust != "":
		return p.Src.Attr("trust")
	case sw.Trust != "":
		return sw.Src.Attr("trust")
	}
	return s.Fabric.Src.Attr("trust")
}

// NICTrust is the trust mode of a host NIC.
func (s *Spec) NICTrust(n *NIC) string {
	if n.Trust != "" {
		return n.Trust
	}
	return s.Fabric.Trust
}

// NICECN reports whether DCQCN reaction/notification points are enabled on
// the NIC.
func (s *Spec) NICECN(n *NIC) bool {
	if n.ECN != nil {
		return *n.ECN
	}
	return s.Fabric.CongestionControl == CCDCQCN || s.Fabric.CongestionControl == CCECNOnly
}

// PortWatchdog reports whether the PFC watchdog runs on a switch port.
func (s *Spec) PortWatchdog(p *Port) bool {
	if p != nil && p.PFCWatchdog != nil {
		return *p.PFCWatchdog
	}
	return s.Fabric.PFCWatchdog.Enabled
}

// HostTos is the ToS byte rdma_cm and NCCL use on a host: the host
// override, the fabric's, or DSCP<<2 | ECT(0) of the first RDMA class.
func (s *Spec) HostTos(h *Host) (tos int, explicit bool) {
	switch {
	case h != nil && h.RDMATos != nil:
		return *h.RDMATos, true
	case s.Fabric.RDMATos != nil:
		return *s.Fabric.RDMATos, true
	}
	for _, c := range s.ClassesByRole(RoleRDMA) {
		if len(c.DSCP) > 0 {
			return c.DSCP[0]<<2 | 0b10, false
		}
	}
	return 0, false
}
