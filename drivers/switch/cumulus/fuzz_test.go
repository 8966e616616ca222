package cumulus

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
)

// FuzzRenderedLines (issue 37): any spec the loader accepts renders for
// Cumulus only commands of NVUE's documented grammar (shapes.txt's sent
// rows, <if> held to the platform's port grammar), each a line without a
// control character: NVUE commands are typed at a bash prompt, so a
// name carrying "; touch FILE" or a line break must never get here.
func FuzzRenderedLines(f *testing.F) {
	switchtest.FuzzSeeds(f)
	rows := switchtest.CompileRows(f, platform, map[string]string{"if": Descriptor.Ports.Pattern})
	f.Fuzz(func(t *testing.T, port1, port2, desc, addr, user, nic, dev string) {
		in := switchtest.FuzzInput{Port1: port1, Port2: port2, Description: desc, Address: addr, User: user, NIC: nic, Device: dev}
		fab, ok := switchtest.FuzzLoad(t, Name, in)
		if !ok {
			return
		}
		drv := New().(*Driver)
		target, steps := switchtest.FuzzSwitch(t, fab, drv)
		var lines []string
		for _, s := range steps {
			lines = append(lines, s.Payload...)
		}
		if files, err := drv.Render(target); err == nil {
			for _, fl := range files {
				lines = append(lines, strings.Split(strings.TrimSpace(string(fl.Data)), "\n")...)
			}
		}
		switchtest.CheckLines(t, "cumulus", lines)
		for _, l := range lines {
			if _, ok := switchtest.Documented(rows, l); !ok {
				t.Errorf("rendered %q: no SOURCED/DERIVED shape in shapes.txt (ports %q, %q)", l, port1, port2)
			}
		}
	})
}
