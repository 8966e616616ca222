package srlinux

import "github.com/fabctl/fabctl/yangval"

// yangProfile is how libyang loads the SR Linux models for this
// platform (the descriptor's YANG models): the 7220 IXR-D5's features and
// the load-time rewrites below.
var yangProfile = yangval.Profile{
	Name:     "srlinux",
	Set:      "srlinux",
	First:    []string{"srl_nokia-features"},
	Features: map[string][]string{"srl_nokia-features": srl7220D5Features},
	Rewrites: srlRewrites,
	Prefer:   "srl_nokia-",
	Source: "Nokia SR Linux 25.3 on a 7220 IXR-D5 (Trident4 data-centre leaf/spine with PFC, " +
		"qos-pfc-xgs): the features the platform reports with `info from state system features`, " +
		"as published by srl-labs/yang-browser static/releases/v25.3.1/platform_features/7220-IXR-D5.json " +
		"(collected from containerlab nodes of type ixr-d5, refer/extract-features.sh). " +
		"srl_nokia-features' own descriptions agree on the PFC split: qos-pfc-xgs is " +
		"\"7220 D5/D4 and 7220 H4 variants\", qos-pfc-dnx the 7250 IXR. Every module of " +
		"shared/yang/srlinux (the import closure of srl_nokia-qos and srl_nokia-interfaces) is implemented.",
}

// srlRewrites are the load-time rewrites of the SR Linux v25.3 models:
// expressions that strict XPath 1.0 evaluation (libyang) can never
// satisfy for data SR Linux itself accepts. Each is rewritten to its
// evident meaning; everything else in the models is left as published.
var srlRewrites = []yangval.Rewrite{
	{
		Name:   "srl-nodeset-eq-boolean",
		Module: "srl_nokia-qos",
		Func:   yangval.NodeSetBoolean,
		Count:  7,
		Reason: nodeSetBooleanReason,
	},
	{
		Name:   "srl-nodeset-eq-boolean",
		Module: "srl_nokia-interfaces",
		Func:   yangval.NodeSetBoolean,
		Count:  9,
		Reason: nodeSetBooleanReason,
	},
	{
		Name:   "srl-nodeset-eq-boolean",
		Module: "srl_nokia-interfaces-vlans",
		Func:   yangval.NodeSetBoolean,
		Count:  9,
		Reason: nodeSetBooleanReason,
	},
	{
		Name:   "srl-nodeset-eq-boolean",
		Module: "srl_nokia-if-ip",
		Func:   yangval.NodeSetBoolean,
		Count:  4,
		Reason: nodeSetBooleanReason,
	},
	{
		Name:   "srl-scheduler-seq1-absent-priority",
		Module: "srl_nokia-qos",
		Old:    `(. = 1 and ../priority != 'strict')`,
		New:    `(. = 1 and not(../priority = 'strict'))`,
		Count:  1,
		Reason: "scheduler-policy/scheduler/sequence: `../priority != 'strict'` compares an absent leaf " +
			"(priority has the single enum strict; absent means weighted round robin) and an empty " +
			"node-set compared with != is false in XPath 1.0, so a sequence-1 (WRR) scheduler is always " +
			"refused, contradicting the must's own error-message (\"scheduler with sequence 1 must be " +
			"weighted RR\"). Rewritten to not(../priority = 'strict').",
	},
	{
		Name:   "srl-subinterface-type-absent",
		Module: "srl_nokia-qos",
		Func:   yangval.SubinterfaceTypeNotEqual,
		Count:  4,
		Reason: "qos classifier/rewrite attachments: `/interface[..]/subinterface[..]/type != 'srl_nokia-if:bridged'` " +
			"(and != 'local-mirror-dest') compare the subinterface's type, which has no default and is absent on " +
			"a routed subinterface; an empty node-set compared with != is false in XPath 1.0, so a classifier " +
			"can never be attached to a subinterface without an explicit type, though the error-messages " +
			"(\"qos configuration not supported on mirror subinterface\") only exclude those types. Rewritten " +
			"to not(P = 'lit').",
	},
	{
		Name:   "srl-unicast-vs-absent-multicast-queue",
		Module: "srl_nokia-qos",
		Old:    `must '. != ../multicast-queue'`,
		New:    `must 'not(. = ../multicast-queue)'`,
		Count:  1,
		Reason: "forwarding-class/output/unicast-queue: `. != ../multicast-queue` is false when the " +
			"forwarding class has no multicast-queue (an empty node-set compared with != is false), so " +
			"on platforms with qos-unicast-queue and qos-multicast-queue (7220 IXR-D5/H4) every " +
			"forwarding class without a multicast queue is refused; the error-message (\"cannot use same " +
			"queue for multicast and unicast\") says only that the two must differ. Rewritten to " +
			"not(. = ../multicast-queue).",
	},
}

const nodeSetBooleanReason = "`P = true()`, `P = false()`, `true() = P`, `false() = P` with P a location " +
	"path to a boolean leaf: XPath 1.0 (section 3.4) converts the node-set P with boolean(), true when " +
	"the leaf exists, so `P = false()` is false for any present leaf whatever its value (a pfc-enable " +
	"set to false, or left at its default, is refused; flow-control receive false does not satisfy the " +
	"PFC must) and `not(true() = P or false() = P)` can never hold. The models' own error-messages " +
	"read these as value tests (\"vlan-tagging true and link-loss-forwarding can not be configured " +
	"together\", \"vlan-tagging and aggregate-id can not be configured together\"), so each is " +
	"rewritten to compare the leaf's value: `P = 'true'` / `P = 'false'` (an absent leaf is then " +
	"neither). `boolean(P) = false()` is already a boolean comparison and is left alone."
