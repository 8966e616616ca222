package cumulusemu

import (
	"fmt"
	"strconv"
	"strings"
)

// The NVUE object model the emulator knows, written from NVIDIA's
// Cumulus Linux 5.x documentation (Quality of Service, RDMA over
// Converged Ethernet (RoCE), Interface Configuration, NVUE CLI): each
// node is a container (fixed keywords), a collection (any key from an
// allowed set, e.g. a DSCP value or an interface name) or a leaf (one
// typed value). `nv set` walks the tokens down the schema; after a leaf
// value the remaining tokens continue at the leaf's parent, which is how
// NVUE takes several attributes on one line ("traffic-class 3
// min-threshold 150000 max-threshold 1500000").
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

// profileKey accepts a QoS profile name: default-global, or a profile
// of the user's (the QoS page's my_pfc_ports, my-red-profile): letters,
// digits, '-' and '_'.
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
	onOff     = enum("on", "off")
	enDisable = enum("enable", "disable")
	prio      = keyRange(0, 7)
	leafNode  = func(f func(string) (any, error)) *node { return &node{leaf: f} }
)

// schema is the part of the NVUE tree fabctl touches, plus enough
// neighbours for realistic errors.
var schema = container(map[string]*node{
	"qos": container(map[string]*node{
		"roce": presence(container(map[string]*node{
			"enable": leafNode(onOff),
			"mode":   leafNode(enum("lossless", "lossy", "lossless-single-ipool", "lossy-multi-tc")),
		})),
		"mapping": collection(profileKey, container(map[string]*node{
			"trust": leafNode(enum("l2", "l3", "both")),
			"dscp": collection(keyRange(0, 63), container(map[string]*node{
				"switch-priority": leafNode(intRange(0, 7)),
			})),
			"pcp": collection(prio, container(map[string]*node{
				"switch-priority": leafNode(intRange(0, 7)),
			})),
		})),
		"egress-queue-mapping": collection(profileKey, container(map[string]*node{
			"switch-priority": collection(prio, container(map[string]*node{
				"traffic-class": leafNode(intRange(0, 7)),
			})),
		})),
		"pfc": collection(profileKey, container(map[string]*node{
			"switch-priority": collection(prio, presence(container(map[string]*node{}))),
			"tx":              leafNode(enDisable),
			"rx":              leafNode(enDisable),
			"cable-length":    leafNode(intRange(1, 100000)),
			"xoff-threshold":  leafNode(intRange(0, 4000000)),
			"xon-threshold":   leafNode(intRange(0, 4000000)),
			"port-buffer":     leafNode(intRange(0, 4000000)),
		})),
		"congestion-control": collection(profileKey, container(map[string]*node{
			"traffic-class": collection(prio, presence(container(map[string]*node{
				"min-threshold": leafNode(intRange(1, 64000000)),
				"max-threshold": leafNode(intRange(1, 64000000)),
				"probability":   leafNode(intRange(0, 100)),
				"ecn":           leafNode(enDisable),
				"red":           leafNode(enDisable),
			}))),
		})),
		"egress-scheduler": collection(profileKey, container(map[string]*node{
			"traffic-class": collection(prio, container(map[string]*node{
				"mode":       leafNode(enum("dwrr", "strict")),
				"bw-percent": leafNode(intRange(0, 100)),
			})),
		})),
		"pfc-watchdog": container(map[string]*node{
			"polling-interval": leafNode(intRange(100, 5000)),
			"robustness":       leafNode(intRange(1, 1000)),
		}),
	}),
	"interface": collection(ifKey, container(map[string]*node{
		"link": container(map[string]*node{
			"mtu":   leafNode(intRange(552, 9216)),
			"state": leafNode(enum("up", "down")),
		}),
		"qos": container(map[string]*node{
			"pfc-watchdog": presence(container(map[string]*node{})),
			// The profiles an interface uses instead of default-global
			// (nv set interface swp1 qos pfc profile my_pfc_ports).
			"pfc":     container(map[string]*node{"profile": leafNode(profileRef)}),
			"mapping": container(map[string]*node{"profile": leafNode(profileRef)}),
		}),
		"description": leafNode(func(s string) (any, error) { return s, nil }),
	})),
})

// errInvalidCommand is NVUE's answer to an unknown keyword.
type errInvalidCommand struct{ near string }

func (e errInvalidCommand) Error() string { return "Invalid Command: " + e.near }

// op is one parsed `nv set`/`nv unset`: leaf assignments, presence
// containers to create, or (unset) the subtree to remove.
type op struct {
	sets     map[string]any // "qos.roce.mode" -> "lossless"
	presence []string       // "interface.swp1.qos.pfc-watchdog"
	path     string         // unset: the subtree
}

// parse walks tokens for `nv set` (set=true) or `nv unset`.
func parse(toks []string, set bool) (op, error) {
	o := op{sets: map[string]any{}}
	n := schema
	var path []string
	i := 0
	for i < len(toks) {
		t := toks[i]
		switch {
		case n.children != nil:
			kid, ok := n.children[t]
			if !ok {
				return o, errInvalidCommand{near: strings.Join(toks[:i+1], " ")}
			}
			if kid.leaf != nil {
				if !set {
					path = append(path, t)
					i++
					if i != len(toks) {
						return o, errInvalidCommand{near: strings.Join(toks[:i+1], " ")}
					}
					o.path = strings.Join(path, ".")
					return o, nil
				}
				if i+1 >= len(toks) {
					return o, fmt.Errorf("Error: Incomplete Command: %s requires a value", strings.Join(toks, " "))
				}
				v, err := kid.leaf(toks[i+1])
				if err != nil {
					return o, fmt.Errorf("Error: Invalid value for %s: %v", t, err)
				}
				o.sets[strings.Join(append(append([]string(nil), path...), t), ".")] = v
				i += 2
				continue // stay at this container for further attributes
			}
			path = append(path, t)
			n = kid
			i++
		case n.elem != nil:
			if err := n.key(t); err != nil {
				return o, fmt.Errorf("Error: %v", err)
			}
			path = append(path, t)
			n = n.elem
			i++
		default:
			return o, errInvalidCommand{near: strings.Join(toks[:i+1], " ")}
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
	if len(o.sets) == 0 {
		if !n.presence {
			return o, fmt.Errorf("Error: Incomplete Command: %s", strings.Join(toks, " "))
		}
		if p == "qos.roce" {
			// `nv set qos roce` is `nv set qos roce mode lossless` (RoCE page).
			o.sets["qos.roce.enable"] = "on"
			o.sets["qos.roce.mode"] = "lossless"
			return o, nil
		}
		o.presence = append(o.presence, p)
	}
	return o, nil
}
