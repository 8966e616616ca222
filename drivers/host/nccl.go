package host

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/rdmagid"
)

const ncclGIDIndex = "NCCL_IB_GID_INDEX"

// gidIndex finds the index of the NIC's RDMA GID in its device's port 1
// GID table: the GID of its preferred address (IPv4 first, then global
// IPv6, as NCCL prefers them: internal/rdmagid) of the NIC's RoCE type on
// its RDMA interface (the VLAN interface when it has one: rdma_cm and
// NCCL use the VLAN netdev's GID). NCCL_IB_GID_INDEX 3 is only mlx5's
// first RoCE v2 IPv4 GID on an untagged port with one link-local address.
func gidIndex(n *intent.NIC) (int, error) {
	if n.Device == "" || n.RoCEMode == "" {
		return 0, fmt.Errorf("no RDMA device")
	}
	netdev := n.Name
	if n.VLANName != "" {
		netdev = n.VLANName
	}
	table, err := rdmagid.ReadTable(sysRoot, n.Device, 1)
	if err != nil {
		return 0, err
	}
	e, err := rdmagid.Resolve(table, netdev, rdmagid.TypeOf(n.RoCEMode), rdmagid.PrefixAddrs(n.Addresses))
	if err != nil {
		return 0, err
	}
	return e.Index, nil
}

// ncclEnv is the NCCL environment to write: the spec's, with
// NCCL_IB_GID_INDEX = "auto" resolved to the index found on the host (the
// first RDMA NIC's; NCCL takes one index for every HCA, so NICs that
// disagree are a finding). An index that cannot be resolved is left out
// of the file, never written as "auto": NCCL reads its parameters with
// strtoll(str, nullptr, 0) (src/misc/param.cc ncclLoadParam), which turns
// "auto" into 0 without an error, and index 0 is the port's link-local
// RoCE v1 GID on mlx5. Without the variable NCCL 2.21 and later pick the
// GID themselves (ncclIbGetGidIndex: NCCL_IB_ADDR_FAMILY,
// NCCL_IB_ROCE_VERSION_NUM, which intent sets for IPv6-only and RoCEv1
// hosts); older NCCL takes index 0. unresolved says why the index is left
// out ("" when it is not): Read lists it as not expressible.
func ncclEnv(h *intent.Host) (env map[string]string, fs []drivers.Finding, unresolved string) {
	env = make(map[string]string, len(h.NCCL))
	for k, v := range h.NCCL {
		env[k] = v
	}
	if env[ncclGIDIndex] != "auto" {
		return env, nil, ""
	}
	found := map[string]int{}
	var names, why []string
	for i := range h.NICs {
		n := &h.NICs[i]
		if n.Device == "" || n.RoCEMode == "" {
			continue
		}
		if idx, err := gidIndex(n); err == nil {
			found[n.Name] = idx
			names = append(names, n.Name)
		} else {
			why = append(why, fmt.Sprintf("%s (%s): %v", n.Name, n.Device, err))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		delete(env, ncclGIDIndex)
		if len(why) == 0 {
			why = append(why, "no RoCE NIC of the host names its RDMA device (nic device = ...)")
		}
		unresolved = "NCCL_IB_GID_INDEX cannot be derived on this host (" + strings.Join(why, "; ") +
			"): fabctl leaves it out of the NCCL env file rather than write \"auto\", which NCCL's strtoll reads as index 0 (the link-local RoCE v1 GID on mlx5); NCCL 2.21 and later then choose by NCCL_IB_ADDR_FAMILY and NCCL_IB_ROCE_VERSION_NUM, older NCCL takes index 0"
		fs = append(fs, drivers.Finding{Severity: "warning", Path: "nccl/" + ncclGIDIndex, Message: unresolved})
		return env, fs, unresolved
	}
	for _, w := range why {
		fs = append(fs, drivers.Finding{Severity: "warning", Path: "nccl/" + ncclGIDIndex, Message: w + ": NCCL_IB_GID_INDEX is derived from the host's other RDMA NICs and may not fit this one"})
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
	return env, fs, ""
}
