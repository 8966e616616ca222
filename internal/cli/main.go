package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// issuesURL is where internal errors should be reported.
const issuesURL = "https://github.com/fabctl/fabctl/issues"

// Main runs fabctl with the process's streams and environment and returns
// the exit code. cmd/fabctl/main.go is only os.Exit(int(Main(...))).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	env := os.Environ()
	return Run(NewFactory(NewIOStreams(stdin, stdout, stderr, env), env), args)
}

// Run runs the command line args (without the program name) against f.
func Run(f *Factory, args []string) ExitCode {
	return run(f, func() *cobra.Command { return NewCmdRoot(f) }, args)
}

// run builds the root and executes args. A panic in a command is reported
// as an internal error, not a Go stack dump (unless --debug), and exits
// with ExitError.
func run(f *Factory, newRoot func() *cobra.Command, args []string) (code ExitCode) {
	defer f.IOStreams.Flush()
	defer startMemoryGuard(f)()
	defer func() {
		if r := recover(); r != nil {
			code = reportPanic(f, r, debug.Stack())
		}
	}()
	root := newRoot()
	root.SetArgs(normalizeArgs(root, args))
	cmd, err := root.ExecuteC()
	if !f.Global.JSON && wantsJSON(args) {
		f.Global.JSON = true // a usage error stops parsing before --json is read
	}
	return handleError(f, cmd, err)
}

// wantsJSON reports whether a command line asks for JSON (--json, or
// --format json) before any "--".
func wantsJSON(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--json", a == "--json=true", a == "--format=json":
			return true
		case a == "--format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// usageErrorJSON is the document a usage error writes on stdout under
// --json (docs/json-output.md#usage-errors): scripts parsing stdout get
// JSON whatever went wrong with the command line.
type usageErrorJSON struct {
	FormatVersion string `json:"format_version"`
	OK            bool   `json:"ok"`
	ExitCode      int    `json:"exit_code"`
	ErrorKind     string `json:"error_kind"`
	Command       string `json:"command"`
	Error         string `json:"error"`
}

func reportPanic(f *Factory, r any, stack []byte) ExitCode {
	w := f.IOStreams.ErrOut
	b := readBuildInfo()
	fmt.Fprintf(w, "internal error: %v\n\n", r)
	fmt.Fprintf(w, "This is a bug in fabctl %s (%s, %s). Please report it at %s\n", b.Version, b.Platform, b.GoVersion, issuesURL)
	fmt.Fprintf(w, "with the command you ran and this message.\n")
	if f.Global.Debug {
		fmt.Fprintf(w, "\n%s", stack)
	} else {
		fmt.Fprintf(w, "Run the command again with --debug to include a stack trace.\n")
	}
	return ExitInternal
}

// handleError prints a command's error, if it has not been reported
// already, and maps it to an exit code.
func handleError(f *Factory, cmd *cobra.Command, err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	w := f.IOStreams.ErrOut
	var silent *SilentError
	if errors.As(err, &silent) {
		return silent.Code
	}
	var flagErr *FlagError
	if errors.As(err, &flagErr) || isCobraUsageError(err) {
		fmt.Fprintf(w, "Error: %s\n", strings.TrimRight(err.Error(), "\n"))
		path := "fabctl"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", path)
		if f.Global.JSON {
			_ = writeJSON(f.IOStreams.Out, usageErrorJSON{FormatVersion: jsonFormatVersion, ExitCode: int(ExitUsage),
				ErrorKind: "usage", Command: path, Error: strings.TrimRight(err.Error(), "\n")})
		}
		return ExitUsage
	}
	fmt.Fprintf(w, "Error: %s\n", strings.TrimRight(err.Error(), "\n"))
	return ExitError
}

// isCobraUsageError recognises the usage errors cobra returns as plain
// errors (it has no types for them).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "required flag(s) ", "if any flags in the group ", "at least one of the flags in the group "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// normalizeArgs accepts Terraform-style single-dash long flags (fmt
// -check, -write=false): "-name" and "-name=value" become "--name..." when
// name is a long flag of the command being run. pflag would otherwise read
// "-check" as the shorthands -c -h -e -c -k and fail, so this changes only
// command lines that would be errors.
func normalizeArgs(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return args
	}
	known := func(name string) bool {
		return cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && known(name) {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}
