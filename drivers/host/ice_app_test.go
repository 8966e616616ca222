package host

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

// iceNIC is the VM testbed's spec NIC (roce on 3 with DSCP 26, cnp on 6
// with DSCP 48, the rest on the default class 0), as an E810 would have it.
func iceNIC(t *testing.T) *intent.NIC {
	t.Helper()
	_, f := loadSpec(t, strings.ReplaceAll(mustRead(t, "testdata/vm/fabdcb.fab.hcl"), "FABDCB_NIC", "e0"))
	return &f.Hosts[0].NICs[0]
}

// TestIceDSCPDefaults: ice's DSCP-mode default map as ice_dcbnl_setapp
// builds it: dscp >> 3 with 8 TCs; with 4 TCs the i*4+j loops (and +32),
// leaving code points the driver never sets unknown (-1).
func TestIceDSCPDefaults(t *testing.T) {
	m := iceDSCPDefaults(8)
	for d := range m {
		if m[d] != d>>3 {
			t.Fatalf("8 TCs: DSCP %d -> %d, want %d", d, m[d], d>>3)
		}
	}
	m = iceDSCPDefaults(4)
	for d, want := range map[int]int{0: 0, 3: 0, 4: 1, 11: 2, 12: 3, 19: 3, 20: -1, 31: -1, 32: 0, 36: 1, 44: 3, 51: 3, 52: -1, 63: -1} {
		if m[d] != want {
			t.Errorf("4 TCs: DSCP %d -> %d, want %d", d, m[d], want)
		}
	}
}

// TestIceApps: on ice fabctl writes only the DSCP entries that differ
// from the DSCP-mode default (each write resets the netdev), keeps the
// entries the NIC has, writes one entry when the table is the default,
// and reads an absent entry back as ice's default, so the re-plan after
// such an apply is clean.
func TestIceApps(t *testing.T) {
	n := iceNIC(t)
	cur := &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}}
	want := iceApps(n, cur)
	if len(want) != 54 || iceAppWrites(cur, want) != 54 {
		t.Fatalf("ice entries %d (writes %d), want the 54 code points off dscp >> 3", len(want), iceAppWrites(cur, want))
	}
	for _, a := range want {
		if a.Protocol == 26 || a.Protocol == 48 || a.Protocol < 8 {
			t.Errorf("default entry written: %+v", a)
		}
	}
	// Read back what apply leaves: the state matches the spec's.
	applied := &dcbnl.IEEE{ETS: cur.ETS, Apps: want}
	live, desired := intent.State{}, intent.State{}
	putDCBFor(live, "nic/e0/", applied, n, famICE)
	intent.PutDSCP(desired, "nic/e0/", dscpInts(n))
	for k, v := range desired {
		if live[k] != v {
			t.Errorf("%s: reads %q, want %q", k, live[k], v)
		}
	}
	// An entry the NIC has stays (deleting maps it to dscp % 8); a wrong
	// one is replaced; the re-apply writes nothing.
	have := append([]dcbnl.App{{Selector: dcbnl.SelDSCP, Protocol: 26, Priority: 3}, {Selector: dcbnl.SelDSCP, Protocol: 27, Priority: 5}}, want...)
	live2 := &dcbnl.IEEE{ETS: cur.ETS, Apps: have}
	w2 := iceApps(n, live2)
	if w := iceAppWrites(live2, w2); w != 1 { // delete 27:5 (27:0 is there already)
		t.Errorf("replacing 27:5 takes %d writes, want 1", w)
	}
	kept := false
	for _, a := range w2 {
		kept = kept || (a.Protocol == 26 && a.Priority == 3)
	}
	if !kept {
		t.Error("the NIC's entry 26:3 (= the default) would be deleted, which remaps DSCP 26 to 26 % 8")
	}
	if w := iceAppWrites(applied, iceApps(n, applied)); w != 0 {
		t.Errorf("re-apply writes %d entries", w)
	}
	// All default: one entry still selects DSCP mode.
	for d := range n.DSCPToTC {
		n.DSCPToTC[d] = uint8(d >> 3)
	}
	if w := iceApps(n, cur); len(w) != 1 || w[0].Priority != 3 {
		t.Errorf("default table: %+v, want one entry on the RDMA priority", w)
	}
}

func dscpInts(n *intent.NIC) *[64]int {
	var m [64]int
	for d, v := range n.DSCPToTC {
		m[d] = int(v)
	}
	return &m
}

// TestIceAppLimits: a priority at or above ice's TC count and a table
// larger than ICE_DCBX_MAX_APPS are not expressible.
func TestIceAppLimits(t *testing.T) {
	n := iceNIC(t)
	unsup := map[string]string{}
	iceAppLimits(n, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}}, unsup)
	if len(unsup) != 0 {
		t.Fatalf("54 entries on 8 TCs: %v", unsup)
	}
	iceAppLimits(n, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 4}}, unsup)
	if !strings.Contains(unsup["nic/e0/app"], "out of range") {
		t.Errorf("DSCP 48 on priority 6 with 4 TCs: %v", unsup)
	}
	// Every code point off the default: 64 entries + the FCoE slot.
	for d := range n.DSCPToTC {
		n.DSCPToTC[d] = uint8(7 - d>>3)
	}
	unsup = map[string]string{}
	iceAppLimits(n, &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}}, unsup)
	if !strings.Contains(unsup["nic/e0/app"], "ICE_DCBX_MAX_APPS") {
		t.Errorf("64 entries: %v", unsup)
	}
	if blocked(unsup, "e0", "app") == "" {
		t.Error("blocked does not report the APP table limit")
	}
}
