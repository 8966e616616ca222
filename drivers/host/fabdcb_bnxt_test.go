package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// bnxtCCSpec is the DCQCN spec for a fabdcb device and its bnxt_re
// device (fabdcb<i> plays bnxt_re<i>, testbed/vm/kmod/fabdcb/bnxt_re_cc.c).
func bnxtCCSpec(t *testing.T, nic string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/vm/fabdcb-cc.fab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "FABDCB_NIC", nic)
	return strings.ReplaceAll(s, "FABDCB_RDMA", "bnxt_re"+strings.TrimPrefix(nic, "fabdcb"))
}

// ccHW reads the cc group as a user does (mkdir, cat apply, rmdir).
func ccHW(t *testing.T, dev string) bnxtCC {
	t.Helper()
	cc, err := readBnxtCC(dev)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

// ccWrite changes the NIC behind fabctl's back, as README.TXT 2.c-2.h
// and 3.a say: mkdir, echo values, echo -n 0x01 > apply, rmdir.
func ccWrite(t *testing.T, dev string, kv ...string) {
	t.Helper()
	grp := bnxtCCGroup(dev)
	if err := os.Mkdir(grp, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(grp)
	for i := 0; i+1 < len(kv); i += 2 {
		if err := writeSys(filepath.Join(bnxtCCDir(dev), kv[i]), kv[i+1]); err != nil {
			t.Fatalf("%s %s: %v", kv[i], kv[i+1], err)
		}
	}
}

// TestFabdcbBnxtCC: on the bnxt personality, DCQCN and the CNP class's
// marking go through bnxt_re's configfs (ports/1/cc, hex values, apply):
// planned from what the hardware shows, applied, read back clean, and a
// change made behind fabctl's back is drift that apply repairs; the
// groups fabctl makes are gone afterwards (rmmod needs that).
func TestFabdcbBnxtCC(t *testing.T) {
	nic := fabdcbDev(t, 2)
	if fam := personalityOf(t, "", nic); fam != famBNXT {
		t.Skipf("bnxt_re configfs is the bnxt personality's (this load is %s)", fam)
	}
	rdma := "bnxt_re" + strings.TrimPrefix(nic, "fabdcb")
	// The guest does not mount configfs; fabctl mounts it in a private
	// mount namespace (hostFS). The test's own reads need it here.
	if !cfgMounted() {
		if err := unix.Mount("configfs", cfgRoot, "configfs", 0, ""); err != nil {
			t.Fatalf("mount configfs on %s: %v", cfgRoot, err)
		}
		t.Cleanup(func() { _ = unix.Unmount(cfgRoot, 0) })
	}
	if !bnxtConfigfs() {
		t.Fatalf("fabdcb personality=bnxt registers no %s", bnxtCCRoot())
	}
	// configfs.c: every value is parsed as hex; decimal 26 is 0x26.
	ccWrite(t, rdma, "roce_dscp", "26")
	grp := bnxtCCGroup(rdma)
	if err := os.Mkdir(grp, 0o755); err != nil {
		t.Fatal(err)
	}
	v, _ := readTrim(filepath.Join(bnxtCCDir(rdma), "roce_dscp"))
	os.Remove(grp)
	if v != "0x26" {
		t.Errorf("roce_dscp after writing 26 shows %q, want 0x26 (sscanf %%x)", v)
	}
	// make_bnxt_re_dev: a name that is no bnxt_re device is ENODEV.
	if err := os.Mkdir(bnxtCCGroup("mlx5_0"), 0o755); err == nil {
		os.Remove(bnxtCCGroup("mlx5_0"))
		t.Error("mkdir bnxt_re/mlx5_0 succeeded")
	}
	// Load-time values (bnxt_re_init_cc_param): CC on, CNP 48 / 7.
	if hw := ccHW(t, rdma); !hw.Enabled || hw.CNPDSCP != 48 || hw.CNPPrio != 7 {
		t.Fatalf("load-time cc %+v", hw)
	}

	s, f := loadSpec(t, bnxtCCSpec(t, nic))
	reg := registry(t)
	ctx := context.Background()
	p := plan.Make(ctx, s, f, reg, plan.Options{})
	dp := p.Device("host.vm")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	pre := "nic/" + nic + "/"
	if !hasChange(dp.Changes, pre+"cnp_prio", "7", "6") {
		t.Errorf("no cnp_prio 7 -> 6 change: %+v", dp.Changes)
	}
	for _, u := range dp.Unexpressible {
		if f := feature(u.Path); f == "ecn" || f == "cnp" {
			t.Errorf("unexpressible with bnxt_re configfs: %s (%s)", u.Path, u.Reason)
		}
	}
	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	if hw := ccHW(t, rdma); hw != (bnxtCC{Enabled: true, RocePrio: 3, RoceDSCP: 26, CNPPrio: 6, CNPDSCP: 48}) {
		t.Errorf("after apply the hardware shows %+v", hw)
	}
	if ents, _ := os.ReadDir(bnxtCCRoot()); len(ents) != 0 {
		t.Errorf("groups left in %s: %v", bnxtCCRoot(), ents)
	}
	if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}

	// Behind fabctl's back: CC off (the CNP lines vanish from apply).
	ccWrite(t, rdma, "ecn_enable", "0x0", "apply", "0x1")
	applied := map[string]intent.State{"host.vm": dp.Desired}
	d3 := plan.Make(ctx, s, f, reg, plan.Options{Applied: applied}).Device("host.vm")
	if !hasChange(d3.Drift, pre+"ecn", "", "0,1,2,3,4,5,6,7") || !hasChange(d3.Changes, pre+"cnp_dscp", "", "48") {
		t.Errorf("CC off behind fabctl's back: drift %+v changes %+v", d3.Drift, d3.Changes)
	}
	p4 := plan.Make(ctx, s, f, reg, plan.Options{})
	if _, err := applyPlan(t, p4, f, reg); err != nil {
		t.Fatal(err)
	}
	if hw := ccHW(t, rdma); !hw.Enabled || hw.CNPPrio != 6 {
		t.Errorf("apply did not repair: %+v", hw)
	}
	if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("not clean after the repair: %v %+v", d.Error, d.Changes)
	}
}
