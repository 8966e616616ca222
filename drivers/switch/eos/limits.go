package eos

import (
	"time"

	"github.com/fabctl/fabctl/spec"
)

// limits are what Build refuses, as data for the PR gate (lint PLAT-1):
// a spec it fails is refused by `validate --static` before any plan.
var limits = spec.PlatformLimits{
	// The chip family a model's queue keyword depends on (family.go).
	ModelPrefixes: modelPrefixes(),
	ModelStrip:    modelStrip,
	ModelSource:   "EOS's transmit-queue keyword by chip family: tx-queue on Sand (Arista TOI), uc-tx-queue on Strata; models from sonic-utilities' GCU ASIC table and sonic-mgmt's pfc_storm.py (docs/vendor-sources.md)",
	// AVD's schema patterns (testdata/vendor/eos/avd-pfc-schema.txt:17-20).
	WatchdogStep:     10 * time.Millisecond,
	WatchdogPollStep: time.Millisecond,
	WatchdogActions:  []string{"drop"},
	SwitchTrust:      []string{spec.TrustDSCP, spec.TrustPCP},
	PortMTU: spec.Range[int]{Min: 68, Max: MaxMTU,
		Setting: "EOS's interface mtu (the IP MTU)", Source: "EOS accepts 68..9214 (AVD p2p_uplinks_mtu 9214)"},
	Weight: spec.Range[int]{Min: 1, Max: 100,
		Setting: "EOS's tx-queue bandwidth percent", Source: "EOS tx-queue bandwidth percent 1..100"},
	ECNProbability: spec.Range[float64]{Min: 1, Max: 100,
		Setting: "EOS's random-detect ecn max-mark-probability", Source: "EOS max-mark-probability 1..100 (a whole percent)"},
	ECNWhole: true,
	ECNThreshold: spec.Range[int64]{Min: KByte,
		Setting: "EOS's random-detect ecn thresholds (kbytes)", Source: "EOS random-detect ecn minimum-threshold in kbytes"},
}
