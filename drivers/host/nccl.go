package host

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

const ncclGIDIndex = "NCCL_IB_GID_INDEX"

// gidIndex finds the index of the RDMA interface's IPv4 GID of the NIC's
// RoCE mode in the device's port 1 GID table: the kernel lists every GID
// in /sys/class/infiniband/<dev>/ports/1/gids/<i> (%pI6; an IPv4 address
// as ::ffff:a.b.c.d), its type in gid_attrs/types/<i> ("IB/RoCE v1",
// "RoCE v2") and its netdev in gid_attrs/ndevs/<i>
// (drivers/infiniband/core/sysfs.c). The index depends on VLANs, IPv6
// addresses and the order addresses were added, so it is read, never
// assumed (NCCL_IB_GID_INDEX 3 is only mlx5's first RoCE v2 IPv4 GID on an
// untagged port with one link-local address).
func gidIndex(n *intent.NIC) (int, bool) {
	if n.Device == "" || n.RoCEMode == "" {
		return 0, false
	}
	netdev := n.Name
	if n.VLANName != "" {
		netdev = n.VLANName // rdma_cm and NCCL use the VLAN netdev's GID
	}
	want := "RoCE v2"
	if n.RoCEMode == "v1" {
		want = "IB/RoCE v1"
	}
	addrs := map[netip.Addr]bool{}
	for _, a := range n.Addresses {
		if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is4() {
			addrs[p.Addr()] = true
		}
	}
	port := filepath.Join(sysRoot, "class/infiniband", n.Device, "ports/1")
	for i := 0; i < 4096; i++ {
		is := strconv.Itoa(i)
		g, err := os.ReadFile(filepath.Join(port, "gids", is))
		if os.IsNotExist(err) {
			break
		}
		if err != nil {
			continue // an empty slot reads as an error on some kernels
		}
		a, err := netip.ParseAddr(string(trimNL(g)))
		if err != nil || !addrs[a.Unmap()] {
			continue
		}
		if t, ok := readTrim(filepath.Join(port, "gid_attrs/types", is)); !ok || t != want {
			continue
		}
		if d, ok := readTrim(filepath.Join(port, "gid_attrs/ndevs", is)); !ok || d != netdev {
			continue
		}
		return i, true
	}
	return 0, false
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// ncclEnv is the NCCL environment to write: the spec's, with
// NCCL_IB_GID_INDEX = "auto" resolved to the index found on the host (the
// first RDMA NIC's; NCCL takes one index for every HCA, so NICs that
// disagree are a finding). Unresolved stays "auto", with a finding.
func ncclEnv(h *intent.Host) (map[string]string, []drivers.Finding) {
	env := make(map[string]string, len(h.NCCL))
	for k, v := range h.NCCL {
		env[k] = v
	}
	if env[ncclGIDIndex] != "auto" {
		return env, nil
	}
	var fs []drivers.Finding
	found := map[string]int{}
	var names []string
	for i := range h.NICs {
		n := &h.NICs[i]
		if n.Device == "" || n.RoCEMode == "" {
			continue
		}
		if idx, ok := gidIndex(n); ok {
			found[n.Name] = idx
			names = append(names, n.Name)
		} else {
			fs = append(fs, drivers.Finding{Severity: "warning", Path: "nccl/" + ncclGIDIndex, Message: fmt.Sprintf(
				"%s (%s): no RoCE %s GID for %v in /sys/class/infiniband/%s/ports/1/gids: NCCL_IB_GID_INDEX cannot be derived for it",
				n.Name, n.Device, n.RoCEMode, n.Addresses, n.Device)})
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return env, fs
	}
	first := found[names[0]]
	env[ncclGIDIndex] = strconv.Itoa(first)
	for _, nm := range names[1:] {
		if found[nm] != first {
			fs = append(fs, drivers.Finding{Severity: "warning", Path: "nccl/" + ncclGIDIndex, Message: fmt.Sprintf(
				"NCCL takes one GID index for every HCA, but %s has its RoCE GID at index %d and %s at %d: NCCL_IB_GID_INDEX=%d is wrong for %s (give the NICs the same address layout, or set NCCL_IB_GID_INDEX per process)",
				names[0], first, nm, found[nm], first, nm)})
		}
	}
	return env, fs
}
