package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Broadcom congestion control (DCQCN) and CNP marking.
//
// Broadcom's bnxt_re RoCE driver as shipped in the NetXtreme-E driver
// package (out of tree) takes them through configfs; the in-tree driver
// has no such interface. Sources (Broadcom bnxt_re 233.x, copyright
// Broadcom Inc., as carried in github.com/lykeioner/driver bnxt_re/ at
// bcef51d; docs/vendor-sources.md B-RE):
//   - README.TXT "Congestion Control": the subsystem
//     /sys/kernel/config/bnxt_re appears with the driver; `mkdir -p
//     /sys/kernel/config/bnxt_re/<ibdev>` makes the device's group with
//     ports/1/cc/ (cnp_dscp cnp_prio apply cc_mode roce_prio ecn_enable
//     roce_dscp ecn_marking and tuning files); values are hex ("echo -n
//     0x1c > roce_dscp" for DSCP 28); "Any changes will not take effect
//     unless" `echo -n 0x01 > apply`; `cat apply` shows the parameters
//     from the hardware, which "may be different" from the single files;
//     "rmmod bnxt_re will fail" while a group exists (rmdir it).
//   - configfs.c: every *_store parses with sscanf("%x"), so a decimal
//     "26" would be 0x26 (fabctl writes 0x..); roce_dscp/cnp_dscp above
//     0x3f are -EINVAL; make_bnxt_re_dev is -ENODEV for a name that is
//     not a bnxt_re device; apply_show prints "ecn status (ecn_enable)
//     ...: Enabled", then "roce prio (roce_prio)", "roce dscp
//     (roce_dscp)" and, only while ECN is enabled, "cnp prio (cnp_prio)"
//     and "cnp dscp (cnp_dscp)" in decimal (__print_pri_dscp_values).
//     On firmware without service profiles apply_store clears the
//     firmware's DSCP-to-priority table and programs only the RoCE and CNP
//     entries written with it (bnxt_re_program_cnp_dcb_values ->
//     bnxt_re_clear_dscp, bnxt_re_setup_dscp), so fabctl writes roce_prio
//     and roce_dscp along, as Broadcom's bnxt_setupcc.sh does (APP entries
//     first, then the cc files, apply, rmdir).
//   - bnxt_re's CC is one switch per port for RoCE traffic, not a mask of
//     priorities: ecn_enable reads as the spec's dcqcn_priorities when on.
//
// The in-tree driver (torvalds/linux drivers/infiniband/hw/bnxt_re)
// enables congestion control with ECT(1) marking at load, but only since
// "RDMA/bnxt_re: Enable congestion control by default" and only on P5/P7
// physical functions (main.c bnxt_re_setup_cc: enable = 1, tos_ecn = 1);
// older kernels, P4 chips and VFs keep the firmware's setting. It shows
// the parameters in debugfs only (debugfs.c bnxt_re_debugfs_add_pdev:
// bnxt_re/<pci>/cc_config/<param>, mode 0400 but with a write handler,
// bnxt_re_cc_config_set -> bnxt_qplib_modify_cc; reads come from the
// firmware, bnxt_qplib_query_cc_param): fabctl reads enable_cc and the
// CNP marking (alt_vlan_dscp, alt_vlan_pcp) there, reports them unknown
// without debugfs, and lists what it cannot set (debugfs is no stable
// interface).

func bnxtCCRoot() string { return filepath.Join(cfgRoot, "bnxt_re") }

func bnxtCCGroup(dev string) string { return filepath.Join(bnxtCCRoot(), dev) }

func bnxtCCDir(dev string) string { return filepath.Join(bnxtCCGroup(dev), "ports", "1", "cc") }

// bnxtConfigfs says whether Broadcom's out-of-tree bnxt_re is loaded.
func bnxtConfigfs() bool {
	_, err := os.Stat(bnxtCCRoot())
	return err == nil
}

// bnxtCC is what `cat apply` shows (the hardware's parameters); -1 for a
// value it does not show.
type bnxtCC struct {
	Enabled  bool `json:"enabled"`
	RocePrio int  `json:"roce_prio"`
	RoceDSCP int  `json:"roce_dscp"`
	CNPPrio  int  `json:"cnp_prio"`
	CNPDSCP  int  `json:"cnp_dscp"`
}

var bnxtApplyLine = regexp.MustCompile(`\((\w+)\)\s*:\s*(\S+)`)

// parseBnxtApply reads apply_show's lines "<text> (<file>)<tabs>: <value>".
func parseBnxtApply(s string) (bnxtCC, error) {
	cc := bnxtCC{RocePrio: -1, RoceDSCP: -1, CNPPrio: -1, CNPDSCP: -1}
	seen := false
	for _, l := range strings.Split(s, "\n") {
		m := bnxtApplyLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		num := func() int {
			v, err := strconv.Atoi(m[2])
			if err != nil {
				return -1
			}
			return v
		}
		switch m[1] {
		case "ecn_enable":
			cc.Enabled, seen = m[2] == "Enabled", true
		case "roce_prio":
			cc.RocePrio = num()
		case "roce_dscp":
			cc.RoceDSCP = num()
		case "cnp_prio":
			cc.CNPPrio = num()
		case "cnp_dscp":
			cc.CNPDSCP = num()
		}
	}
	if !seen {
		return cc, fmt.Errorf("no \"ecn status (ecn_enable)\" line in bnxt_re's apply")
	}
	return cc, nil
}

// withBnxtGroup runs f on the device's cc directory, making the group
// when it is absent and removing it afterwards (README 3.a; Broadcom's
// bnxt_setupcc.sh does mkdir -p, then rmdir -p). The values live in the
// device: removing the group keeps them.
func withBnxtGroup(dev string, f func(dir string) error) error {
	grp := bnxtCCGroup(dev)
	if _, err := os.Stat(grp); err != nil {
		if err := os.Mkdir(grp, 0o755); err != nil {
			if errors.Is(err, syscall.ENODEV) {
				return fmt.Errorf("bnxt_re configfs: mkdir %s: %w (is %s a bnxt_re RDMA device? the group is named after it)", grp, err, dev)
			}
			return fmt.Errorf("bnxt_re configfs: mkdir %s: %w", grp, err)
		}
		defer os.Remove(grp)
	}
	return f(bnxtCCDir(dev))
}

func readBnxtCC(dev string) (bnxtCC, error) {
	var cc bnxtCC
	err := withBnxtGroup(dev, func(dir string) error {
		b, err := os.ReadFile(filepath.Join(dir, "apply"))
		if err != nil {
			return fmt.Errorf("bnxt_re configfs: %w", err)
		}
		cc, err = parseBnxtApply(string(b))
		return err
	})
	return cc, err
}

// ecnState is the state key ecn as bnxt_re can have it: the spec's
// priorities while CC is on (it covers the RoCE traffic, whatever its
// priority), "" while off; on but not wanted reads as the RoCE priority,
// so the difference shows.
func (cc bnxtCC) ecnState(n *intent.NIC) string {
	switch {
	case !cc.Enabled:
		return ""
	case len(n.ECNPrios) > 0:
		return intsList(n.ECNPrios)
	case cc.RocePrio >= 0:
		return strconv.Itoa(cc.RocePrio)
	}
	return "on"
}

func itoaOrEmpty(v int) string {
	if v < 0 {
		return ""
	}
	return strconv.Itoa(v)
}

// bnxtRoceDSCP is the DSCP of the host's RoCE traffic: its ToS's upper six
// bits (rdma_cm's default ToS, NCCL_IB_TC), as bnxt_setupcc.sh sets
// default_roce_tos = roce_dscp << 2.
func bnxtRoceDSCP(h *intent.Host) int {
	if h.RDMATos < 0 {
		return -1
	}
	return h.RDMATos >> 2
}

// bnxtCCWant is what fabctl writes: ECN on where the spec has DCQCN,
// the CNP class's marking, and the RoCE priority and DSCP (apply keeps
// only the entries written with it in the firmware's DSCP table).
func bnxtCCWant(n *intent.NIC, h *intent.Host) bnxtCC {
	w := bnxtCC{Enabled: len(n.ECNPrios) > 0, RocePrio: n.RDMAPriority, RoceDSCP: bnxtRoceDSCP(h), CNPPrio: -1, CNPDSCP: -1}
	if w.Enabled {
		w.CNPPrio, w.CNPDSCP = n.CNPPriority, n.CNPDSCP
	}
	return w
}

// writeBnxtCC writes the values (hex, as configfs.c parses them) and
// applies them, then reads the hardware back.
func writeBnxtCC(nic, dev string, w bnxtCC) error {
	err := withBnxtGroup(dev, func(dir string) error {
		en := "0x0"
		if w.Enabled {
			en = "0x1"
		}
		files := []struct {
			name string
			v    int
		}{{"roce_prio", w.RocePrio}, {"roce_dscp", w.RoceDSCP}, {"cnp_prio", w.CNPPrio}, {"cnp_dscp", w.CNPDSCP}}
		if err := writeSys(filepath.Join(dir, "ecn_enable"), en); err != nil {
			return fmt.Errorf("ecn_enable %s: %w", en, err)
		}
		for _, f := range files {
			if f.v < 0 {
				continue
			}
			v := fmt.Sprintf("%#x", f.v)
			if err := writeSys(filepath.Join(dir, f.name), v); err != nil {
				return fmt.Errorf("%s %s: %w", f.name, v, err)
			}
		}
		if err := writeSys(filepath.Join(dir, "apply"), "0x1"); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "apply"))
		if err != nil {
			return fmt.Errorf("read apply: %w", err)
		}
		got, err := parseBnxtApply(string(b))
		if err != nil {
			return err
		}
		if bad := bnxtMismatch(w, got); bad != "" {
			return fmt.Errorf("the hardware shows %s after apply", bad)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: bnxt_re congestion control (%s): %w", nic, bnxtCCDir(dev), err)
	}
	return nil
}

// bnxtMismatch names the written values the hardware does not show.
func bnxtMismatch(w, got bnxtCC) string {
	var bad []string
	if w.Enabled != got.Enabled {
		bad = append(bad, fmt.Sprintf("ecn_enable %v (want %v)", got.Enabled, w.Enabled))
	}
	for _, c := range []struct {
		name      string
		want, got int
	}{{"roce_prio", w.RocePrio, got.RocePrio}, {"roce_dscp", w.RoceDSCP, got.RoceDSCP}, {"cnp_prio", w.CNPPrio, got.CNPPrio}, {"cnp_dscp", w.CNPDSCP, got.CNPDSCP}} {
		if c.want >= 0 && c.want != c.got {
			bad = append(bad, fmt.Sprintf("%s %d (want %d)", c.name, c.got, c.want))
		}
	}
	return strings.Join(bad, ", ")
}

// readBnxt reads DCQCN and CNP marking of a Broadcom NIC into the state
// (ecn, cnp_dscp, cnp_prio), or says why they cannot be set.
func readBnxt(n *intent.NIC, h *intent.Host, pciDev string, st, unsup map[string]string) []drivers.Finding {
	p := "nic/" + n.Name + "/"
	wantCNP := n.CNPDSCP >= 0 || n.CNPPriority >= 0
	if bnxtConfigfs() {
		if n.Device == "" {
			why := n.Name + ": the bnxt_re congestion control configfs group is named after the RDMA device: set device = \"bnxt_reN\" on the nic"
			unsup[p+"ecn"] = why
			if wantCNP {
				unsup[p+"cnp"] = why
			}
			return nil
		}
		cc, err := readBnxtCC(n.Device)
		if err != nil {
			why := n.Name + ": " + err.Error()
			unsup[p+"ecn"] = why
			if wantCNP {
				unsup[p+"cnp"] = why
			}
			return nil
		}
		st[p+"ecn"] = cc.ecnState(n)
		if wantCNP {
			st[p+"cnp_dscp"], st[p+"cnp_prio"] = itoaOrEmpty(cc.CNPDSCP), itoaOrEmpty(cc.CNPPrio)
		}
		if len(n.ECNPrios) > 0 {
			return []drivers.Finding{{Severity: "info", Path: p + "ecn", Message: fmt.Sprintf(
				"%s: bnxt_re congestion control is one switch for the port's RoCE traffic (ecn_enable), not a mask of priorities; applying it keeps only the RoCE (DSCP %s -> %s) and CNP entries in the NIC firmware's DSCP table (bnxt_re_program_cnp_dcb_values), the kernel's APP table is unchanged",
				n.Name, itoaOrEmpty(bnxtRoceDSCP(h)), itoaOrEmpty(n.RDMAPriority))}}
		}
		return nil
	}
	// In-tree bnxt_re: the CC parameters live in firmware and show in
	// debugfs only.
	dbg := bnxtDebugfs(pciDev)
	enabled, known := false, false
	if dbg != "" {
		if v, ok := readTrim(filepath.Join(dbg, "enable_cc")); ok {
			enabled, known = v == "1", true
		}
	}
	switch {
	case !known:
		unsup[p+"ecn"] = fmt.Sprintf("%s: DCQCN state unknown: the in-tree bnxt_re shows it only in debugfs (bnxt_re/<pci>/cc_config/enable_cc, which bnxt_re_cc_config_get reads from the firmware), and %s. Its default is no safe guess: bnxt_re_setup_cc turns congestion control on at load only in kernels with \"RDMA/bnxt_re: Enable congestion control by default\" and only on P5/P7 physical functions; older kernels, P4 chips (BCM5741x) and VFs keep the firmware's setting. Mount debugfs (mount -t debugfs none /sys/kernel/debug) so fabctl can read it",
			n.Name, bnxtDebugfsWhy(pciDev))
	case len(n.ECNPrios) > 0 && enabled:
		st[p+"ecn"] = intsList(n.ECNPrios)
	case len(n.ECNPrios) == 0 && !enabled:
		st[p+"ecn"] = ""
	default:
		want := "on"
		if len(n.ECNPrios) == 0 {
			want = "off"
		}
		unsup[p+"ecn"] = fmt.Sprintf("%s: DCQCN is %s (debugfs %s/enable_cc) and the spec wants it %s, which the in-tree bnxt_re offers no interface for: it sets congestion control only at load (bnxt_re_setup_cc), and its debugfs cc_config files, though root can write them (bnxt_re_cc_config_set -> bnxt_qplib_modify_cc), are no stable interface (debugfs is not an ABI; kernel lockdown refuses them); write it there by hand (echo %d > %s/enable_cc) and fabctl reads it back, or use Broadcom's out-of-tree bnxt_re (configfs ports/1/cc/ecn_enable)",
			n.Name, onOff(enabled), dbg, want, map[bool]int{true: 1, false: 0}[want == "on"], dbg)
	}
	if wantCNP {
		cur, d, pr := "", "", ""
		if dbg != "" {
			var ok1, ok2 bool
			d, ok1 = readTrim(filepath.Join(dbg, "alt_vlan_dscp"))
			pr, ok2 = readTrim(filepath.Join(dbg, "alt_vlan_pcp"))
			if ok1 && ok2 {
				if d == strconv.Itoa(n.CNPDSCP) && pr == strconv.Itoa(n.CNPPriority) {
					// In effect: what the spec wants is what the NIC does.
					st[p+"cnp_dscp"], st[p+"cnp_prio"] = d, pr
					return nil
				}
				cur = fmt.Sprintf(" (the NIC uses DSCP %s, priority %s: debugfs cc_config alt_vlan_dscp, alt_vlan_pcp)", d, pr)
			}
		}
		unsup[p+"cnp"] = fmt.Sprintf("%s: CNP DSCP %d / priority %d: the in-tree bnxt_re has no interface for the CNP marking (bnxt_re_setup_cc sets enable and tos_ecn only; debugfs cc_config alt_vlan_dscp and alt_vlan_pcp are root-writable through bnxt_re_cc_config_set but no stable interface)%s; Broadcom's out-of-tree bnxt_re takes ports/1/cc/cnp_dscp and cnp_prio in configfs",
			n.Name, n.CNPDSCP, n.CNPPriority, cur)
	}
	return nil
}

// bnxtDebugfsWhy says why the in-tree driver's debugfs directory of a PCI
// function cannot be read.
func bnxtDebugfsWhy(pciDev string) string {
	root := filepath.Join(sysRoot, "kernel/debug")
	if _, err := os.Stat(filepath.Join(root, "bnxt_re")); err != nil {
		if ents, _ := os.ReadDir(root); len(ents) == 0 {
			return "debugfs is not mounted on " + root
		}
		return "debugfs has no bnxt_re directory (" + filepath.Join(root, "bnxt_re") + ")"
	}
	name := "this NIC's PCI function"
	if t, err := filepath.EvalSymlinks(pciDev); err == nil {
		name = filepath.Base(t)
	}
	return "debugfs has no bnxt_re/" + name + "/cc_config"
}

// bnxtDebugfs is the in-tree driver's cc_config directory of the NIC's
// PCI function (debugfs bnxt_re/<pci>/cc_config), "" when absent.
func bnxtDebugfs(pciDev string) string {
	if pciDev == "" {
		return ""
	}
	target, err := filepath.EvalSymlinks(pciDev)
	if err != nil {
		return ""
	}
	dir := filepath.Join(sysRoot, "kernel/debug/bnxt_re", filepath.Base(target), "cc_config")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// describeBnxt is the plan step of ecn/cnp on a Broadcom NIC.
func describeBnxt(nic string, n *intent.NIC, h *intent.Host, where string) (string, []string) {
	w := bnxtCCWant(n, h)
	dir := filepath.Join("/sys/kernel/config/bnxt_re", n.Device, "ports/1/cc")
	pl := []string{"mkdir -p /sys/kernel/config/bnxt_re/" + n.Device + where}
	en := "0x0"
	if w.Enabled {
		en = "0x1"
	}
	pl = append(pl, fmt.Sprintf("echo -n %s > %s/ecn_enable%s", en, dir, where))
	for _, f := range []struct {
		name string
		v    int
	}{{"roce_prio", w.RocePrio}, {"roce_dscp", w.RoceDSCP}, {"cnp_prio", w.CNPPrio}, {"cnp_dscp", w.CNPDSCP}} {
		if f.v >= 0 {
			pl = append(pl, fmt.Sprintf("echo -n %#x > %s/%s%s", f.v, dir, f.name, where))
		}
	}
	pl = append(pl, fmt.Sprintf("echo -n 0x1 > %s/apply%s", dir, where), "rmdir /sys/kernel/config/bnxt_re/"+n.Device+where)
	what := "off"
	if w.Enabled {
		what = fmt.Sprintf("on for RoCE (priority %d, DSCP %d), CNPs with DSCP %d, priority %d", w.RocePrio, w.RoceDSCP, w.CNPDSCP, w.CNPPrio)
	}
	return fmt.Sprintf("%s: bnxt_re congestion control (DCQCN) %s", nic, what), pl
}
