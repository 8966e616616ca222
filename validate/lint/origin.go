package lint

// Where a finding about an effective setting points. spec owns each
// effective value and says where it was set (spec.Origin: the level and the
// attribute's range); these helpers add what a finding needs on top of
// that: the words for the message, the address of the block that holds the
// setting and that block's lint_ignore scopes.

import (
	"fmt"

	"github.com/fabctl/fabctl/spec"
	"github.com/hashicorp/hcl/v2"
)

// settingOrigin says where an effective setting comes from.
type settingOrigin struct {
	Range  hcl.Range          // the attribute (or block header for a default)
	What   string             // for messages: `port "Ethernet0" mtu`, `fabric mtu (default)`
	Owner  string             // address of the block holding the setting
	Scopes []spec.LintIgnores // lint_ignore maps of that block, innermost first
	Level  spec.Level
}

// fabricOrigin is the origin of the fabric's attribute attr.
func fabricOrigin(s *spec.Spec, attr string) settingOrigin {
	what := "fabric " + attr
	if !s.Fabric.Src.Has(attr) {
		what = "default fabric " + attr
	}
	return settingOrigin{Range: s.Fabric.Src.Attr(attr), What: what, Owner: "fabric", Level: spec.FromFabric}
}

// inheritedOrigin is the origin of a setting attr that a port or NIC
// inherits, from where spec says it was set: sw's attribute (sw is the
// port's switch; nil for a NIC), the fabric's, or the classes.
func inheritedOrigin(s *spec.Spec, sw *spec.Switch, attr string, o spec.Origin) settingOrigin {
	switch o.Level {
	case spec.FromSwitch:
		return settingOrigin{Range: o.Range(), What: fmt.Sprintf("switch %q %s", sw.Name, attr),
			Owner: "switch." + sw.Name, Scopes: []spec.LintIgnores{sw.Ignore}, Level: o.Level}
	case spec.FromClasses:
		what := "the RDMA classes"
		if attr == "pfc" {
			what = "the lossless classes"
		}
		return settingOrigin{Range: o.Range(), What: what, Owner: "fabric", Level: o.Level}
	}
	f := fabricOrigin(s, attr)
	f.Range = o.Range()
	return f
}

// endOrigin is the origin of the setting attr of a link end, which spec
// says was set at o.
func endOrigin(s *spec.Spec, e End, l *spec.Link, attr string, o spec.Origin) settingOrigin {
	if o.Level != spec.FromObject {
		return inheritedOrigin(s, e.Switch, attr, o)
	}
	so := settingOrigin{Range: o.Range(), Owner: e.Address(), Scopes: e.Scopes(l), Level: o.Level}
	if e.Switch != nil {
		so.What = fmt.Sprintf("port %s %s", e.EP, attr)
	} else {
		so.What = fmt.Sprintf("nic %s %s", e.EP, attr)
	}
	return so
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
	if e.Switch != nil {
		return endOrigin(s, e, l, "mtu", s.PortMTUOrigin(e.Switch, e.Port))
	}
	return endOrigin(s, e, l, "mtu", s.NICMTUOrigin(e.NIC))
}

// endPFC is the PFC enable set of a link end.
func endPFC(s *spec.Spec, e End) []int {
	if e.Switch != nil {
		return s.PortPFC(e.Switch, e.Port)
	}
	return s.NICPFC(e.NIC)
}

// endPFCOrigin says where endPFC comes from.
func endPFCOrigin(s *spec.Spec, e End, l *spec.Link) settingOrigin {
	if e.Switch != nil {
		return endOrigin(s, e, l, "pfc", s.PortPFCOrigin(e.Switch, e.Port))
	}
	return endOrigin(s, e, l, "pfc", s.NICPFCOrigin(e.NIC))
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
	if e.Switch != nil {
		return endOrigin(s, e, l, "trust", s.PortTrustOrigin(e.Switch, e.Port))
	}
	return endOrigin(s, e, l, "trust", s.NICTrustOrigin(e.NIC))
}

// nicOrigin is the origin of a NIC attribute that the NIC sets itself.
func nicOrigin(h *spec.Host, n *spec.NIC, attr string) settingOrigin {
	return settingOrigin{Range: n.Src.Attr(attr), What: fmt.Sprintf("nic %s:%s %s", h.Name, n.Name, attr),
		Owner: hostNICAddress(h, n), Scopes: hostNICScopes(h, n), Level: spec.FromObject}
}

// nicMTUOrigin says where a NIC's IP MTU comes from.
func nicMTUOrigin(s *spec.Spec, h *spec.Host, n *spec.NIC) settingOrigin {
	o := s.NICMTUOrigin(n)
	if o.Level == spec.FromObject {
		return nicOrigin(h, n, "mtu")
	}
	return inheritedOrigin(s, nil, "mtu", o)
}

// hostTosOrigin says where a host's explicit ToS (spec.HostTos) comes
// from: the host's rdma_tos or the fabric's (h nil: the fabric's).
func hostTosOrigin(s *spec.Spec, h *spec.Host) settingOrigin {
	o := s.HostTosOrigin(h)
	if o.Level == spec.FromObject {
		return settingOrigin{Range: o.Range(), What: fmt.Sprintf("host %q rdma_tos", h.Name), Owner: "host." + h.Name,
			Scopes: []spec.LintIgnores{h.Ignore}, Level: o.Level}
	}
	return inheritedOrigin(s, nil, "rdma_tos", o)
}
