package spec

import (
	"cmp"
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
	// WatchdogDetect and WatchdogRestore are the PFC watchdog detection
	// and restoration times the platform accepts (SAFE-1).
	WatchdogDetect  Range[time.Duration] `json:"watchdog_detect,omitzero"`
	WatchdogRestore Range[time.Duration] `json:"watchdog_restore,omitzero"`
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
