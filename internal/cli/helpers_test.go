package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

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

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
