package cli

import (
	"strings"
	"testing"
)

// TestDrift: drift exits 0 on a fabric that matches the spec, 2 when a
// device differs or drifted, and 1 when a device cannot be read.
func TestDrift(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		code    ExitCode
		want    string
	}{
		{"testbed-clean", ExitOK, "No changes"},
		{"testbed-drift", ExitChanges, "changed outside fabctl"},
		{"testbed-converged", ExitChanges, "fabctl will make these changes"},
		{"testbed-unreachable", ExitError, "could not be read"},
	} {
		fx := loadPlanFixture(t, tc.fixture)
		f, out, errOut := fx.factory()
		code := runCLI(f, "drift", "--state-dir", fx.stateDir, fx.spec)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.fixture, code, tc.code, out, errOut)
		}
		if !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("%s: output lacks %q:\n%s%s", tc.fixture, tc.want, out, errOut)
		}
	}
}
