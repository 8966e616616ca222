package srlinux

import (
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// TestLinks: examples/testbed's leaf5 against its emulator answering its
// ports' state and LLDP neighbours from the cabling: clean as the spec
// draws it, each fault named by port in plan's links stage, and every
// port down without cabling.
func TestLinks(t *testing.T) {
	s, _ := load(t, "testbed")
	switchtest.RunLinks(t, s, "leaf5", func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target) {
		g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorSRLinux, Profile: &Descriptor.YANG.Profile, Initial: SystemDefaults(), Links: src}, false)
		return newDriver(g.Options), g.DT
	})
}

// TestLinkPathsInModels: the interface paths and every leaf the reader
// takes from them are in ../shared/yang/srlinux. The LLDP paths are
// srl_nokia-lldp's, which that set does not hold (links.go cites the
// file and lines they were checked against).
func TestLinkPathsInModels(t *testing.T) {
	var paths []string
	for _, leaf := range []string{"admin-state", "oper-state", "statistics/in-error-packets", "statistics/out-error-packets",
		"statistics/in-discarded-packets", "statistics/out-discarded-packets", "ethernet/port-speed",
		"ethernet/forward-error-correction/operational-host-if-fec"} {
		paths = append(paths, linkIfPaths[0]+"/"+leaf)
	}
	switchtest.CheckModelPaths(t, "srlinux", "srl_nokia-", append(paths, linkIfPaths...))
}
