package sonic

import (
	"testing"

	"github.com/fabctl/fabctl/drivers"
)

// FuzzCheckRefusal: a failed dry run's output is the device's (hostile
// input): GCU's reason is found in it, and the step it names is a step
// of the list or none, without a panic.
func FuzzCheckRefusal(f *testing.F) {
	f.Add("Failed to apply patch due to: Modification of PFC_WD table is illegal- validating function x returned False\nError: Modification of PFC_WD table is illegal\n")
	f.Add("Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\nError: Given patch will produce invalid config. Table: PORT\n")
	f.Add("")
	f.Add("\x00\r\n\tFailed to apply patch due to: \n")
	steps := []drivers.Change{
		{Summary: "ports", Payload: []string{`{"op":"add","path":"/PORT/Ethernet0/mtu","value":"9100"}`}},
		{Summary: "watchdog", Payload: []string{`{"op":"add","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"100"}`, `not json`}},
	}
	f.Fuzz(func(t *testing.T, out string) {
		r := gcuReason(out)
		if len(r) > len(out) {
			t.Fatalf("reason longer than the output: %q", r)
		}
		n, sum := refusedStep(r, steps)
		if n < 0 || n > len(steps) || (n == 0) != (sum == "") {
			t.Fatalf("step %d %q", n, sum)
		}
	})
}
