package lint

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

// expectRE matches "# expect: QOS-1" or "# expect: QOS-1, MTU-1" at the end
// of a line of a testdata spec: each listed rule must report a finding
// whose subject starts on that line.
var expectRE = regexp.MustCompile(`#\s*expect:\s*([A-Z0-9, -]+)\s*$`)

func expectations(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		m := expectRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, id := range strings.Split(m[1], ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, fmt.Sprintf("%s@%d", id, i+1))
			}
		}
	}
	sort.Strings(out)
	return out
}

func findings(t *testing.T, path string) []string {
	t.Helper()
	s, diags := spec.Load(path, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		var b strings.Builder
		_ = spec.WriteText(&b, diags, s.Files, 120, false)
		t.Fatalf("%s does not load:\n%s", path, b.String())
	}
	res := Run(s)
	var out []string
	for _, d := range res.Diagnostics {
		id := "LOAD"
		if info := spec.Info(d); info != nil && info.Rule != "" {
			id = info.Rule
		}
		line := 0
		if d.Subject != nil {
			line = d.Subject.Start.Line
			if filepath.Clean(d.Subject.Filename) != filepath.Clean(path) {
				line = -1
			}
		}
		out = append(out, fmt.Sprintf("%s@%d", id, line))
	}
	sort.Strings(out)
	return out
}

// TestRuleCases runs testdata/rules/<RULE>/{pass,fail}*.fab.hcl: a pass
// file must lint clean, a fail file must yield exactly the findings its
// "# expect:" comments list, on those lines.
func TestRuleCases(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range Rules() {
		ids[r.ID] = true
	}
	dirs, err := filepath.Glob("testdata/rules/*")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string][2]bool{}
	for _, dir := range dirs {
		rule := filepath.Base(dir)
		if !ids[rule] {
			t.Errorf("testdata/rules/%s: no such rule", rule)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.fab.hcl"))
		for _, f := range files {
			base := filepath.Base(f)
			cov := covered[rule]
			switch {
			case strings.HasPrefix(base, "pass"):
				cov[0] = true
			case strings.HasPrefix(base, "fail"):
				cov[1] = true
			default:
				t.Errorf("%s: name test files pass*.fab.hcl or fail*.fab.hcl", f)
				continue
			}
			covered[rule] = cov
			t.Run(rule+"/"+base, func(t *testing.T) {
				want := expectations(t, f)
				if strings.HasPrefix(base, "fail") {
					hasRule := false
					for _, w := range want {
						if strings.HasPrefix(w, rule+"@") {
							hasRule = true
						}
					}
					if !hasRule {
						t.Fatalf("%s expects no %s finding: a fail case must", f, rule)
					}
				}
				got := findings(t, f)
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s:\n got  %v\n want %v", f, got, want)
				}
			})
		}
	}
	for id := range ids {
		if c := covered[id]; !c[0] || !c[1] {
			t.Errorf("rule %s lacks a pass and a fail case under testdata/rules/%s (pass: %v, fail: %v)", id, id, c[0], c[1])
		}
	}
}

// TestRulesDoc keeps docs/rules.md equal to the rule table.
func TestRulesDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "rules.md")
	got := RulesMarkdown(Rules())
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./validate/lint -run TestRulesDoc -update)", err)
	}
	if string(want) != got {
		t.Errorf("docs/rules.md is out of date: run go test ./validate/lint -run TestRulesDoc -update")
	}
}

func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("duplicate rule id %s", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Rationale == "" || r.Reference == "" || r.Check == nil {
			t.Errorf("rule %s needs Title, Rationale, Reference and Check", r.ID)
		}
	}
	for _, id := range []string{"MTU-1", "MTU-2", "MTU-3", "TR-1", "TR-2", "TR-3", "TR-4", "TR-5",
		"QOS-1", "QOS-2", "QOS-3", "QOS-4", "QOS-5", "QOS-6", "QOS-7", "QOS-8",
		"BUF-1", "BUF-2", "ECN-1", "ECN-2", "ECN-3", "SAFE-1", "SAFE-2", "SAFE-3",
		"HOST-1", "HOST-2", "HOST-3"} {
		if !seen[id] {
			t.Errorf("rule %s is missing", id)
		}
	}
}
