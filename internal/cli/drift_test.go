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
		{"unmanaged", ExitOK, "Unmanaged: 5 settings on 2 devices left as the devices run them"},
		{"testbed-drift", ExitChanges, "changed outside fabctl"},
		{"testbed-converged", ExitChanges, "These settings differ from the spec"},
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

// Issue 21: drift accepts --detailed-exitcode (Terraform users type it;
// drift's exit status is already detailed), and its markdown is titled
// drift, not plan.
func TestDriftDetailedExitcodeAndMarkdownTitle(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-drift")
	f, out, errOut := fx.factory()
	if code := runCLI(f, "drift", "--detailed-exitcode", "--state-dir", fx.stateDir, fx.spec); code != ExitChanges {
		t.Errorf("--detailed-exitcode: exit %d, want 2\n%s%s", code, out, errOut)
	}
	f, out, errOut = fx.factory()
	if code := runCLI(f, "drift", "--format", "markdown", "--state-dir", fx.stateDir, fx.spec); code != ExitChanges {
		t.Fatalf("markdown: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out.String(), "### fabctl drift: ") {
		t.Errorf("markdown title:\n%s", out)
	}
	// Issue 40 (first run, defect 11): drift reads only, and says so: the
	// devices differ, nothing is planned.
	for _, bad := range []string{"Devices planned", "#### Changes\n"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("drift markdown says %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"(differs: ", "| Devices read | Differ |", "#### Differences from the spec"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("drift markdown lacks %q:\n%s", want, out)
		}
	}
	f, out, errOut = fx.factory()
	runCLI(f, "drift", "--state-dir", fx.stateDir, fx.spec)
	for _, bad := range []string{"fabctl will make these changes", "Plan:"} {
		if strings.Contains(out.String()+errOut.String(), bad) {
			t.Errorf("drift says %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(out.String(), "Differs: ") {
		t.Errorf("drift's summary:\n%s", out)
	}
}

// First run, old defect 17: a selection that leaves no device names only
// the flags given (no empty "--exclude ").
func TestNoDeviceSelectedNamesGivenFlags(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-drift")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--target", "nomatch"}, "no device matches --target nomatch (match"},
		{[]string{"apply", "-auto-approve", "--target", "nomatch"}, "no device matches --target nomatch (match"},
		{[]string{"plan", "--target", "nomatch", "--exclude", "leaf1"}, "no device matches --target nomatch --exclude leaf1 (match"},
	} {
		f, out, errOut := fx.factory()
		code := runCLI(f, append(append(tc.args, "--state-dir", fx.stateDir), fx.spec)...)
		if code != ExitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, want 64 and %q:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}
