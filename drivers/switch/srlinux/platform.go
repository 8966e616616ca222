package srlinux

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/spec"
)

// Descriptor is the SR Linux platform as the spec loader, the testbeds
// and YANG validation see it.
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "SR Linux",
	New:       New,
	Transport: drivers.TransportGNMI,
	// srl_nokia-qos (nokia/srlinux-yang-models v25.3) pfc-watchdog
	// detection-timer range "10..1500" (milliseconds), recovery-timer
	// range "100..1500"; Nokia SR Linux QoS guide, "PFC deadlock detection
	// and recovery".
	Limits: spec.PlatformLimits{
		WatchdogDetect: spec.Range[time.Duration]{Min: 10 * time.Millisecond, Max: 1500 * time.Millisecond,
			Setting: "SR Linux's deadlock detection-timer", Source: "srl_nokia-qos detection-timer range 10..1500 ms"},
		WatchdogRestore: spec.Range[time.Duration]{Min: 100 * time.Millisecond, Max: 1500 * time.Millisecond,
			Setting: "SR Linux's deadlock recovery-timer", Source: "srl_nokia-qos recovery-timer range 100..1500 ms"},
		WatchdogStep: time.Millisecond,
		// srl_nokia-interfaces mtu on the 7220 IXR: the L2 MTU, the IP
		// MTU plus the Ethernet header and the link's VLAN tags.
		PortMTU: spec.Range[int]{Min: MinPortMTU, Max: MaxPortMTU,
			Setting: "the 7220 IXR's port mtu (IP MTU + 14 + 4 per VLAN tag)", Source: "srl_nokia-interfaces mtu range 1450..9500; 1500 and the 7220 IXR's maximum 9412"},
		PortMTUOverhead: L2Overhead,
		PortMTUTags:     true,
		Weight: spec.Range[int]{Min: 1, Max: 255,
			Setting: "SR Linux's scheduler input weight", Source: "srl_nokia-qos weight range 1..255"},
		ECNProbability: spec.Range[float64]{Min: 1, Max: 100,
			Setting: "SR Linux's max-drop-probability-percent (rounded)", Source: "srl_nokia-qos max-drop-probability-percent uint8 0..100 (0 marks nothing)"},
		ECNRounded: true,
		ECNThreshold: spec.Range[int64]{Max: math.MaxUint32,
			Setting: "SR Linux's max-threshold-bytes and maximum-burst-size", Source: "srl_nokia-qos max-threshold-bytes, maximum-burst-size uint32"},
		Headroom: spec.Range[int64]{Max: maxReservedShare,
			Setting: "SR Linux's maximum-pfc-reserved-share-bytes", Source: "srl_nokia-qos maximum-pfc-reserved-share-bytes range"},
	},
	YANG: drivers.YANGModels{Profile: yangProfile, Marker: "srl_nokia-qos.yang"},
	// ethernet-1/1, ethernet-1/2, ... (the gNMI target has slot 1 only).
	Ports: drivers.PortNaming{Prefix: "ethernet-1/", First: 1, Step: 1,
		// srl_nokia-common.yang typedef interface-eth's pattern (length
		// 3..21): testdata/vendor/interface-names.txt:33.
		Pattern: `ethernet-[1-9][0-9]?(?:/m[1-6])?(?:/[1-9][0-9]?)?/(?:[1-9][0-9]?|1[0-1][0-9]|12[0-8])`, Syntax: "ethernet-<slot>/<port>[/<breakout>]"},
	Emulator:      "gnmi",
	EmulatorPorts: 4,
	// SR Linux starts with its system-reserved forwarding classes and
	// queues, which the driver refers to.
	EmulatorInitial: SystemDefaults,
	// Telemetry on the native models (srl_nokia-interfaces,
	// srl_nokia-qos): PFC per priority with pause frames and deadlock
	// recovery (the PFC watchdog); no ECN marks or queue drops.
	GNMITelemetry: &drivers.GNMITelemetry{
		Subscriptions: []drivers.GNMISubscription{
			{Path: "/interface[name=*]/oper-state", OnChange: true},
			{Path: "/interface[name=*]/ethernet/port-speed", OnChange: true},
			{Path: "/interface[name=*]/statistics"},
			{Path: "/interface[name=*]/ethernet/statistics"},
			{Path: "/qos/interfaces/interface[interface-id=*]/pfc/statistics"},
		},
		Leaves: []drivers.GNMILeaf{
			{Suffix: "interface/oper-state", Metric: drivers.GaugePortUp, Value: drivers.LeafOperStatus},
			{Suffix: "interface/ethernet/port-speed", Metric: drivers.GaugePortSpeed, Value: drivers.LeafSpeed},
			{Suffix: "interface/statistics/in-discarded-packets", Metric: drivers.CounterInDiscards, Value: drivers.LeafCounter},
			{Suffix: "interface/ethernet/statistics/in-mac-pause-frames", Metric: drivers.CounterMACPause, Direction: "rx", Value: drivers.LeafCounter},
			{Suffix: "interface/ethernet/statistics/out-mac-pause-frames", Metric: drivers.CounterMACPause, Direction: "tx", Value: drivers.LeafCounter},
			{Suffix: "pfc-priority/pfc-pause-frames-received", Metric: drivers.CounterPFCPause, Direction: "rx", PriorityList: "pfc-priority", Value: drivers.LeafCounter},
			{Suffix: "pfc-priority/pfc-pause-frames-generated", Metric: drivers.CounterPFCPause, Direction: "tx", PriorityList: "pfc-priority", Value: drivers.LeafCounter},
			{Suffix: "pfc-priority/deadlock-recovery-occurrences", Metric: drivers.CounterPFCWatchdog, PriorityList: "pfc-priority", Value: drivers.LeafCounter},
		},
		Lacks: []string{"ecn_marked_packets", "queue_dropped_packets"},
	},
	ClabKind: "nokia_srlinux",
	// SR Linux (which also plays the openconfig platform): e1-N is
	// ethernet-1/N, e1-C-N the breakout ethernet-1/C/N. Nokia documents
	// PFC on the 7220 IXR-H4/H5/D4/D5 and 7250 IXR only, not on
	// containerlab's default ixr-d2l: the IXR-D5 type has the PFC data
	// model (srl_nokia-qos pfc) fabctl renders.
	Clab: &drivers.ClabKind{Name: "nokia_srlinux", Image: "ghcr.io/nokia/srlinux:latest", Type: "ixr-d5",
		IfName: clabIf, User: "admin", PasswordEnv: "FABCTL_CLAB_SRLINUX_PASSWORD", GNMI: true},
}

var clabPortRe = regexp.MustCompile(`^ethernet-(\d+)/(\d+)(?:/(\d+))?$`)

func clabIf(p string) (string, error) {
	m := clabPortRe.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("SR Linux ports are ethernet-<slot>/<port>[/<breakout>]")
	}
	if m[3] != "" {
		return "e" + m[1] + "-" + m[2] + "-" + m[3], nil
	}
	return "e" + m[1] + "-" + m[2], nil
}
