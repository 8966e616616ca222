package ibsim

import (
	"os"
	"testing"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibmad"
)

// TestMain serves `fabctl ibmad` when the Sim starts this test binary as
// its MAD client (Sim.Run with MADProgram).
func TestMain(m *testing.M) {
	ibmad.RunIfHelper()
	os.Exit(m.Run())
}
