package host

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// NUMA locality. A PCI device's NUMA node and the CPUs local to it are in
// its sysfs directory (numa_node, local_cpulist; -1 when the firmware
// gives no affinity); the host's topology is
// /sys/devices/system/node/node<N>/cpulist. mlnx_tune, perftest and
// set_irq_affinity_bynode.sh read the same files.

// nodeTopology returns the host's NUMA nodes and their CPUs.
func nodeTopology() map[int]spec.CPUSet {
	ents, err := os.ReadDir(filepath.Join(sysRoot, "devices/system/node"))
	if err != nil {
		return nil
	}
	out := map[int]spec.CPUSet{}
	for _, e := range ents {
		num, ok := strings.CutPrefix(e.Name(), "node")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		l, ok := readTrim(filepath.Join(sysRoot, "devices/system/node", e.Name(), "cpulist"))
		if !ok {
			continue
		}
		cpus, err := parseCPUList(l)
		if err != nil {
			continue
		}
		out[n] = cpus
	}
	return out
}

// onlineCPUs returns the online CPUs (/sys/devices/system/cpu/online).
func onlineCPUs() spec.CPUSet {
	l, ok := readTrim(filepath.Join(sysRoot, "devices/system/cpu/online"))
	if !ok {
		return nil
	}
	c, _ := parseCPUList(l)
	return c
}

// localCPUs is where a NIC's IRQs and threads belong: its local_cpulist,
// or every online CPU when the device has no NUMA information.
func localCPUs(dev string) spec.CPUSet {
	if _, cpus, ok := readNUMA(dev); ok && len(cpus) > 0 {
		return cpus
	}
	return onlineCPUs()
}

// numaFindings compares what sysfs says about a NIC's locality with what
// the spec declares (numa_node, numa_nodes, an explicit numa CPU list).
func numaFindings(n *intent.NIC, dev string, topo map[int]spec.CPUSet) []drivers.Finding {
	var out []drivers.Finding
	path := "nic/" + n.Name + "/numa"
	add := func(sev, format string, a ...any) {
		out = append(out, drivers.Finding{Severity: sev, Path: path, Message: fmt.Sprintf(format, a...)})
	}
	node, local, ok := readNUMA(dev)
	switch {
	case !ok:
		if n.NUMANode != nil {
			add("info", "%s: numa_node = %d is declared, but the device has no NUMA information in sysfs (virtual device): not checked", n.Name, *n.NUMANode)
		}
	case node < 0:
		if len(topo) > 1 {
			add("warning", "%s: the firmware reports no NUMA node for the device (numa_node -1) on a host with %d nodes: IRQs and threads cannot be placed by locality (local CPUs %s)", n.Name, len(topo), local)
		}
		if n.NUMANode != nil {
			add("warning", "%s: numa_node = %d is declared, but sysfs reports none (-1)", n.Name, *n.NUMANode)
		}
	default:
		add("info", "%s: NUMA node %d, local CPUs %s", n.Name, node, local)
		if n.NUMANode != nil && *n.NUMANode != node {
			add("warning", "%s: the spec declares numa_node = %d, sysfs says node %d (local CPUs %s): fix numa_node", n.Name, *n.NUMANode, node, local)
		}
		if !n.NUMA.Auto && len(n.NUMA.CPUs) > 0 && !n.NUMA.CPUs.SubsetOf(local) {
			add("warning", "%s: numa = %q pins to CPUs %s that are not local to the NIC (node %d, local CPUs %s): completions and buffers cross the inter-socket link",
				n.Name, n.NUMA.CPUs.String(), cpuMinus(n.NUMA.CPUs, local), node, local)
		}
	}
	return out
}

// topologyFindings compares the host's declared numa_nodes with sysfs.
func topologyFindings(h *intent.Host, topo map[int]spec.CPUSet) []drivers.Finding {
	if len(h.NUMANodes) == 0 || topo == nil {
		return nil
	}
	var nodes []int
	for k := range h.NUMANodes {
		nodes = append(nodes, k)
	}
	sort.Ints(nodes)
	var out []drivers.Finding
	for _, k := range nodes {
		live, ok := topo[k]
		switch {
		case !ok:
			out = append(out, drivers.Finding{Severity: "warning", Path: "numa_nodes", Message: fmt.Sprintf(
				"numa_nodes declares node %d, which this host does not have (sysfs nodes: %s)", k, nodeList(topo))})
		case live.String() != h.NUMANodes[k].String():
			out = append(out, drivers.Finding{Severity: "warning", Path: "numa_nodes", Message: fmt.Sprintf(
				"numa_nodes declares node %d = %s, sysfs says %s", k, h.NUMANodes[k], live)})
		}
	}
	return out
}

func nodeList(topo map[int]spec.CPUSet) string {
	var ks []int
	for k := range topo {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%d (CPUs %s)", k, topo[k])
	}
	return strings.Join(parts, ", ")
}

func cpuMinus(a, b spec.CPUSet) spec.CPUSet {
	in := map[int]bool{}
	for _, c := range b {
		in[c] = true
	}
	var out spec.CPUSet
	for _, c := range a {
		if !in[c] {
			out = append(out, c)
		}
	}
	return out
}
