package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
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

// fabdcbParam reads a fabdcb module parameter (/sys/module/fabdcb/parameters).
func fabdcbParam(t *testing.T, name string) int {
	t.Helper()
	v, ok := readTrim("/sys/module/fabdcb/parameters/" + name)
	if !ok {
		t.Fatalf("fabdcb has no parameter %s", name)
	}
	if v == "Y" || v == "N" {
		return map[string]int{"Y": 1, "N": 0}[v]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("fabdcb parameter %s = %q", name, v)
	}
	return n
}

func reopensOf(t *testing.T, dev string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(testutil.Run(t, "cat", "/sys/class/net/"+dev+"/fabdcb/nic_reopens")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// addClass puts one more class into the VM spec.
func addClass(src, class string) string {
	return strings.Replace(src, `class "bulk" {`, class+"\nclass \"bulk\" {", 1)
}

// TestFabdcbBnxtMaxTC: a Broadcom NIC whose firmware offers max_tc TCs
// and max_lltc lossless queues (the module's parameters; the dcb section
// loads the bnxt personality with several). The spec's three classes
// (priorities 0, 3, 6) apply within max_tc, compacted below it when the
// highest priority does not fit (bnxt_ets_validate refuses a TC above
// it), with the unused TCs neither ETS nor with a bandwidth; the first
// ETS sets up the TC count and the lossless TC lands on a lossless queue,
// each reopening the NIC as the plan says (bnxt_setup_mq_tc,
// bnxt_queue_remap); the re-plan is clean. A fourth class on a
// three-TC NIC, and a second lossless class beyond max_lltc, are listed
// as not expressible instead of failing in apply.
func TestFabdcbBnxtMaxTC(t *testing.T) {
	dev := fabdcbDev(t, 0)
	if fam := personalityOf(t, "", dev); fam != famBNXT {
		t.Skipf("max_tc is the bnxt personality's (this load is %s)", fam)
	}
	if fabdcbParam(t, "fw_lldp_agent") == 1 {
		t.Skip("the firmware LLDP agent keeps DCB from the host: TestFabdcbBnxtLLDPAgent")
	}
	maxTC, maxLLTC := fabdcbParam(t, "max_tc"), fabdcbParam(t, "max_lltc")
	t.Logf("fabdcb bnxt max_tc=%d max_lltc=%d", maxTC, maxLLTC)
	reg := registry(t)
	ctx := context.Background()
	src := fabdcbSpec(t, dev, "local")
	s, f := loadSpec(t, src)
	p := plan.Make(ctx, s, f, reg, plan.Options{})
	dp := p.Device("host.vm")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	for _, u := range dp.Unexpressible {
		if fe := feature(u.Path); fe == "ets" || fe == "pfc" || fe == "app" {
			t.Errorf("three classes on %d TCs: %s not expressible: %s", maxTC, u.Path, u.Reason)
		}
	}
	disrupts := false
	for _, c := range dp.Changes {
		if strings.HasPrefix(c.Path, "nic/"+dev+"/tc/") && strings.Contains(c.Disruptive, "bnxt_setup_mq_tc") {
			disrupts = true
		}
	}
	if !disrupts {
		t.Errorf("the first ETS on bnxt is not marked disruptive (TC count 0 -> n): %+v", dp.Changes)
	}
	reopens0 := reopensOf(t, dev)
	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply on max_tc %d: %v %+v", maxTC, err, res.Devices[0])
	}
	checkApplied(t, "", dev)
	e := dcbShow(t, "", "ets", "show", "dev", dev)
	prioTC, _ := e["prio_tc"].([]any)
	for prio, tc := range prioTC {
		if n, _ := strconv.Atoi(fmt.Sprint(tc)); n >= maxTC {
			t.Errorf("priority %d on TC %d, the firmware offers %d", prio, n, maxTC)
		}
	}
	if n := reopensOf(t, dev) - reopens0; n < 1 {
		t.Errorf("apply reopened the NIC %d times: the first ETS sets up the TC count", n)
	}
	if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
	reopens1 := reopensOf(t, dev)
	if _, err := applyPlan(t, plan.Make(ctx, s, f, reg, plan.Options{}), f, reg); err != nil {
		t.Fatal(err)
	}
	if n := reopensOf(t, dev) - reopens1; n != 0 {
		t.Errorf("a no-change apply reopened the NIC %d times", n)
	}

	// More than the firmware takes: listed, not planned.
	more := addClass(src, `class "storage" {
  priority  = 4
  dscp      = [10]
  lossless  = true
  bandwidth = 10
}`)
	more = strings.Replace(more, "bandwidth = 40", "bandwidth = 30", 1)
	s2, f2 := loadSpec(t, more)
	d2 := plan.Make(ctx, s2, f2, reg, plan.Options{}).Device("host.vm")
	if d2.Error != "" {
		t.Fatal(d2.Error)
	}
	why := map[string]string{}
	for _, u := range d2.Unexpressible {
		why[feature(u.Path)] = u.Reason
	}
	switch {
	case maxTC < 4:
		if !strings.Contains(why["ets"], "offers") {
			t.Errorf("4 classes on %d TCs: ETS not listed as not expressible: %v", maxTC, why)
		}
	case maxLLTC < 2:
		if !strings.Contains(why["pfc"], "lossless queues") {
			t.Errorf("2 lossless classes on %d lossless queues: PFC not listed: %v", maxLLTC, why)
		}
	default:
		if why["ets"] != "" || why["pfc"] != "" {
			t.Errorf("4 classes, 2 lossless fit max_tc %d, max_lltc %d: %v", maxTC, maxLLTC, why)
		}
	}
}

// TestFabdcbBnxtLLDPAgent: a Broadcom NIC whose firmware runs an LLDP
// agent without a DCBX agent (fabdcb's fw_lldp_agent: bnxt_dcb_init leaves
// DCBX IEEE only, and bnxt_dcbnl_setdcbx refuses host mode): the plan
// lists DCB as not expressible, naming the cause, instead of planning
// writes that fail in apply; iproute2's dcb gets the same refusal.
func TestFabdcbBnxtLLDPAgent(t *testing.T) {
	dev := fabdcbDev(t, 0)
	if fam := personalityOf(t, "", dev); fam != famBNXT || fabdcbParam(t, "fw_lldp_agent") != 1 {
		t.Skip("needs the bnxt personality loaded with fw_lldp_agent=1")
	}
	s, f := loadSpec(t, fabdcbSpec(t, dev, "local"))
	d := plan.Make(context.Background(), s, f, registry(t), plan.Options{}).Device("host.vm")
	if d.Error != "" {
		t.Fatal(d.Error)
	}
	why := map[string]string{}
	for _, u := range d.Unexpressible {
		why[feature(u.Path)] = u.Reason
	}
	for _, fe := range []string{"ets", "pfc", "app"} {
		if !strings.Contains(why[fe], "BNXT_FW_CAP_LLDP_AGENT") {
			t.Errorf("%s: not listed as not expressible with the LLDP agent's refusal: %q", fe, why[fe])
		}
	}
	for _, c := range d.Changes {
		if fe := feature(c.Path); fe == "ets" || fe == "pfc" || fe == "app" {
			t.Errorf("planned a DCB change bnxt refuses: %+v", c)
		}
	}
	if out, err := exec.Command("dcb", "dcbx", "set", "dev", dev, "host", "ieee").CombinedOutput(); err == nil {
		t.Errorf("dcb dcbx set host ieee succeeded on a bnxt with the firmware LLDP agent:\n%s", out)
	}
}
