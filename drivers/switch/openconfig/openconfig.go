// Package openconfig is fabctl's vendor-neutral gNMI switch driver on the
// OpenConfig models (openconfig/public release/models/qos and
// interfaces): DSCP classifiers whose terms target forwarding groups,
// forwarding groups bound to queues, WRED queue-management profiles in
// ECN mark-only mode, one scheduler policy (strict priority for strict
// classes, weighted round robin for the ETS shares), per-interface
// classifier, scheduler and queue-profile bindings, and the interface
// MTU and 802.3x flow control.
//
// OpenConfig has no PFC, PFC watchdog or headroom leaves (the QoS models
// at the commit in ../shared/yang have none), so the driver lists those
// settings as not expressible (drivers.Limiter) instead of pretending to
// configure them; lint rule QOS-9 warns about lossless classes on
// OpenConfig switches. An SR Linux switch is better driven by the
// srlinux driver, which has PFC.
//
// Reads, plans and applies go through package gnmicore: Get with
// JSON_IETF, one SetRequest per device, commit-confirmed when the target
// advertises it.
package openconfig

import (
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Name is the platform name.
const Name = "openconfig"

// Driver is the OpenConfig gNMI driver.
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

// Name is "openconfig".
func (d *Driver) Name() string { return Name }

// Fields: the MTU change re-programs the port.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "port/*/mtu", Disruptive: "an interface MTU change re-programs the port (a brief link flap on most platforms)"},
		{Pattern: "port/*/pause", Disruptive: "changing 802.3x flow control renegotiates the link"},
	}
}

const noPFC = "OpenConfig QoS has no PFC, PFC watchdog or headroom leaves; configure them natively on the switch (or use the switch's native driver, e.g. srlinux)"

// Unexpressible: PFC and everything that only exists with it (lossless
// priorities, the watchdog, headroom and the cable length it is sized
// from), and 802.1p trust (an OpenConfig interface binds IPv4/IPv6/MPLS
// classifiers only).
func (d *Driver) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k, v := range desired {
		switch {
		case strings.HasPrefix(k, "pfcwd/"), k == "buffer/headroom":
			out[k] = noPFC
		case strings.HasPrefix(k, "tc/") && strings.HasSuffix(k, "/lossless"):
			out[k] = noPFC
		case strings.HasPrefix(k, "port/") && (strings.HasSuffix(k, "/pfc") || strings.HasSuffix(k, "/pfcwd") || strings.HasSuffix(k, "/cable")):
			out[k] = noPFC
		case (k == "trust" || strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/trust")) && v == spec.TrustPCP:
			out[k] = "an OpenConfig interface binds IPv4, IPv6 and MPLS classifiers only: 802.1p (pcp) trust is not expressible"
		}
	}
	return out
}

var _ drivers.Reporter = (*Driver)(nil)

// Findings says what the payload assumes and what fabctl leaves to the
// operator on an OpenConfig target:
//
//   - the interfaces it configures exist: the payload updates their
//     config (MTU, flow control) and refers to them from the QoS
//     interface entries (interface-ref/config/interface is a leafref to
//     /interfaces/interface/name), but does not create them, nor give them
//     the mandatory config/type: a target validates the resulting tree,
//     so a missing interface makes the whole Set fail;
//   - persistence: OpenConfig defines no operation that saves the running
//     configuration (gNMI Set changes the running configuration; whether
//     it survives a reload is the platform's setting, e.g. SR Linux's
//     gNMI server commit-save or system configuration auto-save), so the
//     plan does not want config/saved on this platform and says so.
func (d *Driver) Findings(t drivers.Target) []drivers.Finding {
	var out []drivers.Finding
	if sw, ok := t.Intent.(*intent.Switch); ok && sw != nil && len(sw.Ports) > 0 {
		names := make([]string, len(sw.Ports))
		for i, p := range sw.Ports {
			names[i] = p.Name
		}
		out = append(out, drivers.Finding{Severity: "info", Path: "port",
			Message: "the payload assumes these interfaces exist on the device with their type (it updates their config and " +
				"its QoS interface entries refer to them; it does not create them): " + strings.Join(names, ", ")})
	}
	out = append(out, drivers.Finding{Severity: "info", Path: drivers.PathSaved,
		Message: "persistence is the operator's: OpenConfig has no save operation, so whether the applied configuration " +
			"survives a reload depends on the platform (enable its save-on-commit, e.g. SR Linux gNMI commit-save)"})
	return out
}
