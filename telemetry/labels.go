package telemetry

import (
	"sort"
	"strconv"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/traffic"
)

// LabelNames are the spec labels every fabctl metric carries, in order:
// on a host NIC metric host/nic are the NIC and leaf/port the switch port
// it is cabled to; on a switch port metric leaf/port are the port and
// host/nic the host NIC at its far end ("" when the peer is a switch).
// rail is the NIC's position on its host (0, 1, ...), the rail fabctl
// validate schedules it on.
var LabelNames = []string{"fabric", "host", "nic", "rail", "leaf", "port"}

// Labels are the spec labels of one NIC or switch port.
type Labels struct {
	Fabric string `json:"fabric"`
	Host   string `json:"host"`
	NIC    string `json:"nic"`
	Rail   string `json:"rail"`
	Leaf   string `json:"leaf"`
	Port   string `json:"port"`
}

// Values are the label values in LabelNames order.
func (l Labels) Values() []string {
	return []string{l.Fabric, l.Host, l.NIC, l.Rail, l.Leaf, l.Port}
}

// NIC is one host NIC as telemetry sees it: its labels, the endpoint the
// counter reader takes, and what the spec wants of it.
type NIC struct {
	Labels   Labels
	Endpoint traffic.Endpoint
	// Lossless are the NIC's PFC priorities (the spec's effective set).
	Lossless []int
	// SpeedBits is the spec speed of the NIC (0: not declared).
	SpeedBits float64
}

// SwitchPort is one declared switch port.
type SwitchPort struct {
	Labels    Labels
	Lossless  []int
	SpeedBits float64
	Watchdog  bool
}

// rail is a NIC's position on its host.
func rail(h *spec.Host, n *spec.NIC) string {
	for i, x := range h.NICs {
		if x == n {
			return strconv.Itoa(i)
		}
	}
	return ""
}

// peers maps "node:port" to the far end of its link.
func peers(s *spec.Spec) map[string]spec.Endpoint {
	m := map[string]spec.Endpoint{}
	for _, l := range s.Links {
		m[l.A.String()] = l.B
		m[l.B.String()] = l.A
	}
	return m
}

// linkSpeed is the speed of the link at "node:port" (0: none declared).
func linkSpeed(s *spec.Spec, at string) float64 {
	for _, l := range s.Links {
		if l.A.String() == at || l.B.String() == at {
			return float64(l.Speed)
		}
	}
	return 0
}

// NICs are the NICs of the named hosts (every host when names is empty),
// in spec order, with their labels; unknown names are returned second.
func NICs(s *spec.Spec, names []string) ([]NIC, []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	pe := peers(s)
	var out []NIC
	for _, h := range s.Hosts {
		if len(want) > 0 && !want[h.Name] {
			continue
		}
		delete(want, h.Name)
		for _, n := range h.NICs {
			l := Labels{Fabric: s.Fabric.Name, Host: h.Name, NIC: n.Name, Rail: rail(h, n)}
			if p, ok := pe[h.Name+":"+n.Name]; ok {
				l.Leaf, l.Port = p.Node, p.Port
			}
			speed := float64(n.Speed)
			if speed == 0 {
				speed = linkSpeed(s, h.Name+":"+n.Name)
			}
			out = append(out, NIC{Labels: l, Endpoint: traffic.Endpoint{Host: h, NIC: n},
				Lossless: s.NICPFC(n), SpeedBits: speed})
		}
	}
	var unknown []string
	for n := range want {
		unknown = append(unknown, n)
	}
	sort.Strings(unknown)
	return out, unknown
}

// SwitchPorts are the declared ports of switch sw (and, for ports that
// are cabled but not declared, the cabled ones) with their labels.
func SwitchPorts(s *spec.Spec, sw *spec.Switch) []SwitchPort {
	pe := peers(s)
	seen := map[string]bool{}
	var out []SwitchPort
	add := func(name string, p *spec.Port) {
		if seen[name] {
			return
		}
		seen[name] = true
		l := Labels{Fabric: s.Fabric.Name, Leaf: sw.Name, Port: name}
		var sp SwitchPort
		if peer, ok := pe[sw.Name+":"+name]; ok {
			if h := s.Host(peer.Node); h != nil {
				l.Host, l.NIC = h.Name, peer.Port
				for _, n := range h.NICs {
					if n.Name == peer.Port {
						l.Rail = rail(h, n)
					}
				}
			}
		}
		if p != nil {
			sp.Lossless = s.PortPFC(sw, p)
			sp.SpeedBits = float64(p.Speed)
			sp.Watchdog = s.PortWatchdog(p)
		}
		if sp.SpeedBits == 0 {
			sp.SpeedBits = linkSpeed(s, sw.Name+":"+name)
		}
		if p == nil {
			sp.Lossless = LosslessPriorities(s)
			sp.Watchdog = s.Fabric.PFCWatchdog.Enabled
		}
		sp.Labels = l
		out = append(out, sp)
	}
	for _, p := range sw.Ports {
		add(p.Name, p)
	}
	for _, l := range s.Links {
		for _, e := range []spec.Endpoint{l.A, l.B} {
			if e.Node == sw.Name {
				add(e.Port, nil)
			}
		}
	}
	return out
}

// LosslessPriorities is the fabric's lossless set: the priorities of the
// lossless classes.
func LosslessPriorities(s *spec.Spec) []int {
	var out []int
	for _, c := range s.Classes {
		if c.Lossless {
			out = append(out, c.Priority)
		}
	}
	sort.Ints(out)
	return out
}

func sortStrings(s []string) { sort.Strings(s) }
