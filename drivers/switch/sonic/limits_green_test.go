package sonic

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// green_drop_probability is a whole percent (sonic-wred-profile.yang
// uint64 0..100): a fraction is refused, not written as "0.4".
func TestWREDProbabilityWhole(t *testing.T) {
	sw := &intent.Switch{Device: intent.Device{Name: "leaf"}, Trust: spec.TrustDSCP,
		TCs:   []intent.TC{{TC: 3, Bandwidth: 100, ECN: &intent.ECN{Min: 150000, Max: 1500000, Probability: 12}}},
		Ports: []intent.Port{{Name: "Ethernet0", MTU: 9000}}}
	db, err := Desired(sw)
	if err != nil {
		t.Fatal(err)
	}
	if got := db["WRED_PROFILE"][wredName(3)]["green_drop_probability"]; got != "12" {
		t.Errorf("green_drop_probability %q", got)
	}
	for _, p := range []float64{0.4, 12.5, 0} {
		sw.TCs[0].ECN.Probability = p
		if _, err := Desired(sw); err == nil || !strings.Contains(err.Error(), "whole percent 1..100") {
			t.Errorf("%v: %v", p, err)
		}
	}
}
