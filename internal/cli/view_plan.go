package cli

import (
	"fmt"
	"io"

	"github.com/charmbracelet/lipgloss"

	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/plan"
)

// planViewOptions builds the plan view options for stdout: lipgloss
// styles only when stdout is a colour terminal, plain text otherwise.
func planViewOptions(ios *IOStreams, verbose, payload bool) view.PlanOptions {
	o := view.PlanOptions{Verbose: verbose, ShowPayload: payload}
	if ios.ColorEnabled() {
		st := newStyles(ios.Out, true)
		r := func(s lipgloss.Style) func(string) string { return func(x string) string { return s.Render(x) } }
		o.Style = view.Style{
			Add: r(st.Added), Change: r(st.Warn.UnsetBold()), Remove: r(st.Removed),
			Disruptive: r(st.Fail), Warn: r(st.Warn), Error: r(st.Fail), Faint: r(st.Faint), Bold: r(st.Bold),
		}
	}
	return o
}

// writePlan renders a plan in the chosen format on stdout.
func writePlan(ios *IOStreams, p *plan.Plan, format string, o view.PlanOptions) error {
	switch format {
	case formatJSON:
		doc := view.PlanJSON(p)
		return view.WriteJSON(ios.Out, doc)
	case formatMarkdown:
		return view.WritePlanMarkdown(ios.Out, p, o)
	default:
		return view.WritePlanHuman(ios.Out, p, o)
	}
}

// specErrorsJSON is the document plan --json writes when the spec has
// errors: no devices were read.
type specErrorsJSON struct {
	FormatVersion string `json:"format_version"`
	SpecValid     bool   `json:"spec_valid"`
	Complete      bool   `json:"complete"`
	HasChanges    bool   `json:"has_changes"`
	ErrorCount    int    `json:"error_count"`
	WarningCount  int    `json:"warning_count"`
	Diagnostics   any    `json:"diagnostics"`
}

// reportSpecErrors renders the diagnostics of a spec that cannot be
// planned and returns the exit: human to stderr, JSON and markdown to
// stdout (they are the command's one document).
func reportSpecErrors(ios *IOStreams, lf *loadedFabric, format string) error {
	switch format {
	case formatJSON:
		if err := view.WriteJSON(ios.Out, specErrorsJSON{FormatVersion: plan.FormatVersion, ErrorCount: lf.Errors,
			WarningCount: lf.Warnings, Diagnostics: lf.JSONDiagnostics()}); err != nil {
			return err
		}
	case formatMarkdown:
		if err := writeSpecErrorsMarkdown(ios.Out, lf); err != nil {
			return err
		}
	default:
		if err := lf.writeDiagnostics(ios.ErrOut, ios.TerminalWidth(), ios.ErrColorEnabled()); err != nil {
			return err
		}
	}
	return exitWith(ExitError)
}

func writeSpecErrorsMarkdown(w io.Writer, lf *loadedFabric) error {
	if _, err := fmt.Fprintf(w, "### fabctl plan: the spec has errors\n\n%s, %s: no device was read.\n\n",
		plural(lf.Errors, "error", "errors"), plural(lf.Warnings, "warning", "warnings")); err != nil {
		return err
	}
	for _, d := range lf.JSONDiagnostics() {
		title := d.Summary
		if d.Rule != "" {
			title = d.Rule + ": " + title
		}
		where := ""
		if d.Range != nil {
			where = fmt.Sprintf(" (`%s` line %d)", d.Range.Filename, d.Range.Start.Line)
		}
		if _, err := fmt.Fprintf(w, "- **%s** %s%s\n", d.Severity, title, where); err != nil {
			return err
		}
	}
	return nil
}
