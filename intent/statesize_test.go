package intent

import (
	"path/filepath"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// TestHostStateSize: the size hint of a host's state is exactly what
// Flatten writes, for every host of the example specs (RoCEv2 with DSCP
// trust, RoCEv1 with VLANs, iWARP, InfiniBand).
func TestHostStateSize(t *testing.T) {
	dirs, err := filepath.Glob("../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.fab.hcl")); len(m) == 0 {
			continue
		}
		s := testutil.Load(t, dir, spec.LoadOptions{})
		for _, h := range Compile(s).Hosts {
			if got, want := h.stateSize(), len(h.Flatten()); got != want {
				t.Errorf("%s: host %s: size hint %d, Flatten writes %d", dir, h.Name, got, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no hosts in the examples")
	}
}
