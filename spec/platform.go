package spec

import (
	"cmp"
	"regexp"
	"strings"
	"time"
)

// PlatformInfo is what the loader, and the static checks that read the
// loaded spec (validate/lint), know of a switch platform. The platform's
// driver package describes it (drivers.Platform, whose Spec method makes
// this); spec does not import the drivers.
type PlatformInfo struct {
	// Name is the value of a switch's platform attribute.
	Name string `json:"name"`
	// Title names the platform in messages ("SR Linux").
	Title string `json:"title,omitzero"`
	// Transport is what the platform's driver manages a switch over
	// ("ssh" or "gnmi"): the switch's Driver.
	Transport string `json:"transport,omitzero"`
	// InfiniBand marks an InfiniBand switch platform: no driver logs in
	// (the subnet manager programs the switch); the spec gives its port
	// count, cabling and rates.
	InfiniBand bool `json:"infiniband,omitzero"`
	// Limits are what the platform's driver or model refuses.
	Limits PlatformLimits `json:"limits,omitzero"`
	// PortPattern is the grammar of the platform's port names, a
	// regular expression matched whole (drivers.PortNaming.Pattern,
	// vendor-sourced); PortSyntax says it for people. A port name
	// outside it is refused at its file:line (ident.go). Empty: the
	// safe class of every port name only.
	PortPattern string `json:"port_pattern,omitzero"`
	PortSyntax  string `json:"port_syntax,omitzero"`
}

// PlatformLimits are what a switch platform's driver, or the model its
// payload is validated against, refuses or cannot express, as data: the
// static checks (lint, `validate --static`) compare a spec with them
// without rendering it. The platform's descriptor carries the values
// (drivers.Platform.Limits); the zero value knows no limit. A limit says
// which setting of the platform it is and cites its source, so a finding
// can name both.
//
// A new kind of limit is a field here (a Range of the setting's type, or
// a reason text for a setting the platform has not at all), its values in
// the descriptors that have it, and the lint rule that reads it.
type PlatformLimits struct {
	// NoPFC, when set, says why the platform cannot configure PFC (nor
	// the PFC watchdog and headroom): the ports of its switches are
	// lossless only if PFC is configured by other means (QOS-9).
	NoPFC string `json:"no_pfc,omitzero"`
	// ModelPrefixes, when set, are the switch models the platform's
	// renderer can render for (a switch's model attribute starts with one,
	// after one of ModelStrip): EOS renders the transmit-queue keyword of
	// the model's chip family and guesses none for a model its sourced
	// table lacks. ModelSource names the table.
	ModelPrefixes []string `json:"model_prefixes,omitzero"`
	ModelStrip    []string `json:"model_strip,omitzero"`
	ModelSource   string   `json:"model_source,omitzero"`
	// ModelUnsourced, when set, are regular expressions (RE2) matching
	// switch models whose QoS forms the renderer has no source for, on a
	// platform that otherwise renders for any model (NX-OS: the Nexus
	// 9800, Cisco Silicon One). ModelSource then says why.
	ModelUnsourced []string `json:"model_unsourced,omitzero"`
	// WatchdogDetect and WatchdogRestore are the PFC watchdog detection
	// and restoration times the platform accepts (SAFE-1).
	WatchdogDetect  Range[time.Duration] `json:"watchdog_detect,omitzero"`
	WatchdogRestore Range[time.Duration] `json:"watchdog_restore,omitzero"`

	// The limits below are what the platform's renderer refuses (or the
	// model it validates against would), read by PLAT-1 so that
	// `validate --static` refuses what plan would.

	// WatchdogStep is the granularity of the detection and restoration
	// times (EOS 10 ms, SR Linux 1 ms); WatchdogPollStep the poll
	// interval's.
	WatchdogStep     time.Duration `json:"watchdog_step,omitzero"`
	WatchdogPollStep time.Duration `json:"watchdog_poll_step,omitzero"`
	// WatchdogPoll is the poll interval the platform accepts.
	WatchdogPoll Range[time.Duration] `json:"watchdog_poll,omitzero"`
	// WatchdogAtLeastPoll: detection and restoration times must be at
	// least the poll interval (SONiC's sonic-pfcwd.yang must).
	WatchdogAtLeastPoll string `json:"watchdog_at_least_poll,omitzero"`
	// WatchdogActions are the watchdog actions the platform takes (nil:
	// every action the language has).
	WatchdogActions []string `json:"watchdog_actions,omitzero"`
	// SwitchTrust and PortTrust are the trust modes the platform takes
	// for the switch's default classification and per port (nil: any).
	SwitchTrust []string `json:"switch_trust,omitzero"`
	PortTrust   []string `json:"port_trust,omitzero"`
	// DSCPPortNeedsDSCPSwitch, when set, says why a port cannot trust
	// dscp on a switch that trusts pcp (NX-OS: the DSCP map is the
	// switch's classification policy, which a pcp switch does not have).
	DSCPPortNeedsDSCPSwitch string `json:"dscp_port_needs_dscp_switch,omitzero"`
	// SystemPFC, when set, says why a port's PFC priorities must be the
	// lossless classes' (NX-OS: no-drop classes are system-wide; a port
	// turns PFC on or off).
	SystemPFC string `json:"system_pfc,omitzero"`
	// PortMTU is the port MTU the platform takes: the spec's IP MTU plus
	// PortMTUOverhead bytes, plus 4 per VLAN tag of the port's link when
	// PortMTUTags (a platform whose mtu leaf is the L2 MTU).
	PortMTU         Range[int] `json:"port_mtu,omitzero"`
	PortMTUOverhead int        `json:"port_mtu_overhead,omitzero"`
	PortMTUTags     bool       `json:"port_mtu_tags,omitzero"`
	// Weight is the scheduler weight a non-strict class's bandwidth
	// becomes.
	Weight Range[int] `json:"weight,omitzero"`
	// ECNProbability is the marking probability (percent) the platform
	// takes; ECNWhole: a whole percent (a fraction is refused rather than
	// cut); ECNRounded: rounded to a whole percent first (a value that
	// rounds outside the range is refused).
	ECNProbability Range[float64] `json:"ecn_probability,omitzero"`
	ECNWhole       bool           `json:"ecn_whole,omitzero"`
	ECNRounded     bool           `json:"ecn_rounded,omitzero"`
	// ECNThreshold is the ECN minimum and maximum thresholds (bytes).
	ECNThreshold Range[int64] `json:"ecn_threshold,omitzero"`
	// Headroom is the configured per-PG headroom (bytes) the platform takes.
	Headroom Range[int64] `json:"headroom,omitzero"`
}

// Range is the values a platform accepts for one setting; a zero Min or
// Max is no bound on that side.
type Range[T cmp.Ordered] struct {
	Min T `json:"min,omitzero"`
	Max T `json:"max,omitzero"`
	// Setting is the platform's name for the setting, as messages cite
	// it ("SR Linux's deadlock detection-timer").
	Setting string `json:"setting"`
	// Source is where the range comes from (vendor documentation, the
	// model's range statement).
	Source string `json:"source"`
}

// Bounded reports whether the range bounds anything.
func (r Range[T]) Bounded() bool {
	var zero T
	return r.Min != zero || r.Max != zero
}

// Contains reports whether v is within the range.
func (r Range[T]) Contains(v T) bool {
	var zero T
	return (r.Min == zero || v >= r.Min) && (r.Max == zero || v <= r.Max)
}

// PlatformOf is what the loader was told of sw's platform (the zero
// PlatformInfo for a platform it was not told of).
func (s *Spec) PlatformOf(sw *Switch) PlatformInfo {
	for _, p := range s.platforms {
		if p.Name == sw.Platform {
			return p
		}
	}
	return PlatformInfo{}
}

// KnowsModel says whether the platform's renderer has a source for a
// switch model (true when the platform lists no models).
func (l PlatformLimits) KnowsModel(model string) bool {
	for _, re := range l.ModelUnsourced {
		if r, err := regexp.Compile(re); err == nil && r.MatchString(model) {
			return false
		}
	}
	if len(l.ModelPrefixes) == 0 {
		return true
	}
	m := strings.TrimSpace(model)
	for _, p := range l.ModelStrip {
		m = strings.TrimPrefix(m, p)
	}
	for _, p := range l.ModelPrefixes {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}
