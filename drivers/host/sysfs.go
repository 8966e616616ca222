package host

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// sysRoot and cfgRoot are where sysfs and configfs are read (tests point
// them at fixtures). sysfs under /sys/class/net shows the namespace that
// mounted /sys: for a namespace host the NIC's device directory is found
// only when the NIC is a physical device visible there; virtual devices
// (veth) have none and their NUMA/IRQ/ECN settings read as absent.
var (
	sysRoot  = "/sys"
	procRoot = "/proc"
	cfgRoot  = "/sys/kernel/config"
)

func sysDevice(nic string) string { return filepath.Join(sysRoot, "class/net", nic, "device") }

func readTrim(p string) (string, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// readECN returns the priorities with DCQCN enabled as both reaction and
// notification point (MLNX_OFED sysfs), or false when not exposed.
func readECN(nic string) (string, bool) {
	base := filepath.Join(sysRoot, "class/net", nic, "ecn")
	if _, err := os.Stat(base); err != nil {
		return "", false
	}
	var prios []string
	for p := 0; p < 8; p++ {
		rp, ok1 := readTrim(filepath.Join(base, "roce_rp/enable", strconv.Itoa(p)))
		np, ok2 := readTrim(filepath.Join(base, "roce_np/enable", strconv.Itoa(p)))
		if !ok1 || !ok2 {
			return "", false
		}
		if rp == "1" && np == "1" {
			prios = append(prios, strconv.Itoa(p))
		}
	}
	return strings.Join(prios, ","), true
}

// readRDMACM reads rdma_cm's default RoCE mode and ToS for port 1 of an
// RDMA device from configfs, or false when the device directory does not
// exist (configfs not mounted, rdma_cm not loaded, or never created).
func readRDMACM(dev string) (mode, tos string, ok bool) {
	if dev == "" {
		return "", "", false
	}
	base := filepath.Join(cfgRoot, "rdma_cm", dev, "ports/1")
	m, ok1 := readTrim(filepath.Join(base, "default_roce_mode"))
	t, ok2 := readTrim(filepath.Join(base, "default_roce_tos"))
	if !ok1 || !ok2 {
		return "", "", false
	}
	switch m {
	case "RoCE v2":
		m = "v2"
	case "IB/RoCE v1":
		m = "v1"
	}
	return m, t, true
}

// readNUMA returns the NIC's NUMA node and local CPUs (false for virtual
// devices, which have no device directory).
func readNUMA(dev string) (node int, cpus spec.CPUSet, ok bool) {
	n, ok1 := readTrim(filepath.Join(dev, "numa_node"))
	l, ok2 := readTrim(filepath.Join(dev, "local_cpulist"))
	if !ok1 || !ok2 {
		return 0, nil, false
	}
	node, _ = strconv.Atoi(n)
	cpus, err := parseCPUList(l)
	if err != nil {
		return 0, nil, false
	}
	return node, cpus, true
}

// readIRQCPUs returns the union of the NIC's IRQ affinities: "auto" when
// auto is wanted and every IRQ is on the NIC's local CPUs, else the CPU
// list. False when the device has no IRQs (virtual devices).
func readIRQCPUs(dev string, auto bool) (string, bool) {
	ents, err := os.ReadDir(filepath.Join(dev, "msi_irqs"))
	if err != nil || len(ents) == 0 {
		return "", false
	}
	set := map[int]bool{}
	for _, e := range ents {
		l, ok := readTrim(filepath.Join(procRoot, "irq", e.Name(), "smp_affinity_list"))
		if !ok {
			continue
		}
		cs, err := parseCPUList(l)
		if err != nil {
			continue
		}
		for _, c := range cs {
			set[c] = true
		}
	}
	var all spec.CPUSet
	for c := range set {
		all = append(all, c)
	}
	sort.Ints(all)
	if auto {
		if _, local, ok := readNUMA(dev); ok && all.SubsetOf(local) {
			return "auto", true
		}
	}
	return all.String(), true
}

// parseCPUList parses the kernel's cpulist format ("0-3,8,10-11").
func parseCPUList(s string) (spec.CPUSet, error) {
	var out spec.CPUSet
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, err
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out, nil
}
