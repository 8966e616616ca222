package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// The generated part of docs/cli.md: every command and flag of the
// binary, between these markers. TestCLIDocReference keeps it equal to
// the cobra tree; when a branch adds a command or flag, run
//
//	go test ./internal/cli -run TestCLIDocReference -update
//
// and review the diff (describe new flags in the command's section too).
const (
	cliDocBegin = "<!-- BEGIN GENERATED: go test ./internal/cli -run TestCLIDocReference -update -->"
	cliDocEnd   = "<!-- END GENERATED -->"
	cliDocPath  = "../../docs/cli.md"
)

// visibleCommands lists a command's non-hidden subcommands, depth first,
// by name (cobra's own help command is not part of the tree).
func visibleCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	subs := append([]*cobra.Command(nil), c.Commands()...)
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	for _, s := range subs {
		if s.Hidden || s.Name() == "help" {
			continue
		}
		out = append(out, s)
		out = append(out, visibleCommands(s)...)
	}
	return out
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// flagRows renders a flag set as table rows.
func flagRows(b *strings.Builder, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		name := "`--" + fl.Name
		if t := fl.Value.Type(); t != "bool" {
			v, _ := pflag.UnquoteUsage(fl)
			if v == "" {
				v = t
			}
			name += " " + v
		}
		name += "`"
		if fl.Shorthand != "" {
			name = "`-" + fl.Shorthand + "`, " + name
		}
		def := fl.DefValue
		switch def {
		case "", "false", "[]", "0", "0s":
			def = ""
		default:
			def = "`" + def + "`"
		}
		_, usage := pflag.UnquoteUsage(fl)
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", mdCell(name), mdCell(def), mdCell(usage)))
	})
	if len(rows) == 0 {
		b.WriteString("No flags of its own.\n")
		return
	}
	b.WriteString("| Flag | Default | Meaning |\n|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
}

// cliReference is the generated block for the binary's command tree.
func cliReference(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString(cliDocBegin + "\n")
	b.WriteString("\n## Reference: every command and flag\n\n")
	b.WriteString("Generated from fabctl's command tree; a test keeps it equal to the binary. Global flags\n")
	b.WriteString("(every command accepts them):\n\n")
	flagRows(&b, root.PersistentFlags())
	for _, c := range visibleCommands(root) {
		fmt.Fprintf(&b, "\n### `%s`\n\n", c.CommandPath())
		use := strings.TrimSpace(c.UseLine())
		fmt.Fprintf(&b, "`%s`: %s\n\n", use, mdCell(c.Short))
		flagRows(&b, c.LocalNonPersistentFlags())
	}
	b.WriteString("\n" + cliDocEnd + "\n")
	return b.String()
}

// Issue 21: docs/cli.md's command and flag tables equal the binary's.
func TestCLIDocReference(t *testing.T) {
	f, _, _, _ := testFactory()
	root := NewCmdRoot(f)
	b, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	gen := cliReference(root)
	var got string
	i, j := strings.Index(doc, cliDocBegin), strings.Index(doc, cliDocEnd)
	switch {
	case i < 0 && j < 0:
		got = strings.TrimRight(doc, "\n") + "\n\n" + gen
	case i >= 0 && j > i:
		got = doc[:i] + gen + doc[j+len(cliDocEnd)+1:]
	default:
		t.Fatalf("%s: the generated block's markers are broken (want %q ... %q)", cliDocPath, cliDocBegin, cliDocEnd)
	}
	testutil.Golden(t, filepath.Clean(cliDocPath), []byte(got))

	// The command table at the top lists exactly the binary's commands.
	table := doc
	if k := strings.Index(table, "\n## "); k > 0 {
		table = table[:k]
	}
	rowRe := regexp.MustCompile("(?m)^\\| \\[?`([a-z-]+)")
	documented := map[string]bool{}
	for _, m := range rowRe.FindAllStringSubmatch(table, -1) {
		documented[m[1]] = true
	}
	binary := map[string]bool{"help": true}
	for _, c := range root.Commands() {
		if !c.Hidden {
			binary[c.Name()] = true
		}
	}
	for name := range binary {
		if !documented[name] {
			t.Errorf("%s: the command table has no row for `%s`", cliDocPath, name)
		}
	}
	for name := range documented {
		if !binary[name] {
			t.Errorf("%s: the command table lists `%s`, which the binary does not have", cliDocPath, name)
		}
	}

	// Every flag a hand-written table of a "## fabctl X" section names
	// exists on X (or a subcommand of X, or globally): no stale flags.
	sections := regexp.MustCompile(`(?m)^## fabctl ([a-z-]+(?: [a-z-]+)*)\n`).FindAllStringSubmatchIndex(doc, -1)
	flagRe := regexp.MustCompile("`--?([a-z][a-z0-9-]*)")
	for n, s := range sections {
		name := doc[s[2]:s[3]]
		end := len(doc)
		if n+1 < len(sections) {
			end = sections[n+1][0]
		}
		if k := strings.Index(doc[s[0]:end], cliDocBegin); k >= 0 {
			end = s[0] + k
		}
		cmd, _, err := root.Find(strings.Fields(name))
		if err != nil || cmd == root || cmd.CommandPath() != "fabctl "+name {
			t.Errorf("%s: section `fabctl %s` documents a command the binary does not have", cliDocPath, name)
			continue
		}
		known := map[string]bool{"help": true, "h": true}
		for _, c := range append([]*cobra.Command{cmd}, visibleCommands(cmd)...) {
			for _, fs := range []*pflag.FlagSet{c.Flags(), c.InheritedFlags(), root.PersistentFlags()} {
				fs.VisitAll(func(fl *pflag.Flag) {
					known[fl.Name] = true
					if fl.Shorthand != "" {
						known[fl.Shorthand] = true
					}
				})
			}
		}
		for _, line := range strings.Split(doc[s[0]:end], "\n") {
			if !strings.HasPrefix(line, "| `-") {
				continue
			}
			first := strings.SplitN(line[1:], "|", 2)[0]
			for _, m := range flagRe.FindAllStringSubmatch(first, -1) {
				if !known[m[1]] {
					t.Errorf("%s, section fabctl %s: the flag table names -%s, which `fabctl %s` does not have:\n  %s", cliDocPath, name, m[1], name, line)
				}
			}
		}
	}
}

// Issue 21: docs/cli.md's testbed section names every platform this
// build emulates (it said sonic and eos when the build had six).
func TestCLIDocEmulatedPlatforms(t *testing.T) {
	b, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "- starts every switch whose platform has an emulator in this build")
	if i < 0 {
		t.Fatalf("%s: the testbed section's emulator sentence is gone", cliDocPath)
	}
	sentence := doc[i:]
	sentence = sentence[:strings.Index(sentence, " on the")]
	n := 0
	for _, p := range builtin.Platforms() {
		if p.Emulator == "" {
			continue
		}
		n++
		if !strings.Contains(sentence, "`"+p.Name+"`") {
			t.Errorf("%s: the testbed section does not name emulated platform %s: %q", cliDocPath, p.Name, sentence)
		}
	}
	if n < 6 {
		t.Errorf("only %d emulated platforms in the build", n)
	}
}

// Issue 21: the README's CLI status row names exactly the binary's
// commands.
func TestReadmeCLIRow(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| CLI: ") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("README.md has no `| CLI: ` status row")
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z][a-z-]*)[^`]*`").FindAllStringSubmatch(row, -1) {
		named[m[1]] = true
	}
	f, _, _, _ := testFactory()
	binary := map[string]bool{}
	for _, c := range NewCmdRoot(f).Commands() {
		if !c.Hidden && c.Name() != "help" {
			binary[c.Name()] = true
			if !named[c.Name()] {
				t.Errorf("README.md's CLI row does not name `%s`", c.Name())
			}
		}
	}
	for n := range named {
		if !binary[n] {
			t.Errorf("README.md's CLI row names `%s`, which the binary does not have", n)
		}
	}
}

// Issue 21: docs/testbed.md counts examples/testbed's emulated switches
// right (it said six; the example has seven).
func TestTestbedDocSwitchCount(t *testing.T) {
	s := testutil.Load(t, "../../examples/testbed", spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	n := len(s.Switches)
	if n >= len(words) {
		t.Fatalf("%d switches", n)
	}
	b, err := os.ReadFile("../../docs/testbed.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "`examples/testbed` on this machine: " + words[n] + " emulated switches"
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/testbed.md does not say %q (the example has %d switches)", want, n)
	}
}

// First run, defect 14: testbed --help names every emulated platform of
// the build, and up's --yang-dir names the per-platform model folders the
// emulators read (not SONiC's alone).
func TestTestbedHelpAgreesWithBuild(t *testing.T) {
	f, _, _, _ := testFactory()
	root := NewCmdRoot(f)
	tb, _, err := root.Find([]string{"testbed"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range builtin.Platforms() {
		if p.Emulator != "" && !strings.Contains(tb.Long, p.Name) {
			t.Errorf("testbed --help does not name emulated platform %s", p.Name)
		}
	}
	up, _, err := root.Find([]string{"testbed", "up"})
	if err != nil {
		t.Fatal(err)
	}
	fl := up.Flags().Lookup("yang-dir")
	for _, sub := range []string{"DIR/sonic", "DIR/openconfig", "DIR/srlinux"} {
		if fl == nil || !strings.Contains(fl.Usage, sub) {
			t.Errorf("testbed up --yang-dir help lacks %s", sub)
		}
	}
}

// Issue 40 (first run, defect 19): every ../shared path the README, the
// docs, the Makefile, the examples and the demo scripts name is one of
// those README.md's "Reference material beside the clone" table says
// where to get, and each row names a source; with ../shared present,
// each row's path exists.
func TestDocsNameSharedSources(t *testing.T) {
	root := testutil.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(\\.\\./shared/[^`]+)` \\|[^|]+\\|([^|]+)\\|$")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, strings.TrimSuffix(m[1], "/"))
		if strings.TrimSpace(m[2]) == "" {
			t.Errorf("README.md: %s has no source", m[1])
		}
		if shared := testutil.SharedIfPresent(t); shared != "" {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("README.md lists %s, which ../shared lacks: %v", m[1], err)
			}
		}
	}
	if len(listed) == 0 {
		t.Fatal(`README.md has no "Reference material beside the clone" table of ../shared paths`)
	}
	files := []string{"README.md", "Makefile"}
	for _, pat := range []string{"docs/*.md", "examples/*/*.md", "examples/*/*.hcl", "testbed/*.sh", "testbed/*/*.sh"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	ref := regexp.MustCompile(`\.\./shared(/[A-Za-z0-9_.-]+)*`)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ref.FindAllString(string(b), -1) {
			p = strings.TrimSuffix(p, ".")
			ok := p == "../shared"
			for _, l := range listed {
				if p == l || strings.HasPrefix(p, l+"/") || strings.HasPrefix(l, p+"/") {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s names %s, a file a clone lacks, and README.md's reference table does not say where it comes from", f, p)
			}
		}
	}
}
