package host

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/sysattr"
	"github.com/fabctl/fabctl/spec"
)

// sysRoot, procRoot and cfgRoot are where sysfs, procfs and configfs are
// read (tests point them at fixtures). For a namespace host they are read
// inside hostFS (sysns.go), where /sys is the namespace's own sysfs.
var (
	sysRoot  = "/sys"
	procRoot = "/proc"
	cfgRoot  = "/sys/kernel/config"
)

func sysDevice(nic string) string { return filepath.Join(sysRoot, "class/net", nic, "device") }

// nicPCI returns the sysfs directory of the PCI function behind a NIC, or
// "" for virtual devices. It is the device directory itself for most NIC
// drivers (mlx5, ice, bnxt), an ancestor for drivers that put a bus device
// in between (virtio_net: net/eth0/device is virtio2, whose parent is the
// PCI function with the MSI-X vectors and the NUMA node).
func nicPCI(nic string) string {
	d, err := filepath.EvalSymlinks(sysDevice(nic))
	if err != nil {
		return ""
	}
	top := filepath.Join(sysRoot, "devices")
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	for ; strings.HasPrefix(d, top+"/"); d = filepath.Dir(d) {
		_, e1 := os.Stat(filepath.Join(d, "config"))
		_, e2 := os.Stat(filepath.Join(d, "vendor"))
		if e1 == nil && e2 == nil {
			return d
		}
	}
	return ""
}

func readTrim(p string) (string, bool) {
	v, err := sysattr.Read(p)
	return v, err == nil
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

// readNUMA returns the NIC's NUMA node and local CPUs (false for virtual
// devices, which have no device directory).
func readNUMA(dev string) (node int, cpus spec.CPUSet, ok bool) {
	if dev == "" {
		return 0, nil, false
	}
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
