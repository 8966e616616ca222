// Package rdmagid finds the RoCE GID of a NIC's address in a port's GID
// table, the way the host driver resolves NCCL_IB_GID_INDEX and the
// traffic test picks the GID of its raw-verbs connections, so that both
// mean the same entry.
//
// The kernel lists a port's GIDs in
// /sys/class/infiniband/<dev>/ports/<p>/gids/<i> (%pI6: eight groups of
// four hex digits), their type in gid_attrs/types/<i> ("IB/RoCE v1",
// "RoCE v2") and their netdev in gid_attrs/ndevs/<i>
// (drivers/infiniband/core/sysfs.c). RoCE GID management
// (drivers/infiniband/core/roce_gid_mgmt.c) adds one entry per address
// of the netdev and per RoCE type: an IPv4 address as the IPv4-mapped
// IPv6 address ::ffff:a.b.c.d, an IPv6 address as itself, and the
// netdev's link-local fe80::/64 default GID from its MAC. The index
// depends on VLANs, IPv6 addresses and the order addresses were added,
// so it is read, never assumed.
//
// Which address: NCCL selects a GID by address family, AF_INET unless
// NCCL_IB_ADDR_FAMILY says AF_INET6, and never a link-local one
// (NVIDIA/nccl src/transport/net_ib/connect.cc envIbAddrFamily,
// getGidAddrFamily, validGid). Preferred orders a NIC's addresses that
// way: its IPv4 addresses first, then its global IPv6 ones.
package rdmagid

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/sysattr"
)

// GID types as sysfs names them (gid_attrs/types/<i>).
const (
	TypeRoCEv1 = "IB/RoCE v1"
	TypeRoCEv2 = "RoCE v2"
)

// TypeOf is the GID type of a RoCE mode ("v1", "v2"; "" for none).
func TypeOf(mode string) string {
	switch mode {
	case "v1":
		return TypeRoCEv1
	case "v2":
		return TypeRoCEv2
	}
	return ""
}

// Entry is one populated slot of a port's GID table.
type Entry struct {
	Index  int
	GID    netip.Addr // IPv4 GIDs unmapped to their IPv4 address
	Type   string
	Netdev string
}

// maxGIDs bounds a table scan (mlx5 has 255 slots, rxe 1024).
const maxGIDs = 4096

// ReadTable reads a port's populated GID entries, in index order, from
// sysfs at root ("/sys" on a live system).
func ReadTable(root, dev string, port int) ([]Entry, error) {
	dir := filepath.Join(root, "class/infiniband", dev, "ports", strconv.Itoa(port))
	names, err := os.ReadDir(filepath.Join(dir, "gids"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no GID table for %s port %d (%s)", dev, port, filepath.Join(dir, "gids"))
		}
		return nil, err
	}
	var out []Entry
	for _, n := range names {
		i, err := strconv.Atoi(n.Name())
		if err != nil || i < 0 || i >= maxGIDs {
			continue
		}
		v, err := sysattr.Read(filepath.Join(dir, "gids", n.Name()))
		if err != nil {
			continue // an empty slot reads as an error on some kernels
		}
		a, err := netip.ParseAddr(v)
		if err != nil || a.IsUnspecified() {
			continue
		}
		e := Entry{Index: i, GID: a.Unmap()}
		e.Type, _ = sysattr.Read(filepath.Join(dir, "gid_attrs/types", n.Name()))
		e.Netdev, _ = sysattr.Read(filepath.Join(dir, "gid_attrs/ndevs", n.Name()))
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// Preferred orders a NIC's addresses as NCCL prefers their GIDs: IPv4
// first, then global IPv6; link-local and unspecified addresses are left
// out (NCCL's validGid).
func Preferred(addrs []netip.Addr) []netip.Addr {
	var v4, v6 []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		switch {
		case !a.IsValid() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsLoopback():
		case a.Is4():
			v4 = append(v4, a)
		default:
			v6 = append(v6, a)
		}
	}
	return append(v4, v6...)
}

// PrefixAddrs are the addresses of CIDR prefixes ("198.18.0.1/24"); bad
// ones are skipped (the spec loader checked them).
func PrefixAddrs(prefixes []string) []netip.Addr {
	out := make([]netip.Addr, 0, len(prefixes))
	for _, s := range prefixes {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}

// Resolve finds the GID of type typ on netdev for the NIC's preferred
// address (the first of Preferred(addrs)): the GID NCCL_IB_GID_INDEX
// must name. The error says why there is none, listing what the table
// has for the netdev.
func Resolve(table []Entry, netdev, typ string, addrs []netip.Addr) (Entry, error) {
	pref := Preferred(addrs)
	if len(pref) == 0 {
		return Entry{}, fmt.Errorf("no IPv4 or global IPv6 address on the NIC to take a GID from")
	}
	want := pref[0]
	for _, e := range table {
		if e.GID == want && e.Type == typ && e.Netdev == netdev {
			return e, nil
		}
	}
	var have []string
	for _, e := range table {
		if e.Netdev == netdev {
			have = append(have, fmt.Sprintf("[%d] %s %s", e.Index, e.GID, e.Type))
		}
	}
	what := "none"
	if len(have) > 0 {
		what = strings.Join(have, ", ")
	}
	return Entry{}, fmt.Errorf("no %s GID for %s on %s (its GIDs: %s)", typ, want, netdev, what)
}
