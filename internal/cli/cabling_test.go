package cli

import (
	"maps"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// cable fills each emulator's cabling (the portlink.Static handed to it
// at start, by switch name) with the links of the spec at path as the
// spec draws them, as the local testbed cables the switches it runs: the
// switches' link truth then reads clean.
func cable(t *testing.T, path string, env []string, links map[string]portlink.Static) {
	t.Helper()
	s := testutil.Load(t, path, spec.LoadOptions{Env: env})
	for name, st := range links {
		maps.Copy(st, portlink.FromSpec(s, name))
	}
}
