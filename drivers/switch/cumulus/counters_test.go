package cumulus

import (
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// TestParseCountersQoSVendor reads NVIDIA's example output of `nv show
// interface swp1 counters qos` (testdata/vendor/cumulus/show-counters-qos.txt).
func TestParseCountersQoSVendor(t *testing.T) {
	out := switchtest.VendorSections(t, "cumulus", "show-counters-qos.txt")["nv show interface swp1 counters qos"]
	cs, err := ParseCountersQoS("swp1", out)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, c := range cs {
		n[c.Metric+"/"+c.Direction]++
		if c.Port != "swp1" || c.Value != 0 {
			t.Errorf("%+v", c)
		}
	}
	want := map[string]int{drivers.CounterPFCPause + "/rx": 8, drivers.CounterPFCPause + "/tx": 8,
		drivers.CounterECNMarked + "/": 1, drivers.CounterMACPause + "/rx": 1, drivers.CounterMACPause + "/tx": 1}
	for k, w := range want {
		if n[k] != w {
			t.Errorf("%s: %d samples, want %d (all: %v)", k, n[k], w, n)
		}
	}
	if len(n) != len(want) {
		t.Errorf("samples %v", n)
	}
	if _, err := ParseCountersQoS("swp1", "Error: Invalid Command: nv show interface swp1 counters qos\n"); err == nil {
		t.Error("an NVUE error was read as counters")
	}
}

func FuzzParseCountersQoS(f *testing.F) {
	f.Add(switchtest.VendorSections(f, "cumulus", "show-counters-qos.txt")["nv show interface swp1 counters qos"])
	f.Add("    Counter  Receive  Transmit\n    -------  -------  --------\n    pause-frames\n")
	f.Fuzz(func(t *testing.T, out string) {
		_, _ = ParseCountersQoS("swp1", out) // an error, never a panic
	})
}
