package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/ibsim"
)

// EthFaultKinds are the Ethernet faults `fabctl testbed fault` makes on
// the local testbed's veth cabling, in the order the help lists them.
// PORT is a switch port (leaf1:Ethernet0) or a host NIC (h1:eth1: the
// switch port its cable ends at).
var EthFaultKinds = []ibsim.FaultKind{
	{Name: "miswire", Args: []string{"HOST:NIC", "HOST:NIC"}, Usage: "swap the two NICs' cables at the switch (the veth ends are renamed, so each host's NIC is on the other's old port); again to swap them back"},
	{Name: "link-down", Args: []string{"PORT"}, Usage: "pull the cable at the switch port: its veth end is set down, the host sees carrier loss, the switch's configuration stays up"},
	{Name: "link-up", Args: []string{"PORT"}, Usage: "plug it back"},
	{Name: "speed", Args: []string{"PORT", "SPEED"}, Usage: "make the switch port report SPEED (1G, 25G) as its trained speed; 10G (the veth's) undoes it. A veth has no settable speed: the host end still reads 10G"},
}

// EthFaultArity is the number of arguments an Ethernet fault takes.
func EthFaultArity(kind string) (int, bool) {
	for _, f := range EthFaultKinds {
		if f.Name == kind {
			return len(f.Args), true
		}
	}
	return 0, false
}

// InjectEth makes an Ethernet fault on the testbed in dir and says what
// it did, in the spec's names. The fault is recorded in the record
// (Record.Faults), where the switches' link sources and status read it.
// It returns once the fabric shows it: LLDP re-heard on a re-cabled
// port (a few seconds at most).
func InjectEth(ctx context.Context, dir, kind string, args []string) (string, error) {
	n, ok := EthFaultArity(kind)
	if !ok {
		return "", fmt.Errorf("unknown Ethernet fault %q", kind)
	}
	if len(args) != n {
		return "", fmt.Errorf("fault %s takes %d argument(s), got %d", kind, n, len(args))
	}
	r, err := ReadRecord(dir)
	if err != nil {
		return "", err
	}
	if len(r.Ports) == 0 {
		return "", fmt.Errorf("the testbed in %s cables no switch port (its spec has no Ethernet link between a switch and a namespace host or another switch)", dir)
	}
	h, err := nsHandle(r.FabricNetns)
	if err != nil {
		return "", err
	}
	defer h.Close()
	switch kind {
	case "miswire":
		return miswire(ctx, r, h, args[0], args[1])
	case "link-down", "link-up":
		p, err := r.port(args[0])
		if err != nil {
			return "", err
		}
		key := p.Switch + ":" + p.Port
		l, err := h.LinkByName(p.Veth)
		if err != nil {
			return "", fmt.Errorf("%s (veth %s): %w", key, p.Veth, err)
		}
		if kind == "link-down" {
			if err := h.LinkSetDown(l); err != nil {
				return "", err
			}
			if !slices.Contains(r.Faults.Down, key) {
				r.Faults.Down = append(r.Faults.Down, key)
			}
			if err := writeRecord(r); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s is down: its cable's far end (%s) has no carrier; the switch's configuration stays up", key, r.farEnd(p)), nil
		}
		if err := h.LinkSetUp(l); err != nil {
			return "", err
		}
		r.Faults.Down = slices.DeleteFunc(r.Faults.Down, func(k string) bool { return k == key })
		if err := writeRecord(r); err != nil {
			return "", err
		}
		r.awaitLLDP(ctx, []PortVeth{p})
		return fmt.Sprintf("%s is up again (to %s)", key, r.farEnd(p)), nil
	case "speed":
		p, err := r.port(args[0])
		if err != nil {
			return "", err
		}
		mbps, ok := linktruth.ParseSpeed(args[1])
		if !ok || mbps <= 0 {
			return "", fmt.Errorf("speed %q: write it as 1G, 25G, 100M", args[1])
		}
		key := p.Switch + ":" + p.Port
		if mbps == vethSpeedMbps {
			delete(r.Faults.SpeedMbps, key)
		} else {
			if r.Faults.SpeedMbps == nil {
				r.Faults.SpeedMbps = map[string]int64{}
			}
			r.Faults.SpeedMbps[key] = mbps
		}
		if err := writeRecord(r); err != nil {
			return "", err
		}
		if mbps == vethSpeedMbps {
			return fmt.Sprintf("%s reports the veth's %s again", key, linktruth.SpeedString(mbps)), nil
		}
		return fmt.Sprintf("%s reports a link trained at %s (its far end %s still reads the veth's %s)", key, linktruth.SpeedString(mbps), r.farEnd(p), linktruth.SpeedString(vethSpeedMbps)), nil
	}
	return "", fmt.Errorf("unknown Ethernet fault %q", kind)
}

// port finds a switch port by SWITCH:PORT, or the switch port a host
// NIC's cable ends at by HOST:NIC.
func (r *Record) port(ref string) (PortVeth, error) {
	for _, p := range r.Ports {
		if p.Switch+":"+p.Port == ref {
			return p, nil
		}
	}
	for _, l := range r.Links {
		if l.Host+":"+l.NIC == ref && l.Switch != "" {
			return r.port(l.Switch + ":" + l.Port)
		}
	}
	var names []string
	for _, p := range r.Ports {
		names = append(names, p.Switch+":"+p.Port)
	}
	return PortVeth{}, fmt.Errorf("%s is not a cabled port of this testbed (a SWITCH:PORT or HOST:NIC: %s)", ref, strings.Join(names, ", "))
}

// farEnd names what the cable at p ends at now.
func (r *Record) farEnd(p PortVeth) string {
	for _, l := range r.Links {
		if l.Peer == p.Veth {
			return l.Host + ":" + l.NIC
		}
	}
	for _, t := range r.Trunks {
		other := ""
		switch p.Veth {
		case t.A:
			other = t.B
		case t.B:
			other = t.A
		default:
			continue
		}
		for _, q := range r.Ports {
			if q.Veth == other {
				return q.Switch + ":" + q.Port
			}
		}
	}
	return "nothing"
}

// miswire swaps the switch ends of two host NICs' cables: both veth
// ends go down (an interface is renamed only when down,
// net/core/dev.c dev_change_name: -EBUSY while IFF_UP), trade names
// through a temporary one and come back up, so each NIC is now on the
// other's old switch port. The switches' lldpd take the renamed ends as
// new ports and get their Port IDs again.
func miswire(ctx context.Context, r *Record, h *netlink.Handle, a, b string) (string, error) {
	ia, ib := -1, -1
	for i, l := range r.Links {
		switch l.Host + ":" + l.NIC {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	for _, x := range []struct {
		ref string
		i   int
	}{{a, ia}, {b, ib}} {
		if x.i < 0 || r.Links[x.i].Switch == "" {
			return "", fmt.Errorf("%s is not a host NIC cabled to a switch on this testbed", x.ref)
		}
	}
	if ia == ib {
		return "", errors.New("miswire takes two different NICs")
	}
	la, lb := &r.Links[ia], &r.Links[ib]
	va, vb := la.Peer, lb.Peer
	tmp := fmt.Sprintf("fabswap%d", time.Now().UnixNano()%100000000)
	steps := []struct{ from, to string }{{va, tmp}, {vb, va}, {tmp, vb}}
	for _, v := range []string{va, vb} {
		l, err := h.LinkByName(v)
		if err != nil {
			return "", fmt.Errorf("veth %s: %w", v, err)
		}
		if err := h.LinkSetDown(l); err != nil {
			return "", err
		}
	}
	for _, s := range steps {
		l, err := h.LinkByName(s.from)
		if err == nil {
			err = h.LinkSetName(l, s.to)
		}
		if err != nil {
			return "", fmt.Errorf("rename veth %s to %s: %w (the testbed is half re-cabled: fabctl testbed down, then up)", s.from, s.to, err)
		}
	}
	la.Peer, lb.Peer = vb, va
	la.Switch, lb.Switch = lb.Switch, la.Switch
	la.Port, lb.Port = lb.Port, la.Port
	pair := [2]string{a, b}
	rev := [2]string{b, a}
	if i := slices.IndexFunc(r.Faults.Miswired, func(m [2]string) bool { return m == pair || m == rev }); i >= 0 {
		r.Faults.Miswired = slices.Delete(r.Faults.Miswired, i, i+1)
	} else {
		r.Faults.Miswired = append(r.Faults.Miswired, pair)
	}
	if err := writeRecord(r); err != nil {
		return "", err
	}
	var ends []PortVeth
	for _, v := range []string{va, vb} {
		for _, p := range r.Ports {
			if p.Veth != v {
				continue
			}
			ends = append(ends, p)
			if slices.Contains(r.Faults.Down, p.Switch+":"+p.Port) {
				continue // pulled: stays down
			}
			l, err := h.LinkByName(v)
			if err == nil {
				err = h.LinkSetUp(l)
			}
			if err != nil {
				return "", err
			}
		}
	}
	for i := range r.LLDP {
		ag := &r.LLDP[i]
		if slices.ContainsFunc(ends, func(p PortVeth) bool { return "switch."+p.Switch == ag.Device }) {
			if err := reconfigurePorts(ctx, ag); err != nil {
				return "", err
			}
		}
	}
	r.awaitLLDP(ctx, ends)
	verb := "now on"
	if !slices.Contains(r.Faults.Miswired, pair) {
		verb = "back on"
	}
	return fmt.Sprintf("%s is %s %s:%s and %s %s %s:%s", a, verb, la.Switch, la.Port, b, verb, lb.Switch, lb.Port), nil
}

// awaitLLDP waits (8 s at most: lldpd's transmit interval, carrier
// detection and the TTL of what was heard before) until the switch agent of each port hears its
// far end, so a read right after the fault meets it. A port whose far
// end is down is not waited for.
func (r *Record) awaitLLDP(ctx context.Context, ports []PortVeth) {
	deadline := time.Now().Add(8 * time.Second)
	for _, p := range ports {
		var ag *LLDPAgent
		for i := range r.LLDP {
			if r.LLDP[i].Device == "switch."+p.Switch {
				ag = &r.LLDP[i]
			}
		}
		if ag == nil || slices.Contains(r.Faults.Down, p.Switch+":"+p.Port) {
			continue
		}
		far := r.farEnd(p)
		name, _, _ := strings.Cut(far, ":")
		r.awaitHeard(ctx, deadline, ag.Socket, p.Veth, func(n linktruth.Neighbor) bool { return r.advertises(n.SystemName, name) })
		// and the host on the other end hears the port's ID
		for _, l := range r.Links {
			if l.Peer != p.Veth {
				continue
			}
			for _, ha := range r.LLDP {
				if ha.Device == "host."+l.Host || (strings.HasPrefix(ha.Device, "host.") && ha.Netns == l.Netns) {
					r.awaitHeard(ctx, deadline, ha.Socket, l.NIC, func(n linktruth.Neighbor) bool { return n.PortID == p.Port })
					break
				}
			}
		}
	}
}

// awaitHeard polls an agent until ifc hears neighbours and ok takes
// each: the one the cable now ends at, and no other left from before
// (a neighbour lives its TTL, tx-hold 4 times lldpTxInterval rounded
// up to a second, when lldpd missed the short carrier loss).
func (r *Record) awaitHeard(ctx context.Context, deadline time.Time, socket, ifc string, ok func(linktruth.Neighbor) bool) {
	for time.Now().Before(deadline) && ctx.Err() == nil {
		heard, err := lldpNeighbors(ctx, socket)
		if err == nil && len(heard[ifc]) > 0 && !slices.ContainsFunc(heard[ifc], func(n linktruth.Neighbor) bool { return !ok(n) }) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// advertises reports whether system name sys is what device dev's
// agent advertises.
func (r *Record) advertises(sys, dev string) bool {
	for _, a := range r.LLDP {
		if a.Device == "switch."+dev || a.Device == "host."+dev {
			return a.Name == sys
		}
	}
	return false
}
