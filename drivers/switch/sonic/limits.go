package sonic

import (
	"time"

	"github.com/fabctl/fabctl/spec"
)

// limits are what Render and the SONiC models (../shared/yang/sonic)
// refuse, as data for the PR gate (lint PLAT-1): a spec they fail is
// refused by `validate --static` before any plan.
var limits = spec.PlatformLimits{
	WatchdogPoll: spec.Range[time.Duration]{Min: 100 * time.Millisecond, Max: 1000 * time.Millisecond,
		Setting: "SONiC's PFC_WD POLL_INTERVAL", Source: "sonic-pfcwd.yang POLL_INTERVAL uint32 range 100..1000 (ms)"},
	WatchdogAtLeastPoll: "sonic-pfcwd.yang: detection_time and restoration_time must be >= the GLOBAL POLL_INTERVAL",
	PortMTU: spec.Range[int]{Min: MinMTU, Max: MaxMTU,
		Setting: "SONiC's PORT mtu (the IP MTU)", Source: "sonic-port.yang mtu uint16 range 68..9216"},
	Weight: spec.Range[int]{Min: 1, Max: 100,
		Setting: "SONiC's DWRR SCHEDULER weight", Source: "sonic-scheduler.yang weight uint8 range 1..100"},
	ECNProbability: spec.Range[float64]{Min: 1, Max: 100,
		Setting: "SONiC's WRED_PROFILE green_drop_probability", Source: "sonic-wred-profile.yang green_drop_probability uint64 0..100 (a whole percent; 0 marks nothing)"},
	ECNWhole: true,
}
