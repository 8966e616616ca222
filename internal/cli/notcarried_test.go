package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// noDCBHost is the memory host driver on NICs without DCB (a veth): every
// NIC setting but the MTU and the addresses is not expressible.
type noDCBHost struct{ memory.Driver }

func (d *noDCBHost) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k := range desired {
		if strings.HasPrefix(k, "nic/") && !strings.HasSuffix(k, "/mtu") && !strings.HasSuffix(k, "/addresses") {
			out[k] = "the NIC's kernel driver has no DCB (EOPNOTSUPP)"
		}
	}
	return out
}

// cableless is the memory switch driver on a platform without a
// cable-length setting: a gap that only tunes the device.
type cableless struct{ memory.Driver }

func (d *cableless) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k := range desired {
		if strings.HasSuffix(k, "/cable") {
			out[k] = "no cable-length setting (headroom is sized by the switch)"
		}
	}
	return out
}

func gapRegistry(t *testing.T, store *memory.Store) *drivers.Registry {
	t.Helper()
	reg := drivers.NewRegistry()
	for _, n := range planTestPlatforms {
		f := func() drivers.Driver { return &cableless{memory.Driver{Store: store, FieldList: planTestFields}} }
		if n == "host" {
			f = func() drivers.Driver { return &noDCBHost{memory.Driver{Store: store, FieldList: planTestFields}} }
		}
		if err := reg.Register(n, f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// gapStore is a memory store holding what a fabric applied on these
// devices has: every device's expressible desired state.
func gapStore(t *testing.T, path string) *memory.Store {
	t.Helper()
	s := testutil.Load(t, path, spec.LoadOptions{})
	store := memory.NewStore()
	p := plan.Make(context.Background(), s, intent.Compile(s), gapRegistry(t, store), plan.Options{})
	for _, d := range p.Devices {
		st := intent.State{}
		for k, v := range d.Desired {
			if k != drivers.PathSaved {
				st[k] = v
			}
		}
		store.Set(d.Name, st)
	}
	return store
}

// gapSpec writes testdata/validate/ok.fab.hcl with accept added to host
// h2's nic block.
func gapSpec(t *testing.T, accept string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/validate/ok.fab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), `device    = "mlx5_1"`, `device    = "mlx5_1"`+"\n    "+accept, 1)
	path := filepath.Join(t.TempDir(), "gap.fab.hcl")
	writeFile(t, path, src)
	return path
}

// A device that cannot carry a lossless, RDMA or CNP class fails validate
// (exit 1, a JUnit failure) unless the spec accepts it, which reads
// "accepted, not in effect", never ✔; a gap that only tunes the device
// is not ✔ either, and fails under --strict.
func TestValidateNotCarried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		accept string
		args   []string
		code   ExitCode
		want   []string
		fails  int
	}{
		{name: "gap", code: ExitError, fails: 2, want: []string{
			"✘ host.h1: 14 settings of a lossless, RDMA or CNP class not in effect",
			"the NIC's kernel driver has no DCB",
			"! switch.leaf1: matches; 3 settings the device cannot express are not in effect",
			"To go on: fix the device", "accept_not_in_effect",
			"✘ live fabric invalid: read-back 3/5 devices match, 2 cannot carry the intent",
		}},
		{name: "accepted on h2", accept: `accept_not_in_effect = { "*" = "veth test host" }`, code: ExitError, fails: 1, want: []string{
			"○ host.h2: matches; 21 settings accepted, not in effect",
			"accepted, not in effect: nic/eth1/", "(veth test host)",
			"✘ host.h1:",
		}},
		{name: "strict", accept: `accept_not_in_effect = { "*" = "veth test host" }`, args: []string{"--strict"}, code: ExitError, fails: 3, want: []string{
			"✘ switch.leaf1: 3 settings (--strict: every setting the spec does not accept) not in effect",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := gapSpec(t, tc.accept)
			store := gapStore(t, path)
			f, _, stdout, stderr := testFactory()
			f.Drivers = func() *drivers.Registry { return gapRegistry(t, store) }
			f.SkipSecretCheck = true
			junit := filepath.Join(t.TempDir(), "report.xml")
			args := append(append([]string{"--skip-traffic", "--junit", junit}, tc.args...), path)
			code := validateCmd(f, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			out := stdout.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "✔ host.") {
				t.Errorf("a host with settings not in effect reads as valid:\n%s", out)
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var doc junitSuites
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			fails := 0
			for _, s := range doc.Suites {
				for _, c := range s.Cases {
					for _, fl := range c.Failures {
						if fl.Type == "not_in_effect" {
							fails++
						}
					}
				}
			}
			if fails != tc.fails {
				t.Errorf("%d JUnit not_in_effect failures, want %d\n%s", fails, tc.fails, b)
			}
		})
	}
	// --json: the devices' statuses and the counts.
	store := gapStore(t, gapSpec(t, ""))
	f, _, stdout, _ := testFactory()
	f.Drivers = func() *drivers.Registry { return gapRegistry(t, store) }
	f.SkipSecretCheck = true
	validateCmd(f, "--json", "--skip-traffic", gapSpec(t, ""))
	var doc validateJSONDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Valid && doc.ExitCode != 1 || doc.Readback == nil || doc.Readback.NotCarried != 2 || doc.ExitCode != 1 {
		t.Fatalf("json: %+v", doc.Readback)
	}
}

// Plan opens with the devices that cannot carry the intent, as an error
// (exit 1, no saved plan); apply refuses before touching a device.
func TestPlanApplyNotCarried(t *testing.T) {
	path := gapSpec(t, "")
	store := memory.NewStore()
	f, _, stdout, stderr := testFactory()
	f.Drivers = func() *drivers.Registry { return gapRegistry(t, store) }
	f.SkipSecretCheck = true
	dir := t.TempDir()
	out := filepath.Join(dir, "p.fabplan")
	code := runCLI(f, "plan", "--state-dir", dir, "-out", out, path)
	if code != ExitError {
		t.Errorf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	text := stdout.String()
	first := strings.Index(text, "Error: 2 devices cannot carry the intent: host.h1, host.h2")
	if first < 0 || first > strings.Index(text, "fabctl will make these changes") {
		t.Errorf("plan does not open with the error:\n%s", text)
	}
	if !strings.Contains(stderr.String(), "cannot carry the intent") || !strings.Contains(stderr.String(), "was not saved") {
		t.Errorf("stderr: %s", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a plan that cannot carry the intent was saved")
	}
	stdout.Reset()
	stderr.Reset()
	code = runCLI(f, "apply", "-auto-approve", "--state-dir", dir, path)
	if code != ExitError || !strings.Contains(stderr.String(), "nothing was applied: 2 devices cannot carry the intent") {
		t.Errorf("apply: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, d := range []string{"leaf1", "h1", "h2"} {
		if len(store.Get(d)) != 0 {
			t.Errorf("%s was changed: %v", d, store.Get(d))
		}
	}
	// Accepted: the plan goes on, apply applies.
	path = gapSpec(t, `accept_not_in_effect = { "*" = "veth test host" }`)
	src, _ := os.ReadFile(path)
	writeFile(t, path, strings.Replace(string(src), `device    = "mlx5_0"`, `device    = "mlx5_0"`+"\n    accept_not_in_effect = { \"*\" = \"veth test host\" }", 1))
	stdout.Reset()
	stderr.Reset()
	if code := runCLI(f, "apply", "-auto-approve", "--state-dir", dir, path); code != ExitOK {
		t.Errorf("apply accepted: exit %d\n%s%s", code, stdout, stderr)
	}
}

// telemetry --help names the platforms serve reads and the ones it
// cannot, from the build's drivers.
func TestTelemetryHelpNamesPlatforms(t *testing.T) {
	f, _, out, _ := testFactory()
	if code := runCLI(f, "telemetry", "--help"); code != ExitOK {
		t.Fatalf("telemetry --help: exit %d", code)
	}
	long := out.String()
	for _, w := range []string{"(srlinux, openconfig)", "(sonic, cumulus)", "(eos, nxos)", "fabctl_switch_up 0 with the reason"} {
		if !strings.Contains(long, w) {
			t.Errorf("telemetry --help does not say %q:\n%s", w, long)
		}
	}
}
