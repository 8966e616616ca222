package cli

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestExitCodesAreStable(t *testing.T) {
	// Documented API (docs/cli.md): a change here breaks users' scripts.
	want := map[ExitCode]string{0: "ok", 1: "error", 2: "changes", 3: "stale-plan", 4: "locked", 5: "nothing-tested", 6: "mismatch", 7: "refused-by-device", 64: "usage", 70: "internal"}
	if len(exitCodes) != len(want) {
		t.Fatalf("%d exit codes, want %d", len(exitCodes), len(want))
	}
	for _, c := range exitCodes {
		if want[c.Code] != c.Name {
			t.Errorf("exit code %d is %q, want %q", c.Code, c.Name, want[c.Code])
		}
	}
}

func TestRootExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   ExitCode
		stdout string
		stderr string
	}{
		{name: "no args shows help", args: nil, code: ExitOK, stdout: "Fabric commands:"},
		{name: "help", args: []string{"--help"}, code: ExitOK, stdout: "Other commands:"},
		{name: "help command", args: []string{"help", "validate"}, code: ExitOK, stdout: "--strict"},
		{name: "version flag", args: []string{"--version"}, code: ExitOK, stdout: "fabctl "},
		{name: "unknown command", args: []string{"valdate"}, code: ExitUsage,
			stderr: "Error: unknown command \"valdate\" for \"fabctl\"\n\nDid you mean this?\n\tvalidate\nRun 'fabctl --help' for usage.\n"},
		{name: "unknown command no suggestion", args: []string{"frobnicate"}, code: ExitUsage, stderr: "unknown command \"frobnicate\""},
		{name: "unknown global flag", args: []string{"--jsn", "version"}, code: ExitUsage, stderr: "Did you mean --json?"},
		{name: "unknown command flag", args: []string{"validate", "--statc"}, code: ExitUsage,
			stderr: "Error: unknown flag: --statc\n\nDid you mean --static?\nRun 'fabctl validate --help' for usage.\n"},
		{name: "unknown shorthand", args: []string{"validate", "-x"}, code: ExitUsage, stderr: "unknown shorthand flag: 'x' in -x"},
		{name: "negative link settle", args: []string{"drift", "--link-settle", "-5s", "testdata/validate/errors.fab.hcl"}, code: ExitUsage,
			stderr: "invalid argument \"-5s\" for \"--link-settle\" flag: a wait must not be negative"},
		{name: "extra args", args: []string{"version", "now"}, code: ExitUsage, stderr: "unknown command \"now\" for \"fabctl version\""},
		{name: "completion without shell", args: []string{"completion"}, code: ExitUsage, stderr: "accepts 1 arg(s), received 0"},
		{name: "completion bad shell", args: []string{"completion", "tcsh"}, code: ExitUsage, stderr: "invalid argument \"tcsh\""},
		{name: "validation errors", args: []string{"validate", "--static", "testdata/validate/errors.fab.hcl"}, code: ExitError, stdout: "✘ 4 errors"},
		{name: "missing spec", args: []string{"validate", "testdata/validate/nope"}, code: ExitError, stdout: "Cannot read spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, stdout, stderr := testFactory()
			code := runCLI(f, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if tt.stderr == "" && stderr.Len() > 0 {
				t.Errorf("unexpected stderr:\n%s", stderr)
			}
		})
	}
}

func TestPlainErrorExitsOne(t *testing.T) {
	f, _, _, stderr := testFactory()
	cmd := &cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error { return errors.New("disk on fire") }}
	if code := execCmd(f, cmd, "boom"); code != ExitError {
		t.Errorf("exit code %d, want 1", code)
	}
	if stderr.String() != "Error: disk on fire\n" {
		t.Errorf("stderr %q", stderr)
	}
}

func TestSilentErrorCode(t *testing.T) {
	f, _, _, stderr := testFactory()
	cmd := &cobra.Command{Use: "plan", RunE: func(*cobra.Command, []string) error { return exitWith(ExitChanges) }}
	if code := execCmd(f, cmd, "plan"); code != ExitChanges || stderr.Len() != 0 {
		t.Errorf("exit code %d (want 2), stderr %q", code, stderr)
	}
}

func TestPanicIsInternalError(t *testing.T) {
	for _, debug := range []bool{false, true} {
		f, _, stdout, stderr := testFactory()
		cmd := &cobra.Command{Use: "crash", RunE: func(*cobra.Command, []string) error {
			var m map[string]int
			m["x"]++ // nil map write: a runtime panic
			return nil
		}}
		args := []string{"crash"}
		if debug {
			args = append(args, "--debug")
		}
		if code := execCmd(f, cmd, args...); code != ExitInternal {
			t.Errorf("exit code %d, want 70", code)
		}
		out := stderr.String()
		if !strings.HasPrefix(out, "internal error: assignment to entry in nil map\n") || !strings.Contains(out, "Please report it at "+issuesURL) {
			t.Errorf("stderr:\n%s", out)
		}
		if hasStack := strings.Contains(out, "goroutine "); hasStack != debug {
			t.Errorf("--debug=%v: stack trace shown = %v:\n%s", debug, hasStack, out)
		}
		if stdout.Len() != 0 {
			t.Errorf("stdout %q", stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	fixed := func() BuildInfo {
		return BuildInfo{Version: "v1.2.3", Commit: "0123456789abcdef0123", GoVersion: "go1.99", Platform: "plan9/mips"}
	}
	f, _, stdout, _ := testFactory()
	cmd := NewCmdVersion(f, func(o *VersionOptions) error { o.Build = fixed; return versionRun(o) })
	if code := execCmd(f, cmd, "version"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if got, want := stdout.String(), "fabctl v1.2.3 (commit 0123456789ab, go1.99, plan9/mips)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	f, _, stdout, _ = testFactory()
	cmd = NewCmdVersion(f, func(o *VersionOptions) error { o.Build = fixed; return versionRun(o) })
	execCmd(f, cmd, "version", "--json")
	want := "{\n  \"format_version\": \"1.1\",\n  \"version\": \"v1.2.3\",\n  \"commit\": \"0123456789abcdef0123\",\n  \"go_version\": \"go1.99\",\n  \"platform\": \"plan9/mips\"\n}\n"
	if stdout.String() != want {
		t.Errorf("got\n%s\nwant\n%s", stdout, want)
	}

	// The real build information: defaults when nothing is stamped.
	f, _, stdout, _ = testFactory()
	runCLI(f, "version", "--json")
	var b map[string]string
	if err := json.Unmarshal(stdout.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if b["version"] == "" || b["commit"] == "" || b["go_version"] != runtime.Version() || b["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --json: %v", b)
	}
}

func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "__start_fabctl",
		"zsh":        "#compdef fabctl",
		"fish":       "complete -c fabctl",
		"powershell": "Register-ArgumentCompleter",
	} {
		f, _, stdout, stderr := testFactory()
		if code := runCLI(f, "completion", shell); code != ExitOK || !strings.Contains(stdout.String(), marker) {
			t.Errorf("completion %s: exit %d, stderr %q, output lacks %q", shell, code, stderr, marker)
		}
	}
}

func TestSubcommandList(t *testing.T) {
	f, _, _, _ := testFactory()
	var names []string
	for _, c := range NewCmdRoot(f).Commands() {
		names = append(names, c.Name())
	}
	if got := strings.Join(names, " "); got != "agent apply completion drift fmt force-unlock ibmad import kube plan render show telemetry testbed topology validate verbs version" {
		t.Errorf("commands: %s", got)
	}
}

func TestNormalizeArgs(t *testing.T) {
	f, _, _, _ := testFactory()
	root := NewCmdRoot(f)
	tests := []struct{ in, want string }{
		{"fmt -check -write=false -", "fmt --check --write=false -"},
		{"fmt -recursive -diff dir", "fmt --recursive --diff dir"},
		{"fmt -json", "fmt --json"},
		{"fmt -- -check", "fmt -- -check"},
		{"fmt -h", "fmt -h"},
		{"fmt -nope", "fmt -nope"},
		{"validate -static -var a=1", "validate --static --var a=1"},
		{"nosuch -check", "nosuch -check"},
	}
	for _, tt := range tests {
		if got := strings.Join(normalizeArgs(root, strings.Fields(tt.in)), " "); got != tt.want {
			t.Errorf("normalizeArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIOStreamsEnv(t *testing.T) {
	ios := NewIOStreams(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, []string{"COLUMNS=100", "COLUMNS=120"})
	if ios.IsStdoutTTY() || ios.ColorEnabled() {
		t.Errorf("a strings.Builder is not a terminal")
	}
	if ios.TerminalWidth() != 120 {
		t.Errorf("width %d, want 120 (the last COLUMNS wins)", ios.TerminalWidth())
	}
	ios.SetStdoutTTY(true)
	if !ios.ColorEnabled() {
		t.Errorf("color off on a TTY")
	}
	ios.SetNoColor(true)
	if ios.ColorEnabled() {
		t.Errorf("color on despite no-color")
	}
}

// First run, defect 4: validate is live by default (it reads every device
// and runs traffic), so the root help's validate examples, which a reader
// copies to check a spec, use the offline --static form.
func TestRootExamplesValidateStatic(t *testing.T) {
	f, _, _, _ := testFactory()
	n := 0
	for _, line := range strings.Split(NewCmdRoot(f).Example, "\n") {
		if strings.Contains(line, "fabctl validate") {
			n++
			if !strings.Contains(line, "--static") {
				t.Errorf("root example without --static: %q", line)
			}
		}
	}
	if n == 0 {
		t.Error("no validate example in the root help")
	}
}

// First run, defect 15: flag help has no pflag artifacts: the placeholder
// (the backquoted word of the usage) is a name, not the default value, a
// flag states its default once, and drift's --detailed-exitcode (drift
// always exits 2 on differences) does not show "(default true)".
func TestFlagHelpArtifacts(t *testing.T) {
	f, _, _, _ := testFactory()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(fl)
			if fl.DefValue != "" && name == fl.DefValue {
				t.Errorf("%s --%s: placeholder %q is its default value", c.CommandPath(), fl.Name, name)
			}
			if strings.Contains(usage, "(default") && fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" && fl.DefValue != "0s" && fl.DefValue != "[]" {
				t.Errorf("%s --%s: usage states a default and pflag adds (default %s): %q", c.CommandPath(), fl.Name, fl.DefValue, usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := NewCmdRoot(f)
	walk(root)
	drift, _, err := root.Find([]string{"drift"})
	if err != nil {
		t.Fatal(err)
	}
	if fl := drift.Flags().Lookup("detailed-exitcode"); fl == nil || fl.DefValue != "false" {
		t.Errorf("drift --detailed-exitcode: %+v", fl)
	}
}

// First run, defect 7: the SSH transport's known_hosts hint names
// --insecure-skip-host-key, so every command with --insecure accepts that
// spelling too (telemetry serve exited 64 on it).
func TestInsecureHintFlagAccepted(t *testing.T) {
	f, _, _, _ := testFactory()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("insecure") != nil {
			n++
			if c.Flags().Lookup("insecure-skip-host-key") == nil {
				t.Errorf("%s has --insecure but not --insecure-skip-host-key, which the SSH hint names", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(f))
	if n < 5 {
		t.Errorf("only %d commands with --insecure", n)
	}
}
