package verbs

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/sysattr"
	"github.com/fabctl/fabctl/spec"
)

// SysRoot is where sysfs is read; tests point Sysfs values at fixtures.
const SysRoot = "/sys"

// Sysfs reads the RDMA parts of sysfs under Root ("/sys" on a live
// system, a fixture directory in tests).
type Sysfs struct{ Root string }

func (s Sysfs) ib(parts ...string) string {
	return filepath.Join(append([]string{s.Root, "class/infiniband"}, parts...)...)
}

// GIDEntry is one populated slot of a port's GID table.
type GIDEntry struct {
	Index  int
	GID    GID
	Type   string // GIDTypeRoCEv2, GIDTypeRoCEv1 (also InfiniBand)
	Netdev string // the netdev the GID belongs to (RoCE), "" on IB
}

// GIDTable reads a port's populated GID entries, in index order.
func (s Sysfs) GIDTable(dev string, port int) ([]GIDEntry, error) {
	dir := s.ib(dev, "ports", strconv.Itoa(port), "gids")
	names, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, e := os.Stat(s.ib(dev)); e != nil {
				return nil, fmt.Errorf("no RDMA device %q (%s)", dev, s.deviceList())
			}
			return nil, fmt.Errorf("%s has no port %d", dev, port)
		}
		return nil, err
	}
	var out []GIDEntry
	for _, n := range names {
		idx, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		v, err := sysattr.Read(filepath.Join(dir, n.Name()))
		if err != nil {
			continue // unpopulated slots may fail to read
		}
		g, err := ParseGID(v)
		if err != nil || g.IsZero() {
			continue
		}
		e := GIDEntry{Index: idx, GID: g}
		attrs := s.ib(dev, "ports", strconv.Itoa(port), "gid_attrs")
		e.Type, _ = sysattr.Read(filepath.Join(attrs, "types", n.Name()))
		if e.Type == "" {
			e.Type = GIDTypeRoCEv1 // InfiniBand ports have no types directory: IB GIDs
		}
		e.Netdev, _ = sysattr.Read(filepath.Join(attrs, "ndevs", n.Name()))
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// deviceList names the RDMA devices present, for error messages.
func (s Sysfs) deviceList() string {
	ents, _ := os.ReadDir(s.ib())
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return "this system has no RDMA devices"
	}
	return "devices: " + strings.Join(names, ", ")
}

// Devices lists the RDMA devices, sorted.
func (s Sysfs) Devices() []string {
	ents, _ := os.ReadDir(s.ib())
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// GIDChoice is what GID selection needs to know.
type GIDChoice struct {
	// Index >= 0 selects that index (checked to exist); -1 scores.
	Index int
	// Type restricts the automatic choice (GIDTypeRoCEv2/v1, "" any).
	Type string
	// IPv6 makes the address family preference IPv6 (perftest --ipv6).
	IPv6 bool
	// Netdev restricts RoCE GIDs to those of one netdev ("" any).
	Netdev string
	// Addr, when valid, requires the GID of exactly this IP address.
	Addr netip.Addr
}

// gidScore is perftest's compute_gid_score: +100 address family match,
// +10 not link-local, +2 RoCEv2, +1 RoCEv1.
func gidScore(e GIDEntry, ipv6 bool) int {
	s := 0
	if e.GID.IsV4Mapped() != ipv6 {
		s += 100
	}
	if !e.GID.IsLinkLocal() {
		s += 10
	}
	switch e.Type {
	case GIDTypeRoCEv2:
		s += 2
	case GIDTypeRoCEv1:
		s++
	}
	return s
}

// addrGID is the GID of an IP address (IPv4 mapped into IPv6).
func addrGID(a netip.Addr) GID { return GID(a.As16()) }

// SelectGID picks a GID the way perftest does, or checks an explicit one,
// and explains a failure by listing the table.
func SelectGID(dev string, port int, table []GIDEntry, c GIDChoice) (GIDEntry, error) {
	desc := func() string {
		if len(table) == 0 {
			return "the GID table is empty (no IP address on the RoCE netdev, or the port is down)"
		}
		var b strings.Builder
		b.WriteString("GIDs:")
		for _, e := range table {
			fmt.Fprintf(&b, " [%d] %s %s", e.Index, e.GID, e.Type)
			if e.Netdev != "" {
				fmt.Fprintf(&b, " (%s)", e.Netdev)
			}
			b.WriteString(";")
		}
		return strings.TrimSuffix(b.String(), ";")
	}
	if c.Index >= 0 {
		for _, e := range table {
			if e.Index == c.Index {
				if c.Type != "" && e.Type != c.Type {
					return e, fmt.Errorf("%s port %d GID index %d is %s, not %s", dev, port, e.Index, e.Type, c.Type)
				}
				return e, nil
			}
		}
		return GIDEntry{}, fmt.Errorf("%s port %d has no GID at index %d; %s", dev, port, c.Index, desc())
	}
	var want GID
	if c.Addr.IsValid() {
		want = addrGID(c.Addr)
	}
	best, bestScore := GIDEntry{Index: -1}, -1
	for _, e := range table {
		if c.Type != "" && e.Type != c.Type {
			continue
		}
		if c.Netdev != "" && e.Netdev != "" && e.Netdev != c.Netdev {
			continue
		}
		if c.Addr.IsValid() && e.GID != want {
			continue
		}
		if sc := gidScore(e, c.IPv6); sc > bestScore {
			best, bestScore = e, sc
		}
	}
	if best.Index < 0 {
		var what []string
		if c.Type != "" {
			what = append(what, "of type "+c.Type)
		}
		if c.Addr.IsValid() {
			what = append(what, "for address "+c.Addr.String())
		}
		if c.Netdev != "" {
			what = append(what, "on netdev "+c.Netdev)
		}
		return best, fmt.Errorf("%s port %d has no GID %s; %s", dev, port, strings.Join(what, " "), desc())
	}
	return best, nil
}

// PortState is what sysfs says about a port.
type PortState struct {
	State     string // "ACTIVE", "DOWN", ...
	LinkLayer string // LinkEthernet or LinkInfiniBand
	LID       uint16
	Rate      string // "100 Gb/sec (4X EDR)"
}

// Port reads a port's state, link layer, LID and rate.
func (s Sysfs) Port(dev string, port int) (PortState, error) {
	dir := s.ib(dev, "ports", strconv.Itoa(port))
	var ps PortState
	st, err := sysattr.Read(filepath.Join(dir, "state"))
	if err != nil {
		if _, e := os.Stat(s.ib(dev)); e != nil {
			return ps, fmt.Errorf("no RDMA device %q (%s)", dev, s.deviceList())
		}
		return ps, fmt.Errorf("%s port %d: %w", dev, port, err)
	}
	// "4: ACTIVE"
	if _, v, ok := strings.Cut(st, ":"); ok {
		st = strings.TrimSpace(v)
	}
	ps.State = st
	ps.LinkLayer, _ = sysattr.Read(filepath.Join(dir, "link_layer"))
	if v, err := sysattr.Read(filepath.Join(dir, "lid")); err == nil {
		n, _ := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
		ps.LID = uint16(n)
	}
	ps.Rate, _ = sysattr.Read(filepath.Join(dir, "rate"))
	return ps, nil
}

// Transport is "iwarp" for RNICs (node type 4) and "ib" otherwise.
func (s Sysfs) Transport(dev string) string {
	v, _ := sysattr.Read(s.ib(dev, "node_type"))
	if strings.HasPrefix(v, "4") || strings.Contains(v, "RNIC") {
		return "iwarp"
	}
	return "ib"
}

// DeviceForNetdev finds the RDMA device on a network interface: the
// PCI function's infiniband directory for hardware NICs, the parent of a
// software device (rxe, siw), or a device whose GIDs belong to it.
func (s Sysfs) DeviceForNetdev(netdev string) (string, error) {
	if ents, err := os.ReadDir(filepath.Join(s.Root, "class/net", netdev, "device/infiniband")); err == nil && len(ents) > 0 {
		return ents[0].Name(), nil
	}
	devs := s.Devices()
	for _, d := range devs {
		if p, err := sysattr.Read(s.ib(d, "parent")); err == nil && p == netdev {
			return d, nil
		}
	}
	for _, d := range devs {
		ndevs, _ := filepath.Glob(s.ib(d, "ports", "*", "gid_attrs", "ndevs", "*"))
		for _, f := range ndevs {
			if v, err := sysattr.Read(f); err == nil && v == netdev {
				return d, nil
			}
		}
	}
	return "", fmt.Errorf("no RDMA device on netdev %s (%s); name the device explicitly", netdev, s.deviceList())
}

// NetdevForAddr finds the interface that holds an IP address.
func NetdevForAddr(a netip.Addr) (string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, ad := range addrs {
			if p, err := netip.ParsePrefix(ad.String()); err == nil && p.Addr().Unmap() == a.Unmap() {
				return ifc.Name, nil
			}
		}
	}
	return "", fmt.Errorf("no interface on this host has the address %s", a)
}

// NUMA is where a NIC sits and which CPUs are local to it.
type NUMA struct {
	Node int // -1: unknown
	CPUs []int
}

// NUMAFor reads the NUMA node of an RDMA device (or its netdev) and the
// CPUs of that node. Software devices (rxe, siw) and virtual netdevs have
// no node: Node is -1.
func (s Sysfs) NUMAFor(dev, netdev string) NUMA {
	n := NUMA{Node: -1}
	for _, p := range []string{s.ib(dev, "device/numa_node"), filepath.Join(s.Root, "class/net", netdev, "device/numa_node")} {
		if dev == "" && strings.Contains(p, "infiniband") || netdev == "" && strings.Contains(p, "class/net") {
			continue
		}
		if v, err := sysattr.Read(p); err == nil {
			if node, err := strconv.Atoi(v); err == nil && node >= 0 {
				n.Node = node
				break
			}
		}
	}
	if n.Node >= 0 {
		n.CPUs = s.NodeCPUs(n.Node)
	}
	return n
}

// NodeCPUs reads a NUMA node's CPU list.
func (s Sysfs) NodeCPUs(node int) []int {
	v, err := sysattr.Read(filepath.Join(s.Root, "devices/system/node", "node"+strconv.Itoa(node), "cpulist"))
	if err != nil {
		return nil
	}
	if v == "" {
		return nil
	}
	cpus, _ := spec.ParseIntRanges(v, 0, 1<<16)
	return cpus
}
