// Package ibswitch is the InfiniBand switch platform ("infiniband"): a
// Quantum-class switch, or any switch of an InfiniBand subnet.
//
// It has no driver, on purpose. An InfiniBand switch's forwarding, P_Key
// enforcement, SL-to-VL and VL arbitration tables are programmed by the
// subnet manager, not by a CLI session: the switch's configuration in
// fabctl's sense is opensm's files, which the opensm driver owns
// (drivers/sm/opensm). What the spec says of an IB switch is physical:
// its port count, data VLs and cabling at a width and speed. Those are
// checked statically by lint (rules IB-*) and live by validate's
// InfiniBand stage, which discovers the fabric over MADs through the
// subnet manager host (drivers/sm/ibfabric) and names every difference by
// switch and port. A read-only driver that pretended to "Read" a switch
// would duplicate that stage per device and, with nothing to apply, add
// only noise to plans, so intent leaves IB switches out of plan and
// apply (spec.Switch.InfiniBand).
package ibswitch

import "github.com/fabctl/fabctl/drivers"

// Name is the platform name a spec's switch block uses.
const Name = "infiniband"

// Descriptor describes the platform: ports are numbered 1..N, as
// ibnetdiscover, opensm and ibsim number them; no driver, no emulator
// (testbed/ibsim simulates the whole subnet instead).
var Descriptor = drivers.Platform{
	Name:       Name,
	Title:      "InfiniBand",
	InfiniBand: true,
	// No port grammar: no device is ever sent an InfiniBand switch's
	// port name (the subnet manager programs the switch); lint IB-5
	// checks the numbering against the port count.
	Ports: drivers.PortNaming{First: 1, Step: 1},
}
