package cumulusemu

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
)

func trimLines(s string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(ls, "\n")
}

// TestShowCountersQoSFormat: with zero counters the emulator prints
// NVIDIA's example of `nv show interface swp1 counters qos` line for line
// (trailing blanks aside; the guide's closing "..." elides sections the
// emulator does not print), and injected counters land in their rows.
func TestShowCountersQoSFormat(t *testing.T) {
	want := switchtest.VendorSections(t, "cumulus", "show-counters-qos.txt")["nv show interface swp1 counters qos"]
	want = strings.TrimSuffix(strings.TrimRight(want, "\n "), "...")
	sw, sh := newShell(t)
	if got := run(t, sh, "nv show interface swp1 counters qos"); trimLines(got) != trimLines(want) {
		t.Errorf("got:\n%s\nwant (CL 5.14 QoS guide):\n%s", got, want)
	}
	sw.SetCounters("swp2", func(c *PortCounters) { c.PFCRx[3], c.PFCTx[3], c.ECNMarked = 120, 45, 9 })
	got := run(t, sh, "nv show interface swp2 counters qos")
	for _, row := range []string{
		"    3                120              0                  45               0",
		"    ecn-marked-packets  n/a      9",
	} {
		if !strings.Contains(got, row) {
			t.Errorf("no row %q in\n%s", row, got)
		}
	}
	if got := run(t, sh, "nv show interface swp99 counters qos"); !strings.HasPrefix(got, "Error: Invalid Command") {
		t.Errorf("swp99: %q", got)
	}
}
