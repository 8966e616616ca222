package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

var (
	errBnxtETS   = errors.New("EINVAL")
	errBnxtNoTSA = errors.New("ENOTSUPP")
)

// bnxtETSValidate is bnxt_ets_validate (torvalds/linux
// drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c) with the starving check
// of c08c59653415 (5.14): allTCs is the loop over all eight TCs it had
// until b74c2a2e9cc4 "bnxt_en: Fix DCB ETS validation" (gregkh/linux
// 0118fe8: "for (i = 0; i < max_tc; i++)", max_tc the highest prio_tc).
func bnxtETSValidate(e dcbnl.ETS, maxTC int, allTCs bool) error {
	high := 0
	for i := range 8 {
		if int(e.PrioTC[i]) > maxTC {
			return fmt.Errorf("%w: priority to TC mapping exceeds TC count %d", errBnxtETS, e.PrioTC[i])
		}
		high = max(high, int(e.PrioTC[i]))
		if (e.TCTxBW[i] != 0 || e.TCTSA[i] != 0) && i > maxTC {
			return fmt.Errorf("%w: TC %d above max_tc %d has a TSA or bandwidth", errBnxtETS, i, maxTC)
		}
	}
	n := high
	if allTCs {
		n = 8
	}
	total, zero := 0, false
	for i := range n {
		switch e.TCTSA[i] {
		case dcbnl.TSAStrict:
		case dcbnl.TSAETS:
			total += int(e.TCTxBW[i])
			zero = zero || e.TCTxBW[i] == 0
		default:
			return errBnxtNoTSA
		}
	}
	if total > 100 {
		return fmt.Errorf("%w: rejecting ETS config exceeding available bandwidth", errBnxtETS)
	}
	if zero && total == 100 {
		return fmt.Errorf("%w: rejecting ETS config starving a TC", errBnxtETS)
	}
	return nil
}

// TestBnxtETSWithinMaxTC: on a Broadcom NIC whose firmware offers 3, 4, 6
// or 8 TCs (ets_cap), the ETS fabctl writes passes bnxt_ets_validate of
// the kernels before and after the starving fix, keeps every priority on
// a TC below max_tc and reads back as the spec's classes; the TC count
// bnxt sets up is the class count when compacted.
func TestBnxtETSWithinMaxTC(t *testing.T) {
	_, f := loadSpec(t, roceSpec)
	n := &f.Hosts[0].NICs[0] // classes on 0, 3 (lossless), 6 (strict)
	for _, maxTC := range []int{3, 4, 6, 8} {
		cur := &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: uint8(maxTC)}, PFC: &dcbnl.PFC{Cap: 8}}
		e := etsFor(n, famBNXT, cur)
		for _, all := range []bool{true, false} {
			if err := bnxtETSValidate(e, maxTC, all); err != nil {
				t.Errorf("max_tc %d (all TCs %v): %v for %s", maxTC, all, err, etsText(e))
			}
		}
		for p, tc := range e.PrioTC {
			if int(tc) >= maxTC {
				t.Errorf("max_tc %d: priority %d on TC %d", maxTC, p, tc)
			}
		}
		if want := map[bool]int{true: 3, false: 7}[maxTC <= 6]; bnxtTCCount(e) != want {
			t.Errorf("max_tc %d: %d TCs, want %d (%s)", maxTC, bnxtTCCount(e), want, etsText(e))
		}
		unsup := map[string]string{}
		bnxtLimits(n, cur, unsup)
		if len(unsup) != 0 {
			t.Errorf("max_tc %d: %v", maxTC, unsup)
		}
		a, b := intent.State{}, intent.State{}
		ident := desiredETS(n)
		putDCBFor(a, "nic/v0a/", &dcbnl.IEEE{ETS: &ident, PFC: &dcbnl.PFC{Enable: desiredPFC(n)}}, n, famMLX5)
		putDCBFor(b, "nic/v0a/", &dcbnl.IEEE{ETS: &e, PFC: &dcbnl.PFC{Enable: desiredPFC(n)}}, n, famMLX5)
		for _, c := range intent.Diff(a, b, nil) {
			t.Errorf("max_tc %d reads differently: %s %s %q/%q", maxTC, c.Action, c.Path, c.Before, c.After)
		}
	}
	// The generic layout (ETS 0 % on every unused TC) is what bnxt refuses.
	if err := bnxtETSValidate(desiredETSLayout(n, true), 3, true); err == nil {
		t.Error("the model accepts the generic layout: it cannot tell the fix")
	}
}

// TestBnxtLimits: more classes than the firmware's TCs, more lossless
// TCs than its lossless queues, an ETS class with 0 % are listed as not
// expressible with bnxt's reason, PFC with a refused ETS too.
func TestBnxtLimits(t *testing.T) {
	src := strings.Replace(roceSpec, `fabric "t" {`, `class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 50
}
class "storage" {
  priority  = 4
  dscp      = [10]
  lossless  = true
  bandwidth = 20
}
class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}
class "bulk" {
  priority  = 0
  default   = true
  bandwidth = 30
}
fabric "t" {`, 1)
	_, f := loadSpec(t, src)
	n := &f.Hosts[0].NICs[0]
	unsup := map[string]string{}
	bnxtLimits(n, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 3}, PFC: &dcbnl.PFC{Cap: 2}}, unsup)
	if !strings.Contains(unsup["nic/v0a/ets"], "offers 3 TCs") || !strings.Contains(unsup["nic/v0a/pfc"], "bp->ieee_ets") {
		t.Errorf("4 classes on 3 TCs: %v", unsup)
	}
	unsup = map[string]string{}
	bnxtLimits(n, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}, PFC: &dcbnl.PFC{Cap: 1}}, unsup)
	if unsup["nic/v0a/ets"] != "" || !strings.Contains(unsup["nic/v0a/pfc"], "1 lossless queues") {
		t.Errorf("2 lossless classes, 1 lossless queue: %v", unsup)
	}
	if why := blocked(unsup, "v0a", "pfc"); why == "" {
		t.Error("blocked does not report the PFC limit")
	}
	if why := blocked(unsup, "v0a", "ets"); why != "" {
		t.Errorf("ETS blocked: %s", why)
	}
}

// TestNICFactsDisruptive: the change list marks ETS and APP steps
// disruptive where the NIC's driver interrupts traffic for them (ice
// resets the netdev; bnxt reopens the NIC for a new TC count), and shows
// the ETS layout that driver gets.
func TestNICFactsDisruptive(t *testing.T) {
	_, f := loadSpec(t, roceSpec)
	n := &f.Hosts[0].NICs[0]
	for _, c := range []struct {
		fam       family
		cur       *dcbnl.IEEE
		ets, app  bool
		etsLayout string
	}{
		{famMLX5, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}}, false, false, "prio_tc [0 0 0 3 0 0 6 0]"},
		{famICE, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}}, true, true, "prio_tc [0 0 0 1 0 0 2 0]"},
		{famBNXT, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 3}}, true, false, "prio_tc [0 0 0 1 0 0 2 0] tc_tsa [2 2 0 0 0 0 0 0]"},
	} {
		facts := map[string]string{}
		nicDCBFacts(facts, n, c.fam, c.cur)
		if got := disruptiveFor(facts, "v0a", "ets") != ""; got != c.ets {
			t.Errorf("%s: ETS disruptive %v", c.fam, got)
		}
		if got := disruptiveFor(facts, "v0a", "app") != ""; got != c.app {
			t.Errorf("%s: APP disruptive %v", c.fam, got)
		}
		if !strings.Contains(etsPayload(facts, n), c.etsLayout) {
			t.Errorf("%s: ETS payload %q, want %q", c.fam, etsPayload(facts, n), c.etsLayout)
		}
	}
	// bnxt already at the TC count the ETS sets up: no reopen.
	facts := map[string]string{}
	set := etsFor(n, famBNXT, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 3}})
	set.ETSCap = 3
	nicDCBFacts(facts, n, famBNXT, &dcbnl.IEEE{ETS: &set})
	if why := disruptiveFor(facts, "v0a", "ets"); why != "" {
		t.Errorf("bnxt with its TC count unchanged: %s", why)
	}
	d := New().(*Driver)
	d.facts["h1"] = map[string]string{}
	nicDCBFacts(d.facts["h1"], n, famICE, &dcbnl.IEEE{})
	h := f.Hosts[0]
	chs, err := d.Changes(drivers.Target{Device: h.Device, Intent: h}, []intent.AttrChange{{Path: "nic/v0a/dscp/26", Action: intent.Update, Before: "3", After: "4"}, {Path: "nic/v0a/tc/3/bandwidth", Action: intent.Update, Before: "50", After: "60"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chs {
		if ch.Disruptive == "" {
			t.Errorf("ice step %q not disruptive", ch.Summary)
		}
	}
}

// TestBnxtDCBXRefusal: a bnxt NIC whose DCBX reads IEEE without HOST is a
// VF or a PF whose firmware runs an LLDP agent without a DCBX agent
// (bnxt_dcb_init), which bnxt_dcbnl_setdcbx refuses host mode: the plan
// lists DCB as not expressible instead of failing in apply; a mode set
// by hand (CEE) stays expressible (apply switches it), host IEEE too.
func TestBnxtDCBXRefusal(t *testing.T) {
	dir := t.TempDir()
	old := sysRoot
	t.Cleanup(func() { sysRoot = old })
	sysRoot = dir
	mode := func(v uint8) *dcbnl.IEEE { return &dcbnl.IEEE{DCBX: &v} }
	for _, c := range []struct {
		dcbx uint8
		why  string
	}{
		{dcbnl.DCBXVerIEEE, "BNXT_FW_CAP_LLDP_AGENT"},
		{dcbnl.DCBXVerIEEE | dcbnl.DCBXLLDManaged, "LLD_MANAGED"},
		{dcbnl.DCBXVerCEE, ""},
		{dcbnl.DCBXVerIEEE | dcbnl.DCBXHost, ""},
	} {
		unsup := map[string]string{}
		bnxtDCBX("e0", mode(c.dcbx), unsup)
		if got := unsup["nic/e0/dcb"]; !strings.Contains(got, c.why) || (c.why == "") != (got == "") {
			t.Errorf("dcbx 0x%02x: %q", c.dcbx, got)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "class/net/e1/device/physfn"), 0o755); err != nil {
		t.Fatal(err)
	}
	unsup := map[string]string{}
	bnxtDCBX("e1", mode(dcbnl.DCBXVerIEEE), unsup)
	if !strings.Contains(unsup["nic/e1/dcb"], "it is a VF") {
		t.Errorf("VF: %q", unsup["nic/e1/dcb"])
	}
}

// TestCMFinding: a RoCE NIC on a VLAN whose driver makes rdma_cm take
// the SL from its prio->TC map (ice, bnxt) gets a finding when that SL is
// not the RDMA class's priority; mlx5 takes fabctl's egress map.
func TestCMFinding(t *testing.T) {
	_, f := loadSpec(t, strings.Replace(roceSpec, `addresses = ["198.18.0.3/31"]`, `addresses = ["198.18.0.3/31"]
    vlan      = 100`, 1))
	n := &f.Hosts[0].NICs[0] // RDMA class on 3, rdma_tos 106: skb priority 2
	if f := cmFinding(n, famMLX5); f != nil {
		t.Errorf("mlx5: %+v", f)
	}
	// DSCP trust: ice's DSCP mode maps priority p to TC p, so skb priority
	// 2 gives SL 2; bnxt gives 0.
	for fam, sl := range map[family]string{famICE: "SL 2", famBNXT: "SL 0"} {
		f := cmFinding(n, fam)
		if f == nil || !strings.Contains(f.Message, "get_vlan_ndev_tc") || !strings.Contains(f.Message, "v0a.100 "+sl+",") {
			t.Errorf("%s: %+v", fam, f)
		}
	}
}
