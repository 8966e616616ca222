// Package builtin holds the one explicit list of the drivers in this
// build. A driver package exports a constructor and is added to Registry;
// a switch driver package also exports its platform's Descriptor, listed
// in Platforms. No package registers itself from init(). It is its own
// package because the driver packages import package drivers for the
// contract. It may import package drivers and the driver packages.
package builtin

import (
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/drivers/sm/opensm"
	"github.com/fabctl/fabctl/drivers/switch/cumulus"
	"github.com/fabctl/fabctl/drivers/switch/eos"
	"github.com/fabctl/fabctl/drivers/switch/ibswitch"
	"github.com/fabctl/fabctl/drivers/switch/nxos"
	"github.com/fabctl/fabctl/drivers/switch/openconfig"
	"github.com/fabctl/fabctl/drivers/switch/sonic"
	"github.com/fabctl/fabctl/drivers/switch/srlinux"
	"github.com/fabctl/fabctl/spec"
)

// Registry returns a registry of every driver in this build, keyed by the
// name drivers.For gives a device: the switch or subnet-manager platform,
// or "host".
//
// The in-memory driver (drivers/memory) is for tests and is not listed.
func Registry() *drivers.Registry {
	r := drivers.NewRegistry()
	must(r.Register("host", host.New))
	for _, p := range Platforms() {
		if p.New == nil {
			continue // InfiniBand switches: the subnet manager programs them
		}
		must(r.Register(p.Name, p.New)) // the switch drivers
	}
	must(r.Register(opensm.Name, opensm.New)) // InfiniBand subnet managers (platform "opensm")
	return r
}

// Platforms returns the switch platforms of this build, in the order the
// spec's diagnostics list them. Adding a switch platform is its driver
// folder and one line here.
func Platforms() []drivers.Platform {
	return []drivers.Platform{
		sonic.Descriptor,
		cumulus.Descriptor,
		eos.Descriptor,
		nxos.Descriptor,
		srlinux.Descriptor,
		openconfig.Descriptor,
		ibswitch.Descriptor,
	}
}

// SpecPlatforms is Platforms as the spec loader takes them
// (spec.LoadOptions.Platforms).
func SpecPlatforms() []spec.PlatformInfo {
	ps := Platforms()
	out := make([]spec.PlatformInfo, len(ps))
	for i, p := range ps {
		out[i] = p.Spec()
	}
	return out
}

// Platform returns the named switch platform.
func Platform(name string) (drivers.Platform, bool) {
	for _, p := range Platforms() {
		if p.Name == name {
			return p, true
		}
	}
	return drivers.Platform{}, false
}

func must(err error) {
	if err != nil {
		panic(err) // a duplicate name in the list above: a programming error
	}
}
