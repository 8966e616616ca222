package gnmitarget

import (
	"encoding/json"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/yangval/libyang"
)

func needLibYANG(t testing.TB) {
	t.Helper()
	if !libyang.Available {
		testutil.SkipOrFail(t, "this build has no libyang (install libyang2-dev and pkg-config, build with cgo)")
	}
}

// TestLibYANGConstraintClasses: a Set is validated as the device
// validates its resulting configuration: one violating Set per
// constraint class (must, when, if-feature, leafref, mandatory, range,
// pattern) is refused with InvalidArgument naming the node and the
// constraint, and leaves the configuration byte-identical. must, when
// and if-feature are libyang's alone (goyang evaluates none of them).
func TestLibYANGConstraintClasses(t *testing.T) {
	needLibYANG(t)
	for _, fl := range []struct {
		flavor, set string
		cases       []struct {
			class string
			ops   []Op
			want  []string
		}
	}{
		{FlavorSRLinux, "srlinux", []struct {
			class string
			ops   []Op
			want  []string
		}{
			{"must", []Op{{Op: "update", Path: "/interface[name=ethernet-1/1]/ethernet/flow-control/receive", Val: json.RawMessage(`true`)}},
				[]string{"pfc-enable", "pfc and ethernet flow-control are mutually exclusive"}},
			{"if-feature", []Op{{Op: "update", Path: "/interface[name=ethernet-1/1]/ethernet/flow-control/transmit", Val: json.RawMessage(`false`)}},
				[]string{"flow-control/transmit", "tx-flow-control"}},
			{"leafref", []Op{{Op: "update", Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/pfc-mapping-profile", Val: json.RawMessage(`"nope"`)}},
				[]string{"pfc-mapping-profile", "leafref"}},
			{"mandatory", []Op{{Op: "update", Path: "/qos/queues/pfc-queue[pfc-queue-name=p9]", Val: json.RawMessage(`{"pfc-queue-name":"p9"}`)}},
				[]string{"queue-index"}},
			{"range", []Op{{Op: "update", Path: "/qos/pfc-mapping-profile[name=pfc-roce]/received-pfc-pause-frames/deadlock/detection-timer", Val: json.RawMessage(`5`)}},
				[]string{"detection-timer"}},
			{"pattern", []Op{{Op: "update", Path: "/qos/classifiers/dscp-policy[name= leading-space]", Val: json.RawMessage(`{"name":" leading-space"}`)}},
				[]string{"dscp-policy", "leading-space"}},
		}},
		{FlavorOpenConfig, "openconfig", []struct {
			class string
			ops   []Op
			want  []string
		}{
			{"when", []Op{{Op: "update", Path: "/qos/scheduler-policies/scheduler-policy[name=s]", Val: json.RawMessage(
				`{"name":"s","config":{"name":"s"},"schedulers":{"scheduler":[{"sequence":0,"config":{"sequence":0},` +
					`"inputs":{"input":[{"id":"i","config":{"id":"i","input-type":"IN_PROFILE","queue":"Q3"}}]}}]}}`)}},
				[]string{"queue", "input-type"}},
		}},
	} {
		t.Run(fl.flavor, func(t *testing.T) {
			c := corpus(t, fl.set)
			tg, cl := start(t, Config{Flavor: fl.flavor, Schema: schema(t, fl.set), Interfaces: c.Interfaces})
			if !tg.LibYANG() {
				t.Fatal("the target validates without libyang although this build has it")
			}
			if _, err := cl.Set(ctxT(t), request(t, c.Base)); err != nil {
				t.Fatalf("valid %s configuration refused: %v", fl.flavor, err)
			}
			before := config(t, tg)
			for _, tc := range fl.cases {
				t.Run(tc.class, func(t *testing.T) {
					_, err := cl.Set(ctxT(t), request(t, tc.ops))
					wantCode(t, err, codes.InvalidArgument, tc.want...)
					if config(t, tg) != before {
						t.Errorf("refused Set changed the configuration")
					}
				})
			}
		})
	}
}

// TestLibYANGFactory: the SR Linux target refuses an initial
// configuration the D5 would not load (a feature it lacks).
func TestLibYANGFactory(t *testing.T) {
	needLibYANG(t)
	_, err := Start(ctxT(t), Config{Flavor: FlavorSRLinux, Schema: schema(t, "srlinux"), Insecure: true,
		Initial: []byte(`{"srl_nokia-qos:qos":{"queues":{"queue":[{"name":"q","queue-index":0}]},` +
			`"forwarding-classes":{"forwarding-class":[{"name":"fc0","forwarding-class-index":0,"output":{"unicast-queue":"q"}}]}}}`)})
	if err == nil {
		t.Fatal("initial configuration with forwarding-class-index (qos-forwarding-class-index, not on a 7220 IXR-D5) accepted")
	}
	_ = gpb.Encoding_JSON_IETF
}
