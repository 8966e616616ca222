package cli

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// ValidateView renders the result of fabctl validate.
type ValidateView interface {
	Result(r *validateResult) error
}

var (
	_ ValidateView = (*ValidateHuman)(nil)
	_ ValidateView = (*ValidateJSON)(nil)
)

// staticOnlyNote is printed when validate runs without --static: this
// build has no live stages, and the output must not suggest they passed.
var staticOnlyNote = []string{
	"Note: only the static stage ran (load and lint). The read-back and traffic",
	"stages need device access and come with later fabctl commands; nothing was",
	"checked on the live fabric. Pass --static to run the static stage alone.",
}

// ValidateHuman writes diagnostics with source snippets, then one summary
// line.
type ValidateHuman struct{ IO *IOStreams }

func (v *ValidateHuman) Result(r *validateResult) error {
	out := v.IO.Out
	st := newStyles(out, v.IO.ColorEnabled())
	if len(r.Diagnostics) > 0 {
		if err := spec.WriteText(out, r.Diagnostics, r.Files, uint(v.IO.TerminalWidth()), v.IO.ColorEnabled()); err != nil {
			return err
		}
	}
	if !r.Static {
		for _, line := range staticOnlyNote {
			fmt.Fprintln(out, st.Faint.Render(line))
		}
	}
	counts := []string{countStyled(st, r.Errors, "error", "errors", true), countStyled(st, r.Warnings, "warning", "warnings", false)}
	tail := strings.Join(counts, ", ")
	if r.Suppressed > 0 {
		tail += fmt.Sprintf(" (%d suppressed)", r.Suppressed)
	}
	switch {
	case r.Valid:
		objs := ""
		if s := r.Summary; s != nil {
			objs = strings.Join([]string{"1 fabric", plural(s.Switches, "switch", "switches"), plural(s.Hosts, "host", "hosts"), plural(s.Links, "link", "links")}, ", ") + "; "
		}
		_, err := fmt.Fprintf(out, "%s %s%s\n", st.OK.Render("✔ spec valid:"), objs, tail)
		return err
	case r.Errors == 0 && r.Strict:
		_, err := fmt.Fprintf(out, "%s %s; --strict fails on warnings\n", st.Fail.Render("✘"), tail)
		return err
	default:
		_, err := fmt.Fprintf(out, "%s %s\n", st.Fail.Render("✘"), tail)
		return err
	}
}

func countStyled(st styles, n int, one, many string, isErr bool) string {
	s := plural(n, one, many)
	switch {
	case n == 0:
		return s
	case isErr:
		return st.Fail.Render(s)
	default:
		return st.Warn.Render(s)
	}
}

// ValidateJSON writes one JSON document (docs/json-output.md).
type ValidateJSON struct{ IO *IOStreams }

// validateJSONDoc is format_version 1.0 of validate --json.
type validateJSONDoc struct {
	FormatVersion   string                `json:"format_version"`
	Valid           bool                  `json:"valid"`
	Strict          bool                  `json:"strict"`
	Stages          []string              `json:"stages"`
	ErrorCount      int                   `json:"error_count"`
	WarningCount    int                   `json:"warning_count"`
	SuppressedCount int                   `json:"suppressed_count"`
	Summary         *specSummary          `json:"summary"`
	Diagnostics     []spec.JSONDiagnostic `json:"diagnostics"`
}

func (v *ValidateJSON) Result(r *validateResult) error {
	return writeJSON(v.IO.Out, validateJSONDoc{
		FormatVersion:   jsonFormatVersion,
		Valid:           r.Valid,
		Strict:          r.Strict,
		Stages:          r.Stages,
		ErrorCount:      r.Errors,
		WarningCount:    r.Warnings,
		SuppressedCount: r.Suppressed,
		Summary:         r.Summary,
		Diagnostics:     spec.ToJSON(r.Diagnostics, r.Files),
	})
}
