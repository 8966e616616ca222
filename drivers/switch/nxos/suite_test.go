package nxos

import (
	"regexp"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/nxosemu"
)

// TestConformance runs the shared SSH CLI suite against the NX-OS driver
// and the strict nxosemu.
func TestConformance(t *testing.T) {
	switchtest.RunSSH(t, switchtest.SSHCase{
		Switch: "leaf-nx",
		Start: func(t testing.TB) switchtest.SSHEmulator {
			emu, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf-nx", Password: switchtest.Password, Ports: 4})
			if err != nil {
				t.Fatal(err)
			}
			return emu
		},
		NewDriver: func(opts sshtransport.Options) drivers.Driver { return NewWith(opts) },
		Drift: func(t testing.TB, emu switchtest.SSHEmulator) []string {
			emu.(*nxosemu.Switch).Edit(func(c *nxosemu.Config) { c.Interfaces["Ethernet1/1"].MTU = 1500 })
			return []string{"port/Ethernet1/1/mtu"}
		},
		// NX-OS applies each line as it is typed inside the checkpoint;
		// its parse error is the caret line and "% Invalid command at '^'
		// marker." (testdata/vendor/nxos/session.txt).
		RefuseLine: regexp.MustCompile(`^priority-flow-control mode on$`),
		Refusal:    "% Invalid command at '^' marker.\n",
		// There is no commit: `end` closes the configuration the lines
		// already changed.
		CommitLine:  regexp.MustCompile(`^end$`),
		MissingPort: "Ethernet1/99",
	})
}
