package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if got := strings.Join(tb, " "); got != "containerlab down fault serve(hidden) status up" {
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
	for _, args := range [][]string{{"testbed", "up"}, {"testbed", "up", "a", "b"}, {"testbed", "serve"}, {"testbed", "status", "a", "b"}} {
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
