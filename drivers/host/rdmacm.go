package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// rdma_cm's per-port defaults for connections it sets up (perftest -R,
// rping, NVMe-oF, MPI over rdma_cm; not raw verbs such as NCCL): the RoCE
// version and the IP ToS byte. They live in the kernel's struct
// cma_device; configfs (drivers/infiniband/core/cma_configfs.c) is the
// only interface: mkdir /sys/kernel/config/rdma_cm/<ibdev> makes the
// device's group, ports/<N>/default_roce_mode takes "IB/RoCE v1" or
// "RoCE v2", ports/<N>/default_roce_tos a decimal byte. Removing the group
// keeps the values (mlnx-tools cma_roce_mode / cma_roce_tos leave it).

var roceModeNames = map[string]string{"v1": "IB/RoCE v1", "v2": "RoCE v2"}

func rdmacmGroup(dev string) string { return filepath.Join(cfgRoot, "rdma_cm", dev) }

func rdmacmPort(dev string) string { return filepath.Join(rdmacmGroup(dev), "ports", "1") }

// rdmacmUnsupported says why a NIC's rdma_cm defaults cannot be read or
// set ("" when they can).
func rdmacmUnsupported(nic, dev string) string {
	if dev == "" {
		return nic + ": no RDMA device named (nic \"" + nic + "\" has no device = ...), so no rdma_cm defaults to set"
	}
	if _, err := os.Stat(filepath.Join(sysRoot, "class/infiniband", dev)); err != nil {
		return fmt.Sprintf("%s: no RDMA device %q on this host (/sys/class/infiniband/%s)", nic, dev, dev)
	}
	if _, err := os.Stat(filepath.Join(cfgRoot, "rdma_cm")); err != nil {
		if sysRoot == "/sys" && !cfgMounted() {
			return nic + ": the kernel has no configfs, so no rdma_cm defaults"
		}
		return nic + ": the rdma_cm module is not loaded (no " + filepath.Join(cfgRoot, "rdma_cm") + "; modprobe rdma_cm)"
	}
	return ""
}

// readRDMACM reads port 1's default RoCE mode ("v1", "v2", or the
// kernel's string for other GID types) and ToS. When the device's group
// does not exist yet it is made to read the values and removed again.
func readRDMACM(dev string) (mode, tos string, err error) {
	grp := rdmacmGroup(dev)
	if _, serr := os.Stat(grp); serr != nil {
		if err := os.Mkdir(grp, 0o755); err != nil {
			return "", "", fmt.Errorf("rdma_cm configfs: mkdir %s: %w", grp, err)
		}
		defer os.Remove(grp)
	}
	m, ok1 := readTrim(filepath.Join(rdmacmPort(dev), "default_roce_mode"))
	t, ok2 := readTrim(filepath.Join(rdmacmPort(dev), "default_roce_tos"))
	if !ok1 || !ok2 {
		return "", "", fmt.Errorf("rdma_cm configfs: cannot read %s/default_roce_{mode,tos}", rdmacmPort(dev))
	}
	for k, v := range roceModeNames {
		if m == v {
			m = k
		}
	}
	return m, t, nil
}

// rdmacmSnap is a NIC's rdma_cm defaults before a transaction.
type rdmacmSnap struct {
	Mode string `json:"mode"`
	Tos  string `json:"tos"`
}

// applyRDMACM sets port 1's default RoCE mode and ToS, writing only the
// values that differ, and leaves the group in place.
func applyRDMACM(dev, mode string, tos int) error {
	if err := os.Mkdir(rdmacmGroup(dev), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("rdma_cm configfs: mkdir %s: %w", rdmacmGroup(dev), err)
	}
	curMode, curTos, err := readRDMACM(dev)
	if err != nil {
		return err
	}
	if mode != "" && mode != curMode {
		name, ok := roceModeNames[mode]
		if !ok {
			return fmt.Errorf("rdma_cm: unknown RoCE mode %q (v1 or v2)", mode)
		}
		if err := writeSys(filepath.Join(rdmacmPort(dev), "default_roce_mode"), name); err != nil {
			return fmt.Errorf("%s: rdma_cm default RoCE mode %s: %w", dev, name, err)
		}
	}
	if tos >= 0 && strconv.Itoa(tos) != curTos {
		if err := writeSys(filepath.Join(rdmacmPort(dev), "default_roce_tos"), strconv.Itoa(tos)); err != nil {
			return fmt.Errorf("%s: rdma_cm default ToS %d: %w", dev, tos, err)
		}
	}
	return nil
}

// writeSys writes a sysfs/configfs/procfs attribute in one write, as the
// shell's `echo v > file` does (O_TRUNC is what the shell passes; these
// filesystems ignore it, fixture files in tests need it).
func writeSys(path, val string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(val); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
