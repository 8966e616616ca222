package spec

import (
	"bytes"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/internal/termsafe"
)

// DiagInfo is extra information lint findings carry in hcl.Diagnostic.Extra.
type DiagInfo struct {
	Rule      string // rule id, e.g. "QOS-1"
	Address   string // the object the finding is about, e.g. "switch.leaf1" or "link.a:x--b:y"
	Reference string // where the rule comes from (paper, vendor document)
	// NoIgnore marks a finding lint_ignore cannot silence (the device
	// refuses the value whatever the reason).
	NoIgnore bool
	// Secret marks a diagnostic whose subject is a secret written into the
	// spec: renderers mask the subject's text in snippets.
	Secret bool
}

// Info returns the DiagInfo of a diagnostic, or nil.
func Info(d *hcl.Diagnostic) *DiagInfo {
	info, _ := hcl.DiagnosticExtra[*DiagInfo](d)
	return info
}

// suggest returns the candidate closest to name when it is close enough to
// be a likely typo (Levenshtein distance < 3, as hcl's own suggestions).
func suggest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(name, c, nil); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Suggest is suggest for other packages (lint, CLI flags).
func Suggest(name string, candidates []string) string { return suggest(name, candidates) }

// SortDiagnostics orders diagnostics by file, line, column, then severity
// (errors first) and summary, so output is stable.
func SortDiagnostics(diags hcl.Diagnostics) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i], diags[j]
		ra, rb := rangeOf(a), rangeOf(b)
		if ra.Filename != rb.Filename {
			return ra.Filename < rb.Filename
		}
		if ra.Start.Byte != rb.Start.Byte {
			return ra.Start.Byte < rb.Start.Byte
		}
		if a.Severity != b.Severity {
			return a.Severity < b.Severity
		}
		return a.Summary < b.Summary
	})
}

func rangeOf(d *hcl.Diagnostic) hcl.Range {
	if d.Subject != nil {
		return *d.Subject
	}
	return hcl.Range{}
}

// WriteText renders diagnostics the way hcl does (source snippet with the
// subject underlined), with the rule id before the summary and the rule's
// source after the detail.
func WriteText(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File, width uint, color bool) error {
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		c := *d
		if info := Info(d); info != nil {
			if info.Rule != "" {
				c.Summary = info.Rule + ": " + c.Summary
			}
			if info.Reference != "" {
				c.Detail = strings.TrimSpace(c.Detail + "\n\nSource: " + info.Reference)
			}
			if info.Rule != "" && !info.NoIgnore {
				c.Detail += "\nSilence with lint_ignore = { \"" + info.Rule + "\" = \"<reason>\" } on the block."
			}
		}
		c.Summary, c.Detail = EscapeControl(c.Summary), EscapeControl(c.Detail)
		out = append(out, &c)
	}
	files, out = escapeSnippets(files, out)
	return hcl.NewDiagnosticTextWriter(w, files, width, color).WriteDiagnostics(out)
}

// EscapeControl makes s safe to print on a terminal (internal/termsafe):
// control characters (C0 but newline and tab, DEL, C1) and bidirectional
// formatting characters are written as \xNN / \uNNNN, so a spec or a
// device's answer cannot move the cursor, retitle the window, clear the
// screen or reorder what is shown.
func EscapeControl(s string) string { return termsafe.Escape(s) }

func hasControl(s string) bool {
	for _, r := range s {
		if termsafe.IsUnsafe(r) {
			return true
		}
	}
	return false
}

func isControl(r rune) bool { return termsafe.IsUnsafe(r) }

func escapeRune(r rune) string { return termsafe.Rune(r) }

// escapeSnippets returns the files with control characters escaped (as
// EscapeControl) and the diagnostics' ranges moved to match, so the
// snippets hcl prints show the escapes and still underline the subject.
func escapeSnippets(files map[string]*hcl.File, diags hcl.Diagnostics) (map[string]*hcl.File, hcl.Diagnostics) {
	type shift struct{ byte, line, col, delta int } // at byte (old), on line: delta more bytes/columns after it
	shifts := map[string][]shift{}
	var out map[string]*hcl.File
	for name, f := range files {
		if f == nil || !hasControl(string(f.Bytes)) {
			continue
		}
		if out == nil {
			out = make(map[string]*hcl.File, len(files))
			for k, v := range files {
				out[k] = v
			}
		}
		var b []byte
		line, col := 1, 1
		src := f.Bytes
		for i := 0; i < len(src); {
			r, n := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && n <= 1 {
				b = append(b, src[i])
				i, col = i+1, col+1
				continue
			}
			if isControl(r) && !(r == '\r' && i+1 < len(src) && src[i+1] == '\n') {
				e := escapeRune(r)
				shifts[name] = append(shifts[name], shift{byte: i, line: line, col: col, delta: len(e) - n})
				b = append(b, e...)
			} else {
				b = append(b, src[i:i+n]...)
			}
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i += n
		}
		c := *f
		c.Bytes = b
		out[name] = &c
	}
	if out == nil {
		return files, diags
	}
	move := func(p hcl.Pos, name string) hcl.Pos {
		for _, s := range shifts[name] {
			if s.byte < p.Byte {
				p.Byte += s.delta
				if s.line == p.Line {
					p.Column += s.delta
				}
			}
		}
		return p
	}
	moveRange := func(r *hcl.Range) *hcl.Range {
		if r == nil || shifts[r.Filename] == nil {
			return r
		}
		c := *r
		c.Start, c.End = move(r.Start, r.Filename), move(r.End, r.Filename)
		return &c
	}
	moved := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		c := *d
		c.Subject, c.Context = moveRange(d.Subject), moveRange(d.Context)
		moved[i] = &c
	}
	return out, moved
}

// JSONDiagnostic is one diagnostic in fabctl's JSON output (the shape of
// Terraform's machine-readable diagnostics plus the lint rule fields).
type JSONDiagnostic struct {
	Severity  string       `json:"severity"`
	Summary   string       `json:"summary"`
	Detail    string       `json:"detail,omitempty"`
	Rule      string       `json:"rule,omitempty"`
	Address   string       `json:"address,omitempty"`
	Reference string       `json:"reference,omitempty"`
	Range     *JSONRange   `json:"range,omitempty"`
	Snippet   *JSONSnippet `json:"snippet,omitempty"`
}

// JSONRange is a source range.
type JSONRange struct {
	Filename string  `json:"filename"`
	Start    JSONPos `json:"start"`
	End      JSONPos `json:"end"`
}

// JSONPos is a position: 1-based line and column, 0-based byte offset.
type JSONPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// JSONSnippet is the source around a diagnostic.
type JSONSnippet struct {
	Context              string `json:"context,omitempty"`
	Code                 string `json:"code"`
	StartLine            int    `json:"start_line"`
	HighlightStartOffset int    `json:"highlight_start_offset"`
	HighlightEndOffset   int    `json:"highlight_end_offset"`
}

// ToJSON converts diagnostics to their JSON form.
func ToJSON(diags hcl.Diagnostics, files map[string]*hcl.File) []JSONDiagnostic {
	out := make([]JSONDiagnostic, 0, len(diags))
	for _, d := range diags {
		j := JSONDiagnostic{Summary: d.Summary, Detail: d.Detail}
		switch d.Severity {
		case hcl.DiagError:
			j.Severity = "error"
		case hcl.DiagWarning:
			j.Severity = "warning"
		default:
			j.Severity = "info"
		}
		if info := Info(d); info != nil {
			j.Rule, j.Address, j.Reference = info.Rule, info.Address, info.Reference
		}
		if d.Subject != nil {
			r := *d.Subject
			j.Range = &JSONRange{Filename: r.Filename,
				Start: JSONPos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
				End:   JSONPos{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte}}
			if f := files[r.Filename]; f != nil {
				j.Snippet = snippet(f, r)
			}
		}
		out = append(out, j)
	}
	return out
}

func snippet(f *hcl.File, r hcl.Range) *JSONSnippet {
	src := f.Bytes
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return nil
	}
	start := bytes.LastIndexByte(src[:r.Start.Byte], '\n') + 1
	end := r.End.Byte
	if end < start {
		end = start
	}
	if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(src)
	}
	// A subject that ends at a line start covers no part of that line.
	code := strings.TrimRight(string(src[start:end]), "\r")
	s := &JSONSnippet{
		Code:                 code,
		StartLine:            r.Start.Line,
		HighlightStartOffset: r.Start.Byte - start,
		HighlightEndOffset:   r.End.Byte - start,
	}
	if s.HighlightEndOffset > len(code) {
		s.HighlightEndOffset = len(code)
	}
	if nav, ok := f.Nav.(interface{ ContextString(int) string }); ok {
		s.Context = nav.ContextString(r.Start.Byte)
	}
	return s
}
