package drivers

import "context"

// Counter metric names a CounterReader reports; telemetry exports each as
// fabctl_switch_<name> with the spec labels of the port.
const (
	CounterPFCPause     = "pfc_pause_frames_total"      // Direction rx|tx, Priority 0-7
	CounterPFCWatchdog  = "pfc_watchdog_events_total"   // Priority: storms the watchdog detected
	CounterECNMarked    = "ecn_marked_packets_total"    // Priority: the egress queue's traffic class
	CounterQueueDropped = "queue_dropped_packets_total" // Priority: the egress queue's traffic class
	CounterInDiscards   = "in_discards_total"
	CounterMACPause     = "mac_pause_frames_total" // Direction rx|tx: IEEE 802.3x (global) pause
)

// Counter is one counter of one switch port as the device printed it.
type Counter struct {
	Port      string  `json:"port"`
	Metric    string  `json:"metric"`
	Direction string  `json:"direction,omitempty"`
	Priority  string  `json:"priority,omitempty"`
	Value     float64 `json:"value"`
}

// Counters is one poll of a switch's data-plane counters.
type Counters struct {
	Samples []Counter `json:"samples"`
	// Lacks are the metrics the platform's show commands do not carry
	// (telemetry exports them as counter_supported 0, not as zeros).
	Lacks []string `json:"lacks,omitempty"`
}

// CounterReader is implemented by SSH CLI switch drivers that read the
// data-plane counters (PFC pause frames per priority, ECN marks and drops
// per queue, PFC watchdog storms) with the platform's documented show
// commands, on one connection, for fabctl telemetry's periodic poll.
type CounterReader interface {
	// CounterCommands are the show commands one poll sends, in order.
	CounterCommands() []string
	ReadCounters(ctx context.Context, t Target) (*Counters, error)
}
