package openconfig

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// The interface MTU counts the VLAN tags the port's link carries, and an
// ECN probability that rounds to 0 (marking nothing) is refused.
func TestRenderMTUTagsAndProbability(t *testing.T) {
	sw := &intent.Switch{Device: intent.Device{Name: "leaf"}, Trust: spec.TrustDSCP,
		TCs:   []intent.TC{{TC: 3, Bandwidth: 100, ECN: &intent.ECN{Min: 150000, Max: 1500000, Probability: 7.5}}},
		Ports: []intent.Port{{Name: "Ethernet0", MTU: 9000, VLANTags: 1}, {Name: "Ethernet1", MTU: 9000}}}
	objs, err := Platform{}.Desired(sw)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, o := range objs {
		if c, ok := o.Val.(obj)["config"].(obj); ok {
			if m, ok := c["mtu"]; ok {
				got[c["name"].(string)] = m
			}
		}
	}
	if got["Ethernet0"] != 9018 || got["Ethernet1"] != 9014 {
		t.Errorf("interface mtus %v, want Ethernet0 9018 (one tag), Ethernet1 9014", got)
	}
	sw.TCs[0].ECN.Probability = 0.4
	if _, err := (Platform{}).Desired(sw); err == nil || !strings.Contains(err.Error(), "rounds to 0") {
		t.Fatalf("0.4 %%: %v", err)
	}
}
