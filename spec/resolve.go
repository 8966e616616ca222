package spec

import (
	"fmt"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// DefaultClasses are the classes a fabric gets when the spec declares none:
// the common RoCEv2 AI-pod recipe (NVIDIA `nv set qos roce`, SONiC/Dell
// defaults): RoCE data DSCP 26 -> priority 3 lossless with ECN at
// 150KB/1.5MB/100 %, CNP DSCP 48 -> priority 6 strict, everything else
// priority 0; ETS 50/50 between data and default.
func DefaultClasses(t Transport, block hcl.Range) []*Class {
	src := func() Source { return Source{Block: block} }
	switch t {
	case InfiniBand:
		sl := 0
		return []*Class{{Name: "default", Role: RoleOther, Priority: 0, Default: true, Bandwidth: 100, SL: &sl, Src: src()}}
	case IWARP:
		// iWARP runs over TCP: no PFC needed (TR-3); ECN helps TCP.
		return []*Class{
			{Name: "rdma", Role: RoleRDMA, Priority: 3, DSCP: []int{26}, Bandwidth: 50,
				ECN: &ECNProfile{Min: 150_000, Max: 1_500_000, Probability: 100, Src: src()}, Src: src()},
			{Name: "default", Role: RoleOther, Priority: 0, Default: true, Bandwidth: 50, Src: src()},
		}
	}
	roce := &Class{Name: "roce", Role: RoleRDMA, Priority: 3, DSCP: []int{26}, Lossless: true, Bandwidth: 50,
		ECN: &ECNProfile{Min: 150_000, Max: 1_500_000, Probability: 100, Src: src()}, Src: src()}
	cnp := &Class{Name: "cnp", Role: RoleCNP, Priority: 6, DSCP: []int{48}, Strict: true, Src: src()}
	def := &Class{Name: "default", Role: RoleOther, Priority: 0, Default: true, Bandwidth: 50, Src: src()}
	if t == RoCEv1 {
		// RoCEv1 has no IP header: classes are matched on PCP only, and
		// there are no ECN bits to mark (so no DCQCN and no CNP class).
		roce.DSCP, roce.ECN = nil, nil
		return []*Class{roce, def}
	}
	return []*Class{roce, cnp, def}
}

// resolve fills defaults, builds indexes and checks every cross-reference.
func (l *loader) resolve() {
	s := l.spec
	if len(s.Classes) == 0 {
		s.Classes = DefaultClasses(s.Fabric.Transport, s.Fabric.Src.Block)
	}
	s.switches = make(map[string]*Switch, len(s.Switches))
	s.hosts = make(map[string]*Host, len(s.Hosts))
	s.classes = map[string]*Class{}
	s.credentials = map[string]*Credentials{}

	for _, c := range s.Credentials {
		if prev, ok := s.credentials[c.Name]; ok {
			l.dup("credentials", c.Name, c.Src.Block, prev.Src.Block)
			continue
		}
		s.credentials[c.Name] = c
	}
	defaults := 0
	for _, c := range s.Classes {
		if prev, ok := s.classes[c.Name]; ok {
			l.dup("class", c.Name, c.Src.Block, prev.Src.Block)
			continue
		}
		s.classes[c.Name] = c
		if c.Default {
			defaults++
			if defaults > 1 {
				rng := c.Src.Attr("default")
				l.errf(&rng, "Two default classes", "class %q: only one class can be the default (the class of every unclaimed DSCP).", c.Name)
			}
		}
	}
	// Device names share one namespace: endpoints say "name:port".
	devices := make(map[string]hcl.Range, len(s.Switches)+len(s.Hosts))
	for _, sw := range s.Switches {
		if prev, ok := devices[sw.Name]; ok {
			l.dup("device", sw.Name, sw.Src.Block, prev)
			continue
		}
		devices[sw.Name] = sw.Src.Block
		s.switches[sw.Name] = sw
		l.credRef(sw.Credentials, sw.Src, fmt.Sprintf("switch %q", sw.Name))
		if sw.Address == "" && !sw.InfiniBand && sw.Src.Block.Filename != "" {
			l.errf(sw.Src.Block.Ptr(), "Missing address", "switch %q needs a management address (address = \"10.0.0.11\" or \"host:port\").", sw.Name)
		}
	}
	for _, h := range s.Hosts {
		if prev, ok := devices[h.Name]; ok {
			l.dup("device", h.Name, h.Src.Block, prev)
			continue
		}
		devices[h.Name] = h.Src.Block
		s.hosts[h.Name] = h
		l.credRef(h.Credentials, h.Src, fmt.Sprintf("host %q", h.Name))
		if h.Connect.Kind == "ssh" && h.Address == "" {
			l.errf(h.Src.Block.Ptr(), "Missing address", "host %q is reached over SSH and needs address = \"...\" (or connect = \"local\" / \"netns:NAME\").", h.Name)
		}
	}
	l.resolveLinks()
	l.unmanagedNames()
	s.lossless = s.LosslessPriorities()
	for _, v := range s.Validations {
		if v.Class != "" && s.classes[v.Class] == nil {
			rng := v.Src.Attr("class")
			l.unknownRef(rng, "class", v.Class, keys(s.classes), fmt.Sprintf("validate %q", v.Name))
		}
	}
	if ib := s.InfiniBand; ib != nil {
		if ib.SubnetManager != "" && s.hosts[ib.SubnetManager] == nil {
			l.unknownRef(ib.Src.Attr("subnet_manager"), "host", ib.SubnetManager, keys(s.hosts), "infiniband subnet_manager")
		}
		for _, p := range ib.Partitions {
			for _, m := range p.Members {
				if m.Endpoint == "ALL" || m.Endpoint == "SELF" {
					continue
				}
				node, nic, _ := cut(m.Endpoint)
				h := s.hosts[node]
				switch {
				case h == nil:
					l.unknownRef(p.Src.Attr("members"), "host", node, keys(s.hosts), fmt.Sprintf("partition %q member", p.Name))
				case nic != "" && h.NIC(nic) == nil:
					l.unknownRef(p.Src.Attr("members"), "nic", nic, nicNames(h), fmt.Sprintf("partition %q member on host %q", p.Name, node))
				}
			}
		}
	}
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func (l *loader) credRef(name string, src Source, what string) {
	if name == "" || l.spec.credentials[name] != nil {
		return
	}
	l.unknownRef(src.Attr("credentials"), "credentials", name, keys(l.spec.credentials), what)
}

func (l *loader) dup(kind, name string, rng, prev hcl.Range) {
	l.errf(&rng, "Duplicate "+kind+" name", "%s %q is already declared at %s. Names must be unique; under for_each, set a distinct name per instance.", kind, name, prev)
}

func (l *loader) unknownRef(rng hcl.Range, kind, name string, candidates []string, what string) {
	detail := fmt.Sprintf("%s refers to %s %q, which the spec does not declare.", what, kind, name)
	if s := suggest(name, candidates); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	l.errf(&rng, "Reference to undeclared "+kind, "%s", detail)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func nicNames(h *Host) []string {
	out := make([]string, 0, len(h.NICs))
	for _, n := range h.NICs {
		out = append(out, n.Name)
	}
	return out
}

// resolveLinks checks link endpoints, creates implicit switch ports and
// settles each link's speed.
func (l *loader) resolveLinks() {
	s := l.spec
	// A port or NIC takes one cable: each resolved end records its link
	// (Port.link, NIC.link), so a second link on it is found without an
	// index of every endpoint by name (490k entries at 16,384 hosts).
	//
	// A first pass finds each endpoint's device and counts the ports the
	// links name on each switch, so that the port maps and lists are made
	// to size once: grown by doubling, they took a third of this function
	// at 16,384 hosts.
	devs := make([][2]device, len(s.Links))
	named := make(map[*Switch]int, len(s.switches))
	for i, lk := range s.Links {
		for j, node := range [2]string{lk.A.Node, lk.B.Node} {
			if sw := s.switches[node]; sw != nil {
				devs[i][j].sw = sw
				named[sw]++
			} else {
				devs[i][j].host = s.hosts[node]
			}
		}
	}
	total := 0
	for sw, n := range named {
		m := make(map[string]*Port, len(sw.ports)+n)
		for k, p := range sw.ports {
			m[k] = p
		}
		sw.ports = m
		sw.Ports = slices.Grow(sw.Ports, n)
		total += n
	}
	var implied []Port // ports implied by links are carved from one slab
	kept := s.Links[:0]
	for li, lk := range s.Links {
		ok := true
		var ends [2]end
		for i, ep := range []*Endpoint{&lk.A, &lk.B} {
			e, found := l.resolveEndpoint(ep, devs[li][i], &implied, total)
			if !found {
				ok = false
				continue
			}
			ends[i] = e
			var slot **Link
			if e.port != nil {
				slot = &e.port.link
			} else {
				slot = &e.nic.link
			}
			if prev := *slot; prev != nil {
				rng := ep.Src
				l.errf(&rng, "Endpoint used twice", "%s is already an endpoint of %s (%s). A port or NIC takes one cable.", ep.String(), prev.Address(), prev.Src.Block)
				ok = false
			}
			*slot = lk
		}
		if ok && lk.A.Node == lk.B.Node {
			rng := lk.Src.Attr("endpoints")
			l.errf(&rng, "Link loops back", "%s connects %s to itself.", lk.Address(), lk.A.Node)
			ok = false
		}
		if !ok {
			continue
		}
		l.linkSpeed(lk, ends)
		lk.ends = ends
		kept = append(kept, lk)
	}
	s.Links = kept
}

// end is what a resolved endpoint names: a switch port or a host NIC.
type end struct {
	sw   *Switch
	port *Port
	host *Host
	nic  *NIC
}

func (e end) speed() (BitRate, hcl.Range) {
	if e.port != nil {
		return e.port.Speed, e.port.Src.Attr("speed")
	}
	return e.nic.Speed, e.nic.Src.Attr("speed")
}

// src is the source of the end's port or NIC block.
func (e end) src() Source {
	if e.port != nil {
		return e.port.Src
	}
	return e.nic.Src
}

func (e end) setSpeedIfUnset(r BitRate) {
	if e.port != nil {
		if e.port.Speed == 0 {
			e.port.Speed = r
		}
	} else if e.nic.Speed == 0 {
		e.nic.Speed = r
	}
}

// device is the switch or host an endpoint names (both nil: neither).
type device struct {
	sw   *Switch
	host *Host
}

// resolveEndpoint resolves ep on its device d (found by name). A port
// the links imply is carved from *slab, made with room for n when empty.
func (l *loader) resolveEndpoint(ep *Endpoint, d device, slab *[]Port, n int) (end, bool) {
	s := l.spec
	if sw := d.sw; sw != nil {
		ep.Kind = KindSwitch
		p := sw.Port(ep.Port)
		if p == nil {
			if sw.declaredPorts > 0 {
				// The switch lists its ports: an unlisted one is a typo.
				names := make([]string, 0, sw.declaredPorts)
				for _, p := range sw.Ports[:sw.declaredPorts] {
					names = append(names, p.Name)
				}
				l.unknownRef(ep.Src, "port", ep.Port, names, fmt.Sprintf("link endpoint %s: switch %q", ep, sw.Name))
				return end{}, false
			}
			// Ports not declared are implied by links.
			if len(*slab) == cap(*slab) {
				*slab = make([]Port, 0, min(n, 4096))
			}
			*slab = append(*slab, Port{Name: ep.Port, Src: Source{Block: ep.Src}})
			p = &(*slab)[len(*slab)-1]
			l.ids().port(sw, p)
			sw.Ports = append(sw.Ports, p)
			sw.ports[p.Name] = p
		}
		return end{sw: sw, port: p}, true
	}
	if h := d.host; h != nil {
		ep.Kind = KindHost
		n := h.NIC(ep.Port)
		if n == nil {
			l.unknownRef(ep.Src, "nic", ep.Port, nicNames(h), fmt.Sprintf("link endpoint %s: host %q", ep, h.Name))
			return end{}, false
		}
		return end{host: h, nic: n}, true
	}
	names := append(keys(s.switches), keys(s.hosts)...)
	l.unknownRef(ep.Src, "device", ep.Node, names, fmt.Sprintf("link endpoint %s", ep))
	return end{}, false
}

// linkSpeed settles a link's speed from the link, its ports or NICs, and
// records it on both ends.
func (l *loader) linkSpeed(lk *Link, ends [2]end) {
	sa, ra := ends[0].speed()
	sb, rb := ends[1].speed()
	if lk.Speed == 0 {
		switch {
		case sa != 0:
			lk.Speed = sa
		case sb != 0:
			lk.Speed = sb
		case lk.Src.Has("speed") || ends[0].src().Has("speed") || ends[1].src().Has("speed"):
			return // a speed was set but did not decode: that error is the one to read
		default:
			rng := lk.Src.Attr("endpoints")
			l.errf(&rng, "Link speed unknown", "%s: set speed on the link (speed = \"400G\") or on the port/NIC at either end.", lk.Address())
			return
		}
	}
	for _, c := range []struct {
		sp  BitRate
		rng hcl.Range
		ep  Endpoint
	}{{sa, ra, lk.A}, {sb, rb, lk.B}} {
		if c.sp != 0 && c.sp != lk.Speed {
			rng := c.rng
			l.errf(&rng, "Speed mismatch", "%s runs at %s but %s is declared %s.", lk.Address(), lk.Speed, c.ep, c.sp)
		}
	}
	ends[0].setSpeedIfUnset(lk.Speed)
	ends[1].setSpeedIfUnset(lk.Speed)
}
