package host

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/vishvananda/netns"
)

// useFixtures copies testdata/sysfs (a sysfs, procfs and configfs tree
// with two ConnectX PCI functions) to a temporary directory, so tests may
// write to it, and points the readers at it.
func useFixtures(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := "testdata/sysfs"
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	oldSys, oldProc, oldCfg, oldDevinfo := sysRoot, procRoot, cfgRoot, ibvDevinfo
	sysRoot, procRoot, cfgRoot = filepath.Join(dst, "sys"), filepath.Join(dst, "proc"), filepath.Join(dst, "config")
	ibvDevinfo = func(dev string) (string, error) {
		b, err := os.ReadFile("testdata/ibv_devinfo_rxe.txt")
		return string(b), err
	}
	t.Cleanup(func() { sysRoot, procRoot, cfgRoot, ibvDevinfo = oldSys, oldProc, oldCfg, oldDevinfo })
	return dst
}

const fixtureSpec = `
fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}
host "h1" {
  connect    = "local"
  irqbalance = "stop"
  numa_nodes = { "0" = "0-3", "1" = "4-6" }
  qp {
    max_send_wr = 2000000
  }
  nic "ens1f0" {
    device = "mlx5_0"
    model  = "connectx-7"
  }
  nic "ens1f1" {
    device    = "mlx5_1"
    model     = "connectx-7"
    numa_node = 0
    numa      = "0-3"
  }
  nic "veth0" {
    device = "rxe9"
  }
}
`

func fixtureHost(t *testing.T) *intent.Host {
	t.Helper()
	_, f := loadSpec(t, fixtureSpec)
	return f.Hosts[0]
}

// TestReadSysFixture reads the fixture tree: DCQCN from the OFED sysfs
// (ens1f0) or absent with the debugfs report (ens1f1), rdma_cm defaults,
// IRQ affinity against the NUMA policy, and the findings (golden file).
func TestReadSysFixture(t *testing.T) {
	useFixtures(t)
	h := fixtureHost(t)
	st, unsup := intent.State{}, map[string]string{}
	fs, err := readSys(&session{ns: netns.None()}, h, st, unsup)
	if err != nil {
		t.Fatal(err)
	}
	want := intent.State{
		"nic/ens1f0/ecn": "3", "nic/ens1f0/roce_mode": "v1", "nic/ens1f0/tos": "0",
		"nic/ens1f0/irq_cpus":  "0-7", // auto wanted, IRQs on 0-7, local CPUs 0-3
		"nic/ens1f1/roce_mode": "v2", "nic/ens1f1/tos": "106",
		"nic/ens1f1/irq_cpus": "4-5", // explicit 0-3 wanted: the union of the IRQs' CPUs
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %q, want %q", k, st[k], v)
		}
	}
	for k, why := range map[string]string{
		"nic/ens1f1/ecn":       "ens1f1: no DCQCN sysfs",
		"nic/veth0/irq_cpus":   "veth0: no device IRQs (virtual device)",
		"nic/veth0/tos":        `veth0: no RDMA device "rxe9" on this host`,
		"nic/veth0/roce_mode":  `veth0: no RDMA device "rxe9" on this host`,
		"nic/ens1f0/irq_cpus?": "",
	} {
		if strings.HasSuffix(k, "?") {
			if got := unsup[strings.TrimSuffix(k, "?")]; got != "" {
				t.Errorf("%s unexpectedly unsupported: %s", k, got)
			}
			continue
		}
		if !strings.HasPrefix(unsup[k], why) {
			t.Errorf("unsupported %s = %q, want prefix %q", k, unsup[k], why)
		}
	}
	golden(t, "testdata/findings.golden.json", fs)
}

func golden(t *testing.T, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, path, append(got, '\n'))
}

// TestApplySysFixture applies DCQCN, the rdma_cm defaults and IRQ
// affinity to the fixture tree, reads back the desired values, and
// restores the snapshot exactly.
func TestApplySysFixture(t *testing.T) {
	root := useFixtures(t)
	h := fixtureHost(t)
	for i := range h.NICs {
		h.NICs[i].ECNPrios = []int{3, 5}
	}
	h.RDMATos = 104
	s := &session{ns: netns.None()}
	todo := map[string]map[string]bool{
		"ens1f0": {"ecn": true, "roce_mode": true, "tos": true, "irq_cpus": true},
		"ens1f1": {"roce_mode": true, "irq_cpus": true},
	}
	before := snapshotTree(t, root)
	snaps, probs := prepareSys(s, h, todo)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if err := applySys(s, h, todo); err != nil {
		t.Fatal(err)
	}
	st, unsup := intent.State{}, map[string]string{}
	if _, err := readSys(s, h, st, unsup); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"nic/ens1f0/ecn": "3,5", "nic/ens1f0/roce_mode": "v2", "nic/ens1f0/tos": "104",
		"nic/ens1f0/irq_cpus": "auto", "nic/ens1f1/roce_mode": "v2", "nic/ens1f1/irq_cpus": "0-3",
	} {
		if st[k] != v {
			t.Errorf("after apply %s = %q, want %q", k, st[k], v)
		}
	}
	// auto: one local CPU per IRQ, round-robin (set_irq_affinity_bynode).
	for irq, cpu := range map[string]string{"40": "0", "41": "1", "42": "2", "43": "3"} {
		if got, _ := readTrim(filepath.Join(procRoot, "irq", irq, "smp_affinity_list")); got != cpu {
			t.Errorf("IRQ %s on %q, want %q", irq, got, cpu)
		}
	}
	// Only what differs is written: ens1f1's ToS was not in todo, and
	// ens1f0's NP enable for priority 3 was already 1.
	if got, _ := readTrim(filepath.Join(cfgRoot, "rdma_cm/mlx5_1/ports/1/default_roce_tos")); got != "106" {
		t.Errorf("ens1f1 ToS touched: %q", got)
	}
	if err := restoreSys(s, h, snaps); err != nil {
		t.Fatal(err)
	}
	after := snapshotTree(t, root)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("restore: %s = %q, was %q", k, after[k], v)
		}
	}
}

func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPrepareSysRefuses: what the host cannot do is refused before
// anything is written.
func TestPrepareSysRefuses(t *testing.T) {
	root := useFixtures(t)
	h := fixtureHost(t)
	h.IRQBalance = "keep"
	fake := filepath.Join(procRoot, "4242")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "comm"), []byte("irqbalance\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshotTree(t, root)
	_, probs := prepareSys(&session{ns: netns.None()}, h, map[string]map[string]bool{
		"ens1f1": {"ecn": true, "irq_cpus": true},
		"veth0":  {"tos": true, "irq_cpus": true},
	})
	got := strings.Join(probs, "\n")
	for _, want := range []string{
		"ens1f1: no DCQCN sysfs",
		`ens1f1: irqbalance is running and the spec keeps it`,
		`veth0: no RDMA device "rxe9" on this host`,
		"veth0: no device IRQs (virtual device)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	after := snapshotTree(t, root)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s written by a refused prepare", k)
		}
	}
}

func TestIRQTargets(t *testing.T) {
	cases := []struct {
		name  string
		irqs  []int
		pol   spec.NUMAPolicy
		local spec.CPUSet
		want  map[int]string
		err   string
	}{
		{"auto round-robin", []int{1, 2, 3}, spec.NUMAPolicy{Auto: true}, spec.CPUSet{4, 5}, map[int]string{1: "4", 2: "5", 3: "4"}, ""},
		{"explicit list to every IRQ", []int{7, 8}, spec.NUMAPolicy{CPUs: spec.CPUSet{0, 1, 2}}, spec.CPUSet{4}, map[int]string{7: "0-2", 8: "0-2"}, ""},
		{"auto without locality", []int{1}, spec.NUMAPolicy{Auto: true}, nil, nil, "local CPUs are unknown"},
		{"neither", []int{1}, spec.NUMAPolicy{}, spec.CPUSet{1}, nil, "neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := irqTargets(c.irqs, c.pol, c.local)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for irq, w := range c.want {
				if got[irq].String() != w {
					t.Errorf("IRQ %d -> %s, want %s", irq, got[irq], w)
				}
			}
		})
	}
}

func TestPCIeRequestSizes(t *testing.T) {
	mk := func(mod func(b []byte)) []byte {
		b := make([]byte, 256)
		b[0x06] = 0x10
		b[0x34] = 0x40
		b[0x40], b[0x41] = 0x01, 0x60
		b[0x60], b[0x61] = 0x10, 0x00
		b[0x68], b[0x69] = 0x20, 0x20 // MPS 256 (bits 7:5 = 1), MRRS 512 (bits 14:12 = 2)
		if mod != nil {
			mod(b)
		}
		return b
	}
	cases := []struct {
		name      string
		cfg       []byte
		mrrs, mps int
	}{
		{"pcie cap second in list", mk(nil), 512, 256},
		{"mrrs 4096 mps 128", mk(func(b []byte) { b[0x68], b[0x69] = 0x00, 0x50 }), 4096, 128},
		{"unprivileged 64-byte dump", mk(nil)[:64], 0, 0},
		{"no capability list", mk(func(b []byte) { b[0x06] = 0 }), 0, 0},
		{"conventional PCI (no express cap)", mk(func(b []byte) { b[0x60] = 0x05 }), 0, 0},
		{"list loops", mk(func(b []byte) { b[0x41] = 0x40; b[0x60] = 0x05 }), 0, 0},
		{"pointer past the end", mk(func(b []byte) { b[0x41] = 0xfe }), 0, 0},
		{"short", []byte{1, 2, 3}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mrrs, mps := pcieRequestSizes(c.cfg)
			if mrrs != c.mrrs || mps != c.mps {
				t.Fatalf("MRRS %d MPS %d, want %d %d", mrrs, mps, c.mrrs, c.mps)
			}
		})
	}
}

func FuzzPCIeRequestSizes(f *testing.F) {
	b, err := os.ReadFile("testdata/sysfs/sys/devices/pci0000:00/0000:00:01.0/0000:03:00.0/config")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:64])
	f.Fuzz(func(t *testing.T, cfg []byte) {
		mrrs, mps := pcieRequestSizes(cfg)
		if (mrrs != 0 && (mrrs < 128 || mrrs > 16384)) || (mps != 0 && (mps < 128 || mps > 16384)) {
			t.Fatalf("sizes out of range: %d %d", mrrs, mps)
		}
	})
}

func TestParseDevinfo(t *testing.T) {
	b, err := os.ReadFile("testdata/ibv_devinfo_rxe.txt")
	if err != nil {
		t.Fatal(err)
	}
	l, err := parseDevinfo(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if l.MaxQPWR != 1048576 || l.MaxSGE != 32 || l.MaxCQE != 32767 || l.MaxQP == 0 || l.MaxCQ == 0 {
		t.Fatalf("%+v", l)
	}
	for _, bad := range []string{"", "hca_id: x\n", "\tmax_qp_wr:\tlots\n\tmax_sge: 1\n\tmax_cqe: 1\n"} {
		if _, err := parseDevinfo(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseDevinfo(f *testing.F) {
	b, err := os.ReadFile("testdata/ibv_devinfo_rxe.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseDevinfo(s)
		if err == nil && (l.MaxQPWR == 0 || l.MaxSGE == 0 || l.MaxCQE == 0) {
			t.Fatalf("accepted without limits: %+v", l)
		}
	})
}

func TestQPFindings(t *testing.T) {
	useFixtures(t)
	n := &intent.NIC{Name: "ens1f0", Device: "rxe_a", Model: "rxe", Limits: spec.ModelLimits("rxe")}
	qp := spec.DefaultQP
	qp.MaxSendWR, qp.MaxSGE, qp.CQDepth = 2000000, 64, 40000
	var msgs []string
	for _, f := range qpFindings(qp, n) {
		msgs = append(msgs, f.Severity+": "+f.Message)
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{
		"warning: ens1f0: qp max_send_wr = 2000000 exceeds rxe_a's max_qp_wr 1048576",
		"warning: ens1f0: qp max_sge = 64 exceeds rxe_a's max_sge 32",
		"warning: ens1f0: qp cq_depth = 40000 exceeds rxe_a's max_cqe 32767",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "max_recv_wr") || strings.Contains(got, "differ from the device") {
		t.Errorf("false finding:\n%s", got)
	}
	ibvDevinfo = func(string) (string, error) { return "", errNoDevinfo }
	fs := qpFindings(qp, n)
	if len(fs) != 1 || fs[0].Severity != "info" || !strings.Contains(fs[0].Message, "device limits of rxe_a unavailable (ibv_devinfo not installed)") {
		t.Fatalf("%+v", fs)
	}
}

func TestDCBXFinding(t *testing.T) {
	host, fw := uint8(0x09), uint8(0x08)
	if f := dcbxFinding("e", nil); f != nil {
		t.Fatal(f)
	}
	if f := dcbxFinding("e", &dcbnl.IEEE{DCBX: &host}); f != nil {
		t.Fatal(f)
	}
	f := dcbxFinding("e", &dcbnl.IEEE{DCBX: &fw})
	if f == nil || f.Severity != "warning" || !strings.Contains(f.Message, "dcb dcbx set dev e host ieee") {
		t.Fatal(f)
	}
	var _ drivers.Finding = *f
}

// TestCNPFixture: the CNP class's DSCP and priority reach the MLNX_OFED
// files ecn/roce_np/cnp_dscp and cnp_802p_prio (ens1f0); without them
// (ens1f1: upstream mlx5) the setting is not expressible and the reason
// names the firmware parameters (mlxconfig CNP_DSCP_P1, CNP_802P_PRIO_P1).
func TestCNPFixture(t *testing.T) {
	root := useFixtures(t)
	h := fixtureHost(t)
	s := &session{ns: netns.None()}
	for i := range h.NICs {
		h.NICs[i].ECN, h.NICs[i].CNPDSCP, h.NICs[i].CNPPriority = true, 46, 5
	}
	st, unsup := intent.State{}, map[string]string{}
	if _, err := readSys(s, h, st, unsup); err != nil {
		t.Fatal(err)
	}
	if st["nic/ens1f0/cnp_dscp"] != "48" || st["nic/ens1f0/cnp_prio"] != "6" {
		t.Errorf("ens1f0 CNP read %q/%q, want 48/6", st["nic/ens1f0/cnp_dscp"], st["nic/ens1f0/cnp_prio"])
	}
	if why := unsup["nic/ens1f1/cnp"]; !strings.Contains(why, "CNP_DSCP_P1=46") || !strings.Contains(why, "CNP_802P_PRIO_P1=5") {
		t.Errorf("ens1f1 CNP not expressible reason %q", why)
	}
	if got := blocked(unsup, "ens1f1", feature("nic/ens1f1/cnp_dscp")); got == "" {
		t.Error("nic/ens1f1/cnp_dscp not blocked")
	}
	before := snapshotTree(t, root)
	todo := map[string]map[string]bool{"ens1f0": {"cnp": true}}
	snaps, probs := prepareSys(s, h, todo)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if err := applySys(s, h, todo); err != nil {
		t.Fatal(err)
	}
	st = intent.State{}
	if _, err := readSys(s, h, st, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if st["nic/ens1f0/cnp_dscp"] != "46" || st["nic/ens1f0/cnp_prio"] != "5" {
		t.Errorf("after apply CNP %q/%q, want 46/5", st["nic/ens1f0/cnp_dscp"], st["nic/ens1f0/cnp_prio"])
	}
	if err := restoreSys(s, h, snaps); err != nil {
		t.Fatal(err)
	}
	after := snapshotTree(t, root)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("restore: %s = %q, was %q", k, after[k], v)
		}
	}
}
