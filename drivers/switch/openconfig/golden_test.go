package openconfig

import (
	"path/filepath"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

func load(t testing.TB, path string, vars ...string) (*spec.Spec, *intent.Fabric) {
	return switchtest.Load(t, path, vars...)
}

func example(dir string) string { return filepath.Join("..", "..", "..", "examples", dir) }

// goldenHeader names the vendor documents the rendered request follows.
const goldenHeader = "# fabctl render: gNMI SetRequest for an OpenConfig switch (JSON_IETF values)\n" +
	"# Models: openconfig/public release/models/qos (openconfig-qos 2.2.0), interfaces/openconfig-interfaces,\n" +
	"#         interfaces/openconfig-if-ethernet; no PFC leaves exist (the plan lists PFC as not expressible)\n" +
	"# Set semantics: openconfig/reference rpc/gnmi/gnmi-specification.md section 3.4\n"

var goldens = []struct{ spec, sw, golden string }{
	{example("testbed"), "leaf6", "testbed-leaf6.golden"},
	{filepath.Join("testdata", "oc.fab.hcl"), "leaf1", "oc-leaf1.golden"},
}

func TestGoldenRender(t *testing.T) {
	for _, c := range goldens {
		t.Run(c.golden, func(t *testing.T) {
			_, f := load(t, c.spec)
			sw := switchtest.Switch(t, f, c.sw, Name)
			files, err := New().(drivers.Renderer).Render(drivers.Target{Device: sw.Device, Intent: sw})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || files[0].Name != gnmicore.RenderFile {
				t.Fatalf("files: %+v", files)
			}
			got := append([]byte(goldenHeader), files[0].Data...)
			testutil.Golden(t, filepath.Join("testdata", c.golden), got)
			ops, err := gnmicore.ParseRequestFile(files[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			schema := switchtest.Schema(t, "openconfig")
			setOps, err := gnmicore.SetOps(ops)
			if err != nil {
				t.Fatal(err)
			}
			if errs := schema.ValidateSet(setOps); len(errs) > 0 {
				t.Fatalf("operations rejected by the OpenConfig models:\n%s", testutil.JoinErrs(errs))
			}
			tree, err := gnmicore.ApplyOps(Platform{}.Factory(sw), ops)
			if err != nil {
				t.Fatal(err)
			}
			if errs := schema.ValidateTree(tree); len(errs) > 0 {
				t.Fatalf("resulting configuration rejected by the OpenConfig models:\n%s", testutil.JoinErrs(errs))
			}
			st := Platform{}.Decode(map[string]any{QoSRoot: gnmicore.N(tree).Get("qos").Raw(),
				InterfacesRoot: gnmicore.N(tree).Get("interfaces").Raw()}, sw)
			want2 := switchtest.Desired(New(), sw)
			for k, v := range want2 {
				if !(intent.Field{}).Equal(v, st[k]) { // a port MTU floor (">=9000") holds any MTU at least that
					t.Errorf("%s: rendered reads back %q, want %q", k, st[k], v)
				}
			}
			for k, v := range st {
				if _, ok := want2[k]; !ok {
					t.Errorf("%s: rendered reads back %q, not desired", k, v)
				}
			}
		})
	}
}
