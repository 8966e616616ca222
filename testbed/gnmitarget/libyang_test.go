package gnmitarget

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/drivers/switch/srlinux"
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
	_, err := Start(ctxT(t), Config{Flavor: FlavorSRLinux, Schema: schema(t, "srlinux"), Profile: profile(FlavorSRLinux), Insecure: true,
		Initial: []byte(`{"srl_nokia-qos:qos":{"queues":{"queue":[{"name":"q","queue-index":0}]},` +
			`"forwarding-classes":{"forwarding-class":[{"name":"fc0","forwarding-class-index":0,"output":{"unicast-queue":"q"}}]}}}`)})
	if err == nil {
		t.Fatal("initial configuration with forwarding-class-index (qos-forwarding-class-index, not on a 7220 IXR-D5) accepted")
	}
	_ = gpb.Encoding_JSON_IETF
}

// reQualified is a module prefix of a path element: libyang names data
// nodes by their schema path (/srl_nokia-qos:qos/...[k='v']), the
// corpus by gNMI path strings (/qos/...[k=v]).
var reQualified = regexp.MustCompile(`/[A-Za-z_][A-Za-z0-9_.-]*:([A-Za-z_])`)

// gnmiPaths rewrites the libyang data paths in msg as gNMI path strings
// (module prefixes and key quotes dropped).
func gnmiPaths(msg string) string {
	return strings.ReplaceAll(reQualified.ReplaceAllString(msg, "/$1"), "'", "")
}

// TestLibYANGConstraintCorpus: every probe of testdata/constraints (the
// must, when and leafref classes only libyang evaluates: SR Linux
// classifier on the interface entry, ECN slope without its
// buffer-allocation profile, scheduler and PFC rules; an OpenConfig
// when and a leafref outside the payload) is refused by the target
// after the valid base, naming the node, the model's message and the
// class, and leaves the configuration byte-identical. The SR Linux
// target starts from the factory configuration fabctl's driver assumes
// (srlinux.SystemDefaults). `fabctl render --yang-dir` refuses the same
// probes (internal/cli TestRenderYANGConstraints).
func TestLibYANGConstraintCorpus(t *testing.T) {
	needLibYANG(t)
	for _, fl := range []struct{ flavor, set string }{{FlavorSRLinux, "srlinux"}, {FlavorOpenConfig, "openconfig"}} {
		t.Run(fl.flavor, func(t *testing.T) {
			c, err := LoadCorpus(filepath.Join("testdata", "constraints", fl.set+".json"))
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Flavor: fl.flavor, Schema: schema(t, fl.set), Interfaces: c.Interfaces}
			if fl.flavor == FlavorSRLinux {
				cfg.Initial = srlinux.SystemDefaults()
			}
			tg, cl := start(t, cfg)
			if _, err := cl.Set(ctxT(t), request(t, c.Base)); err != nil {
				t.Fatalf("valid base refused: %v", err)
			}
			before := config(t, tg)
			classes := map[string]bool{}
			for _, v := range c.Violations {
				classes[v.Class] = true
				t.Run(v.Name, func(t *testing.T) {
					_, err := cl.Set(ctxT(t), request(t, v.Ops))
					wantCode(t, err, codes.InvalidArgument, v.Reason)
					msg := gnmiPaths(status.Convert(err).Message())
					if !strings.Contains(msg, v.Path) {
						t.Errorf("error does not name %s: %s", v.Path, msg)
					}
					// libyang tags its errors with the kind; a dangling
					// leafref is found by goyang's tree check first
					if !strings.Contains(msg, "["+v.Class) && !(v.Class == "leafref" && strings.Contains(msg, "leafref: ")) {
						t.Errorf("error does not say %s: %s", v.Class, msg)
					}
					if config(t, tg) != before {
						t.Errorf("refused Set changed the configuration")
					}
				})
			}
			if len(classes) == 0 || (fl.set == "openconfig" && (!classes["when"] || !classes["leafref"])) || (fl.set == "srlinux" && !classes["must"]) {
				t.Errorf("constraint classes covered: %v", classes)
			}
		})
	}
}
