package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 21: under --json a usage error is a JSON document on stdout too
// (scripts parse stdout), besides the message on stderr; without --json
// stdout stays empty.
func TestUsageErrorJSON(t *testing.T) {
	for _, c := range []struct {
		args    []string
		command string
		want    string
	}{
		{[]string{"plan", "--json", "--bogus"}, "fabctl plan", "unknown flag: --bogus"},
		{[]string{"--json", "nosuchcommand"}, "fabctl", `unknown command "nosuchcommand"`},
		{[]string{"testbed", "status", "a", "b", "--json"}, "fabctl testbed status", "accepts at most 1 arg"},
		{[]string{"plan", "--format", "json", "--parallelism", "x"}, "fabctl plan", "invalid argument"},
		{[]string{"plan", "--format=json", "--target", " ", "."}, "fabctl plan", "invalid --target"},
	} {
		f, _, out, errOut := testFactory()
		if code := runCLI(f, c.args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 64", c.args, code)
			continue
		}
		var doc usageErrorJSON
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Errorf("%v: stdout is not one JSON document (%v):\n%s", c.args, err, out)
			continue
		}
		if doc.FormatVersion != jsonFormatVersion || doc.OK || doc.ExitCode != 64 || doc.ErrorKind != "usage" || doc.Command != c.command || !strings.Contains(doc.Error, c.want) {
			t.Errorf("%v: %+v", c.args, doc)
		}
		if !strings.Contains(errOut.String(), "Error: ") {
			t.Errorf("%v: stderr lacks the message: %q", c.args, errOut)
		}
	}
	f, _, out, _ := testFactory()
	if code := runCLI(f, "plan", "--bogus"); code != ExitUsage || out.Len() != 0 {
		t.Errorf("without --json: exit %d, stdout %q", code, out)
	}
}

// Issue 21: --target and --exclude complete device names, addresses and
// roles from the spec, not file names.
func TestTargetCompletion(t *testing.T) {
	for _, cmd := range []string{"plan", "drift", "apply"} {
		f, _, out, errOut := testFactory()
		if code := runCLI(f, "__complete", cmd, "../../examples/testbed", "--target", "lea"); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", cmd, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) < 2 || lines[0] != "leaf1" || lines[len(lines)-1] != ":4" {
			t.Errorf("%s --target lea: %q (want leaf1 ... and :4, no file completion)", cmd, lines)
		}
		f, _, out, _ = testFactory()
		runCLI(f, "__complete", cmd, "../../examples/testbed", "--exclude", "")
		for _, want := range []string{"\nswitch.spine1\n", "\nhost.h1\n", "\nrole:spine\n"} {
			if !strings.Contains("\n"+out.String(), want) {
				t.Errorf("%s --exclude: lacks %q:\n%s", cmd, strings.TrimSpace(want), out)
			}
		}
	}
}
