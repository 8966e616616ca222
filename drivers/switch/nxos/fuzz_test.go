package nxos

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
)

// FuzzRenderedLines (issue 37): any spec the loader accepts renders for
// NX-OS only commands of shapes.txt's documented grammar (sent rows, <if>
// held to NX-OS's port names), typed as the checkpoint transaction types
// them (configure terminal, the mode script, end), each a line without
// a control character: a port label with a newline once sent `hostname
// PWNED-NXOS` as a command of its own.
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
		var payload []string
		for _, s := range steps {
			payload = append(payload, s.Payload...)
		}
		typed := append(append([]string{"configure terminal"}, Script(payload)...), "end")
		if files, err := drv.Render(target); err == nil {
			for _, fl := range files {
				switchtest.CheckLines(t, "nxos render", strings.Split(strings.TrimSpace(string(fl.Data)), "\n"))
			}
		}
		switchtest.CheckLines(t, "nxos", typed)
		for _, l := range contextual(typed) {
			if _, ok := switchtest.Documented(rows, l); !ok {
				t.Errorf("typed %q: no SOURCED/DERIVED shape in shapes.txt (ports %q, %q)", l, port1, port2)
			}
		}
	})
}
