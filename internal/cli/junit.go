package cli

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
	"github.com/hashicorp/hcl/v2"
)

// JUnit XML as CI systems read it (GitHub Actions test reporters, GitLab
// `artifacts:reports:junit`): one test suite per validate stage, one test
// case per lint rule (plus one for loading the spec), a failure per error
// finding (and per warning under --strict); the live stages add a case per
// device read back and per traffic test pair (validate_live.go). Written with encoding/xml: the
// format is small and has no maintained Go library worth a dependency.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name    string      `xml:"name,attr"`
	Tests   int         `xml:"tests,attr"`
	Fails   int         `xml:"failures,attr"`
	Skipped int         `xml:"skipped,attr"`
	Cases   []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	Failures  []junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped  `xml:"skipped,omitempty"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the static stage's findings as JUnit XML to path.
func writeJUnit(path string, res *validateResult) error {
	byRule := map[string][]*hcl.Diagnostic{}
	for _, d := range res.Diagnostics {
		id := "load"
		if info := spec.Info(d); info != nil && info.Rule != "" {
			id = info.Rule
		}
		byRule[id] = append(byRule[id], d)
	}
	suite := junitSuite{Name: "fabctl validate: static (" + res.Path + ")"}
	// One failure per test case (many JUnit consumers show only a case's
	// first): a rule with several failing findings gets a case per finding,
	// named by its place in the spec.
	add := func(id, title string) {
		name := id
		if title != "" {
			name = id + ": " + title
		}
		var notes []string
		var fails []junitFailure
		var where []string
		for _, d := range byRule[id] {
			loc := ""
			if d.Subject != nil {
				loc = fmt.Sprintf("%s:%d:%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
			}
			text := loc + d.Summary + "\n" + d.Detail
			if d.Severity == hcl.DiagError || res.Strict {
				fails = append(fails, junitFailure{Message: loc + d.Summary, Type: severityName(d.Severity), Text: text})
				where = append(where, strings.TrimSuffix(loc, ": "))
			} else {
				notes = append(notes, "warning: "+text)
			}
		}
		out := strings.Join(notes, "\n\n")
		switch {
		case len(fails) == 0:
			c := junitCase{Name: name, Classname: "fabctl.static", SystemOut: out}
			if why, ok := res.NotApplicable[id]; ok && out == "" {
				c.Skipped = &junitSkipped{Message: "not applicable: " + why}
			}
			suite.add(c)
		case len(fails) == 1:
			suite.add(junitCase{Name: name, Classname: "fabctl.static", Failures: fails, SystemOut: out})
		default:
			for i, f := range fails {
				c := junitCase{Name: fmt.Sprintf("%s (%d of %d%s)", name, i+1, len(fails), prefixed(": ", where[i])), Classname: "fabctl.static", Failures: []junitFailure{f}}
				if i == 0 {
					c.SystemOut = out
				}
				suite.add(c)
			}
		}
	}
	add("load", "the spec loads (syntax, schema, references)")
	loaded := len(byRule["load"]) == 0 || !hasErrors(byRule["load"])
	for _, r := range lint.Rules() {
		if !loaded {
			// The rules did not run: say so rather than report a pass.
			suite.add(junitCase{Name: r.ID + ": " + r.Title, Classname: "fabctl.static", Skipped: &junitSkipped{Message: "the spec did not load, so the rule did not run"}})
			continue
		}
		add(r.ID, r.Title)
	}
	doc := junitSuites{Name: "fabctl validate", Tests: suite.Tests, Fails: suite.Fails, Suites: []junitSuite{suite}}
	for _, ls := range liveJUnitSuites(res) {
		doc.Suites = append(doc.Suites, ls)
		doc.Tests += ls.Tests
		doc.Fails += ls.Fails
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644, safefile.Report)
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func hasErrors(ds []*hcl.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == hcl.DiagError {
			return true
		}
	}
	return false
}

func severityName(s hcl.DiagnosticSeverity) string {
	if s == hcl.DiagError {
		return "error"
	}
	return "warning"
}

// prefixed is p+s, or "" when s is empty.
func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
