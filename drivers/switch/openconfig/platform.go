package openconfig

import (
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/spec"
)

// Descriptor is the OpenConfig platform as the spec loader, the testbeds
// and YANG validation see it. OpenConfig is not a NOS: in containerlab an
// openconfig switch is played by SR Linux (kind nokia_srlinux, defined by
// the srlinux platform), whose OpenConfig mapping covers part of
// openconfig-qos (classifiers, forwarding groups, queue management,
// interfaces).
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "OpenConfig",
	New:       New,
	Transport: drivers.TransportGNMI,
	// The reason Unexpressible gives for PFC and what comes with it.
	Limits: spec.PlatformLimits{NoPFC: noPFC},
	YANG:   drivers.YANGModels{Set: "openconfig", Marker: "openconfig-qos.yang", ModulePrefix: "openconfig-"},
	// Ethernet0, Ethernet1, ...
	Ports:         drivers.PortNaming{Prefix: "Ethernet", First: 0, Step: 1},
	Emulator:      "gnmi",
	EmulatorPorts: 4,
	ClabKind:      "nokia_srlinux",
}
