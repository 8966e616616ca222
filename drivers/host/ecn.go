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
)

// DCQCN per priority. The MLNX_OFED driver exposes the reaction point
// (the sender that slows down on CNPs) and the notification point (the
// receiver that turns ECN marks into CNPs) per priority as
// /sys/class/net/<if>/ecn/roce_{rp,np}/enable/<prio> (0/1); fabctl turns
// both on for the spec's ECN priorities and off elsewhere, as the
// nic-configuration-operator does. The upstream mlx5 driver has no such
// files (DCQCN is on in firmware for every priority, ROCE_CC_PRIO_MASK);
// its parameters are in debugfs cc_params, which fabctl only reports.

func ecnFile(nic, point string, prio int) string {
	return filepath.Join(sysRoot, "class/net", nic, "ecn", "roce_"+point, "enable", strconv.Itoa(prio))
}

// snapECN reads the 16 enable files (false when the sysfs is absent).
func snapECN(nic string) (map[string]string, bool) {
	out := map[string]string{}
	for p := 0; p < 8; p++ {
		for _, pt := range []string{"rp", "np"} {
			v, ok := readTrim(ecnFile(nic, pt, p))
			if !ok {
				return nil, false
			}
			out[ecnFile(nic, pt, p)] = v
		}
	}
	return out, true
}

// applyECN enables DCQCN (RP and NP) on prios and disables it on the
// other priorities, writing only the files that differ.
func applyECN(nic string, prios []int) error {
	on := map[int]bool{}
	for _, p := range prios {
		on[p] = true
	}
	cur, ok := snapECN(nic)
	if !ok {
		return fmt.Errorf("%s: no DCQCN sysfs (ecn/roce_rp, ecn/roce_np)", nic)
	}
	for p := 0; p < 8; p++ {
		want := "0"
		if on[p] {
			want = "1"
		}
		for _, pt := range []string{"rp", "np"} {
			f := ecnFile(nic, pt, p)
			if cur[f] == want {
				continue
			}
			if err := writeSys(f, want); err != nil {
				return fmt.Errorf("%s: DCQCN %s enable priority %d: %w", nic, strings.ToUpper(pt), p, err)
			}
		}
	}
	return nil
}

// restoreFiles writes back attribute values saved before a transaction.
func restoreFiles(vals map[string]string) error {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []string
	for _, k := range keys {
		if cur, ok := readTrim(k); ok && cur == vals[k] {
			continue
		}
		if err := writeSys(k, vals[k]); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("restore: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ccParamsFinding reports the upstream mlx5 DCQCN parameters from debugfs
// (/sys/kernel/debug/mlx5/<pci>/cc_params) when the OFED sysfs is absent:
// read-only, so the user sees which CNP DSCP/priority the NIC uses.
func ccParamsFinding(nic, dev string) *drivers.Finding {
	if dev == "" {
		return nil
	}
	target, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return nil
	}
	dir := filepath.Join(sysRoot, "kernel/debug/mlx5", filepath.Base(target), "cc_params")
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	var parts []string
	for _, k := range []string{"np_cnp_dscp", "np_cnp_prio_mode", "np_cnp_prio", "np_min_time_between_cnps", "rp_clamp_tgt_rate", "rp_rate_reduce_monitor_period"} {
		if v, ok := readTrim(filepath.Join(dir, k)); ok {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return &drivers.Finding{Severity: "info", Path: "nic/" + nic + "/ecn", Message: fmt.Sprintf(
		"%s: DCQCN is the firmware's (upstream mlx5, no per-priority enable in sysfs); debugfs cc_params (read-only): %s",
		nic, strings.Join(parts, " "))}
}

// CNP marking (notification point). MLNX_OFED's mlx5 exposes it per port
// as /sys/class/net/<if>/ecn/roce_np/cnp_dscp and cnp_802p_prio
// (en_ecn.c mlx5e_store_cnp_dscp / mlx5e_store_cnp_802p_prio, created in
// en_sysfs.c with the enable/<prio> files; NVIDIA's
// nic-configuration-operator reads the same cnp_dscp path). Upstream mlx5
// has no runtime knob: firmware CNP_DSCP_P1 / CNP_802P_PRIO_P1 (mlxconfig).

func cnpFile(nic, name string) string {
	return filepath.Join(sysRoot, "class/net", nic, "ecn/roce_np", name)
}

// readCNP returns the state keys cnp_dscp and cnp_prio (false when the
// files are absent).
func readCNP(nic string) (map[string]string, bool) {
	d, ok1 := readTrim(cnpFile(nic, "cnp_dscp"))
	p, ok2 := readTrim(cnpFile(nic, "cnp_802p_prio"))
	if !ok1 || !ok2 {
		return nil, false
	}
	return map[string]string{"cnp_dscp": d, "cnp_prio": p}, true
}

// snapCNP returns the two files' values by path, for restore.
func snapCNP(nic string) (map[string]string, bool) {
	out := map[string]string{}
	for _, f := range []string{"cnp_dscp", "cnp_802p_prio"} {
		v, ok := readTrim(cnpFile(nic, f))
		if !ok {
			return nil, false
		}
		out[cnpFile(nic, f)] = v
	}
	return out, true
}

func applyCNP(n *intent.NIC) error {
	for f, v := range map[string]int{"cnp_dscp": n.CNPDSCP, "cnp_802p_prio": n.CNPPriority} {
		if v < 0 {
			continue
		}
		if cur, ok := readTrim(cnpFile(n.Name, f)); ok && cur == strconv.Itoa(v) {
			continue
		}
		if err := writeSys(cnpFile(n.Name, f), strconv.Itoa(v)); err != nil {
			return fmt.Errorf("%s: CNP %s: %w", n.Name, f, err)
		}
	}
	return nil
}

// sysDriver is a netdev's kernel driver name from sysfs (device/driver).
func sysDriver(nic string) string {
	t, err := os.Readlink(filepath.Join(sysRoot, "class/net", nic, "device/driver"))
	if err != nil {
		return ""
	}
	return filepath.Base(t)
}

// cnpUnexpressible says why a NIC without the OFED files cannot take the
// CNP class's marking, and where the setting lives instead.
func cnpUnexpressible(n *intent.NIC) string {
	switch familyOf(n.Model, sysDriver(n.Name)) {
	case famICE:
		return fmt.Sprintf("%s: CNP DSCP/priority: the ice/irdma drivers expose no CNP marking setting", n.Name)
	case famBNXT: // read through bnxtcc.go; this is the fallback wording
		return fmt.Sprintf("%s: CNP DSCP/priority: no bnxt_re congestion control configfs (/sys/kernel/config/bnxt_re/<dev>/ports/1/cc: Broadcom's out-of-tree bnxt_re; the in-tree driver has none)", n.Name)
	}
	return fmt.Sprintf("%s: CNP DSCP %d / priority %d: no ecn/roce_np/cnp_dscp (MLNX_OFED only); on upstream mlx5 it is firmware: mlxconfig -d <pci> set CNP_DSCP_P1=%d CNP_802P_PRIO_P1=%d (P2 for the second port)",
		n.Name, n.CNPDSCP, n.CNPPriority, n.CNPDSCP, n.CNPPriority)
}
