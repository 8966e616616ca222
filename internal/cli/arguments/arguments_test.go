package arguments

import (
	"strings"
	"testing"
)

func TestPlanCheck(t *testing.T) {
	ok := Plan{Parallelism: 4, Targets: []string{"leaf*"}, Excludes: []string{"role:spine"}, Vars: []string{"n=8"}, Format: FormatHuman}
	for _, c := range []struct {
		name   string
		edit   func(*Plan)
		format string
		err    string
	}{
		{"ok", func(*Plan) {}, FormatHuman, ""},
		{"--json", func(a *Plan) { a.JSON = true }, FormatJSON, ""},
		{"--json --format json", func(a *Plan) { a.JSON, a.Format, a.FormatSet = true, FormatJSON, true }, FormatJSON, ""},
		{"--json --format markdown", func(a *Plan) { a.JSON, a.Format, a.FormatSet = true, FormatMarkdown, true }, "", "conflict"},
		{"--format yaml", func(a *Plan) { a.Format = "yaml" }, "", `invalid --format "yaml"`},
		{"--parallelism 0", func(a *Plan) { a.Parallelism = 0 }, "", "invalid --parallelism 0"},
		{"--target ''", func(a *Plan) { a.Targets = []string{" "} }, "", `invalid --target " "`},
		{"--exclude [", func(a *Plan) { a.Excludes = []string{"leaf["} }, "", `invalid --exclude "leaf["`},
		{"--var n", func(a *Plan) { a.Vars = []string{"n"} }, "", `invalid --var "n": want name=value`},
		{"--var =8", func(a *Plan) { a.Vars = []string{"=8"} }, "", `invalid --var "=8"`},
	} {
		a := ok
		c.edit(&a)
		format, err := a.Check()
		if c.err == "" && (err != nil || format != c.format) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %q %v, want %q %q", c.name, format, err, c.format, c.err)
		}
	}
}
