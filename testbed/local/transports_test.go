package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// TestTransportsApplyClean plans, applies and plans again two linked
// switches of every SSH platform (their emulators) in an iWARP fabric
// (no PFC priority on any port) and a RoCEv2 one: the apply verifies and
// the second plan finds nothing to change. An iWARP fabric keeps the
// fabric's PFC watchdog settings with no port to watch; SONiC, which
// holds them only in watched ports' PFC_WD rows, failed verification on
// them before they were listed as not expressible there.
func TestTransportsApplyClean(t *testing.T) {
	t.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	for _, tr := range []string{"iwarp", "rocev2"} {
		for _, p := range []string{"sonic", "eos", "nxos", "cumulus"} {
			dir, _ := benchEmulators(t, []string{p, p}, 0)
			fp := filepath.Join(dir, "bench.fab.hcl")
			b, _ := os.ReadFile(fp)
			os.WriteFile(fp, []byte(strings.Replace(string(b), `transport = "rocev2"`, `transport = "`+tr+`"`, 1)), 0o644)
			s := testutil.Load(t, dir, spec.LoadOptions{})
			f := intent.Compile(s)
			reg := builtin.Registry()
			opts := plan.Options{Parallelism: 4, Credentials: s.CredentialsByName}
			pl := plan.Make(context.Background(), s, f, reg, opts)
			var devs []apply.Device
			for _, u := range plan.Units(f) {
				dp := pl.Device(u.Device.Addr())
				if dp.Error != "" {
					t.Errorf("%s %s plan: %s", tr, p, dp.Error)
					continue
				}
				devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
			}
			res, err := apply.Run(context.Background(), devs, reg, apply.Options{Parallelism: 4})
			if err != nil {
				for _, d := range res.Devices {
					t.Errorf("%s %s: %s %s", tr, p, d.Status, d.Error)
				}
				continue
			}
			pl = plan.Make(context.Background(), s, f, reg, opts)
			for _, d := range pl.Devices {
				if d.HasChanges() {
					t.Errorf("%s %s re-plan %s: %+v", tr, p, d.Address, d.Changes)
				}
			}
		}
	}
}
