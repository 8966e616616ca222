package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fabctl/fabctl/spec"
)

// FlagError is a usage error: an unknown flag or command, a bad flag value,
// or the wrong arguments. Main prints it with a pointer to --help and exits
// with ExitUsage.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// SilentError ends a command with an exit code after the command has
// already reported why (diagnostics, a failed check). Main prints nothing.
type SilentError struct{ Code ExitCode }

func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// exitWith returns nil for ExitOK and a SilentError otherwise.
func exitWith(code ExitCode) error {
	if code == ExitOK {
		return nil
	}
	return &SilentError{Code: code}
}

// usageArgs wraps a cobra argument check so its failures are usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &FlagError{Err: err}
		}
		return nil
	}
}

// flagErrorFunc turns pflag parse errors into FlagErrors, adding a "did you
// mean" for a misspelled long flag.
func flagErrorFunc(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if s := spec.Suggest(name, names); s != "" {
			msg += fmt.Sprintf("\n\nDid you mean --%s?", s)
		}
	}
	return &FlagError{Err: errors.New(msg)}
}
