// Package arguments holds the checks of the flags several commands share,
// written once (Terraform's internal/command/arguments beside its
// commands and views): plan and drift take the same selection, variables,
// parallelism and output format; apply, validate, show and render some of
// them. A command keeps its own flag help; an error here is a usage error
// (the CLI exits 64 with the command's usage).
package arguments

import (
	"fmt"
	"path"
	"strings"
)

// Output formats of plan, drift and show.
const (
	FormatHuman    = "human"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Parallelism checks --parallelism.
func Parallelism(n int) error {
	if n < 1 {
		return fmt.Errorf("invalid --parallelism %d: want 1 or more", n)
	}
	return nil
}

// Globs checks the device patterns of a flag (--target, --exclude,
// --device): names, addresses or role:NAME, as path.Match reads them.
func Globs(flag string, globs []string) error {
	for _, g := range globs {
		if strings.TrimSpace(g) == "" {
			return fmt.Errorf("invalid %s %q: want a device name, address or role:NAME glob", flag, g)
		}
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("invalid %s %q: %v", flag, g, err)
		}
	}
	return nil
}

// Selection checks --target and --exclude.
func Selection(targets, excludes []string) error {
	if err := Globs("--target", targets); err != nil {
		return err
	}
	return Globs("--exclude", excludes)
}

// Vars checks --var assignments: name=value.
func Vars(vars []string) error {
	for _, v := range vars {
		if k, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("invalid --var %q: want name=value, e.g. --var leaf_count=8", v)
		}
	}
	return nil
}

// Format reconciles --format (set: given on the command line) with the
// global --json, and returns the format to write.
func Format(format string, set, json bool) (string, error) {
	switch format {
	case FormatHuman, FormatJSON, FormatMarkdown:
	default:
		return "", fmt.Errorf("invalid --format %q: want human, json or markdown", format)
	}
	if json {
		if set && format != FormatJSON {
			return "", fmt.Errorf("--json and --format %s conflict: give one", format)
		}
		return FormatJSON, nil
	}
	return format, nil
}

// Plan are the arguments plan and drift share.
type Plan struct {
	Parallelism       int
	Targets, Excludes []string
	Vars              []string
	// Format is --format, FormatSet whether it was given, JSON the
	// global --json.
	Format    string
	FormatSet bool
	JSON      bool
}

// Check checks plan's and drift's shared flags and returns the output
// format.
func (a Plan) Check() (string, error) {
	format, err := Format(a.Format, a.FormatSet, a.JSON)
	if err != nil {
		return "", err
	}
	if err := Parallelism(a.Parallelism); err != nil {
		return "", err
	}
	if err := Selection(a.Targets, a.Excludes); err != nil {
		return "", err
	}
	return format, Vars(a.Vars)
}
