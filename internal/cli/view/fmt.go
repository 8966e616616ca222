package view

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/internal/iostreams"
	"github.com/fabctl/fabctl/spec"
)

// FmtFile is fmt's outcome for one file.
type FmtFile struct {
	Path      string `json:"path"`
	Changed   bool   `json:"changed"`
	Written   bool   `json:"written"`
	Diff      string `json:"diff,omitempty"`
	Formatted string `json:"formatted,omitempty"` // stdin only
}

// FmtResult is the outcome of a fmt run.
type FmtResult struct {
	Check       bool
	Stdin       bool
	Files       []FmtFile
	Diagnostics hcl.Diagnostics
	HCLFiles    map[string]*hcl.File // for diagnostic snippets
}

// Failed reports a run that exits 1: a syntax error, or with --check a
// file whose formatting changes.
func (r *FmtResult) Failed() bool {
	if r.Diagnostics.HasErrors() {
		return true
	}
	if r.Check {
		for _, f := range r.Files {
			if f.Changed {
				return true
			}
		}
	}
	return false
}

// FmtView renders the result of fabctl fmt.
type FmtView interface {
	Result(r *FmtResult) error
}

var (
	_ FmtView = (*FmtHuman)(nil)
	_ FmtView = (*FmtJSON)(nil)
)

// FmtHuman lists changed files (and diffs) on stdout, syntax errors on
// stderr; for stdin it writes the formatted text to stdout.
type FmtHuman struct {
	IO   *iostreams.IOStreams
	List bool
}

func (v *FmtHuman) Result(r *FmtResult) error {
	out := v.IO.Out
	st := iostreams.NewStyles(out, v.IO.ColorEnabled())
	for _, f := range r.Files {
		if r.Stdin {
			fmt.Fprint(v.IO.DataOut(), f.Formatted)
		} else if f.Changed && v.List {
			fmt.Fprintln(out, f.Path)
		}
		if f.Diff != "" {
			writeDiff(out, st, f.Diff)
		}
	}
	if len(r.Diagnostics) > 0 {
		return spec.WriteText(v.IO.ErrOut, r.Diagnostics, r.HCLFiles, uint(v.IO.TerminalWidth()), v.IO.ErrColorEnabled())
	}
	return nil
}

func writeDiff(w interface{ Write([]byte) (int, error) }, st iostreams.Styles, diff string) {
	for _, line := range strings.SplitAfter(diff, "\n") {
		if line == "" {
			continue
		}
		body := strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			body = st.Bold.Render(body)
		case strings.HasPrefix(line, "@@"):
			body = st.Hunk.Render(body)
		case strings.HasPrefix(line, "+"):
			body = st.Added.Render(body)
		case strings.HasPrefix(line, "-"):
			body = st.Removed.Render(body)
		}
		fmt.Fprintln(w, body)
	}
}

// FmtJSON writes one JSON document (docs/json-output.md).
type FmtJSON struct{ IO *iostreams.IOStreams }

// FmtJSONDoc is format_version 1.0 of fmt --json.
type FmtJSONDoc struct {
	FormatVersion string                `json:"format_version"`
	Check         bool                  `json:"check"`
	Files         []FmtFile             `json:"files"`
	ChangedCount  int                   `json:"changed_count"`
	ErrorCount    int                   `json:"error_count"`
	Diagnostics   []spec.JSONDiagnostic `json:"diagnostics"`
}

func (v *FmtJSON) Result(r *FmtResult) error {
	doc := FmtJSONDoc{FormatVersion: JSONFormatVersion, Check: r.Check, Files: r.Files, Diagnostics: spec.ToJSON(r.Diagnostics, r.HCLFiles)}
	if doc.Files == nil {
		doc.Files = []FmtFile{}
	}
	for _, f := range r.Files {
		if f.Changed {
			doc.ChangedCount++
		}
	}
	for _, d := range r.Diagnostics {
		if d.Severity == hcl.DiagError {
			doc.ErrorCount++
		}
	}
	return WriteJSON(v.IO.Out, doc)
}
