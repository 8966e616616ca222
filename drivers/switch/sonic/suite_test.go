package sonic

import (
	"regexp"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// refusal is GCU's IllegalPatchOperationError text for a patch one of
// its field-operation validators refuses, as the emulator prints it (the
// suite checks the driver carries it; it is not injected) (sonic-utilities
// generic_config_updater/gu_common.py validate_field_operation:
// "Modification of {} table is illegal- validating function {} returned
// False"), here the RDMA validator on PFC_WD.
const refusal = "Modification of PFC_WD table is illegal- validating function generic_config_updater.field_operation_validators.rdma_config_update_validator returned False"

// TestConformanceSuite runs the lead's shared SSH CLI suite against the
// SONiC emulator. The emulator runs the dynamic buffer model (the spec's
// 3 m cables are not in the SONiC VM's pg_profile_lookup.ini, so the
// traditional model's buffermgrd would never make the class lossless:
// TestTraditionalBufferModel covers that model).
func TestConformanceSuite(t *testing.T) {
	switchtest.RunSSH(t, switchtest.SSHCase{
		Switch: "spine1",
		Start: func(t testing.TB) switchtest.SSHEmulator {
			emu, err := sonicemu.Start(sonicemu.Options{Password: switchtest.Password, BufferModel: "dynamic"})
			if err != nil {
				t.Fatal(err)
			}
			return emu
		},
		NewDriver: func(o sshtransport.Options) drivers.Driver { return NewWith(o) },
		Drift: func(t testing.TB, emu switchtest.SSHEmulator) []string {
			e := emu.(*sonicemu.Switch)
			var port string
			e.Edit(func(db map[string]any) {
				for k, v := range db["PORT_QOS_MAP"].(map[string]any) {
					if k != "global" && port == "" {
						port = k
						v.(map[string]any)["pfc_enable"] = "1"
					}
				}
			})
			return []string{"port/" + port + "/pfc"}
		},
		// GCU's refusal by its RDMA field validator, which the emulator runs
		// (testbed/sonicemu/gcu.go): the switch is moved to an image older
		// than the PFCWD scenario's branch for its ASIC (td2, 20181100) after
		// the plan was made, so the planned PFC_WD change meets the switch's
		// own refusal (the plan, reading the image, would have left it out).
		Refuse: func(t testing.TB, emu switchtest.SSHEmulator) func() {
			e := emu.(*sonicemu.Switch)
			e.SetBuildVersion("SONiC.20180330.12")
			return func() { e.SetBuildVersion("") }
		},
		RefuseLine: regexp.MustCompile(`^sudo config apply-patch `),
		Refusal: "Failed to apply patch due to: " + refusal + "\n" +
			"Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\nTry 'config apply-patch -h' for help.\n\nError: " + refusal + "\n",
		CommitLine:  regexp.MustCompile(`^sudo config apply-patch `),
		MissingPort: "Ethernet396",
		Check:       true,
	})
}
