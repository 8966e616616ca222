// Package host is the host driver: it reads, plans and applies a host's
// RDMA NIC settings through the kernel's own interfaces instead of the
// ip / dcb / mlnx_qos / ethtool / set_irq_affinity scripts:
//
//   - links (MTU, admin up) and addresses through rtnetlink
//     (vishvananda/netlink), touching only NICs the spec names and only
//     the addresses that differ; a NIC's RDMA VLAN interface with its
//     egress-qos-map (priority -> PCP), MTU and addresses (vlan.go);
//   - IEEE DCB (ETS, PFC, the DSCP APP table) through DCB netlink
//     (package dcbnl), read-modify-write one feature per message;
//   - 802.3x global pause through the ethtool ioctl (safchain/ethtool);
//   - DCQCN enable per priority (MLNX_OFED sysfs ecn/roce_np,
//     ecn/roce_rp), rdma_cm default RoCE mode and ToS (configfs), IRQ
//     affinity from the NIC's NUMA policy (/proc/irq, irqbalance stopped
//     when the spec says so), all read and set inside the host's own
//     sysfs view (sysns.go: a namespace host sees its namespace's sysfs);
//     sysfeat.go, ecn.go, rdmacm.go, irq.go;
//   - read-only findings (drivers.Reporter, findings.go): DCBX owner,
//     NUMA locality (numa.go), PCIe link and MaxReadReq (pcie.go), QP
//     sizing against the device's limits (qplimits.go);
//   - DCB drift: WatchDCB follows the kernel's RTNLGRP_DCB notifications
//     (watch.go), for `fabctl agent --watch`.
//
// Settings a device cannot have are reported absent by Read, never
// invented, and the driver is a drivers.Limiter: a veth has no DCB
// (EOPNOTSUPP), so the plan lists its DCB paths under "not expressible"
// with "eth1: no DCB support in the kernel driver (EOPNOTSUPP)" instead of
// planning changes that cannot apply (likewise DCQCN sysfs, rdma_cm
// configfs, IRQ affinity and global pause where the device has none). A
// change list that still holds such a path (a hand-made or old saved plan)
// is refused by Apply up front, before anything is touched.
//
// Transports: "local" and "netns:<name>" (handles are created inside the
// namespace); "ssh" and "ssh+netns:<name>" run `fabctl agent` on the host
// (transport_ssh.go, remote.go, package agent), which uses the local or
// netns transport there.
package host

import (
	"fmt"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/ident"
)

// Driver is the host driver. One instance serves one run.
type Driver struct {
	mu sync.Mutex
	// unsupported remembers, per host and NIC, what Read found the device
	// cannot do, so Changes can say so in the plan.
	unsupported map[string]map[string]string // host -> path prefix -> reason
	// findings are Read's read-only observations per host (findings.go).
	findings map[string][]drivers.Finding
	// facts are what Read learned of each NIC's kernel driver that the
	// change list depends on (nicfacts.go): host -> key -> value.
	facts map[string]map[string]string
	// SSH tunes the transport of hosts reached over SSH (transport_ssh.go).
	SSH SSHOptions
}

// New returns a host driver.
func New() drivers.Driver {
	return &Driver{unsupported: map[string]map[string]string{}, findings: map[string][]drivers.Finding{}, facts: map[string]map[string]string{}}
}

var _ drivers.Driver = (*Driver)(nil)

// Name is "host".
func (d *Driver) Name() string { return "host" }

// Capabilities: the driver rolls back by re-applying the state it saw
// before the transaction.
func (d *Driver) Capabilities() drivers.Capabilities { return drivers.Capabilities{Rollback: true} }

// Fields marks the disruptive host settings.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "nic/*/pfc", Disruptive: "a PFC change flaps the link on mlx5 (mlx5_toggle_port_link), resets the netdev on ice (ice_dcbnl_devreset, as every ice DCB change does) and on bnxt closes and reopens the NIC when a lossless TC is on a lossy queue (bnxt_queue_remap)"},
		{Pattern: "nic/*/mtu", Disruptive: "an MTU change restarts the NIC's queues (brief traffic loss, RDMA QPs re-negotiate path MTU)"},
		{Pattern: "nic/*/addresses", Disruptive: "removing an address drops the connections that use it", DisruptiveOnRemoval: true},
		{Pattern: "nic/*/vlan/addresses", Disruptive: "removing an address drops the connections that use it", DisruptiveOnRemoval: true},
		{Pattern: "nic/*/vlan/mtu", Disruptive: "an MTU change restarts the VLAN interface's queues (RDMA QPs re-negotiate path MTU)"},
		{Pattern: "nic/*/vlan/id", Disruptive: "the id of a VLAN interface is fixed: changing it re-creates the interface, whose addresses and RDMA GIDs vanish meanwhile"},
	}
}

// hostOf is the host intent of t, every name in it checked: NIC, VLAN
// interface and RDMA device names become sysfs, configfs and procfs path
// components and netlink names, the NCCL env file a path written on the
// host. The spec loader refuses names outside their grammar
// (internal/ident); this is the check again at the one place every
// driver method (and the agent) takes its intent from, so a name never
// reaches a path unchecked (../../etc/x).
func hostOf(t drivers.Target) (*intent.Host, error) {
	h, ok := t.Intent.(*intent.Host)
	if !ok || h == nil {
		return nil, fmt.Errorf("host driver: %s has no host intent", t.Device.Name)
	}
	if err := checkNames(h); err != nil {
		return nil, fmt.Errorf("host driver: %s: %w", t.Device.Name, err)
	}
	return h, nil
}

func checkNames(h *intent.Host) error {
	for i := range h.NICs {
		n := &h.NICs[i]
		if err := ident.Netdev(n.Name); err != nil {
			return fmt.Errorf("nic %q %w", n.Name, err)
		}
		if n.VLANName != "" {
			if err := ident.Netdev(n.VLANName); err != nil {
				return fmt.Errorf("nic %s: VLAN interface %q %w", n.Name, n.VLANName, err)
			}
		}
		if n.Device != "" {
			if err := ident.RDMADevice(n.Device); err != nil {
				return fmt.Errorf("nic %s: RDMA device %q %w", n.Name, n.Device, err)
			}
		}
	}
	if h.NCCLEnvFile != "" {
		if err := ident.Path(h.NCCLEnvFile); err != nil {
			return fmt.Errorf("nccl_env_file %q %w", h.NCCLEnvFile, err)
		}
	}
	return nil
}
