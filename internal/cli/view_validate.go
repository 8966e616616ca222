package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/ibreadback"
	"github.com/fabctl/fabctl/validate/readback"
)

// ValidateView renders the result of fabctl validate.
type ValidateView interface {
	Result(r *validateResult) error
}

var (
	_ ValidateView = (*ValidateHuman)(nil)
	_ ValidateView = (*ValidateJSON)(nil)
)

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
	if r.Readback != nil {
		writeReadback(out, st, r.Readback)
	}
	if r.Links != nil {
		writeLinks(out, st, r.Links)
	}
	if r.IB != nil {
		writeIB(out, st, r.IB)
	}
	if r.Traffic != nil || r.TrafficSkipped != "" {
		writeTraffic(out, st, r.Traffic, r.TrafficSkipped)
	}
	if err := v.staticLine(out, st, r); err != nil {
		return err
	}
	return liveVerdict(out, st, r)
}

// liveVerdict is the last line when live stages ran: the stages' outcome
// and what the exit status means.
func liveVerdict(out io.Writer, st styles, r *validateResult) error {
	if r.Readback == nil && r.Traffic == nil && r.IB == nil && r.Links == nil {
		return nil
	}
	var parts []string
	if rb := r.Readback; rb != nil && rb.Error != "" {
		parts = append(parts, "read-back not run (credentials)")
	} else if rb != nil && rb.Skipped == "" {
		t := fmt.Sprintf("read-back %d/%d devices match", rb.Match, len(rb.Devices))
		if rb.NotCarried > 0 {
			t += fmt.Sprintf(", %d cannot carry the intent", rb.NotCarried)
		}
		if rb.Accepted > 0 {
			t += fmt.Sprintf(" (%d with settings accepted, not in effect)", rb.Accepted)
		}
		if rb.Unmanaged > 0 {
			t += fmt.Sprintf(" (%d with unmanaged settings, not checked)", rb.Unmanaged)
		}
		parts = append(parts, t)
	}
	if l := r.Links; l != nil {
		t := fmt.Sprintf("links %s", plural(len(l.Findings), "finding", "findings"))
		if n := l.NotReadEnds(); n > 0 {
			t += fmt.Sprintf(" (%d of %d link ends not read)", n, len(l.EndList))
		}
		parts = append(parts, t)
	}
	if ib := r.IB; ib != nil && ib.Skipped == "" {
		if ib.Error != "" {
			parts = append(parts, "InfiniBand fabric not read")
		} else {
			parts = append(parts, fmt.Sprintf("InfiniBand %s", plural(len(ib.Findings), "finding", "findings")))
		}
	}
	pass, fail, notRun := trafficCounts(r.Traffic)
	if r.Traffic != nil {
		t := fmt.Sprintf("traffic %d passed, %d failed", pass, fail)
		if notRun > 0 {
			t += fmt.Sprintf(", %d not run", notRun)
		}
		parts = append(parts, t)
	}
	summary := strings.Join(parts, "; ")
	var err error
	switch r.Code {
	case ExitOK:
		_, err = fmt.Fprintf(out, "%s %s\n", st.OK.Render("✔ live fabric valid:"), summary)
	case ExitNothingTested:
		_, err = fmt.Fprintf(out, "%s %s: nothing failed, but not everything declared was tested\n", st.Warn.Render("! not proven:"), summary)
	case ExitMismatch:
		_, err = fmt.Fprintf(out, "%s %s: the fabric does not match the spec and no change fixes it\n", st.Fail.Render("✘ live fabric invalid:"), summary)
	default:
		_, err = fmt.Fprintf(out, "%s %s\n", st.Fail.Render("✘ live fabric invalid:"), summary)
	}
	return err
}

// staticLine is the static stage's summary line.
func (v *ValidateHuman) staticLine(out io.Writer, st styles, r *validateResult) error {
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
	// Live stages (absent with --static or a spec with errors).
	Readback   *readback.Result   `json:"readback,omitempty"`
	InfiniBand *ibreadback.Result `json:"infiniband,omitempty"`
	// Links is the Ethernet cabling and link stage.
	Links   *linktruth.Report `json:"links,omitempty"`
	Traffic *trafficJSON      `json:"traffic,omitempty"`
	// ExitCode is the exit status (0 pass, 1 fail, 5 not everything tested).
	ExitCode int `json:"exit_code"`
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
		Readback:        r.Readback,
		InfiniBand:      r.IB,
		Links:           r.Links,
		Traffic:         trafficDoc(r),
		ExitCode:        int(r.Code),
	})
}

func trafficDoc(r *validateResult) *trafficJSON {
	if r.Traffic == nil && r.TrafficSkipped == "" {
		return nil
	}
	return toTrafficJSON(r.Traffic, r.TrafficSkipped)
}
