package sonic

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
)

// FuzzRenderedLines (issue 37): any spec the loader accepts renders for
// SONiC only lines of shapes.txt's documented grammar: the GCU patch
// file typed through the shell's here-document, op by op, each op's
// path and CONFIG_DB row a sent shape, and no line with a control
// character (the patch is typed at a bash prompt).
func FuzzRenderedLines(f *testing.F) {
	switchtest.FuzzSeeds(f)
	shapes := loadShapes(f)
	f.Fuzz(func(t *testing.T, port1, port2, desc, addr, user, nic, dev string) {
		in := switchtest.FuzzInput{Port1: port1, Port2: port2, Description: desc, Address: addr, User: user, NIC: nic, Device: dev}
		fab, ok := switchtest.FuzzLoad(t, Name, in)
		if !ok {
			return
		}
		drv := New().(*Driver)
		target, steps := switchtest.FuzzSwitch(t, fab, drv)
		typed := []string{"cat > /tmp/fabctl-fz.json <<'FABCTL_EOF'", "["}
		for _, s := range steps {
			for _, l := range s.Payload {
				typed = append(typed, l+",")
			}
		}
		typed = append(typed, "]", "FABCTL_EOF", "sudo config apply-patch /tmp/fabctl-fz.json")
		if files, err := drv.Render(target); err == nil {
			for _, fl := range files {
				switchtest.CheckLines(t, "sonic render", strings.Split(strings.TrimSpace(string(fl.Data)), "\n"))
			}
		}
		switchtest.CheckLines(t, "sonic", typed)
		for _, port := range []string{port1, port2} {
			if err := Descriptor.Ports.CheckPort(port); err != nil {
				for _, l := range typed {
					if strings.Contains(l, port) {
						t.Errorf("typed %q: %v", l, err)
					}
				}
			}
		}
		if _, bad := shapesOf(t, shapes, typed); len(bad) > 0 {
			t.Errorf("typed without a SOURCED/DERIVED shape in shapes.txt (ports %q, %q): %q", port1, port2, bad)
		}
	})
}
