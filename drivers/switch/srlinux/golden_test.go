package srlinux

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

func load(t testing.TB, dir string, vars ...string) (*spec.Spec, *intent.Fabric) {
	return switchtest.Load(t, filepath.Join("..", "..", "..", "examples", dir), vars...)
}

// goldenHeader names the vendor documents the rendered request follows.
const goldenHeader = "# fabctl render: gNMI SetRequest for Nokia SR Linux, native models (JSON_IETF values)\n" +
	"# Models: nokia/srlinux-yang-models v25.3 srl_nokia-qos, srl_nokia-interfaces\n" +
	"# PFC: https://documentation.nokia.com/srlinux/25-10/books/qos/priority-based-flow-control-pfc.html\n" +
	"# Port MTU (includes the Ethernet header): https://documentation.nokia.com/srlinux/24-10/books/interfaces/mtu.html\n"

var goldens = []struct{ dir, sw, golden string }{
	{"ai-pod", "spine1", "ai-pod-spine1.golden"},
	{"testbed", "leaf5", "testbed-leaf5.golden"},
}

func TestGoldenRender(t *testing.T) {
	for _, c := range goldens {
		t.Run(c.golden, func(t *testing.T) {
			_, f := load(t, c.dir)
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
			// The request is valid against the SR Linux models, each
			// operation and the configuration it leaves on a device
			// with the system defaults.
			ops, err := gnmicore.ParseRequestFile(files[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			schema := switchtest.Schema(t, "srlinux")
			setOps, err := gnmicore.SetOps(ops)
			if err != nil {
				t.Fatal(err)
			}
			if errs := schema.ValidateSet(setOps); len(errs) > 0 {
				t.Fatalf("operations rejected by the SR Linux models:\n%s", testutil.JoinErrs(errs))
			}
			tree, err := gnmicore.ApplyOps(Platform{}.Factory(sw), ops)
			if err != nil {
				t.Fatal(err)
			}
			if errs := schema.ValidateTree(tree); len(errs) > 0 {
				t.Fatalf("resulting configuration rejected by the SR Linux models:\n%s", testutil.JoinErrs(errs))
			}
			// The rendering reads back as the intent's state.
			st := Platform{}.Decode(map[string]any{"/qos": gnmicore.N(tree).Get("qos").Raw(),
				"/interface": gnmicore.N(tree).Get("interface").Raw()}, sw)
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
