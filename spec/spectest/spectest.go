// Package spectest holds the switch platform list for tests of packages
// the switch drivers build on (spec users below drivers/builtin, such as
// intent, plan and the drivers' own tests), which cannot import
// drivers/builtin without an import cycle. It imports only spec; only
// _test.go files and test rig packages import it.
//
// Platforms is a copy of drivers/builtin.SpecPlatforms() for them; a
// test in drivers/builtin keeps the two equal. Everything else passes
// builtin.SpecPlatforms().
package spectest

import "github.com/fabctl/fabctl/spec"

// Platforms is builtin.SpecPlatforms() for tests that cannot import it.
var Platforms = []spec.PlatformInfo{
	{Name: "sonic", DefaultDriver: "ssh"},
	{Name: "cumulus", DefaultDriver: "ssh"},
	{Name: "eos", DefaultDriver: "ssh"},
	{Name: "nxos", DefaultDriver: "ssh"},
	{Name: "srlinux", DefaultDriver: "gnmi"},
	{Name: "openconfig", DefaultDriver: "gnmi"},
	{Name: "infiniband", InfiniBand: true},
}
