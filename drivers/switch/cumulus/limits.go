package cumulus

import "github.com/fabctl/fabctl/spec"

// limits are what the renderer refuses, as data for the PR gate (lint
// PLAT-1): a spec it fails is refused by `validate --static`.
var limits = spec.PlatformLimits{
	ECNProbability: spec.Range[float64]{Min: 1, Max: 100,
		Setting: "NVUE's congestion-control probability", Source: "nvue-reference-qos.txt:13 (a whole percent between 1 and 100)"},
	ECNWhole: true,
}
