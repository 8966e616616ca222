package cli

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

func TestValidateFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want ValidateOptions // compared fields: Path, Static, Strict, Vars, VarFiles, JSON
		code ExitCode
		err  string
	}{
		{name: "defaults", args: nil, want: ValidateOptions{Path: "."}},
		{name: "path", args: []string{"fabric/"}, want: ValidateOptions{Path: "fabric/"}},
		{name: "static strict json", args: []string{"--static", "--strict", "--json", "x.fab.hcl"},
			want: ValidateOptions{Path: "x.fab.hcl", Static: true, Strict: true, JSON: true}},
		{name: "global flag before command", args: []string{"--json"}, want: ValidateOptions{Path: ".", JSON: true}},
		{name: "repeatable vars", args: []string{"--var", "a=1", "--var=b=x,y", "--var-file", "p.fabvars", "--var-file", "q.fabvars"},
			want: ValidateOptions{Path: ".", Vars: []string{"a=1", "b=x,y"}, VarFiles: []string{"p.fabvars", "q.fabvars"}}},
		{name: "var without value", args: []string{"--var", "a"}, code: ExitUsage, err: `invalid --var "a": want name=value`},
		{name: "var without name", args: []string{"--var", "=1"}, code: ExitUsage, err: "invalid --var"},
		{name: "two paths", args: []string{"a", "b"}, code: ExitUsage, err: "accepts at most 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"--strcit"}, code: ExitUsage, err: "Did you mean --strict?"},
		{name: "bad bool", args: []string{"--static=maybe"}, code: ExitUsage, err: "invalid argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _, stderr := testFactory()
			var got *ValidateOptions
			cmd := NewCmdValidate(f, func(o *ValidateOptions) error { got = o; return nil })
			args := tt.args
			if tt.name == "global flag before command" {
				args = append([]string{"--json", "validate"}, args[1:]...)
			} else {
				args = append([]string{"validate"}, args...)
			}
			code := execCmd(f, cmd, args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.err != "" {
				if !strings.Contains(stderr.String(), tt.err) {
					t.Errorf("stderr %q does not contain %q", stderr, tt.err)
				}
				if got != nil {
					t.Errorf("run function called despite a usage error")
				}
				return
			}
			if got == nil {
				t.Fatal("run function not called")
			}
			g := ValidateOptions{Path: got.Path, Static: got.Static, Strict: got.Strict, Vars: got.Vars, VarFiles: got.VarFiles, JSON: got.JSON}
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("options\n got  %+v\n want %+v", g, tt.want)
			}
		})
	}
}

// testRules is a fixed lint rule set for the golden tests, so that their
// output does not move as the real rule table grows.
func testRules(s *spec.Spec) lint.Result {
	return lint.RunRules(s, []lint.Rule{{
		ID:        "TEST-1",
		Title:     "Border switches are noticed",
		Rationale: "Test rule.",
		Reference: "fabctl CLI test suite",
		Check: func(c *lint.Context) {
			for _, sw := range c.Spec.Switches {
				if sw.Role == "border" {
					c.Reportf(lint.Warning, sw.Src.Attr("role"), "switch."+sw.Name, []spec.LintIgnores{sw.Ignore},
						"Border switch", "switch %q is a border switch; the test rule says so.", sw.Name)
				}
			}
		},
	}})
}

// validateCmd runs fabctl validate with the test rule set.
func validateCmd(f *Factory, args ...string) ExitCode {
	cmd := NewCmdValidate(f, func(o *ValidateOptions) error {
		o.Lint = testRules
		return validateRun(o)
	})
	return execCmd(f, cmd, append([]string{"validate"}, args...)...)
}

var validateGoldenCases = []struct {
	name string
	env  []string
	args []string
	code ExitCode
}{
	{name: "ok", args: []string{"--static", "testdata/validate/ok.fab.hcl"}},
	{name: "ok-strict", args: []string{"--static", "--strict", "testdata/validate/ok.fab.hcl"}, code: ExitError},
	{name: "errors", args: []string{"--static", "testdata/validate/errors.fab.hcl"}, code: ExitError},
	{name: "multi", args: []string{"--static", "testdata/validate/multi"}},
	{name: "missing", args: []string{"--static", "testdata/validate/nope"}, code: ExitError},
	{name: "vars-unset", args: []string{"--static", "testdata/validate/vars.fab.hcl"}, code: ExitError},
	{name: "vars-env", env: []string{"FAB_VAR_leaf_address=192.0.2.9"}, args: []string{"--static", "testdata/validate/vars.fab.hcl"}},
	{name: "vars-file", args: []string{"--static", "--var-file", "testdata/validate/vars.fabvars", "testdata/validate/vars.fab.hcl"}},
	{name: "vars-file-typo", args: []string{"--static", "--var-file", "testdata/validate/typo.fabvars", "testdata/validate/vars.fab.hcl"}, code: ExitError},
	{name: "vars-flag", env: []string{"FAB_VAR_leaf_address=bad"}, args: []string{"--static", "--var", "leaf_address=192.0.2.9", "testdata/validate/vars.fab.hcl"}},
}

func TestValidateGolden(t *testing.T) {
	for _, tc := range validateGoldenCases {
		for _, asJSON := range []bool{false, true} {
			name, ext := tc.name, ".txt"
			args := tc.args
			if asJSON {
				name, ext = name+"/json", ".json"
				args = append([]string{"--json"}, args...)
			}
			t.Run(name, func(t *testing.T) {
				f, _, stdout, stderr := testFactory(tc.env...)
				code := validateCmd(f, args...)
				if code != tc.code {
					t.Errorf("exit code %d, want %d", code, tc.code)
				}
				if stderr.Len() > 0 {
					t.Errorf("unexpected stderr:\n%s", stderr)
				}
				if asJSON && !json.Valid(stdout.Bytes()) {
					t.Errorf("invalid JSON:\n%s", stdout)
				}
				testutil.Golden(t, filepath.Join("testdata", "validate", "golden", tc.name+ext), stdout.Bytes())
			})
		}
	}
}

// TestValidateJSONShape checks the documented validate --json fields.
func TestValidateJSONShape(t *testing.T) {
	f, _, stdout, _ := testFactory()
	if code := validateCmd(f, "--json", "--static", "testdata/validate/ok.fab.hcl"); code != ExitOK {
		t.Fatalf("exit code %d", code)
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format_version", "valid", "strict", "stages", "error_count", "warning_count", "suppressed_count", "summary", "diagnostics"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	if doc["format_version"] != "1.1" || doc["valid"] != true || doc["warning_count"] != 1.0 || doc["suppressed_count"] != 1.0 {
		t.Errorf("unexpected document: %s", stdout)
	}
	sum := doc["summary"].(map[string]any)
	want := map[string]any{"fabric": "pod1", "switches": 3.0, "hosts": 2.0, "nics": 2.0, "links": 3.0, "classes": sum["classes"]}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("summary %v, want %v", sum, want)
	}
	d := doc["diagnostics"].([]any)[0].(map[string]any)
	if d["rule"] != "TEST-1" || d["address"] != "switch.border1" || d["severity"] != "warning" {
		t.Errorf("diagnostic %v", d)
	}
}

func TestValidateColor(t *testing.T) {
	tests := []struct {
		name   string
		tty    bool
		env    []string
		flags  []string
		escape bool
	}{
		{name: "tty", tty: true, escape: true},
		{name: "not a tty", tty: false},
		{name: "tty with NO_COLOR", tty: true, env: []string{"NO_COLOR=1"}},
		{name: "tty with empty NO_COLOR", tty: true, env: []string{"NO_COLOR="}, escape: true},
		{name: "tty with --no-color", tty: true, flags: []string{"--no-color"}},
		{name: "tty with --json", tty: true, flags: []string{"--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, stdout, _ := testFactory(tt.env...)
			f.IOStreams.SetStdoutTTY(tt.tty)
			args := append(append([]string{}, tt.flags...), "--static", "testdata/validate/errors.fab.hcl")
			if code := validateCmd(f, args...); code != ExitError {
				t.Fatalf("exit code %d", code)
			}
			if got := strings.Contains(stdout.String(), "\x1b["); got != tt.escape {
				t.Errorf("ANSI escapes present = %v, want %v:\n%q", got, tt.escape, stdout)
			}
			if !strings.Contains(stdout.String(), "Invalid speed") {
				t.Errorf("diagnostics missing:\n%s", stdout)
			}
		})
	}
}

func TestValidateDebug(t *testing.T) {
	f, _, stdout, stderr := testFactory()
	if code := validateCmd(f, "--debug", "--static", "testdata/validate/ok.fab.hcl"); code != ExitOK {
		t.Fatalf("exit code %d", code)
	}
	if !strings.Contains(stderr.String(), "debug: loaded 1 file(s)") {
		t.Errorf("no debug log on stderr: %q", stderr)
	}
	if strings.Contains(stdout.String(), "debug:") {
		t.Errorf("debug log on stdout")
	}
}

// TestValidateRealRules runs the command as shipped (real lint.Run) on the
// load-error golden spec, whose output lint cannot change.
func TestValidateRealRules(t *testing.T) {
	f, _, stdout, _ := testFactory()
	if code := runCLI(f, "validate", "--static", "testdata/validate/errors.fab.hcl"); code != ExitError {
		t.Fatalf("exit code %d", code)
	}
	if !strings.HasSuffix(stdout.String(), "✘ 4 errors, 0 warnings\n") {
		t.Errorf("unexpected summary:\n%s", stdout)
	}
}
