package testutil

import (
	_ "embed"
	"encoding/json"
	"sync"

	"github.com/fabctl/fabctl/spec"
)

// platformsJSON is drivers/builtin.SpecPlatforms(), written there by its
// test (go test ./drivers/builtin -run TestSpecPlatformsFixture -update),
// which fails when this copy is stale: the tests of the packages
// drivers/builtin is built from (intent, plan, the drivers themselves)
// cannot import it.
//
//go:embed platforms.json
var platformsJSON []byte

// Platforms are the switch platforms of this build, as
// spec.LoadOptions.Platforms takes them, for tests that cannot import
// drivers/builtin (the others pass builtin.SpecPlatforms()).
var Platforms = sync.OnceValue(func() []spec.PlatformInfo {
	var ps []spec.PlatformInfo
	if err := json.Unmarshal(platformsJSON, &ps); err != nil {
		panic("internal/testutil/platforms.json: " + err.Error()) // written by drivers/builtin's test
	}
	return ps
})
