package cli

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
)

// Issue 21: a missing credential variable is one up-front error naming
// it, before any device is contacted (it was one connection error per
// device: 7 copies on examples/testbed), for plan, drift, apply and
// validate's live stages.
func TestMissingCredentialVariable(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-clean")
	for _, args := range [][]string{
		{"plan", "--state-dir", "STATE", fx.spec},
		{"drift", "--state-dir", "STATE", fx.spec},
		{"apply", "--auto-approve", "--state-dir", "STATE", fx.spec},
		{"validate", "--skip-traffic", fx.spec},
		{"validate", fx.spec},
		{"plan", "--target", "host.*", "--state-dir", "STATE", fx.spec}, // netns hosts need no credentials
	} {
		for i, a := range args {
			if a == "STATE" {
				args[i] = t.TempDir()
			}
		}
		var made atomic.Int32
		reg := drivers.NewRegistry()
		for _, n := range planTestPlatforms {
			if err := reg.Register(n, func() drivers.Driver {
				made.Add(1)
				return &memory.Driver{Store: fx.store, FieldList: planTestFields}
			}); err != nil {
				t.Fatal(err)
			}
		}
		f, _, out, errOut := testFactory() // FABCTL_TESTBED_PASSWORD not set
		f.Drivers = func() *drivers.Registry { return reg }
		code := runCLI(f, args...)
		all := out.String() + errOut.String()
		if args[1] == "--target" {
			if code != ExitOK || strings.Contains(all, "FABCTL_TESTBED_PASSWORD") {
				t.Errorf("%v: exit %d (the selected hosts need no credentials)\n%s", args, code, all)
			}
			continue
		}
		if want := ExitError; code != want && !(args[0] == "validate" && code != ExitOK) {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, all)
		}
		if n := made.Load(); n != 0 {
			t.Errorf("%v: %d devices contacted before the credentials were checked", args, n)
		}
		if c := strings.Count(all, `env("FABCTL_TESTBED_PASSWORD") is not set`); c != 1 {
			t.Errorf("%v: the missing variable is reported %d times, want once:\n%s", args, c, all)
		}
		for _, want := range []string{`credentials "testbed-ssh"`, "export FABCTL_TESTBED_PASSWORD=", "no device was contacted", "testbed.fab.hcl:"} {
			if !strings.Contains(all, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, all)
			}
		}
	}
}
