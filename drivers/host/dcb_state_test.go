package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/spec"
)

// TestDCBStateRoundTrip: the DCB structs Apply writes for a NIC read back
// (putDCB) as exactly the DCB paths Flatten produces, so a DCB device
// re-plans clean after apply. (The kernel round trip needs a DCB device:
// the VM testbed's dummy dcbnl module.)
func TestDCBStateRoundTrip(t *testing.T) {
	_, f := loadSpec(t, roceSpec)
	h := f.Hosts[0]
	n := &h.NICs[0]
	ets := desiredETS(n)
	ieee := &dcbnl.IEEE{ETS: &ets, PFC: &dcbnl.PFC{Cap: 8, Enable: desiredPFC(n)}, Apps: desiredApps(n)}
	live := intent.State{}
	putDCB(live, "nic/v0a/", ieee)
	want := intent.State{}
	for k, v := range h.Flatten() {
		rest := strings.TrimPrefix(k, "nic/v0a/")
		if rest == k || strings.Contains(rest, "/ecn/") {
			continue
		}
		switch rest {
		case "mtu", "addresses", "pause", "ecn", "cnp_dscp", "cnp_prio", "cable_len", "roce_mode", "tos", "irq_cpus":
			continue
		}
		want[k] = v
	}
	if len(want) < 5 {
		t.Fatalf("spec has too few DCB paths: %v", want)
	}
	for _, c := range intent.Diff(want, live, nil) {
		t.Errorf("%s %s: want %q have %q", c.Action, c.Path, c.After, c.Before)
	}
	// ETS the kernel accepts: bandwidths of ETS TCs sum to 100.
	sum := 0
	for tc := 0; tc < 8; tc++ {
		if ets.TCTSA[tc] == dcbnl.TSAETS {
			sum += int(ets.TCTxBW[tc])
		} else if ets.TCTxBW[tc] != 0 {
			t.Errorf("non-ETS TC %d has bandwidth %d", tc, ets.TCTxBW[tc])
		}
	}
	if sum != 100 {
		t.Errorf("ETS bandwidths sum to %d: %+v", sum, ets)
	}
}

func TestParseCPUList(t *testing.T) {
	c, err := parseCPUList("0-3,8,10-11")
	if err != nil || c.String() != "0-3,8,10-11" || len(c) != 7 {
		t.Fatal(c, err)
	}
	if _, err := parseCPUList("x"); err == nil {
		t.Fatal("bad list accepted")
	}
}

// TestDSCPTableWhole: the APP table fabctl writes for trust dscp holds all
// 64 code points (as `mlnx_qos --trust dscp` does: mlnx-tools
// python/Python/dcbnetlink.py setDefaultAppEntry), so no code point keeps
// the NIC's firmware default (dscp >> 3 on mlx5 and ice) while the plan says
// it goes to the default class; and a live table missing any entry reads as
// that firmware default, so drift in any of the 64 entries is seen.
func TestDSCPTableWhole(t *testing.T) {
	_, f := loadSpec(t, roceSpec)
	n := &f.Hosts[0].NICs[0]
	apps := desiredApps(n)
	if len(apps) != 64 {
		t.Fatalf("desired APP table has %d entries, want all 64", len(apps))
	}
	seen := map[uint16]bool{}
	for _, a := range apps {
		if a.Selector != dcbnl.SelDSCP || a.Priority != n.DSCPToTC[a.Protocol] {
			t.Errorf("entry %+v does not match the spec's table (%d)", a, n.DSCPToTC[a.Protocol])
		}
		seen[a.Protocol] = true
	}
	if len(seen) != 64 {
		t.Errorf("%d distinct code points, want 64", len(seen))
	}
	// Every single entry missing from the live table is drift.
	want := intent.State{}
	putDCB(want, "nic/v0a/", &dcbnl.IEEE{Apps: apps})
	for d := 0; d < 64; d++ {
		if d>>3 == int(n.DSCPToTC[d]) {
			continue // missing, the firmware default equals the spec: no drift to see
		}
		var partial []dcbnl.App
		for _, a := range apps {
			if int(a.Protocol) != d {
				partial = append(partial, a)
			}
		}
		live := intent.State{}
		putDCB(live, "nic/v0a/", &dcbnl.IEEE{Apps: partial})
		if len(intent.Diff(want, live, nil)) == 0 {
			t.Errorf("DSCP %d absent from the live APP table (firmware default %d, spec %d): no drift seen", d, d>>3, n.DSCPToTC[d])
		}
	}
}

// TestCableLen: the link's cable_length reaches the NIC as ieee_pfc.delay
// on mlx5 (read back from it), and is not expressible on ice and bnxt
// (their setpfc ignores delay) or beyond mlx5's 1000 m.
func TestCableLen(t *testing.T) {
	src := roceSpec + `
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:v0a"]
  speed        = "100G"
  cable_length = "2.5m"
}
`
	_, f := loadSpec(t, src)
	n := &f.Hosts[0].NICs[0]
	if got := f.Hosts[0].Flatten()["nic/v0a/cable_len"]; got != "3" {
		t.Fatalf("desired cable_len %q, want 3 (2.5 m rounded up)", got)
	}
	ieee := &dcbnl.IEEE{PFC: &dcbnl.PFC{Enable: 8, Delay: 7}, Buffer: &dcbnl.Buffer{}}
	for _, tc := range []struct {
		fam    family
		length float64
		want   string
		why    string
	}{
		{famMLX5, 2.5, "7", ""},
		{famICE, 2.5, "", "ice_dcbnl_setpfc ignores"},
		{famBNXT, 2.5, "", "bnxt_hwrm_queue_pfc_cfg"},
		{famMLX5, 1500, "", "MLX5E_MAX_CABLE_LENGTH"},
		{famMLX5, 2.5, "", "MLX5_BUFFER_SUPPORTED"}, // a port without buffer registers (below)
	} {
		n.CableLength = spec.Length(tc.length)
		st, unsup := intent.State{}, map[string]string{}
		cur := ieee
		if tc.why == "MLX5_BUFFER_SUPPORTED" {
			cur = &dcbnl.IEEE{PFC: ieee.PFC}
		}
		readCableLen(n, tc.fam, cur, st, unsup)
		if st["nic/v0a/cable_len"] != tc.want || !strings.Contains(unsup["nic/v0a/cable_len"], tc.why) || (tc.why == "") != (unsup["nic/v0a/cable_len"] == "") {
			t.Errorf("%s %vm: state %q unsupported %q", tc.fam, tc.length, st["nic/v0a/cable_len"], unsup["nic/v0a/cable_len"])
		}
	}
}

// TestMaxrate: a class's max_rate becomes the host NIC's per-TC cap
// (ieee_maxrate, Kbit/s) on mlx5 and reads back in bit/s; ice and bnxt
// have no maxrate op, and a rate mlx5 cannot program exactly is listed.
func TestMaxrate(t *testing.T) {
	src := roceSpec + `
class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 60
}
class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
  max_rate = "10G"
}
class "bulk" {
  priority  = 0
  default   = true
  bandwidth = 40
}
`
	_, f := loadSpec(t, src)
	n := &f.Hosts[0].NICs[0]
	want := f.Hosts[0].Flatten()
	if want["nic/v0a/tc/6/max_rate"] != "10000000000" || want["nic/v0a/tc/3/max_rate"] != "0" {
		t.Fatalf("desired max_rate: tc6 %q tc3 %q", want["nic/v0a/tc/6/max_rate"], want["nic/v0a/tc/3/max_rate"])
	}
	m := desiredMaxrate(n)
	ets := desiredETS(n)
	ieee := &dcbnl.IEEE{ETS: &ets, Maxrate: &m}
	st, unsup := intent.State{}, map[string]string{}
	readMaxrate(n, famMLX5, ieee, st, unsup)
	if st["nic/v0a/tc/6/max_rate"] != "10000000000" || len(unsup) != 0 {
		t.Errorf("mlx5 read-back %v %v", st, unsup)
	}
	for _, fam := range []family{famICE, famBNXT} {
		unsup := map[string]string{}
		readMaxrate(n, fam, ieee, intent.State{}, unsup)
		if !strings.Contains(unsup["nic/v0a/maxrate"], "no ieee_setmaxrate") {
			t.Errorf("%s: %q", fam, unsup["nic/v0a/maxrate"])
		}
	}
	for i := range n.TCs {
		if n.TCs[i].MaxRate > 0 {
			n.TCs[i].MaxRate = 10_050_000_000
		}
	}
	unsup = map[string]string{}
	readMaxrate(n, famMLX5, ieee, intent.State{}, unsup)
	if !strings.Contains(unsup["nic/v0a/maxrate"], "100 Mbit/s") {
		t.Errorf("10.05G on mlx5: %q", unsup["nic/v0a/maxrate"])
	}
	if got := feature("nic/v0a/tc/6/max_rate"); got != "maxrate" {
		t.Errorf("feature %q", got)
	}
}

// TestCompactTCs: on ice outside DSCP mode and on a bnxt offering fewer
// TCs than the class priorities need, the classes sit on TCs 0..k-1
// (contiguous, as ice_dcb_get_num_tc requires), and the read-back through
// prio_tc gives the same state as the priority-per-TC layout.
func TestCompactTCs(t *testing.T) {
	_, f := loadSpec(t, roceSpec)
	n := &f.Hosts[0].NICs[0] // default classes: 0, 3 (lossless), 6 (strict)
	e := desiredETSLayout(n, true)
	if fmt.Sprint(e.PrioTC) != "[0 0 0 1 0 0 2 0]" || e.TCTSA[2] != dcbnl.TSAStrict || e.TCTxBW[0]+e.TCTxBW[1] != 100 {
		t.Fatalf("compact ETS %+v", e)
	}
	used := map[uint8]bool{}
	for _, tc := range e.PrioTC {
		used[tc] = true
	}
	for tc := uint8(0); tc < uint8(len(used)); tc++ {
		if !used[tc] {
			t.Errorf("TCs not contiguous from 0: %v", e.PrioTC)
		}
	}
	pfc := &dcbnl.PFC{Enable: desiredPFC(n)}
	a, b := intent.State{}, intent.State{}
	ident := desiredETS(n)
	putDCBFor(a, "nic/v0a/", &dcbnl.IEEE{ETS: &ident, PFC: pfc}, n, famMLX5)
	putDCBFor(b, "nic/v0a/", &dcbnl.IEEE{ETS: &e, PFC: pfc}, n, famMLX5)
	for _, c := range intent.Diff(a, b, nil) {
		t.Errorf("compact layout reads differently: %s %s %q/%q", c.Action, c.Path, c.Before, c.After)
	}
	ice := &dcbnl.IEEE{}
	if !needsCompactTCs(famICE, ice, n) || needsCompactTCs(famMLX5, ice, n) {
		t.Error("ice without DSCP entries needs compact TCs, mlx5 never")
	}
	if !needsCompactTCs(famBNXT, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 3}}, n) || needsCompactTCs(famBNXT, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}}, n) {
		t.Error("bnxt: compact TCs exactly when ets_cap <= the highest class priority")
	}
}
