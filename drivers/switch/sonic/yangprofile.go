package sonic

import "github.com/fabctl/fabctl/yangval"

// yangProfile is how libyang loads the SONiC models for this platform
// (the descriptor's YANG models), as GCU's sonic-yang validation does.
var yangProfile = yangval.Profile{
	Name:     "sonic",
	Set:      "sonic",
	First:    []string{"sonic-device_metadata"},
	Features: map[string][]string{},
	Source: "sonic-net/sonic-buildimage src/sonic-yang-models at the commit of shared/yang/README.md: " +
		"every sonic-* module of the set implemented, as sonic-yang-mgmt loads its whole model " +
		"directory (device_metadata first so that when/must referring to it compile against an " +
		"implemented module); the SONiC models define no features.",
}
