package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/local"
)

func TestTestbedSubcommands(t *testing.T) {
	f, _, _, _ := testFactory()
	var tb []string
	for _, c := range NewCmdRoot(f).Commands() {
		if c.Name() != "testbed" {
			continue
		}
		for _, sc := range c.Commands() {
			name := sc.Name()
			if sc.Hidden {
				name += "(hidden)"
			}
			tb = append(tb, name)
		}
	}
	if got := strings.Join(tb, " "); got != "containerlab copy down fault serve(hidden) status up" {
		t.Fatalf("testbed subcommands: %s", got)
	}
}

func TestTestbedStatusWithoutTestbed(t *testing.T) {
	dir := t.TempDir()
	f, _, out, errOut := testFactory()
	if code := runCLI(f, "testbed", "status", "--dir", filepath.Join(dir, "none")); code != ExitError {
		t.Fatalf("exit %d; stdout %q stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut.String(), "no testbed is up here") {
		t.Fatalf("stderr: %s", errOut)
	}
	// down of nothing fails the same way and creates nothing.
	f, _, _, errOut = testFactory()
	if code := runCLI(f, "testbed", "down", dir); code != ExitError || !strings.Contains(errOut.String(), "no testbed is up here") {
		t.Fatalf("down: exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, ".fabctl")); !os.IsNotExist(err) {
		t.Fatalf("down created %s/.fabctl", dir)
	}
}

func TestTestbedUsage(t *testing.T) {
	for _, args := range [][]string{{"testbed", "up"}, {"testbed", "up", "a", "b"}, {"testbed", "serve"}, {"testbed", "status", "a", "b"},
		{"testbed", "up", "--ready-timeout", "0s", "a"}, {"testbed", "up", "--ready-timeout", "-5s", "a"}, {"testbed", "up", "--ready-timeout", "soon", "a"}} {
		f, _, _, errOut := testFactory()
		if code := runCLI(f, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %s", args, code, ExitUsage, errOut)
		}
	}
}

// TestTestbedStatusJSON: status --json of a recorded testbed whose process
// and namespaces are gone says so and exits 1.
func TestTestbedStatusJSON(t *testing.T) {
	dir := t.TempDir()
	rec := `{"spec": "/x/spec", "dir": "` + dir + `", "pid": 0, "emulators": [{"name": "leaf1", "platform": "sonic", "address": "127.0.0.1:1"}],
  "namespaces": ["fabctl-cli-test-none"], "fabric_netns": "fab-fabric", "links": [], "files": []}`
	if err := os.WriteFile(filepath.Join(dir, "testbed.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, out, _ := testFactory()
	if code := runCLI(f, "testbed", "status", "--dir", dir, "--json"); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	// Issue 21: the document has a format_version, first, as every --json document.
	if !strings.HasPrefix(out.String(), "{\n  \"format_version\": \"1.1\",") {
		t.Errorf("status --json has no leading format_version:\n%s", out)
	}
	for _, want := range []string{`"running": false`, `"leaf1": false`, `"fabctl-cli-test-none": false`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status --json lacks %s:\n%s", want, out)
		}
	}
}

// Issue 40 (first run, defect 13): what fabctl applied to a testbed's
// devices went with them. testbed down drops those devices from the
// fabric's applied record (the next testbed starts from the emulators'
// defaults, and plan would otherwise report every setting as drift), keeps
// the other devices' entries, and keeps a record written before the
// testbed came up (not this testbed's), saying so; up warns about one.
func TestTestbedDownForgetsApplied(t *testing.T) {
	for _, tc := range []struct {
		name       string
		before     bool     // the record was written before the testbed came up
		recorded   []string // devices in the applied record
		wantLeft   []string // devices left in it after down (nil: file removed)
		wantErrOut string
	}{
		{"applied on the testbed", false, []string{"switch.leaf1", "host.h1"}, nil, "forgot what fabctl applied to the testbed's 2 devices"},
		{"other devices stay", false, []string{"switch.leaf1", "switch.prod9"}, []string{"switch.prod9"}, "testbed's 1 device ("},
		{"record from before the testbed", true, []string{"switch.leaf1", "host.h1"}, []string{"host.h1", "switch.leaf1"}, "written before this testbed came up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specDir := t.TempDir()
			tbDir := filepath.Join(specDir, ".fabctl", "testbed")
			state := filepath.Join(specDir, ".fabctl")
			if err := os.MkdirAll(tbDir, 0o700); err != nil {
				t.Fatal(err)
			}
			created := time.Now().UTC().Add(-time.Hour)
			a := &plan.Applied{FormatVersion: plan.FormatVersion, Fabric: "pod", Devices: map[string]intent.State{}}
			for _, d := range tc.recorded {
				a.Devices[d] = intent.State{"mtu": "9000"}
			}
			if err := a.Save(state); err != nil {
				t.Fatal(err)
			}
			mod := created.Add(time.Minute)
			if tc.before {
				mod = created.Add(-time.Minute)
			}
			if err := os.Chtimes(plan.AppliedPath(state, "pod"), mod, mod); err != nil {
				t.Fatal(err)
			}
			rec, _ := json.Marshal(map[string]any{"spec": specDir, "dir": tbDir, "pid": 0, "created": created,
				"fabric": "pod", "devices": []string{"switch.leaf1", "host.h1"}, "namespaces": []string{}, "links": []any{}, "files": []string{}})
			if err := os.WriteFile(filepath.Join(tbDir, "testbed.json"), rec, 0o600); err != nil {
				t.Fatal(err)
			}
			f, _, out, errOut := testFactory()
			if code := runCLI(f, "testbed", "down", specDir); code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if !strings.Contains(errOut.String(), tc.wantErrOut) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErrOut, errOut)
			}
			if tc.wantLeft == nil {
				if _, err := os.Stat(plan.AppliedPath(state, "pod")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("applied record kept (%v)", err)
				}
				return
			}
			left, err := plan.LoadApplied(state, "pod")
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(left.Devices)); !slices.Equal(got, tc.wantLeft) {
				t.Errorf("record holds %v, want %v", got, tc.wantLeft)
			}
			// testbed up warns about such a record (staleApplied).
			r := &local.Record{Spec: specDir, Created: created, Fabric: "pod", Devices: []string{"switch.leaf1", "host.h1"}}
			path, held := staleApplied(r, "")
			if tc.before != (len(held) > 0) || (tc.before && path != plan.AppliedPath(state, "pod")) {
				t.Errorf("staleApplied: %s %v", path, held)
			}
		})
	}
}

// TestTestbedUpReadyTimeout: up's wait for the emulators reaches local.Up
// as given, 2m by default (a qemu guest on a busy host needed more than 20s).
func TestTestbedUpReadyTimeout(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"testbed", "up", "x"}, 2 * time.Minute},
		{[]string{"testbed", "up", "--ready-timeout", "5m", "x"}, 5 * time.Minute},
	} {
		f, _, _, _ := testFactory()
		var got time.Duration
		cmd := newCmdTestbedUp(f, func(o *TestbedOptions) error { got = o.ReadyTimeout; return nil })
		cmd.SetArgs(tc.args[2:])
		if err := cmd.Execute(); err != nil || got != tc.want {
			t.Errorf("%v: ready timeout %s (%v), want %s", tc.args, got, err, tc.want)
		}
	}
}

// Issue 40 (first run, defect 21): testbed copy writes a production spec's
// copy that testbed up accepts, never into the spec's own directory.
func TestTestbedCopy(t *testing.T) {
	const prod = "../../testbed/local/testdata/production-pod.fab.hcl"
	dir := filepath.Join(t.TempDir(), "pod")
	f, _, out, errOut := testFactory()
	if code := runCLI(f, "testbed", "copy", prod, "-o", dir); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"3 switches on loopback addresses, 2 hosts in namespaces", "switch.spine1 -> 127.0.10.13:2222", "fabctl testbed up " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"production-pod.fab.hcl", local.CopyCredentialsFile, local.CopyOverrideFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	f, _, out, _ = testFactory()
	if code := runCLI(f, "--json", "testbed", "copy", "--first-address", "127.0.20.1", prod, "-o", dir); code != ExitOK ||
		!strings.Contains(out.String(), `"leaf1": "127.0.20.1:2222"`) || !strings.Contains(out.String(), `"gpu01": "netns:fab-gpu01"`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
	f, _, _, errOut = testFactory()
	if code := runCLI(f, "testbed", "copy", prod, "-o", filepath.Dir(prod)); code != ExitUsage || !strings.Contains(errOut.String(), "the spec's own directory") {
		t.Errorf("into the spec's directory: exit %d\n%s", code, errOut)
	}
}
