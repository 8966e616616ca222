// Package builtin holds the one explicit list of the drivers in this
// build. A driver package exports a constructor and is added to Registry;
// no package registers itself from init(). It is its own package because
// the driver packages import package drivers for the contract.
package builtin

import (
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/drivers/sm/opensm"
	"github.com/fabctl/fabctl/drivers/switch/cumulus"
	"github.com/fabctl/fabctl/drivers/switch/eos"
	"github.com/fabctl/fabctl/drivers/switch/nxos"
	"github.com/fabctl/fabctl/drivers/switch/openconfig"
	"github.com/fabctl/fabctl/drivers/switch/sonic"
	"github.com/fabctl/fabctl/drivers/switch/srlinux"
)

// Registry returns a registry of every driver in this build, keyed by the
// name drivers.For gives a device: the switch or subnet-manager platform,
// or "host".
//
// The in-memory driver (drivers/memory) is for tests and is not listed.
func Registry() *drivers.Registry {
	r := drivers.NewRegistry()
	must(r.Register("host", host.New))
	must(r.Register(sonic.Name, sonic.New))
	must(r.Register(eos.Name, eos.New))
	must(r.Register(nxos.Name, nxos.New))
	must(r.Register(cumulus.Name, cumulus.New))
	must(r.Register(srlinux.Name, srlinux.New))
	must(r.Register(openconfig.Name, openconfig.New))
	must(r.Register(opensm.Name, opensm.New)) // InfiniBand subnet managers (platform "opensm")
	return r
}

func must(err error) {
	if err != nil {
		panic(err) // a duplicate name in the list above: a programming error
	}
}
