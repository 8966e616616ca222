package cli

import (
	"io"

	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/plan"
)

// planViewOptions is view.PlanViewOptions.
func planViewOptions(ios *IOStreams, verbose, payload bool) view.PlanOptions {
	return view.PlanViewOptions(ios, verbose, payload)
}

// writePlan is view.WritePlan.
func writePlan(ios *IOStreams, p *plan.Plan, format string, o view.PlanOptions) error {
	return view.WritePlan(ios, p, format, o)
}

// reportSpecErrors renders the diagnostics of a spec that cannot be
// planned (view.WriteSpecErrors) and returns the exit.
func reportSpecErrors(ios *IOStreams, lf *loadedFabric, format string) error {
	if err := view.WriteSpecErrors(ios, lf, format); err != nil {
		return err
	}
	return exitWith(ExitError)
}

// A loadedFabric's diagnostics are what the views show of a spec
// (view.SpecDiagnostics).
var _ view.SpecDiagnostics = (*loadedFabric)(nil)

func (lf *loadedFabric) DiagnosticCount() int { return len(lf.Diagnostics) }
func (lf *loadedFabric) ErrorCount() int      { return lf.Errors }
func (lf *loadedFabric) WarningCount() int    { return lf.Warnings }

func (lf *loadedFabric) WriteDiagnostics(w io.Writer, width int, color bool) error {
	return lf.writeDiagnostics(w, width, color)
}
