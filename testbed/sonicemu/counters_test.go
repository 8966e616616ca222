package sonicemu

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
)

// TestShowCountersFormat: the emulator prints the counter show commands
// in sonic-utilities' format: given the counters of its mock COUNTERS_DB,
// `show pfc counters` is byte for byte the output pfcstat's test expects,
// and the other three have its header and rule (column widths) and rows.
func TestShowCountersFormat(t *testing.T) {
	sec := switchtest.VendorSections(t, "sonic", "show-counters.txt")
	sw, err := Start(Options{Password: "pw", Ports: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	for i, p := range []string{"Ethernet0", "Ethernet4", "Ethernet8"} {
		base := uint64(200 * (i + 1))
		if i == 2 {
			base = 800
		}
		sw.SetCounters(p, func(c *PortCounters) {
			for q := 0; q < 8; q++ {
				c.PFCRx[q], c.PFCTx[q] = base+uint64(q), base+10+uint64(q)
			}
			c.PFCRx[0], c.PFCTx[0] = []uint64{1200, 1400, 1800}[i], []uint64{1210, 1410, 1810}[i]
		})
	}
	sw.SetCounters("Ethernet0", func(c *PortCounters) {
		c.QueuePkts[1], c.QueueDrops[1] = 60, 39
		c.WREDDrops[3], c.ECNMarked[3] = 52, 19
		c.StormDetected[3], c.Stormed[3] = 1, true
	})
	sw.SetCounters("Ethernet4", func(c *PortCounters) { c.StormDetected[3], c.Restored[3] = 2, 2 })
	tm := login(t, sw)
	if got, want := tm.cmd("show pfc counters"), sec["show pfc counters"]; got != want {
		t.Errorf("show pfc counters:\n%s\nwant (sonic-utilities tests/pfcstat_test.py):\n%s", got, want)
	}
	head := func(s string, n int) string { return strings.Join(strings.SplitN(s, "\n", n+1)[:n], "\n") }
	for _, tc := range []struct {
		cmd, row string
		skip     int // leading lines before the header
	}{
		{"show queue counters", "Ethernet0    UC1              60                0           39             0", 1},
		{"show queue wredcounters", "Ethernet0    UC3              52                0                19                  0", 0},
		{"show pfcwd stats", "Ethernet0:3      stormed                        1/0", 0},
	} {
		got := tm.cmd(tc.cmd)
		want := sec[tc.cmd]
		if g, w := head(got, tc.skip+2), head(want, tc.skip+2); g != w {
			t.Errorf("%s: header\n%s\nwant\n%s", tc.cmd, g, w)
		}
		if !strings.Contains(got, tc.row) {
			t.Errorf("%s: no row %q in\n%s", tc.cmd, tc.row, got)
		}
	}
	if got := tm.cmd("show pfcwd stats"); strings.Contains(got, "Ethernet8") {
		t.Errorf("pfcwd stats lists a queue without storms:\n%s", got)
	}
}
