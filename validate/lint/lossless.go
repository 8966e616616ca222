package lint

// The lossless switch ports the buffer and safety rules (BUF-*, SAFE-*) walk.

import (
	"github.com/fabctl/fabctl/spec"
)

// lossPort is a switch port on a link with a non-empty PFC enable set.
type lossPort struct {
	sw   *spec.Switch
	port *spec.Port
	link *spec.Link
	pfc  []int
}

// peer is the far end of the port's link.
func (lp lossPort) peer() spec.Endpoint { return lp.link.Other(lp.sw.Name) }

// losslessPortsOf lists, for every switch (indexed as s.Switches),
// its ports that sit on a link and have PFC enabled on at least one
// priority, in link order. Ports without a cable carry no traffic and need
// no headroom. One pass over the links, no per-port allocation.
// lossless is losslessPortsOf made once per lint run and shared by
// the rules that walk it (BUF-1 headroom, BUF-2 budget).
func (c *Context) lossless() [][]lossPort {
	if c.shared == nil { // a Context made outside RunRules
		c.shared = &shared{}
	}
	c.shared.once.Do(func() { c.shared.losslessPorts = losslessPortsOf(c.Spec) })
	return c.shared.losslessPorts
}

func losslessPortsOf(s *spec.Spec) [][]lossPort {
	idx := make(map[string]int, len(s.Switches))
	for i, sw := range s.Switches {
		idx[sw.Name] = i
	}
	// Count first and cut each switch's list from one backing array: at
	// 16,384 hosts these are ~360k ports, and growing one slice per switch
	// by doubling allocated twice that.
	counts := make([]int, len(s.Switches))
	for _, l := range s.Links {
		for _, ep := range [2]spec.Endpoint{l.A, l.B} {
			if ep.Kind == spec.KindSwitch {
				if i, ok := idx[ep.Node]; ok {
					counts[i]++
				}
			}
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	backing := make([]lossPort, 0, total)
	out := make([][]lossPort, len(s.Switches))
	for i, n := range counts {
		out[i] = backing[len(backing) : len(backing) : len(backing)+n]
		backing = backing[:len(backing)+n]
	}
	add := func(l *spec.Link, ep spec.Endpoint, sw *spec.Switch, p *spec.Port) {
		if ep.Kind != spec.KindSwitch {
			return
		}
		i, ok := idx[ep.Node]
		if !ok {
			return
		}
		if sw != s.Switches[i] || p == nil {
			sw = s.Switches[i]
			p = sw.Port(ep.Port)
		}
		if pfc := s.PortPFC(sw, p); p != nil && len(pfc) > 0 {
			out[i] = append(out[i], lossPort{sw: sw, port: p, link: l, pfc: pfc})
		}
	}
	for _, l := range s.Links {
		swA, pA, _, _ := l.EndA()
		swB, pB, _, _ := l.EndB()
		add(l, l.A, swA, pA)
		add(l, l.B, swB, pB)
	}
	return out
}
