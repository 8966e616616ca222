package cumulus

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// NVUE's congestion-control probability is "between 1 and 100"
// (nvue-reference-qos.txt:13): a fraction is refused.
func TestECNProbabilityWhole(t *testing.T) {
	sw := &intent.Switch{Device: intent.Device{Name: "leaf"}, Trust: spec.TrustDSCP,
		TCs:   []intent.TC{{TC: 3, Bandwidth: 100, ECN: &intent.ECN{Min: 150000, Max: 1500000, Probability: 12.5}}},
		Ports: []intent.Port{{Name: "swp1", MTU: 9000, Trust: spec.TrustDSCP}}}
	if _, err := Build(sw); err == nil || !strings.Contains(err.Error(), "whole percent") {
		t.Fatalf("12.5 %%: %v", err)
	}
	sw.TCs[0].ECN.Probability = 12
	p, err := Build(sw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Lines(), "\n"), "traffic-class 3 probability 12\n") {
		t.Errorf("lines:\n%s", strings.Join(p.Lines(), "\n"))
	}
}
