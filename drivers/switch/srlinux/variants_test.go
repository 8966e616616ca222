package srlinux

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// TestVariants renders intents the examples do not have (802.1p trust, a
// port with its own PFC set and no watchdog, headroom, pause), checks the
// request against the SR Linux models offline, and that it reads back as
// the intent.
func TestVariants(t *testing.T) {
	schema := switchtest.Schema(t, "srlinux")
	for _, c := range []struct {
		name string
		edit func(sw *intent.Switch)
	}{
		{"pcp-trust", func(sw *intent.Switch) {
			sw.Trust = spec.TrustPCP
			for i := range sw.Ports {
				sw.Ports[i].Trust = spec.TrustPCP
			}
		}},
		{"port-pfc-set-without-watchdog", func(sw *intent.Switch) {
			sw.Ports[0].PFC = []int{3, 4}
			sw.Ports[0].Watchdog = false
		}},
		{"headroom-and-pause-port", func(sw *intent.Switch) {
			sw.Headroom = 256000
			sw.Ports = append(sw.Ports, intent.Port{Name: "ethernet-1/2", MTU: 1500, Pause: true, Trust: spec.TrustDSCP})
		}},
		{"no-watchdog", func(sw *intent.Switch) {
			sw.Watchdog.Enabled = false
			for i := range sw.Ports {
				sw.Ports[i].Watchdog = false
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, f := load(t, "testbed")
			sw := switchtest.Switch(t, f, "leaf5", Name)
			c.edit(sw)
			ops, err := gnmicore.DesiredOps(Platform{}, sw)
			if err != nil {
				t.Fatal(err)
			}
			setOps, err := gnmicore.SetOps(ops)
			if err != nil {
				t.Fatal(err)
			}
			if errs := schema.ValidateSet(setOps); len(errs) > 0 {
				t.Fatalf("operations rejected:\n%s", testutil.JoinErrs(errs))
			}
			tree, err := gnmicore.ApplyOps(Platform{}.Factory(sw), ops)
			if err != nil {
				t.Fatal(err)
			}
			if errs := schema.ValidateTree(tree); len(errs) > 0 {
				t.Fatalf("configuration rejected:\n%s", testutil.JoinErrs(errs))
			}
			st := Platform{}.Decode(map[string]any{"/qos": gnmicore.N(tree).Get("qos").Raw(),
				"/interface": gnmicore.N(tree).Get("interface").Raw()}, sw)
			want := switchtest.Desired(New(), sw)
			if d := intent.Diff(want, st, New().(drivers.Driver).Fields()); len(d) != 0 {
				t.Fatalf("rendering reads back with differences: %+v", d)
			}
		})
	}
}

// TestPCPTrustUnexpressible: 802.1p trust is listed as not expressible
// (SR Linux's dot1p classifier needs a bridged subinterface; fabctl's
// ports are routed), and the rendering attaches no dot1p classifier, which
// the models refuse on a routed subinterface (libyang: must "dot1p
// classifiers allowed with type bridged only").
func TestPCPTrustUnexpressible(t *testing.T) {
	_, f := load(t, "testbed")
	sw := switchtest.Switch(t, f, "leaf5", Name)
	sw.Trust = spec.TrustPCP
	for i := range sw.Ports {
		sw.Ports[i].Trust = spec.TrustPCP
	}
	st := sw.Flatten()
	un := (&Driver{}).Unexpressible(drivers.Target{}, st)
	if !strings.Contains(un["trust"], "bridged only") {
		t.Fatalf("802.1p trust not listed as unexpressible: %v", un)
	}
	for k, v := range st {
		if strings.HasSuffix(k, "/trust") && v == spec.TrustPCP && !strings.Contains(un[k], "bridged only") {
			t.Errorf("%s = pcp not listed as unexpressible", k)
		}
	}
	ops, err := gnmicore.DesiredOps(Platform{}, sw)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if strings.Contains(o.Path, "dot1p-policy") || strings.Contains(string(o.Val), "dot1p-policy") {
			t.Errorf("dot1p classifier rendered: %s %s", o.Path, o.Val)
		}
	}
}
