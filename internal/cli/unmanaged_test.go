package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 36: a setting the spec leaves unmanaged is never reported ✔:
// validate's read-back says "unmanaged, not checked" for its device, in
// the human view, the verdict and the JUnit report, and does not fail on
// it.
func TestValidateUnmanagedNeverValid(t *testing.T) {
	fx := loadPlanFixture(t, "unmanaged")
	f, out, errOut := fx.factory()
	junit := filepath.Join(t.TempDir(), "report.xml")
	code := validateCmd(f, "--skip-traffic", "--junit", junit, fx.spec)
	if code != ExitOK {
		t.Errorf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	got := out.String()
	for _, want := range []string{
		"○ switch.leaf1: matches; 4 settings unmanaged, not checked",
		"unmanaged, not checked: trust (the device runs both): the switch trusts PCP and DSCP",
		`unmanaged, not checked: port/Ethernet0/pfc (the device runs ""): storage port`,
		"○ host.h1: matches; 1 setting unmanaged, not checked",
		"(2 with unmanaged settings, not checked)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("validate does not say %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"✔ switch.leaf1", "✔ host.h1"} {
		if strings.Contains(got, bad) {
			t.Errorf("validate says %q for a device with unmanaged settings:\n%s", bad, got)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "unmanaged, not checked: nic/eth1/tos (the device runs 0): the job launcher") {
		t.Errorf("JUnit report lacks the unmanaged setting:\n%s", b)
	}
}
