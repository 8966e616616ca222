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
	add := func(id, title string) {
		c := junitCase{Name: id, Classname: "fabctl.static"}
		if title != "" {
			c.Name = id + ": " + title
		}
		var notes []string
		for _, d := range byRule[id] {
			loc := ""
			if d.Subject != nil {
				loc = fmt.Sprintf("%s:%d:%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
			}
			text := loc + d.Summary + "\n" + d.Detail
			if d.Severity == hcl.DiagError || res.Strict {
				c.Failures = append(c.Failures, junitFailure{Message: loc + d.Summary, Type: severityName(d.Severity), Text: text})
			} else {
				notes = append(notes, "warning: "+text)
			}
		}
		c.SystemOut = strings.Join(notes, "\n\n")
		suite.Cases = append(suite.Cases, c)
		suite.Tests++
		if len(c.Failures) > 0 {
			suite.Fails++
		}
	}
	add("load", "the spec loads (syntax, schema, references)")
	loaded := len(byRule["load"]) == 0 || !hasErrors(byRule["load"])
	for _, r := range lint.Rules() {
		add(r.ID, r.Title)
		if !loaded {
			// The rules did not run: say so rather than report a pass.
			suite.Cases[len(suite.Cases)-1].Skipped = &junitSkipped{Message: "the spec did not load, so the rule did not run"}
			suite.Skipped++
		}
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
