package nxos

import "github.com/fabctl/fabctl/spec"

// limits are what Build refuses, as data for the PR gate (lint PLAT-1):
// a spec it fails is refused by `validate --static` before any plan.
var limits = spec.PlatformLimits{
	// Cisco: on a stuck no-drop queue "all outgoing packets are dropped"
	// (cisco-pfc-guide.txt:19-20); there is no other action.
	WatchdogActions: []string{"drop"},
	// The switch's classification is the DSCP policy (FABCTL-QOS) or, on
	// a switch that trusts pcp, the CoS policy on every port (Build);
	// ports may trust pcp on a dscp switch, not dscp on a pcp one.
	SwitchTrust:             []string{spec.TrustDSCP, spec.TrustPCP},
	DSCPPortNeedsDSCPSwitch: "NX-OS's DSCP classification (policy-map type qos FABCTL-QOS) carries the switch's DSCP map, which a switch that trusts pcp does not have",
	SystemPFC:               "NX-OS's no-drop classes are system-wide (policy-map type network-qos): a port can only turn PFC on (the lossless classes' priorities) or off (pfc = [])",
	PortMTU: spec.Range[int]{Min: 576, Max: MaxMTU - L2Overhead,
		Setting: "NX-OS's interface mtu (the IP MTU; frames must fit the network-qos mtu 9216)", Source: "Cisco Nexus 9000 interface mtu 576..9216; network-qos mtu 9216 less 22 bytes of L2 overhead"},
	Weight: spec.Range[int]{Max: 100,
		Setting: "NX-OS's bandwidth remaining percent", Source: "NX-OS bandwidth remaining percent 0..100"},
	ECNProbability: spec.Range[float64]{Max: 100,
		Setting: "NX-OS's random-detect drop-probability", Source: "NX-OS drop-probability 0..100 (a whole percent)"},
	ECNWhole: true,
	// The Nexus 9800 runs Cisco Silicon One, whose QoS forms no source
	// shows (siliconone.go): its lossless classes cannot be carried.
	ModelUnsourced: []string{silicOne98.String()},
	ModelSource:    "the Nexus 9800 series runs Cisco Silicon One Q200 (Cisco's Nexus 9800 white paper) and no Cisco source shows NX-OS's QoS, PFC or watchdog forms on it",
	ECNThreshold: spec.Range[int64]{Min: KByte,
		Setting: "NX-OS's random-detect thresholds (kbytes)", Source: "NX-OS random-detect minimum-threshold in kbytes"},
}
