package cumulus

import (
	"regexp"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
)

// TestConformance runs the shared SSH CLI conformance suite. The switch
// has auto-save disabled (`nv set system config auto-save state
// disabled`, nvue-cli-514.txt:27), as an operator who wants applies and
// saves apart sets it: with the CL 5.9+ default (enabled) every apply
// saves itself and an applied-but-unsaved switch cannot exist.
// Commit-confirm is not used (NVIDIA does not document the confirming
// command, confirm.txt).
func TestConformance(t *testing.T) {
	switchtest.RunSSH(t, switchtest.SSHCase{
		Switch: "leaf-cl",
		User:   "cumulus",
		Start: func(t testing.TB) switchtest.SSHEmulator {
			emu, err := cumulusemu.Start(cumulusemu.Options{Hostname: "leaf-cl", Password: switchtest.Password, Ports: 4, AutoSave: "disabled"})
			if err != nil {
				t.Fatal(err)
			}
			return emu
		},
		NewDriver: func(opts sshtransport.Options) drivers.Driver { return NewWith(opts) },
		Drift: func(t testing.TB, emu switchtest.SSHEmulator) []string {
			emu.(*cumulusemu.Switch).Edit(func(tr map[string]any) {
				cumulusemu.SetPath(tr, "interface.swp2.link.mtu", 1600)
			})
			return []string{"port/swp2/mtu"}
		},
		RefuseLine: regexp.MustCompile(`^nv set interface swp2 link mtu [0-9]+$`),
		// The emulator's own wording for a value NVUE refuses (plausible,
		// not from NVIDIA material; see testbed/cumulusemu/schema.go).
		Refusal:    "Error: Invalid value for mtu: 9216 is not in the range 552-1500\n",
		CommitLine: regexp.MustCompile(`^nv config apply --assume-yes$`),
	})
}
