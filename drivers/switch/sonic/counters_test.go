package sonic

import (
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
)

func sample(c *drivers.Counters, port, metric, dir, prio string) (float64, bool) {
	for _, s := range c.Samples {
		if s.Port == port && s.Metric == metric && s.Direction == dir && s.Priority == prio {
			return s.Value, true
		}
	}
	return 0, false
}

// TestParseCountersVendor reads the sonic-utilities outputs of the four
// show commands (testdata/vendor/sonic/show-counters.txt).
func TestParseCountersVendor(t *testing.T) {
	sec := switchtest.VendorSections(t, "sonic", "show-counters.txt")
	c, err := ParseCounters(sec["show pfc counters"], sec["show queue counters"], sec["show queue wredcounters"], sec["show pfcwd stats"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		port, metric, dir, prio string
		want                    float64
	}{
		{"Ethernet0", drivers.CounterPFCPause, "rx", "0", 1200},
		{"Ethernet4", drivers.CounterPFCPause, "rx", "3", 403},
		{"Ethernet8", drivers.CounterPFCPause, "tx", "7", 817},
		{"Ethernet0", drivers.CounterPFCPause, "tx", "0", 1210},
		{"Ethernet0", drivers.CounterQueueDropped, "", "1", 39},
		{"Ethernet0", drivers.CounterQueueDropped, "", "9", 93},
		{"Ethernet0", drivers.CounterECNMarked, "", "3", 19},
		{"Ethernet0", drivers.CounterPFCWatchdog, "", "3", 1},
		{"Ethernet8", drivers.CounterPFCWatchdog, "", "4", 3},
	} {
		if got, ok := sample(c, tc.port, tc.metric, tc.dir, tc.prio); !ok || got != tc.want {
			t.Errorf("%s %s %s prio %s = %v (found %v), want %v", tc.port, tc.metric, tc.dir, tc.prio, got, ok, tc.want)
		}
	}
	if _, ok := sample(c, "Ethernet0", drivers.CounterQueueDropped, "", "10"); ok {
		t.Error("multicast queue MC10 read as a traffic class")
	}
	if n := len(c.Samples); n != 3*8*2+6+4+3 {
		t.Errorf("%d samples", n)
	}
}

func TestParseCountersRefusesOtherOutput(t *testing.T) {
	pfc := switchtest.VendorSections(t, "sonic", "show-counters.txt")["show pfc counters"]
	for name, in := range map[string][4]string{
		"no pfc tables":     {"Error: No such command 'pfc'.\n", "", "", ""},
		"queue not a table": {pfc, "Error: No such command 'queue'.\n", "", ""},
		"wred not a table":  {pfc, "", "Usage: show queue\n", ""},
	} {
		if _, err := ParseCounters(in[0], in[1], in[2], in[3]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseCounters(f *testing.F) {
	sec := switchtest.VendorSections(f, "sonic", "show-counters.txt")
	f.Add(sec["show pfc counters"], sec["show queue counters"], sec["show queue wredcounters"], sec["show pfcwd stats"])
	f.Add("  Port Rx  a\n--  --\nx  y\n", "", "", "QUEUE  STORM DETECTED/RESTORED\n--  --\nEthernet0  1\n")
	f.Fuzz(func(t *testing.T, pfc, q, wred, wd string) {
		_, _ = ParseCounters(pfc, q, wred, wd) // an error, never a panic
	})
}
