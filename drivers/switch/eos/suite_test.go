package eos

import (
	"regexp"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

// TestSuite runs the shared SSH CLI conformance suite against eosemu.
func TestSuite(t *testing.T) {
	switchtest.RunSSH(t, switchtest.SSHCase{
		Switch: "leaf-eos",
		Start: func(t testing.TB) switchtest.SSHEmulator {
			emu, err := eosemu.Start(eosemu.Options{Hostname: "leaf-eos", Password: switchtest.Password, Ports: 4})
			if err != nil {
				t.Fatal(err)
			}
			return emu
		},
		NewDriver: func(opts sshtransport.Options) drivers.Driver { return NewWith(opts) },
		Drift: func(t testing.TB, emu switchtest.SSHEmulator) []string {
			emu.(*eosemu.Switch).Edit(func(c *eosemu.Config) {
				c.Interfaces["Ethernet1"].MTU = 1600
				c.WDTimeout = "0.5"
			})
			return []string{"port/Ethernet1/mtu", "pfcwd/detect"}
		},
		// EOS's refusal (scrapligo arista_eos failed-when-contains; eosemu.invalid).
		RefuseLine: regexp.MustCompile(`^random-detect ecn`),
		Refusal:    "                ^\n% Invalid input detected at '^' marker.\n",
		// The in-session commit (pyeapi-session-config-diffs.txt:6).
		CommitLine:     regexp.MustCompile(`^commit$`),
		MissingPort:    "Ethernet99",
		ConfirmTimeout: true,
		Check:          true,
	})
}
