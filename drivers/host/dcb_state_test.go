package host

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
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
		case "mtu", "addresses", "pause", "ecn", "roce_mode", "tos", "irq_cpus":
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
