package openconfig

import (
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/spec"
)

// Descriptor is the OpenConfig platform as the spec loader, the testbeds
// and YANG validation see it. OpenConfig is not a NOS: in containerlab an
// openconfig switch is played by SR Linux (kind nokia_srlinux, defined by
// the srlinux platform), whose OpenConfig mapping covers part of
// openconfig-qos (classifiers, forwarding groups, queue management,
// interfaces).
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "OpenConfig",
	New:       New,
	Transport: drivers.TransportGNMI,
	// The reason Unexpressible gives for PFC and what comes with it.
	Limits: spec.PlatformLimits{NoPFC: noPFC,
		// openconfig-interfaces mtu is a uint16 L2 MTU: the IP MTU plus
		// the Ethernet header and the link's VLAN tags.
		PortMTU: spec.Range[int]{Max: 65535,
			Setting: "OpenConfig's interface mtu (IP MTU + 14 + 4 per VLAN tag)", Source: "openconfig-interfaces config/mtu uint16"},
		PortMTUOverhead: L2Overhead,
		PortMTUTags:     true,
		ECNProbability: spec.Range[float64]{Min: 1, Max: 100,
			Setting: "OpenConfig's max-drop-probability-percent (rounded)", Source: "openconfig-qos-mem-mgmt max-drop-probability-percent oc-types:percentage 0..100 (0 marks nothing)"},
		ECNRounded: true,
	},
	YANG: drivers.YANGModels{Profile: yangProfile, Marker: "openconfig-qos.yang"},
	// Ethernet0, Ethernet1, ...
	Ports: drivers.PortNaming{Prefix: "Ethernet", First: 0, Step: 1,
		// openconfig-interfaces leaves names to the device ("A device
		// MAY restrict the allowed values": testdata/vendor/interface-names.txt:36):
		// fabctl takes a safe class that is a gNMI path key without
		// escapes (no ']', '\', '=') and no template text for gnmic.
		Pattern: `[A-Za-z][A-Za-z0-9_./:-]{0,63}`, Syntax: "a letter, then up to 63 letters, digits, '_', '.', '/', ':' or '-'"},
	Emulator:      "gnmi",
	EmulatorPorts: 4,
	// Telemetry on openconfig-interfaces, -if-ethernet and -qos: per-queue
	// ECN marks and drops, MAC pause frames; no PFC (queues are named as
	// the driver names them, Q<traffic class>).
	GNMITelemetry: &drivers.GNMITelemetry{
		Subscriptions: []drivers.GNMISubscription{
			{Path: "/interfaces/interface[name=*]/state/oper-status", OnChange: true},
			{Path: "/interfaces/interface[name=*]/ethernet/state/negotiated-port-speed", OnChange: true},
			{Path: "/interfaces/interface[name=*]/state/counters"},
			{Path: "/interfaces/interface[name=*]/ethernet/state/counters"},
			{Path: "/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"},
		},
		Leaves: []drivers.GNMILeaf{
			{Suffix: "interface/state/oper-status", Metric: drivers.GaugePortUp, Value: drivers.LeafOperStatus},
			{Suffix: "ethernet/state/negotiated-port-speed", Metric: drivers.GaugePortSpeed, Value: drivers.LeafSpeed},
			{Suffix: "interface/state/counters/in-discards", Metric: drivers.CounterInDiscards, Value: drivers.LeafCounter},
			{Suffix: "ethernet/state/counters/in-mac-pause-frames", Metric: drivers.CounterMACPause, Direction: "rx", Value: drivers.LeafCounter},
			{Suffix: "ethernet/state/counters/out-mac-pause-frames", Metric: drivers.CounterMACPause, Direction: "tx", Value: drivers.LeafCounter},
			{Suffix: "queue/state/ecn-marked-pkts", Metric: drivers.CounterECNMarked, PriorityList: "queue", Value: drivers.LeafCounter},
			{Suffix: "queue/state/dropped-pkts", Metric: drivers.CounterQueueDropped, PriorityList: "queue", Value: drivers.LeafCounter},
		},
		Lacks: []string{"pfc_pause_frames", "pfc_watchdog_events"},
	},
	ClabKind: "nokia_srlinux",
	// containerlab enables OpenConfig on SR Linux; fabctl's OpenConfig
	// driver needs the gNMI server to serve the OpenConfig models.
	ClabSetup: map[string]drivers.ClabFile{"nokia_srlinux": {Name: "openconfig.partial.cli",
		Text: "set / system management openconfig admin-state enable\nset / system grpc-server mgmt yang-models openconfig\n"}},
}
