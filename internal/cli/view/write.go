package view

import (
	"fmt"
	"io"

	"github.com/charmbracelet/lipgloss"

	"github.com/fabctl/fabctl/internal/iostreams"
	"github.com/fabctl/fabctl/plan"
)

// PlanViewOptions builds the plan view options for stdout: lipgloss
// styles only when stdout is a colour terminal, plain text otherwise.
func PlanViewOptions(ios *iostreams.IOStreams, verbose, payload bool) PlanOptions {
	o := PlanOptions{Verbose: verbose, ShowPayload: payload}
	if ios.ColorEnabled() {
		st := iostreams.NewStyles(ios.Out, true)
		r := func(s lipgloss.Style) func(string) string { return func(x string) string { return s.Render(x) } }
		o.Style = Style{
			Add: r(st.Added), Change: r(st.Warn.UnsetBold()), Remove: r(st.Removed),
			Disruptive: r(st.Fail), Warn: r(st.Warn), Error: r(st.Fail), Faint: r(st.Faint), Bold: r(st.Bold),
		}
	}
	return o
}

// WritePlan renders a plan in the chosen format on stdout.
func WritePlan(ios *iostreams.IOStreams, p *plan.Plan, format string, o PlanOptions) error {
	switch format {
	case FormatJSON:
		return WriteJSON(ios.Out, PlanJSON(p))
	case FormatMarkdown:
		return WritePlanMarkdown(ios.Out, p, o)
	default:
		return WritePlanHuman(ios.Out, p, o)
	}
}

// Output formats of plan, drift and show.
const (
	FormatHuman    = "human"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

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

// WriteSpecErrors renders the diagnostics of a spec that cannot be
// planned: human to stderr, JSON and markdown to stdout (they are the
// command's one document).
func WriteSpecErrors(ios *iostreams.IOStreams, d SpecDiagnostics, format string) error {
	switch format {
	case FormatJSON:
		return WriteJSON(ios.Out, specErrorsJSON{FormatVersion: plan.FormatVersion, ErrorCount: d.ErrorCount(),
			WarningCount: d.WarningCount(), Diagnostics: d.JSONDiagnostics()})
	case FormatMarkdown:
		return writeSpecErrorsMarkdown(ios.Out, d)
	default:
		return d.WriteDiagnostics(ios.ErrOut, ios.TerminalWidth(), ios.ErrColorEnabled())
	}
}

func writeSpecErrorsMarkdown(w io.Writer, d SpecDiagnostics) error {
	if _, err := fmt.Fprintf(w, "### fabctl plan: the spec has errors\n\n%s, %s: no device was read.\n\n",
		plural(d.ErrorCount(), "error", "errors"), plural(d.WarningCount(), "warning", "warnings")); err != nil {
		return err
	}
	for _, x := range d.JSONDiagnostics() {
		title := x.Summary
		if x.Rule != "" {
			title = x.Rule + ": " + title
		}
		where := ""
		if x.Range != nil {
			where = fmt.Sprintf(" (`%s` line %d)", x.Range.Filename, x.Range.Start.Line)
		}
		if _, err := fmt.Fprintf(w, "- **%s** %s%s\n", x.Severity, title, where); err != nil {
			return err
		}
	}
	return nil
}
