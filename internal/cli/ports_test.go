package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
)

// inventoried is the memory driver on switches whose read lists their
// ports: Ethernet0..Ethernet7, without Ethernet8.
type inventoried struct{ memory.Driver }

func (d *inventoried) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	st, err := d.Driver.Read(ctx, t)
	if err == nil && t.Device.Kind == intent.KindSwitch {
		drivers.PutPorts(st, []string{"Ethernet0", "Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Ethernet5", "Ethernet6", "Ethernet7"})
	}
	return st, err
}

// plan refuses a spec port a switch does not have (exit 1, naming the
// port, the nearest names and where the spec names it), and apply
// applies nothing, not even to the devices that have every port.
func TestPlanApplyMissingPort(t *testing.T) {
	store := memory.NewStore()
	f, _, stdout, stderr := testFactory()
	f.Drivers = func() *drivers.Registry {
		reg := drivers.NewRegistry()
		for _, n := range planTestPlatforms {
			_ = reg.Register(n, func() drivers.Driver { return &inventoried{memory.Driver{Store: store, FieldList: planTestFields}} })
		}
		return reg
	}
	f.SkipSecretCheck = true
	dir := t.TempDir()
	path := "testdata/validate/ok.fab.hcl" // leaf1:Ethernet8 is cabled to border1
	if code := runCLI(f, "plan", "--state-dir", dir, "-out", filepath.Join(dir, "p.fab"), path); code != ExitError {
		t.Errorf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	out := stdout.String() + stderr.String()
	for _, w := range []string{`switch.leaf1 has no port "Ethernet8" (nearest: Ethernet0, Ethernet1, Ethernet2)`, "Ethernet8 at testdata/validate/ok.fab.hcl:"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan does not say %q:\n%s", w, out)
		}
	}
	stdout.Reset()
	stderr.Reset()
	if code := runCLI(f, "apply", "-auto-approve", "--state-dir", dir, path); code != ExitError || !strings.Contains(stderr.String(), "nothing was applied") {
		t.Errorf("apply: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, d := range []string{"leaf1", "border1", "border2", "h1", "h2"} {
		if len(store.Get(d)) != 0 {
			t.Errorf("%s was changed", d)
		}
	}
}
