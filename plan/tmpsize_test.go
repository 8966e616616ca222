package plan

import (
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/spec/spectest"
)

func TestTmpSize(t *testing.T) {
	p := fabgen.Pod.Scale(1)
	s, _ := spec.LoadFiles([]spec.File{{Name: "bench.fab.hcl", Data: fabgen.Generate(p)}}, spec.LoadOptions{Platforms: spectest.Platforms})
	f := intent.Compile(s)
	seen := map[[3]int]int{}
	for _, sw := range f.Switches {
		seen[[3]int{16 + 8 + 6*len(sw.TCs) + 6*len(sw.Ports), len(sw.Flatten()), len(sw.Ports)}]++
	}
	t.Log(seen)
}
