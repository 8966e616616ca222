package openconfig

import "github.com/fabctl/fabctl/yangval"

// yangProfile is how libyang loads the OpenConfig models for this
// platform (the descriptor's YANG models).
var yangProfile = yangval.Profile{
	Name:    "openconfig",
	Set:     "openconfig",
	Modules: []string{"iana-if-type", "openconfig-qos-types", "openconfig-interfaces", "openconfig-if-ethernet", "openconfig-qos"},
	// ietf-interfaces is only imported (for its typedefs), never implemented: its features do not apply.
	Features: map[string][]string{},
	Prefer:   "openconfig-",
	Source: "openconfig/public at the commit of shared/yang/README.md: the top-level modules " +
		"openconfig-interfaces, openconfig-if-ethernet and openconfig-qos (the paths fabctl's " +
		"openconfig driver sets); the OpenConfig modules define no features. Imports are loaded " +
		"as imports (libyang implements a module a leafref needs); iana-if-type and openconfig-qos-types " +
		"are implemented as well, because a module's identities are valid identityref values only when " +
		"it is implemented (interface config/type iana-if-type:ethernetCsmacd).",
}
