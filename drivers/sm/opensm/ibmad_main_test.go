package opensm

import (
	"os"
	"testing"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibmad"
)

// TestMain serves `fabctl ibmad` when a simulated subnet (testbed/ibsim)
// starts this test binary as its MAD client.
func TestMain(m *testing.M) {
	if os.Getenv(fakeOpenSMEnv) == "1" {
		fakeOpenSM()
	}
	ibmad.RunIfHelper()
	os.Exit(m.Run())
}
