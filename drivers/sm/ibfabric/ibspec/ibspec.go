// Package ibspec maps a spec's InfiniBand fabric onto ibfabric's model:
// the intended Topology (InfiniBand switches, the adapters of the hosts
// cabled to them, the links at their width and speed) and the Intent
// validate compares the discovered fabric with (partitions by member
// port, P_Key enforcement, SL2VL, VL arbitration, MTU). The testbed
// (ibsim's net file) and validate's InfiniBand stage share it, so the
// simulated fabric and the read-back agree on every name and GUID.
package ibspec

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Fabric is a spec's InfiniBand fabric in ibfabric's terms, with the way
// back to the spec's names.
type Fabric struct {
	Topology *ibfabric.Topology
	// Endpoints maps an adapter port of the topology to the spec's
	// "host:nic".
	Endpoints map[ibfabric.PortRef]string
	// Ports maps a spec "host:nic" to its adapter port.
	Ports map[string]ibfabric.PortRef
	// SMNode is the adapter of the subnet manager's host (its first
	// cabled one), where opensm and the diagnostics attach.
	SMNode string
}

// HasFabric reports whether the spec declares InfiniBand switches and
// links to them: what the testbed and the read-back need.
func HasFabric(s *spec.Spec) bool {
	if s == nil || s.Fabric == nil || s.Fabric.Transport != spec.InfiniBand {
		return false
	}
	for _, l := range s.Links {
		for _, e := range []spec.Endpoint{l.A, l.B} {
			if sw := s.Switch(e.Node); sw != nil && sw.InfiniBand {
				return true
			}
		}
	}
	return false
}

// HCAName is the topology's name of a host's adapter (RDMA device).
func HCAName(host, device string) string { return host + "-" + device }

// FromSpec builds the topology: every InfiniBand switch, every adapter
// with a NIC cabled to one (a host's NICs on the same RDMA device are
// that adapter's ports 1, 2, ... in declaration order), every link with
// an InfiniBand switch at one end. A NIC's guid is its port GUID, so the
// adapter's node GUID is the port GUID minus the port number (ibsim's and
// most adapters' numbering); adapters without a guid get a derived one.
func FromSpec(s *spec.Spec) (*Fabric, error) {
	f := &Fabric{Topology: &ibfabric.Topology{}, Endpoints: map[ibfabric.PortRef]string{}, Ports: map[string]ibfabric.PortRef{}}
	for _, sw := range s.Switches {
		if sw.InfiniBand {
			f.Topology.Switches = append(f.Topology.Switches, ibfabric.SwitchSpec{Name: sw.Name, Ports: sw.PortCount})
		}
	}
	cabled := map[string]bool{} // host:nic
	for _, l := range s.Links {
		a, b := s.Switch(l.A.Node), s.Switch(l.B.Node)
		if (a != nil && a.InfiniBand) || (b != nil && b.InfiniBand) {
			for _, e := range []spec.Endpoint{l.A, l.B} {
				if e.Kind == spec.KindHost {
					cabled[e.String()] = true
				}
			}
		}
	}
	for _, h := range s.Hosts {
		type hca struct {
			spec  ibfabric.HCASpec
			ports int
		}
		var order []string
		byDev := map[string]*hca{}
		for _, n := range h.NICs {
			ep := h.Name + ":" + n.Name
			if !cabled[ep] {
				continue
			}
			dev := n.Device
			if dev == "" {
				dev = n.Name
			}
			x := byDev[dev]
			if x == nil {
				x = &hca{spec: ibfabric.HCASpec{Name: HCAName(h.Name, dev), Host: h.Name, Desc: h.Name + " " + dev}}
				byDev[dev] = x
				order = append(order, dev)
			}
			x.ports++
			if n.GUID != "" && x.spec.GUID == 0 {
				g, err := strconv.ParseUint(n.GUID[2:], 16, 64)
				if err != nil || g <= uint64(x.ports) {
					return nil, fmt.Errorf("%s: guid %s cannot be port %d of an adapter", ep, n.GUID, x.ports)
				}
				x.spec.GUID = g - uint64(x.ports)
			}
			ref := ibfabric.PortRef{Node: x.spec.Name, Port: x.ports}
			f.Endpoints[ref] = ep
			f.Ports[ep] = ref
		}
		for _, dev := range order {
			x := byDev[dev]
			x.spec.Ports = x.ports
			f.Topology.HCAs = append(f.Topology.HCAs, x.spec)
			if f.SMNode == "" && s.InfiniBand != nil && s.InfiniBand.SubnetManager == h.Name {
				f.SMNode = x.spec.Name
			}
		}
	}
	ref := func(e spec.Endpoint) (ibfabric.PortRef, error) {
		if e.Kind == spec.KindHost {
			r, ok := f.Ports[e.String()]
			if !ok {
				return r, fmt.Errorf("%s is not an adapter port", e)
			}
			return r, nil
		}
		n, err := strconv.Atoi(e.Port)
		if err != nil {
			return ibfabric.PortRef{}, fmt.Errorf("%s: an InfiniBand switch's ports are numbers 1..N", e)
		}
		return ibfabric.PortRef{Node: e.Node, Port: n}, nil
	}
	for _, l := range s.Links {
		a, b := s.Switch(l.A.Node), s.Switch(l.B.Node)
		if !((a != nil && a.InfiniBand) || (b != nil && b.InfiniBand)) {
			continue
		}
		ra, err := ref(l.A)
		if err != nil {
			return nil, err
		}
		rb, err := ref(l.B)
		if err != nil {
			return nil, err
		}
		ls := ibfabric.LinkSpec{A: ra, B: rb, Width: ibfabric.Width(l.Width)}
		if l.IBSpeed != "" {
			if ls.Speed, err = ibfabric.ParseSpeed(l.IBSpeed); err != nil {
				return nil, err
			}
		}
		f.Topology.Links = append(f.Topology.Links, ls)
	}
	f.Topology.Names = map[ibfabric.PortRef]string{}
	for r, ep := range f.Endpoints {
		f.Topology.Names[r] = ep
	}
	if err := f.Topology.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Name is how a finding names a topology node and port in the spec's
// words: an adapter port as "host:nic", a switch port as "switch port
// n", a node by its name (an adapter: "host device").
func (f *Fabric) Name(node string, port int) string {
	return f.Topology.PortName(ibfabric.PortRef{Node: node, Port: port})
}

// Ref is the topology port of a subnet manager's fabric port.
func (f *Fabric) Ref(fp intent.FabricPort) (ibfabric.PortRef, bool) {
	if !fp.Switch {
		r, ok := f.Ports[fp.Node+":"+fp.Port]
		return r, ok
	}
	n, err := strconv.Atoi(fp.Port)
	if err != nil {
		return ibfabric.PortRef{}, false
	}
	return ibfabric.PortRef{Node: fp.Node, Port: n}, true
}

// Want is what a subnet manager's fabric port should hold, in
// ibfabric's terms: the same P_Keys, SL2VL and VL arbitration tables the
// port's state paths carry (intent SubnetManager.Flatten, PathFabric).
func Want(sm *intent.SubnetManager, fp intent.FabricPort) ibfabric.PortWant {
	var w ibfabric.PortWant
	if fp.PKeys != nil {
		names := map[int]string{}
		for _, p := range sm.Partitions {
			names[p.PKey&0x7fff] = p.Name
		}
		w.PKeys = map[uint16]ibfabric.PKeyWant{}
		for pkey, m := range fp.PKeys {
			name := names[pkey]
			if name == "" {
				name = intent.PKeyString(pkey)
			}
			w.PKeys[uint16(pkey&0x7fff)] = ibfabric.PKeyWant{Partition: name, Full: m == "full"}
		}
	}
	if !sm.QoS {
		return w
	}
	if len(sm.SL2VL) == 16 {
		w.SL2VL = sm.SL2VL
	}
	if sm.VLArbHigh != nil {
		w.VLArbHigh = weights(sm.VLArbHigh)
	}
	if sm.VLArbLow != nil {
		w.VLArbLow = weights(sm.VLArbLow)
	}
	return w
}

func weights(t []spec.VLWeight) []ibfabric.VLWeight {
	out := []ibfabric.VLWeight{}
	for _, x := range t {
		out = append(out, ibfabric.VLWeight{VL: x.VL, Weight: x.Weight})
	}
	return out
}

// Intent is what validate and the opensm driver compare the discovered
// fabric with: the topology; every cabled port's tables as the subnet
// manager's state carries them (Want: its partitions' P_Keys, with the
// keywords ALL and ALL_CAS on every adapter port and the adapter's
// P_Keys on the switch port facing it, which opensm copies there under
// its default part_enforce both; the QoS tables when the spec manages
// them); the fabric's RDMA MTU as the operational MTU of every link.
func (f *Fabric) Intent(s *spec.Spec, sm *intent.SubnetManager) ibfabric.Intent {
	in := ibfabric.Intent{Topology: f.Topology, Enforce: true, Tables: map[ibfabric.PortRef]ibfabric.PortWant{}}
	if _, ok := intent.IBMTUCode(s.Fabric.RDMAMTU); ok {
		in.MTU = s.Fabric.RDMAMTU
	}
	if sm == nil {
		return in
	}
	for _, fp := range sm.Ports {
		if r, ok := f.Ref(fp); ok {
			in.Tables[r] = Want(sm, fp)
		}
	}
	byGUID := map[string]ibfabric.PortRef{}
	for ref := range f.Endpoints {
		for _, h := range f.Topology.HCAs {
			if h.Name == ref.Node {
				byGUID[ibfabric.GUID(h.PortGUID(ref.Port))] = ref
			}
		}
	}
	for _, p := range sm.Partitions {
		if p.PKey == intent.DefaultPKey {
			continue
		}
		ip := ibfabric.Partition{Name: p.Name, PKey: uint16(p.PKey)}
		for _, m := range p.Members {
			ref, ok := byGUID[m.ID]
			if !ok {
				continue // a keyword, or a port not on this fabric's cables
			}
			ip.Members = append(ip.Members, ibfabric.Member{Port: ref, Full: m.Full})
		}
		sort.Slice(ip.Members, func(i, j int) bool {
			a, b := ip.Members[i].Port, ip.Members[j].Port
			if a.Node != b.Node {
				return a.Node < b.Node
			}
			return a.Port < b.Port
		})
		in.Partitions = append(in.Partitions, ip)
	}
	if sm.QoS {
		in.SL2VL = sm.SL2VL
		for _, w := range sm.VLArbHigh {
			in.VLArbHigh = append(in.VLArbHigh, ibfabric.VLWeight{VL: w.VL, Weight: w.Weight})
		}
		for _, w := range sm.VLArbLow {
			in.VLArbLow = append(in.VLArbLow, ibfabric.VLWeight{VL: w.VL, Weight: w.Weight})
		}
	}
	return in
}
