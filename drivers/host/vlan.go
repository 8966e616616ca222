package host

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/vishvananda/netlink"
)

// The RDMA VLAN interface of a NIC (nic "ens1f0" { vlan = 100 }): an
// 802.1Q netdev on the NIC that carries the spec's addresses and MTU, and
// whose egress-qos-map turns an skb priority into the PCP of the tag. On
// RoCEv1 that map is what puts RDMA on the lossless PCP: rdma_cm derives
// the service level of a VLAN GID through it (iboe_tos_to_sl:
// rt_tos2priority(tos) -> egress map -> PCP) and the NIC sends the SL as
// the PCP; traffic the kernel sends on the interface gets it directly.
//
// State paths (intent.flattenVLAN): nic/<n>/vlan/{interface,id,mtu,
// addresses,egress_qos_map}; the "vlan" step settles all of them.
//
// vishvananda/netlink v1.3.1 encodes and parses IFLA_VLAN_EGRESS_QOS, so
// no raw netlink is needed: LinkAdd creates the VLAN with its map, and a
// map change is a LinkModify (RTM_NEWLINK on the existing index, which the
// kernel hands to vlan_changelink) carrying only the name, the VLAN id
// (ignored by changelink) and the map. The kernel has no way to delete an
// egress entry: a stale one is set to PCP 0, which is also how the kernel
// stops dumping it.

// vlanSnap is a VLAN interface before a transaction, for restore.
type vlanSnap struct {
	Name    string      `json:"name"`
	Existed bool        `json:"existed"`
	ID      int         `json:"id,omitempty"`
	MTU     int         `json:"mtu,omitempty"`
	Up      bool        `json:"up,omitempty"`
	Egress  map[int]int `json:"egress_qos_map,omitempty"`
	Addrs   []string    `json:"addresses,omitempty"`
}

// lookupVLAN finds the NIC's VLAN interface. It returns nil when no link
// has the name, and an error (what is wrong, what to do) when the name is
// taken by something that is not a VLAN of the NIC, or when the NIC
// already has a VLAN with this id under another name (the kernel allows
// one per id).
func lookupVLAN(s *session, n *intent.NIC, parent netlink.Link) (*netlink.Vlan, error) {
	l, err := s.nl.LinkByName(n.VLANName)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if !errors.As(err, &nf) {
			return nil, fmt.Errorf("%s: %w", n.VLANName, err)
		}
		links, err := s.nl.LinkList()
		if err != nil {
			return nil, fmt.Errorf("%s: list links: %w", n.Name, err)
		}
		for _, o := range links {
			if v, ok := o.(*netlink.Vlan); ok && v.ParentIndex == parent.Attrs().Index && v.VlanId == n.VLAN {
				return nil, fmt.Errorf("%s already has VLAN %d as %s; rename it (ip link set dev %s name %s) or set vlan_interface = %q on the nic",
					n.Name, n.VLAN, v.Name, v.Name, n.VLANName, v.Name)
			}
		}
		return nil, nil
	}
	v, ok := l.(*netlink.Vlan)
	if !ok || v.ParentIndex != parent.Attrs().Index {
		what := "a " + l.Type() + " link"
		if ok {
			what = "a VLAN of another device (ifindex " + strconv.Itoa(v.ParentIndex) + ")"
		}
		return nil, fmt.Errorf("%s exists but is %s, not a VLAN of %s; remove or rename it, or set vlan_interface on the nic", n.VLANName, what, n.Name)
	}
	return v, nil
}

// liveEgress is a VLAN's egress-qos-map without the PCP-0 entries.
func liveEgress(v *netlink.Vlan) map[int]int {
	m := map[int]int{}
	for from, to := range v.EgressQosMap {
		if to != 0 {
			m[int(from)] = int(to)
		}
	}
	return m
}

// readVLAN reads the NIC's VLAN interface into the state (nothing when it
// does not exist: the plan creates it).
func readVLAN(s *session, n *intent.NIC, parent netlink.Link, st intent.State, unsup map[string]string) error {
	p := "nic/" + n.Name + "/vlan/"
	v, err := lookupVLAN(s, n, parent)
	if err != nil {
		unsup["nic/"+n.Name+"/vlan"] = err.Error()
		return nil
	}
	if v == nil {
		return nil
	}
	st[p+"interface"] = v.Name
	st[p+"id"] = strconv.Itoa(v.VlanId)
	st[p+"mtu"] = strconv.Itoa(v.MTU)
	st[p+"egress_qos_map"] = intent.FormatQoSMap(liveEgress(v))
	addrs, err := readAddrs(s, v)
	if err != nil {
		return fmt.Errorf("%s: addresses: %w", v.Name, err)
	}
	st[p+"addresses"] = strings.Join(addrs, ",")
	return nil
}

// prepareVLAN snapshots the VLAN interface and checks that it can be made.
func prepareVLAN(s *session, n *intent.NIC) (*vlanSnap, []string) {
	parent, err := s.nl.LinkByName(n.Name)
	if err != nil {
		return nil, nil // prepare already reports the missing NIC
	}
	v, err := lookupVLAN(s, n, parent)
	if err != nil {
		return nil, []string{err.Error()}
	}
	sn := &vlanSnap{Name: n.VLANName}
	if v == nil {
		return sn, nil
	}
	sn.Existed, sn.ID, sn.MTU, sn.Up = true, v.VlanId, v.MTU, v.Attrs().Flags&unixIFFUp != 0
	sn.Egress = liveEgress(v)
	if sn.Addrs, err = readAddrs(s, v); err != nil {
		return nil, []string{fmt.Sprintf("%s: addresses: %v", v.Name, err)}
	}
	return sn, nil
}

// applyVLAN makes the NIC's VLAN interface what the intent says: created
// (or re-created when its id differs) with the egress map, MTU, addresses
// and up; on an existing one only what differs is set.
func applyVLAN(s *session, n *intent.NIC) error {
	parent, err := s.nl.LinkByName(n.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	v, err := lookupVLAN(s, n, parent)
	if err != nil {
		return err
	}
	want := n.VLANEgressMap()
	if v != nil && v.VlanId != n.VLAN {
		// The id of a VLAN device is fixed at creation.
		if err := s.nl.LinkDel(v); err != nil {
			return fmt.Errorf("%s: delete to change the VLAN id %d -> %d: %w", v.Name, v.VlanId, n.VLAN, err)
		}
		v = nil
	}
	if v == nil {
		if v, err = addVLAN(s, n.VLANName, parent, n.VLAN, n.MTU, want); err != nil {
			return err
		}
	} else {
		if err := setEgress(s, v, want); err != nil {
			return err
		}
		if v.MTU != n.MTU {
			if err := s.nl.LinkSetMTU(v, n.MTU); err != nil {
				return fmt.Errorf("%s: set mtu %d: %w", v.Name, n.MTU, err)
			}
		}
	}
	if err := setAddrs(s, v, n.Addresses); err != nil {
		return err
	}
	// A VLAN cannot be up on a down NIC (ENETDOWN), and the RDMA interface
	// is useless down: the NIC comes up first (a rollback puts it back).
	if parent.Attrs().Flags&unixIFFUp == 0 {
		if err := s.nl.LinkSetUp(parent); err != nil {
			return fmt.Errorf("%s: set up: %w", n.Name, err)
		}
	}
	if err := s.nl.LinkSetUp(v); err != nil {
		return fmt.Errorf("%s: set up: %w", v.Name, err)
	}
	return nil
}

// addVLAN creates a VLAN interface and returns it as the kernel made it.
func addVLAN(s *session, name string, parent netlink.Link, id, mtu int, egress map[int]int) (*netlink.Vlan, error) {
	la := netlink.NewLinkAttrs() // TxQLen -1: leave the kernel's default
	la.Name, la.ParentIndex, la.MTU = name, parent.Attrs().Index, mtu
	nv := &netlink.Vlan{LinkAttrs: la, VlanId: id, EgressQosMap: qosU32(egress)}
	if err := s.nl.LinkAdd(nv); err != nil {
		hint := ""
		if mtu > parent.Attrs().MTU {
			hint = fmt.Sprintf(" (the VLAN MTU %d exceeds %s's MTU %d)", mtu, parent.Attrs().Name, parent.Attrs().MTU)
		}
		return nil, fmt.Errorf("ip link add link %s name %s type vlan id %d: %w%s", parent.Attrs().Name, name, id, err, hint)
	}
	l, err := s.nl.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: read back after create: %w", name, err)
	}
	v, ok := l.(*netlink.Vlan)
	if !ok {
		return nil, fmt.Errorf("%s: created, but reads back as a %s link", name, l.Type())
	}
	return v, nil
}

// setEgress makes a VLAN's egress map exactly want (stale entries -> 0),
// sending nothing when it already is.
func setEgress(s *session, v *netlink.Vlan, want map[int]int) error {
	have := liveEgress(v)
	if intent.FormatQoSMap(have) == intent.FormatQoSMap(want) {
		return nil
	}
	m := egressUpdate(have, want)
	// Only what vlan_changelink reads: a zero LinkAttrs would also send
	// IFLA_TXQLEN 0 (TxQLen -1 leaves it out), and the id must be the
	// current one to pass vlan_validate. No index: the kernel then finds
	// the link by IFLA_IFNAME, which LinkModify always sends; with an
	// index too it reads the name as a rename, and renaming an up device
	// is EBUSY even to the same name (dev_change_name).
	la := netlink.NewLinkAttrs()
	la.Name = v.Name
	mod := &netlink.Vlan{LinkAttrs: la, VlanId: v.VlanId, EgressQosMap: qosU32(m)}
	if err := s.nl.LinkModify(mod); err != nil {
		return fmt.Errorf("ip link set dev %s type vlan egress-qos-map %s: %w", v.Name, qosArgs(m), err)
	}
	return nil
}

// egressUpdate is what to send to turn have into want: want plus a PCP-0
// entry for every mapping want does not have.
func egressUpdate(have, want map[int]int) map[int]int {
	m := make(map[int]int, len(have)+len(want))
	for k := range have {
		m[k] = 0
	}
	for k, v := range want {
		m[k] = v
	}
	return m
}

func qosU32(m map[int]int) map[uint32]uint32 {
	out := make(map[uint32]uint32, len(m))
	for k, v := range m {
		out[uint32(k)] = uint32(v)
	}
	return out
}

// qosArgs is a map as ip-link(8) takes it: "3:3 5:0", sorted.
func qosArgs(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(k) + ":" + strconv.Itoa(m[k])
	}
	return strings.Join(parts, " ")
}

// parseQoSMap reads the state form back ("3:3,5:5"); bad pairs are skipped
// (the state comes from FormatQoSMap on both sides).
func parseQoSMap(s string) map[int]int {
	m := map[int]int{}
	for _, p := range splitList(s) {
		a, b, ok := strings.Cut(p, ":")
		from, err1 := strconv.Atoi(a)
		to, err2 := strconv.Atoi(b)
		if ok && err1 == nil && err2 == nil {
			m[from] = to
		}
	}
	return m
}

// restoreVLAN puts a VLAN interface back as the snapshot saw it: removed
// when the transaction created it.
func restoreVLAN(s *session, parentName string, sn *vlanSnap) error {
	l, err := s.nl.LinkByName(sn.Name)
	var v *netlink.Vlan
	if err == nil {
		v, _ = l.(*netlink.Vlan)
	}
	if !sn.Existed {
		if v != nil {
			if err := s.nl.LinkDel(v); err != nil {
				return fmt.Errorf("%s: delete the VLAN this transaction created: %w", sn.Name, err)
			}
		}
		return nil
	}
	if v == nil || v.VlanId != sn.ID {
		parent, err := s.nl.LinkByName(parentName)
		if err != nil {
			return fmt.Errorf("%s: %w", parentName, err)
		}
		if v != nil {
			if err := s.nl.LinkDel(v); err != nil {
				return fmt.Errorf("%s: %w", sn.Name, err)
			}
		}
		if v, err = addVLAN(s, sn.Name, parent, sn.ID, sn.MTU, sn.Egress); err != nil {
			return err
		}
	} else {
		if err := setEgress(s, v, sn.Egress); err != nil {
			return err
		}
		if v.MTU != sn.MTU {
			if err := s.nl.LinkSetMTU(v, sn.MTU); err != nil {
				return fmt.Errorf("%s: mtu: %w", sn.Name, err)
			}
		}
	}
	if err := setAddrs(s, v, sn.Addrs); err != nil {
		return err
	}
	if sn.Up {
		return s.nl.LinkSetUp(v)
	}
	return s.nl.LinkSetDown(v)
}

// describeVLAN is the plan step of the "vlan" feature, with the iproute2
// equivalent of what Apply sends.
func describeVLAN(nic string, n *intent.NIC, cs []intent.AttrChange, where string) (string, []string) {
	ch := map[string]intent.AttrChange{}
	for _, c := range cs {
		ch[strings.TrimPrefix(c.Path, "nic/"+nic+"/vlan/")] = c
	}
	name := n.VLANName
	want := n.VLANEgressMap()
	mapText := orNone(strings.ReplaceAll(intent.FormatQoSMap(want), ",", " "))
	idc := ch["id"]
	create, recreate := idc.Action == intent.Create, idc.Action == intent.Update
	var pl []string
	var what []string
	if create || recreate {
		if recreate {
			pl = append(pl, fmt.Sprintf("ip link del dev %s%s", name, where))
			what = append(what, fmt.Sprintf("re-create VLAN %s (id %s -> %d)", name, idc.Before, n.VLAN))
		} else {
			what = append(what, fmt.Sprintf("create VLAN %s (id %d)", name, n.VLAN))
		}
		add := fmt.Sprintf("ip link add link %s name %s mtu %d type vlan id %d", nic, name, n.MTU, n.VLAN)
		if len(want) > 0 {
			add += " egress-qos-map " + qosArgs(want)
		}
		pl = append(pl, add+where)
		what = append(what, "egress-qos-map "+mapText, fmt.Sprintf("MTU %d", n.MTU))
		for _, a := range n.Addresses {
			pl = append(pl, fmt.Sprintf("ip addr add %s dev %s%s", a, name, where))
		}
	} else {
		if c, ok := ch["egress_qos_map"]; ok {
			m := egressUpdate(parseQoSMap(c.Before), want)
			pl = append(pl, fmt.Sprintf("ip link set dev %s type vlan egress-qos-map %s%s", name, qosArgs(m), where))
			what = append(what, "egress-qos-map "+mapText)
		}
		if _, ok := ch["mtu"]; ok {
			pl = append(pl, fmt.Sprintf("ip link set dev %s mtu %d%s", name, n.MTU, where))
			what = append(what, fmt.Sprintf("MTU %d", n.MTU))
		}
		if c, ok := ch["addresses"]; ok {
			add, del := addrDelta(c.Before, c.After)
			for _, a := range del {
				pl = append(pl, fmt.Sprintf("ip addr del %s dev %s%s", a, name, where))
			}
			for _, a := range add {
				pl = append(pl, fmt.Sprintf("ip addr add %s dev %s%s", a, name, where))
			}
			what = append(what, "addresses "+orNone(strings.Join(n.Addresses, ",")))
		}
	}
	pl = append(pl, fmt.Sprintf("ip link set dev %s up%s", nic, where), fmt.Sprintf("ip link set dev %s up%s", name, where))
	return fmt.Sprintf("%s: %s", nic, strings.Join(what, ", ")), pl
}
