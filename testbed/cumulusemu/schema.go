package cumulusemu

import (
	"fmt"
	"strconv"
	"strings"
)

// The NVUE object model the emulator knows: Cumulus Linux 5.14 (the
// version of the corpus testdata/vendor/cumulus/, whose files name their
// CumulusNetworks/docs commits). Each node is a container (fixed
// keywords), a collection (any key from an allowed set, e.g. a DSCP value
// or an interface name) or a leaf (one typed value).
//
// Grammar rule (testdata/vendor/cumulus/nvue-reference-qos.txt:3-4 and
// every example in qos-guide-514.txt): one `nv set` names ONE attribute
// path and, for a leaf, ONE value. A token after the value is refused:
// NVIDIA shows no command with several attributes, so there is no source
// for accepting one. `nv unset` takes the path alone
// (nvue-reference-qos.txt:6: "The `nv unset` commands remove the
// configuration you set with the equivalent `nv set` commands").
//
// Identifier lists ("4,5,7", "swp1-4,swp6", qos-guide-514.txt:43,69) are
// documented but not emulated: the emulator refuses them (a gap, not a
// claim about NVUE); fabctl sends single identifiers.
type node struct {
	children map[string]*node // container
	key      func(string) error
	elem     *node // collection element
	leaf     func(string) (any, error)
	presence bool // a container or element that may be set with nothing below it
}

func container(kids map[string]*node) *node { return &node{children: kids} }

func collection(key func(string) error, elem *node) *node { return &node{key: key, elem: elem} }

func presence(n *node) *node { n.presence = true; return n }

func intRange(lo, hi int) func(string) (any, error) {
	return func(s string) (any, error) {
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("'%s' is not an integer", s)
		}
		if v < lo || v > hi {
			return nil, fmt.Errorf("%d is not in the range %d-%d", v, lo, hi)
		}
		return v, nil
	}
}

// positive is an integer whose range the corpus does not give (thresholds
// in bytes, watchdog polling interval and robustness): any value >= 1.
func positive(s string) (any, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return nil, fmt.Errorf("'%s' is not an integer", s)
	}
	if v < 1 {
		return nil, fmt.Errorf("%d is not a positive integer", v)
	}
	return v, nil
}

func enum(vals ...string) func(string) (any, error) {
	return func(s string) (any, error) {
		for _, v := range vals {
			if s == v {
				return s, nil
			}
		}
		return nil, fmt.Errorf("'%s' is not one of [%s]", s, strings.Join(vals, ", "))
	}
}

func keyRange(lo, hi int) func(string) error {
	return func(s string) error {
		_, err := intRange(lo, hi)(s)
		return err
	}
}

func keyExact(names ...string) func(string) error {
	return func(s string) error {
		for _, n := range names {
			if s == n {
				return nil
			}
		}
		return fmt.Errorf("'%s' is not a valid profile: NVUE only supports %s", s, strings.Join(names, ", "))
	}
}

// profileKey accepts a QoS profile name: default-global, or a profile
// of the user's (qos-guide-514.txt:61,68: customer1, my_pfc_ports):
// letters, digits, '-' and '_'.
func profileKey(s string) error {
	if s == "" || len(s) > 63 {
		return fmt.Errorf("'%s' is not a valid profile name", s)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("'%s' is not a valid profile name", s)
		}
	}
	return nil
}

// profileRef is an interface's reference to a QoS profile (checked to
// exist when the revision is applied).
func profileRef(s string) (any, error) {
	if err := profileKey(s); err != nil {
		return nil, err
	}
	return s, nil
}

func ifKey(s string) error {
	if !strings.HasPrefix(s, "swp") || len(s) < 4 {
		return fmt.Errorf("'%s' is not a valid interface name", s)
	}
	for _, c := range s[3:] {
		if (c < '0' || c > '9') && c != 's' {
			return fmt.Errorf("'%s' is not a valid interface name", s)
		}
	}
	return nil
}

var (
	// CL 5.14 spells QoS switches enable/disable (qos-guide-514.txt:18-19,
	// 45,47); the enabled/disabled spelling is newer (nvue-reference-qos.txt:14,26).
	enDisable = enum("enable", "disable")
	prio      = keyRange(0, 7)
	leafNode  = func(f func(string) (any, error)) *node { return &node{leaf: f} }
)

// schema is the part of the NVUE tree fabctl touches. Every accepted form
// names its corpus line (testdata/vendor/cumulus/).
var schema = container(map[string]*node{
	"qos": container(map[string]*node{
		// nv set qos roce == nv set qos roce mode lossless (roce-514.txt:8,10);
		// the applied tree shows enable on (roce-514.txt:15).
		"roce": presence(container(map[string]*node{
			"mode": leafNode(enum("lossless", "lossy")), // roce-514.txt:10 (lossless); lossy: the RoCE page's other mode
		})),
		"mapping": collection(profileKey, container(map[string]*node{
			// qos-guide-514.txt:12,64; nvue-reference-qos.txt:20 (l2, l3, port, both)
			"trust": leafNode(enum("l2", "l3", "port", "both")),
			// qos-guide-514.txt:13 (dscp <0-63> switch-priority <0-7>)
			"dscp": collection(keyRange(0, 63), container(map[string]*node{
				"switch-priority": leafNode(intRange(0, 7)),
			})),
			// qos-guide-514.txt:65
			"pcp": collection(prio, container(map[string]*node{
				"switch-priority": leafNode(intRange(0, 7)),
			})),
		})),
		// qos-guide-514.txt:49-50: "NVUE only supports the default-global profile"
		"egress-queue-mapping": collection(keyExact("default-global"), container(map[string]*node{
			"switch-priority": collection(prio, container(map[string]*node{
				"traffic-class": leafNode(intRange(0, 7)),
			})),
		})),
		"pfc": collection(profileKey, container(map[string]*node{
			"switch-priority": collection(prio, presence(container(map[string]*node{}))), // qos-guide-514.txt:17
			"tx":              leafNode(enDisable),                                       // qos-guide-514.txt:18
			"rx":              leafNode(enDisable),                                       // qos-guide-514.txt:19
			"cable-length":    leafNode(intRange(1, 100000)),                             // qos-guide-514.txt:20; nvue-reference-qos.txt:10
		})),
		"congestion-control": collection(profileKey, container(map[string]*node{
			"traffic-class": collection(prio, presence(container(map[string]*node{
				"min-threshold": leafNode(positive),         // qos-guide-514.txt:43
				"max-threshold": leafNode(positive),         // qos-guide-514.txt:44
				"probability":   leafNode(intRange(1, 100)), // nvue-reference-qos.txt:13
				"ecn":           leafNode(enDisable),        // qos-guide-514.txt:47
				"red":           leafNode(enDisable),        // qos-guide-514.txt:45
			}))),
		})),
		"egress-scheduler": collection(profileKey, container(map[string]*node{
			"traffic-class": collection(prio, container(map[string]*node{
				"mode":       leafNode(enum("dwrr", "strict")), // qos-guide-514.txt:54,58
				"bw-percent": leafNode(intRange(1, 100)),       // qos-guide-514.txt:52,55
			})),
		})),
		"pfc-watchdog": container(map[string]*node{
			"polling-interval": leafNode(positive), // qos-guide-514.txt:38
			"robustness":       leafNode(positive), // qos-guide-514.txt:39
		}),
	}),
	"interface": collection(ifKey, container(map[string]*node{
		"link": container(map[string]*node{
			"mtu":   leafNode(intRange(552, 9216)), // nvue-cli-514.txt:8-9
			"state": leafNode(enum("up", "down")),  // NVUE-CLI.md "Command Question Mark" (link state ?: down, up)
		}),
		"qos": container(map[string]*node{
			// qos-guide-514.txt:33 (bare, CL 5.14) and :37 (state disable)
			"pfc-watchdog": presence(container(map[string]*node{
				"state": leafNode(enDisable),
			})),
			// qos-guide-514.txt:69 / :63
			"pfc":     container(map[string]*node{"profile": leafNode(profileRef)}),
			"mapping": container(map[string]*node{"profile": leafNode(profileRef)}),
		}),
	})),
	"system": container(map[string]*node{
		"config": container(map[string]*node{
			// nvue-cli-514.txt:27,31 (CL 5.14 spelling: state enabled|disabled)
			"auto-save": container(map[string]*node{
				"state": leafNode(enum("enabled", "disabled")),
			}),
		}),
	}),
})

// Error texts. NVIDIA's guide shows one NVUE CLI error verbatim:
// "Error: Ambiguous Command:" (NVUE-CLI.md, Command Abbreviation). The
// texts below follow that "Error: <Kind> Command" pattern; their exact
// wording is NOT from NVIDIA material (plausible, marked as such), and
// fabctl's driver only relies on the "Error:" prefix, which its
// failed-when-contains list also catches.

// errInvalidCommand is the answer to an unknown keyword or an extra token
// (plausible wording).
type errInvalidCommand struct{ near string }

func (e errInvalidCommand) Error() string { return "Error: Invalid Command: " + e.near }

// op is one parsed `nv set`/`nv unset`: one leaf assignment, a presence
// container to create, or (unset) the subtree to remove.
type op struct {
	set      string // "qos.roce.mode"
	value    any
	presence string // "interface.swp1.qos.pfc-watchdog"
	path     string // unset: the subtree
}

// parse walks tokens for `nv set` (set=true) or `nv unset`: exactly one
// attribute path, and for `nv set` of a leaf exactly one value after it.
func parse(toks []string, set bool) (op, error) {
	var o op
	n := schema
	var path []string
	near := func(i int) string {
		verb := "nv unset "
		if set {
			verb = "nv set "
		}
		return verb + strings.Join(toks[:i+1], " ")
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case n.children != nil:
			kid, ok := n.children[t]
			if !ok {
				return o, errInvalidCommand{near: near(i)}
			}
			path = append(path, t)
			if kid.leaf == nil {
				n = kid
				continue
			}
			if !set {
				if i+1 != len(toks) {
					return o, errInvalidCommand{near: near(i + 1)}
				}
				o.path = strings.Join(path, ".")
				return o, nil
			}
			if i+1 >= len(toks) {
				return o, fmt.Errorf("Error: Incomplete Command: %s requires a value", strings.Join(append([]string{"nv", "set"}, toks...), " "))
			}
			v, err := kid.leaf(toks[i+1])
			if err != nil {
				return o, fmt.Errorf("Error: Invalid value for %s: %v", t, err)
			}
			if i+2 != len(toks) {
				// One attribute, one value: nothing may follow.
				return o, errInvalidCommand{near: near(i + 2)}
			}
			o.set, o.value = strings.Join(path, "."), v
			return o, nil
		case n.elem != nil:
			if err := n.key(t); err != nil {
				return o, fmt.Errorf("Error: %v", err)
			}
			path = append(path, t)
			n = n.elem
		default:
			return o, errInvalidCommand{near: near(i)}
		}
	}
	p := strings.Join(path, ".")
	if !set {
		if p == "" {
			return o, errInvalidCommand{near: "nv unset"}
		}
		o.path = p
		return o, nil
	}
	if !n.presence {
		return o, fmt.Errorf("Error: Incomplete Command: %s", strings.Join(append([]string{"nv", "set"}, toks...), " "))
	}
	o.presence = p
	return o, nil
}
