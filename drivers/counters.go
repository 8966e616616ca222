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

// Gauge metric names the gNMI platforms stream (on change); telemetry
// exports each as fabctl_switch_<name>.
const (
	GaugePortUp    = "port_up"         // 1 when the port is operationally up
	GaugePortSpeed = "port_speed_bits" // the port's speed, bits per second
)

// GNMITelemetry is what fabctl telemetry subscribes to on a gNMI
// platform (Subscribe STREAM) and how it turns the notifications into
// metrics, from the paths the platform's models define: the gNMI
// platforms' counterpart of an SSH CLI driver's CounterReader, carried by
// the descriptor (Platform.GNMITelemetry).
type GNMITelemetry struct {
	Subscriptions []GNMISubscription
	// Leaves turn the leaves under a schema path suffix into a metric;
	// the first whose suffix a leaf's path ends with applies.
	Leaves []GNMILeaf
	// Lacks are the metrics the platform's models do not carry (named
	// without _total, as telemetry's counter_supported names them).
	Lacks []string
}

// GNMISubscription is one subscription path.
type GNMISubscription struct {
	Path     string
	OnChange bool // ON_CHANGE, else SAMPLE
}

// GNMILeaf turns the leaves under a schema path suffix into a metric.
type GNMILeaf struct {
	// Suffix is the schema path suffix: no keys, no module prefixes.
	Suffix string
	// Metric is a Counter* or Gauge* name.
	Metric string
	// Direction is the metric's direction label (rx|tx, "" none).
	Direction string
	// PriorityList is the list whose key is the priority
	// ("pfc-priority", "queue"; "" none).
	PriorityList string
	// Value is how the leaf's value reads.
	Value LeafValue
}

// LeafValue is how a streamed leaf's value reads as a number.
type LeafValue string

const (
	LeafCounter    LeafValue = "counter"     // an unsigned integer
	LeafOperStatus LeafValue = "oper-status" // "up" is 1; down, lower_layer_down, ... 0
	LeafSpeed      LeafValue = "speed"       // "100G" (SR Linux), "openconfig-if-ethernet:SPEED_100GB"
)
