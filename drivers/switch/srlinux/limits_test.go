package srlinux

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// TestLimitsFromModel: the watchdog timer ranges the descriptor gives
// lint are the ranges srl_nokia-qos declares for the leaves the driver
// renders the watchdog into (pfc-watchdog detection-timer and
// recovery-timer, in milliseconds).
func TestLimitsFromModel(t *testing.T) {
	b, err := os.ReadFile(testutil.Shared(t, "yang", "srlinux", "srl_nokia-qos.yang"))
	if err != nil {
		t.Fatal(err)
	}
	for leaf, got := range map[string]spec.Range[time.Duration]{
		"detection-timer": Descriptor.Limits.WatchdogDetect,
		"recovery-timer":  Descriptor.Limits.WatchdogRestore,
	} {
		m := regexp.MustCompile(`leaf ` + leaf + ` \{\s*type uint16 \{\s*range "(\d+)\.\.(\d+)";`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("srl_nokia-qos has no uint16 range on %s", leaf)
		}
		lo, _ := strconv.Atoi(string(m[1]))
		hi, _ := strconv.Atoi(string(m[2]))
		if got.Min != time.Duration(lo)*time.Millisecond || got.Max != time.Duration(hi)*time.Millisecond {
			t.Errorf("%s: descriptor range %v..%v, model %d..%d ms", leaf, got.Min, got.Max, lo, hi)
		}
	}
}
