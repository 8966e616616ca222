package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// testEnv is the environment of a test factory: nothing from the real
// process leaks in (no NO_COLOR, FAB_VAR_*, CI from the developer's shell).
func testFactory(env ...string) (*Factory, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	ios, in, out, errOut := TestIOStreams()
	return NewFactory(ios, env), in, out, errOut
}

// execCmd runs one command under a bare root (global flags, error
// handling) and returns the exit code Main would return.
func execCmd(f *Factory, cmd *cobra.Command, args ...string) ExitCode {
	return run(f, func() *cobra.Command {
		root := newRootCommand(f)
		root.AddCommand(cmd)
		return root
	}, args)
}

// runCLI runs a full fabctl command line.
func runCLI(f *Factory, args ...string) ExitCode { return Run(f, args) }

// golden compares got with testdata file path, rewriting it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(want)), B: difflib.SplitLines(string(got)),
			FromFile: "want " + filepath.Base(path), ToFile: "got", Context: 3,
		})
		t.Errorf("%s differs (run go test ./internal/cli -update and review the diff):\n%s", path, diff)
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
