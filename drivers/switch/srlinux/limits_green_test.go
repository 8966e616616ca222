package srlinux

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// What the renderer refuses instead of sending the models something
// they refuse or a value that means something else: a port MTU outside
// the 7220 IXR's 1500..9412 (VLAN tags counted), an ECN probability that
// rounds to 0, a maximum threshold above uint32 (no longer clamped).
func TestRenderRefusesOutOfRange(t *testing.T) {
	base := func() *intent.Switch {
		return &intent.Switch{Device: intent.Device{Name: "leaf"}, Trust: spec.TrustDSCP,
			TCs:   []intent.TC{{TC: 3, Bandwidth: 100, ECN: &intent.ECN{Min: 150000, Max: 1500000, Probability: 100}}},
			Ports: []intent.Port{{Name: "ethernet-1/1", MTU: 9000}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*intent.Switch)
		want string
	}{
		{"fits", func(*intent.Switch) {}, ""},
		{"IXR maximum", func(sw *intent.Switch) { sw.Ports[0].MTU = 9398 }, ""},
		{"above the IXR maximum", func(sw *intent.Switch) { sw.Ports[0].MTU = 9400 }, "port mtu 9414"},
		{"VLAN tag counted", func(sw *intent.Switch) { sw.Ports[0].MTU, sw.Ports[0].VLANTags = 9398, 1 }, "port mtu 9416"},
		{"below the IXR minimum", func(sw *intent.Switch) { sw.Ports[0].MTU = 1480 }, "port mtu 1494"},
		{"probability rounds to 0", func(sw *intent.Switch) { sw.TCs[0].ECN.Probability = 0.4 }, "rounds to 0"},
		{"probability rounds", func(sw *intent.Switch) { sw.TCs[0].ECN.Probability = 7.5 }, ""},
		{"5 GB maximum", func(sw *intent.Switch) { sw.TCs[0].ECN.Max = 5e9 }, "at most 4294967295"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw := base()
			tc.edit(sw)
			objs, err := Platform{}.Desired(sw)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range objs {
					if m, ok := o.Val.(obj)["mtu"]; ok && m != FrameMTU(sw.Ports[0]) {
						t.Errorf("mtu %v, want %d", m, FrameMTU(sw.Ports[0]))
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error saying %q, got %v", tc.want, err)
			}
		})
	}
}
