package lint

// Helpers shared by the buffer, ECN and safety rules (BUF-*, ECN-*, SAFE-*).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// silencedFor reports whether a lint_ignore in one of the scopes silences
// the running rule for one part of an aggregated finding, and counts it as
// suppressed the way Report counts a silenced finding. Rules that fold many
// objects (ports, switches) into one finding use it to leave out the objects
// whose own blocks ignore the rule; the fabric's lint_ignore is left to
// Report, which silences the aggregated finding as a whole.
func (c *Context) silencedFor(scopes ...spec.LintIgnores) bool {
	for _, sc := range scopes {
		if _, ok := sc[c.rule.ID]; ok {
			c.suppressed++
			return true
		}
	}
	return false
}

// pfcSets resolves PFC enable sets exactly as spec.PortPFC and spec.NICPFC
// do (port/NIC override, then switch override, then the set derived from
// the lossless classes), with the derived set computed once instead of on
// every call: the rules below ask for tens of thousands of ports.
type pfcSets struct{ derived []int }

func newPFCSets(s *spec.Spec) pfcSets { return pfcSets{derived: s.LosslessPriorities()} }

func (ps pfcSets) port(sw *spec.Switch, p *spec.Port) []int {
	switch {
	case p != nil && p.PFC != nil:
		return p.PFC
	case sw.PFC != nil:
		return sw.PFC
	}
	return ps.derived
}

func (ps pfcSets) nic(n *spec.NIC) []int { return nicPFC(n, ps.derived) }

// lossPort is a switch port on a link with a non-empty PFC enable set.
type lossPort struct {
	sw   *spec.Switch
	port *spec.Port
	link *spec.Link
	pfc  []int
}

// peer is the far end of the port's link.
func (lp lossPort) peer() spec.Endpoint { return lp.link.Other(lp.sw.Name) }

// losslessPortsBySwitch lists, for every switch (indexed as s.Switches),
// its ports that sit on a link and have PFC enabled on at least one
// priority, in link order. Ports without a cable carry no traffic and need
// no headroom. One pass over the links, no per-port allocation.
func losslessPortsBySwitch(s *spec.Spec) [][]lossPort {
	idx := make(map[string]int, len(s.Switches))
	for i, sw := range s.Switches {
		idx[sw.Name] = i
	}
	ps := newPFCSets(s)
	out := make([][]lossPort, len(s.Switches))
	add := func(l *spec.Link, ep spec.Endpoint) {
		if ep.Kind != spec.KindSwitch {
			return
		}
		i, ok := idx[ep.Node]
		if !ok {
			return
		}
		sw := s.Switches[i]
		p := sw.Port(ep.Port)
		if pfc := ps.port(sw, p); p != nil && len(pfc) > 0 {
			out[i] = append(out[i], lossPort{sw: sw, port: p, link: l, pfc: pfc})
		}
	}
	for _, l := range s.Links {
		add(l, l.A)
		add(l, l.B)
	}
	return out
}

// prioList renders priorities as "3" or "3, 4".
func prioList(p []int) string { return joinIntList(p, ", ") }

// prioNoun is "priority 3" or "priorities 3, 4".
func prioNoun(p []int) string {
	if len(p) == 1 {
		return "priority " + prioList(p)
	}
	return "priorities " + prioList(p)
}

// capList joins items, listing at most max and counting the rest.
func capList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// plural returns "1 port" or "3 ports" ("2 switches").
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "ch") || strings.HasSuffix(word, "s") || strings.HasSuffix(word, "x") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// fabricAddress is the fabric block's address ("fabric", as the MTU/QOS
// rules use it).
const fabricAddress = "fabric"

// switchAddress is a switch's address, e.g. switch.leaf1.
func switchAddress(sw *spec.Switch) string { return "switch." + sw.Name }

// isDefaultClass reports whether the class is one of the built-in default
// classes (the spec declares no class block): their source is the fabric
// block, so findings about them point at a fabric attribute instead.
func isDefaultClass(s *spec.Spec, c *spec.Class) bool {
	return c.Src.Block == s.Fabric.Src.Block && len(c.Src.Attrs) == 0
}

// ecnString renders an ECN profile as "150KB/1.5MB/100%".
func ecnString(e *spec.ECNProfile) string {
	return fmt.Sprintf("%s/%s/%s%%", e.Min, e.Max, strconv.FormatFloat(e.Probability, 'f', -1, 64))
}

// containsInt reports whether v is in s.
func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
