package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// fixture reads a testdata file without its # header.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestParseBnxtApply(t *testing.T) {
	on, err := parseBnxtApply(fixture(t, "bnxt/apply-enabled.txt"))
	if err != nil || on != (bnxtCC{Enabled: true, RocePrio: 3, RoceDSCP: 26, CNPPrio: 7, CNPDSCP: 48}) {
		t.Errorf("enabled: %+v %v", on, err)
	}
	off, err := parseBnxtApply(fixture(t, "bnxt/apply-disabled.txt"))
	if err != nil || off != (bnxtCC{RocePrio: 3, RoceDSCP: 26, CNPPrio: -1, CNPDSCP: -1}) {
		t.Errorf("disabled: %+v %v", off, err)
	}
	if _, err := parseBnxtApply("0x1\n"); err == nil {
		t.Error("a file that is not apply_show's output parsed")
	}
}

func TestBnxtECNState(t *testing.T) {
	n := &intent.NIC{ECNPrios: []int{0, 3, 6}}
	for _, c := range []struct {
		cc   bnxtCC
		nic  *intent.NIC
		want string
	}{
		{bnxtCC{Enabled: true, RocePrio: 3}, n, "0,3,6"},         // on covers the RoCE traffic: the spec's mask
		{bnxtCC{Enabled: false, RocePrio: 3}, n, ""},             // off: drift against "0,3,6"
		{bnxtCC{Enabled: true, RocePrio: 3}, &intent.NIC{}, "3"}, // on, not wanted: drift against ""
		{bnxtCC{Enabled: false}, &intent.NIC{}, ""},
	} {
		if got := c.cc.ecnState(c.nic); got != c.want {
			t.Errorf("%+v with %v: %q, want %q", c.cc, c.nic.ECNPrios, got, c.want)
		}
	}
}

// The plan step writes hex (configfs.c parses every value with
// sscanf("%x")), the RoCE entry along with the CNP one, then apply, then
// removes the group.
func TestDescribeBnxt(t *testing.T) {
	n := &intent.NIC{Name: "ens1f0np0", Device: "bnxt_re0", ECNPrios: []int{3}, RDMAPriority: 3, CNPDSCP: 48, CNPPriority: 6}
	h := &intent.Host{RDMATos: 104}
	sum, pl := describeBnxt(n.Name, n, h, "")
	joined := strings.Join(pl, "\n")
	d := "/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/"
	for _, want := range []string{
		"mkdir -p /sys/kernel/config/bnxt_re/bnxt_re0",
		"echo -n 0x1 > " + d + "ecn_enable",
		"echo -n 0x3 > " + d + "roce_prio",
		"echo -n 0x1a > " + d + "roce_dscp",
		"echo -n 0x6 > " + d + "cnp_prio",
		"echo -n 0x30 > " + d + "cnp_dscp",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("payload lacks %q:\n%s", want, joined)
		}
	}
	if pl[len(pl)-2] != "echo -n 0x1 > "+d+"apply" || pl[len(pl)-1] != "rmdir /sys/kernel/config/bnxt_re/bnxt_re0" {
		t.Errorf("apply then rmdir last:\n%s", joined)
	}
	if !strings.Contains(sum, "CNPs with DSCP 48, priority 6") {
		t.Errorf("summary %q", sum)
	}
	off := &intent.NIC{Name: "x", Device: "bnxt_re1", RDMAPriority: 3, CNPDSCP: -1, CNPPriority: -1}
	_, pl = describeBnxt(off.Name, off, h, "")
	if strings.Contains(strings.Join(pl, "\n"), "cnp_") || !strings.Contains(strings.Join(pl, "\n"), "echo -n 0x0 > /sys/kernel/config/bnxt_re/bnxt_re1/ports/1/cc/ecn_enable") {
		t.Errorf("DCQCN off:\n%s", strings.Join(pl, "\n"))
	}
}

func TestBnxtMismatch(t *testing.T) {
	w := bnxtCC{Enabled: true, RocePrio: 3, RoceDSCP: 26, CNPPrio: 6, CNPDSCP: 48}
	if m := bnxtMismatch(w, w); m != "" {
		t.Errorf("equal: %s", m)
	}
	got := w
	got.CNPDSCP, got.Enabled = -1, false
	if m := bnxtMismatch(w, got); m != "ecn_enable false (want true), cnp_dscp -1 (want 48)" {
		t.Errorf("mismatch %q", m)
	}
}

// withRoots points sysfs and configfs at a temporary tree.
func withRoots(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	oldSys, oldCfg := sysRoot, cfgRoot
	t.Cleanup(func() { sysRoot, cfgRoot = oldSys, oldCfg })
	sysRoot, cfgRoot = filepath.Join(dir, "sys"), filepath.Join(dir, "config")
	return dir
}

func writeTree(t *testing.T, files map[string]string) {
	t.Helper()
	for p, v := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ccNIC(ecn bool) *intent.NIC {
	n := &intent.NIC{Name: "ens1f0np0", Device: "bnxt_re0", RoCEMode: "v2", RDMAPriority: 3, CNPDSCP: -1, CNPPriority: -1}
	if ecn {
		n.ECNPrios, n.CNPDSCP, n.CNPPriority = []int{0, 1, 2, 3, 4, 5, 6, 7}, 48, 6
	}
	return n
}

// With Broadcom's out-of-tree driver the hardware's values (cat apply)
// are the state: CNP priority 7 where the spec wants 6 is a difference.
func TestReadBnxtConfigfs(t *testing.T) {
	withRoots(t)
	writeTree(t, map[string]string{filepath.Join(bnxtCCDir("bnxt_re0"), "apply"): fixture(t, "bnxt/apply-enabled.txt")})
	n := ccNIC(true)
	st, unsup := map[string]string{}, map[string]string{}
	fs := readBnxt(n, &intent.Host{RDMATos: 104}, "", st, unsup)
	p := "nic/" + n.Name + "/"
	if st[p+"ecn"] != "0,1,2,3,4,5,6,7" || st[p+"cnp_dscp"] != "48" || st[p+"cnp_prio"] != "7" || len(unsup) != 0 {
		t.Errorf("state %v unsup %v", st, unsup)
	}
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "not a mask of priorities") || !strings.Contains(fs[0].Message, "DSCP 26 -> 3") {
		t.Errorf("findings %+v", fs)
	}
	// The group is named after the RDMA device: without device = ... it
	// cannot be found.
	n.Device = ""
	st, unsup = map[string]string{}, map[string]string{}
	readBnxt(n, &intent.Host{}, "", st, unsup)
	if !strings.Contains(unsup[p+"ecn"], `set device = "bnxt_reN"`) || unsup[p+"cnp"] == "" || st[p+"ecn"] != "" {
		t.Errorf("no device: state %v unsup %v", st, unsup)
	}
	// A group that cannot be made (not a bnxt_re device: ENODEV in the
	// kernel; here a missing parent) is not expressible, naming the path.
	n.Device = "mlx5_0"
	os.RemoveAll(bnxtCCGroup("bnxt_re0"))
	os.Remove(bnxtCCRoot())
	writeTree(t, map[string]string{filepath.Join(cfgRoot, "bnxt_re", ".keep"): ""})
	os.Chmod(bnxtCCRoot(), 0o555)
	defer os.Chmod(bnxtCCRoot(), 0o755)
	if os.Geteuid() == 0 {
		return // root creates the directory anyway
	}
	unsup = map[string]string{}
	readBnxt(n, &intent.Host{}, "", map[string]string{}, unsup)
	if !strings.Contains(unsup[p+"ecn"], "bnxt_re configfs: mkdir "+bnxtCCGroup("mlx5_0")) {
		t.Errorf("unmakeable group: %v", unsup)
	}
}

// The in-tree driver: without debugfs the DCQCN state is unknown (its
// load-time default depends on the kernel, the chip and PF/VF), never
// taken as on; with debugfs enable_cc and the CNP marking are read, and
// what differs is not expressible (debugfs is writable by root but no
// stable interface).
func TestReadBnxtInTree(t *testing.T) {
	dir := withRoots(t)
	pci := filepath.Join(dir, "sys/devices/pci0000:00/0000:3b:00.0")
	if err := os.MkdirAll(pci, 0o755); err != nil {
		t.Fatal(err)
	}
	p := "nic/ens1f0np0/"
	// No debugfs: unknown, whatever the spec wants.
	for _, on := range []bool{true, false} {
		st, unsup := map[string]string{}, map[string]string{}
		readBnxt(ccNIC(on), &intent.Host{}, pci, st, unsup)
		if _, ok := st[p+"ecn"]; ok || !strings.Contains(unsup[p+"ecn"], "DCQCN state unknown") || !strings.Contains(unsup[p+"ecn"], "debugfs is not mounted") {
			t.Errorf("no debugfs, DCQCN %v wanted: state %v unsup %v", on, st, unsup)
		}
	}
	// debugfs says off (and shows the CNP marking): on is not expressible.
	cc := filepath.Join(sysRoot, "kernel/debug/bnxt_re/0000:3b:00.0/cc_config")
	writeTree(t, map[string]string{filepath.Join(cc, "enable_cc"): "0\n", filepath.Join(cc, "alt_vlan_dscp"): "48\n", filepath.Join(cc, "alt_vlan_pcp"): "7\n"})
	st, unsup := map[string]string{}, map[string]string{}
	readBnxt(ccNIC(true), &intent.Host{}, pci, st, unsup)
	if _, ok := st[p+"ecn"]; ok || !strings.Contains(unsup[p+"ecn"], "DCQCN is off (debugfs") || !strings.Contains(unsup[p+"ecn"], "bnxt_re_cc_config_set") || !strings.Contains(unsup[p+"cnp"], "the NIC uses DSCP 48, priority 7") {
		t.Errorf("debugfs off: state %v unsup %v", st, unsup)
	}
	// Off wanted, off read: in effect.
	st, unsup = map[string]string{}, map[string]string{}
	readBnxt(ccNIC(false), &intent.Host{}, pci, st, unsup)
	if v, ok := st[p+"ecn"]; !ok || v != "" || unsup[p+"ecn"] != "" {
		t.Errorf("debugfs off, off wanted: state %v unsup %v", st, unsup)
	}
	writeTree(t, map[string]string{filepath.Join(cc, "enable_cc"): "1\n"})
	st, unsup = map[string]string{}, map[string]string{}
	readBnxt(ccNIC(true), &intent.Host{}, pci, st, unsup)
	if st[p+"ecn"] != "0,1,2,3,4,5,6,7" || unsup[p+"ecn"] != "" {
		t.Errorf("debugfs on: state %v unsup %v", st, unsup)
	}
	// The CNP marking the spec wants is the NIC's: in effect.
	n := ccNIC(true)
	n.CNPDSCP, n.CNPPriority = 48, 7
	st, unsup = map[string]string{}, map[string]string{}
	readBnxt(n, &intent.Host{}, pci, st, unsup)
	if st[p+"cnp_dscp"] != "48" || st[p+"cnp_prio"] != "7" || unsup[p+"cnp"] != "" {
		t.Errorf("debugfs CNP as wanted: state %v unsup %v", st, unsup)
	}
}
