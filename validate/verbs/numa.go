package verbs

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// resolve fills Device (from Netdev or Addr) and Netdev (from Addr) when
// they are not given, best effort: rdma_cm finds the device itself.
func (l *Local) resolve(sys Sysfs) error {
	if l.Netdev == "" && l.Addr.IsValid() {
		if nd, err := NetdevForAddr(l.Addr); err == nil {
			l.Netdev = nd
		}
	}
	if l.Device == "" && l.Netdev != "" {
		d, err := sys.DeviceForNetdev(l.Netdev)
		if err != nil {
			return err
		}
		l.Device = d
	}
	if l.Device == "" {
		devs := sys.Devices()
		if len(devs) == 0 {
			return fmt.Errorf("%w: this host has no RDMA devices (no /sys/class/infiniband entries)", ErrUnavailable)
		}
		l.Device = devs[0]
	}
	return nil
}

// place pins the calling OS thread to the CPUs near the NIC (the caller
// has locked the goroutine to it) and records the NUMA node the buffers
// should be bound to in l. It returns what it did, for the report:
// placement is best effort and never fails a test.
func place(l *Local) []string {
	return placeWith(Sysfs{Root: SysRoot}, l, unix.SchedGetaffinity, unix.SchedSetaffinity)
}

// placeWith is place with the sysfs root and the affinity calls given. A
// NUMA-derived placement stays within the affinity the process inherited
// (taskset, a cgroup's cpuset): it narrows it to the NIC's node and never
// moves the thread onto CPUs it was kept off; requested CPUs are used as
// they are.
func placeWith(sys Sysfs, l *Local, getaff, setaff func(int, *unix.CPUSet) error) []string {
	_ = l.resolve(sys)
	cpus, why := l.CPUs, "requested CPUs"
	derived := false
	switch {
	case len(cpus) > 0:
	case l.NUMANode != nil:
		cpus, why = sys.NodeCPUs(*l.NUMANode), fmt.Sprintf("NUMA node %d (requested)", *l.NUMANode)
	default:
		n := sys.NUMAFor(l.Device, l.Netdev)
		if n.Node < 0 {
			name := l.Device
			if name == "" {
				name = l.Netdev
			}
			return []string{fmt.Sprintf("%s reports no NUMA node (a software or virtual device): thread not pinned, buffers not bound", name)}
		}
		node := n.Node
		l.NUMANode = &node
		cpus, why, derived = n.CPUs, fmt.Sprintf("NUMA node %d of %s", node, l.Device), true
	}
	if len(cpus) == 0 {
		return []string{why + ": no CPU list found; thread not pinned"}
	}
	var inherited unix.CPUSet
	if derived && getaff(0, &inherited) == nil && inherited.Count() > 0 {
		var within, allowed []int
		for c := 0; c < 1024; c++ {
			if inherited.IsSet(c) {
				allowed = append(allowed, c)
			}
		}
		for _, c := range cpus {
			if inherited.IsSet(c) {
				within = append(within, c)
			}
		}
		switch {
		case len(within) == 0:
			return []string{fmt.Sprintf("%s is CPUs %s, outside this process's CPUs %s (taskset or cpuset): thread left there, its memory accesses to the NIC cross NUMA nodes",
				why, cpuList(cpus), cpuList(allowed))}
		case len(within) < len(cpus):
			cpus, why = within, why+", within this process's CPUs "+cpuList(allowed)
		}
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setaff(0, &set); err != nil {
		return []string{fmt.Sprintf("could not pin to CPUs %s (%s): %v", cpuList(cpus), why, err)}
	}
	return []string{fmt.Sprintf("test thread pinned to CPUs %s (%s)", cpuList(cpus), why)}
}

// cpuList renders CPUs in the kernel's list format.
func cpuList(c []int) string {
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(c[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
