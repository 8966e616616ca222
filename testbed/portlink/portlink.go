// Package portlink is what a testbed switch emulator reports of its
// ports' links (Ethernet link truth, drivers.LinkReader): per port the
// LLDP neighbours it heard, its operational state, speed, FEC and
// counters, keyed by the switch's port name in the spec's words.
//
// An emulator takes a Source in its options and answers its platform's
// interface and LLDP commands (or gNMI state paths) from it, in the
// vendor's output shape. The local testbed's Source reads the cabling it
// built (the veth ends that are the switch's ports and what the switch's
// LLDP agent heard on them), so a re-wired cable is met for real; tests
// use Static or FromSpec (every link as the spec draws it).
//
// A nil Source means no cable is modelled: an emulator then reports its
// ports down with no neighbours, never up.
package portlink

import (
	"context"
	"maps"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
)

// Source reports one switch's cabled ports.
type Source interface {
	// Ports returns the switch's cabled ports by port name (the spec's
	// words, e.g. "Ethernet1"); a port absent from the map has no cable.
	// Each Observation's Port equals its key.
	Ports(ctx context.Context) (map[string]linktruth.Observation, error)
}

// Static is a fixed Source (tests, and ports whose state is set by
// hand). Ports returns a copy, so a caller may change it.
type Static map[string]linktruth.Observation

// Ports implements Source.
func (s Static) Ports(context.Context) (map[string]linktruth.Observation, error) {
	out := make(map[string]linktruth.Observation, len(s))
	for k, v := range s {
		v.Neighbors = append([]linktruth.Neighbor(nil), v.Neighbors...)
		if v.Counters != nil {
			c := *v.Counters
			v.Counters = &c
		}
		out[k] = v
	}
	return out, nil
}

// With returns a copy of s with port set to o (a fault in a test: a
// port taken down, a slower speed, another neighbour).
func (s Static) With(port string, o linktruth.Observation) Static {
	n := maps.Clone(s)
	if n == nil {
		n = Static{}
	}
	o.Port = port
	n[port] = o
	return n
}

// FromSpec is switch sw's ports as the spec cables them: every Ethernet
// link end on sw is up at the link's speed (linktruth's rule: the link's
// speed, else the ends' when they agree; 0 when neither says), with
// zero counters and one LLDP neighbour, the far end as it would
// advertise itself: its lldp_name (else its spec name) and its port
// name (a switch port, or a host NIC's netdev, as lldpd sends it in the
// Port Description with the MAC as Port ID by default).
func FromSpec(s *spec.Spec, sw string) Static {
	out := Static{}
	for _, l := range s.Links {
		for i, e := range [2]spec.Endpoint{l.A, l.B} {
			if e.Kind != "switch" || e.Node != sw {
				continue
			}
			far := l.B
			if i == 1 {
				far = l.A
			}
			out[e.Port] = linktruth.Observation{
				Port:      e.Port,
				Oper:      linktruth.Up,
				SpeedMbps: linktruth.LinkSpeed(l),
				Counters:  &linktruth.Counters{},
				Neighbors: []linktruth.Neighbor{advertised(s, far)},
			}
		}
	}
	return out
}

// advertised is the LLDP neighbour a link end sends.
func advertised(s *spec.Spec, e spec.Endpoint) linktruth.Neighbor {
	name := e.Node
	if e.Kind == "switch" {
		if d := s.Switch(e.Node); d != nil && d.LLDPName != "" {
			name = d.LLDPName
		}
		return linktruth.Neighbor{SystemName: name, PortID: e.Port, PortIDSubtype: "ifname"}
	}
	if h := s.Host(e.Node); h != nil && h.LLDPName != "" {
		name = h.LLDPName
	}
	return linktruth.Neighbor{SystemName: name, PortDesc: e.Port, PortIDSubtype: "mac"}
}

// Read is src's ports; nil and no error when src is nil (no cable is
// modelled: the emulator reports its ports down, hearing nothing).
func Read(ctx context.Context, src Source) (map[string]linktruth.Observation, error) {
	if src == nil {
		return nil, nil
	}
	return src.Ports(ctx)
}
