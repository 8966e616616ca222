// Package srlinux is fabctl's Nokia SR Linux driver over gNMI on the
// native models (srl_nokia-qos, srl_nokia-interfaces; nokia/srlinux-yang-
// models v25.3): a DSCP (or 802.1p) classifier policy onto the
// system-reserved forwarding classes fc0-fc7, WRED queue-management
// profiles in ECN mark-only mode, one scheduler policy (strict and
// weighted inputs), PFC mapping profiles with deadlock detection and
// recovery timers (SR Linux's PFC watchdog), the PFC headroom as the PFC
// queues' share of the PFC-reserved buffer, per-interface bindings and
// pfc-enable, and the port MTU, which on SR Linux counts the Ethernet
// header.
//
// The forwarding classes fcN, queues queue-N and PFC queues pfcN are
// SR Linux's system-reserved defaults (every SR Linux has them); fabctl
// refers to them and never creates or deletes them. Traffic class N is
// forwarding class fcN, queue queue-N and PFC priority N.
//
// Reads, plans and applies go through package gnmicore.
package srlinux

import (
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Name is the platform name.
const Name = "srlinux"

// Driver is the SR Linux gNMI driver.
type Driver struct {
	gnmicore.Core
}

// New returns a driver with default gNMI settings.
func New() drivers.Driver { return &Driver{Core: gnmicore.Core{P: Platform{}}} }

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
)

// Name is "srlinux".
func (d *Driver) Name() string { return Name }

// Fields: disruptive settings.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "port/*/mtu", Disruptive: "a port MTU change re-programs the port (brief link flap)"},
		{Pattern: "port/*/pfc", Disruptive: "changing a port's PFC mapping re-allocates its PFC queue buffers"},
		{Pattern: "tc/*/lossless", Disruptive: "adding or removing a lossless priority changes the PFC mapping of every PFC port", DisruptiveOnTrue: true},
		{Pattern: "buffer/headroom", Disruptive: "a new PFC-reserved share re-allocates the lossless queues' buffers"},
		{Pattern: "port/*/pause", Disruptive: "changing 802.3x flow control renegotiates the link"},
	}
}

// pcpTrustReason: srl_nokia-qos qos/interfaces/interface/input/
// classifiers/dot1p-policy carries must "/interface[..]/subinterface[..]/
// type = 'srl_nokia-if:bridged'" ("dot1p classifiers allowed with type
// bridged only", on every platform but fpcx; the 7220 IXR-D5 is not
// one), and classifiers attach to subinterfaces only: fabctl's RoCE ports
// are routed (their subinterface 0 has no type), and making them bridged
// would change how they forward, so 802.1p trust cannot be rendered.
const pcpTrustReason = "SR Linux classifies by 802.1p only on bridged subinterfaces (srl_nokia-qos input/classifiers/" +
	"dot1p-policy must: \"dot1p classifiers allowed with type bridged only\"); fabctl's ports are routed (subinterface 0 " +
	"without a type), so the port keeps SR Linux's default classification: use trust = \"dscp\" on SR Linux"

// Unexpressible: SR Linux's PFC deadlock detection has no polling
// interval and no action choice (it ignores pause frames on the queue
// for the recovery time), SR Linux has no cable-length setting, and the
// 7220 IXR-D5 (the platform fabctl's SR Linux driver targets, see
// Descriptor.Clab) cannot transmit 802.3x pause frames.
func (d *Driver) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	anyLossless := false
	for k, v := range desired {
		if strings.HasPrefix(k, "tc/") && strings.HasSuffix(k, "/lossless") && v == "true" {
			anyLossless = true
		}
	}
	for k, v := range desired {
		switch {
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/pause") && v == "true":
			out[k] = "the 7220 IXR-D5 has no transmit flow-control (srl_nokia-interfaces ethernet/flow-control/transmit " +
				"needs feature tx-flow-control, which the D5 does not report); fabctl's pause is both directions, " +
				"so flow-control is left as it is (receive alone is not 802.3x pause)"
		case k == "buffer/headroom" && !anyLossless:
			out[k] = "no lossless class: SR Linux reserves PFC headroom per PFC queue, and no queue has PFC"
		case k == "pfcwd/poll":
			out[k] = "SR Linux's PFC deadlock detection has no polling interval (only detection and recovery timers)"
		case k == "pfcwd/action":
			out[k] = "SR Linux's PFC deadlock recovery ignores pause frames on the queue for the recovery timer: no drop/forward action to set"
		case (k == "trust" || strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/trust")) && v == spec.TrustPCP:
			out[k] = pcpTrustReason
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/cable"):
			out[k] = "SR Linux has no cable-length setting (size the PFC-reserved share with buffer headroom)"
		}
	}
	return out
}
