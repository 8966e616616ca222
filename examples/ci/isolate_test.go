package ci_test

import (
	"path/filepath"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/local"
)

// Issue 21: make test must not collide with a `fabctl testbed up examples/testbed` the user
// has running. The pipeline test's copy of the spec shares no namespace and no switch address
// with the example, and its fabric namespace is not the default one.
func TestPipelineTestbedIsolated(t *testing.T) {
	ws := t.TempDir()
	examples, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	copySpecs(t, examples, filepath.Join(ws, "examples"))
	copyDir := filepath.Join(ws, testSpec)
	fabricNS := isolateTestbed(t, copyDir, "0a1b")
	if fabricNS == local.FabricNetns {
		t.Errorf("fabric namespace %s is the example testbed's", fabricNS)
	}
	load := func(p string) *spec.Spec {
		s, diags := spec.Load(p, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", p, diags.Error())
		}
		return s
	}
	example, isolated := load(filepath.Join("..", "testbed")), load(copyDir)
	names := func(s *spec.Spec) (map[string]bool, int, int) {
		m := map[string]bool{}
		ns, addrs := 0, 0
		for _, h := range s.Hosts {
			if h.Connect.Kind == "netns" {
				m["netns "+h.Connect.Netns] = true
				ns++
			}
		}
		for _, sw := range s.Switches {
			m["address "+sw.Address] = true
			addrs++
		}
		return m, ns, addrs
	}
	a, ans, aaddr := names(example)
	b, bns, baddr := names(isolated)
	if ans == 0 || aaddr == 0 || ans != bns || aaddr != baddr {
		t.Fatalf("example has %d namespaces and %d switches, the copy %d and %d", ans, aaddr, bns, baddr)
	}
	for n := range b {
		if a[n] {
			t.Errorf("the pipeline test's testbed uses the example's %s: it collides with a running `fabctl testbed up examples/testbed`", n)
		}
	}
}
