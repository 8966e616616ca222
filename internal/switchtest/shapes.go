package switchtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

// The vendor conformance corpus: testdata/vendor/<platform>/shapes.txt
// lists every command (or CONFIG_DB row) shape a driver may send, each with
// its evidence in the same directory. Its format and the shape notation are
// documented once, in docs/vendor-sources.md ("Shape index format"); this
// file is the one reader and matcher of both. Each driver's shapes_test.go
// keeps only what is its own: how the commands the emulator received are
// normalised into the notation (configuration modes as "A > B", CONFIG_DB
// rows), and which placeholders its platform narrows.

// ShapeRow is one row of a shapes.txt: SHAPE, KIND, STATUS, EVIDENCE.
type ShapeRow struct {
	Text, Kind, Status, Evidence string
	Line                         int // line number in shapes.txt
}

// Sent reports whether the row is a form the driver sends: SOURCED or
// DERIVED (VENDOR-ONLY rows are documented forms the driver does not send;
// CONTRADICTED and NO-SOURCE rows are defects and fail CheckRows).
func (r ShapeRow) Sent() bool { return r.Status == "SOURCED" || r.Status == "DERIVED" }

// CorpusDir is the vendor corpus directory of platform.
func CorpusDir(tb testing.TB, platform string) string {
	tb.Helper()
	return filepath.Join(testutil.RepoRoot(tb), "testdata", "vendor", platform)
}

// LoadShapes reads platform's shapes.txt. It fails tb on a malformed row
// (not four TAB-separated fields, an unknown KIND or STATUS, a NO-SOURCE
// row with a file reference) and on evidence that is not a line of a
// corpus file.
func LoadShapes(tb testing.TB, platform string) []ShapeRow {
	tb.Helper()
	dir := CorpusDir(tb, platform)
	f, err := os.Open(filepath.Join(dir, "shapes.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var rows []ShapeRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := strings.Split(l, "\t")
		if len(p) != 4 {
			tb.Fatalf("%s/shapes.txt:%d: %d fields, want 4 TAB-separated", platform, n, len(p))
		}
		r := ShapeRow{Text: p[0], Kind: p[1], Status: p[2], Evidence: p[3], Line: n}
		if err := checkRow(dir, r); err != nil {
			tb.Errorf("%s/shapes.txt:%d: %v", platform, n, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(rows) == 0 {
		tb.Fatalf("%s/shapes.txt: no rows", platform)
	}
	return rows
}

var (
	kinds    = map[string]bool{"render": true, "apply": true, "rollback": true, "confirm": true, "save": true, "read": true}
	statuses = map[string]bool{"SOURCED": true, "DERIVED": true, "CONTRADICTED": true, "NO-SOURCE": true, "VENDOR-ONLY": true}
)

// checkRow checks KIND, STATUS and that EVIDENCE (`file:line [-- note]`,
// or `- -- reason` for NO-SOURCE) points at a line of a corpus file.
func checkRow(dir string, r ShapeRow) error {
	if !kinds[r.Kind] {
		return fmt.Errorf("KIND %q is not one of render, apply, rollback, confirm, save, read", r.Kind)
	}
	if !statuses[r.Status] {
		return fmt.Errorf("STATUS %q is not one of SOURCED, DERIVED, CONTRADICTED, NO-SOURCE, VENDOR-ONLY", r.Status)
	}
	ref, _, _ := strings.Cut(r.Evidence, " -- ")
	ref = strings.TrimSpace(ref)
	if ref == "-" {
		if r.Status != "NO-SOURCE" {
			return fmt.Errorf("%s row %q has no evidence", r.Status, r.Text)
		}
		return nil
	}
	file, ln, ok := strings.Cut(ref, ":")
	n, err := strconv.Atoi(ln)
	if !ok || err != nil || n < 1 {
		return fmt.Errorf("evidence %q is not <corpus-file>:<line>", ref)
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return fmt.Errorf("evidence %q: %v", ref, err)
	}
	if lines := strings.Count(string(data), "\n") + 1; n > lines {
		return fmt.Errorf("evidence %q: the file has %d lines", ref, lines)
	}
	return nil
}

// CheckRows fails tb for every row the driver sends that is not backed by
// evidence: CONTRADICTED and NO-SOURCE rows are defects to fix, not forms
// to keep sending.
func CheckRows(tb testing.TB, platform string, rows []ShapeRow) {
	tb.Helper()
	for _, r := range rows {
		if r.Status == "CONTRADICTED" || r.Status == "NO-SOURCE" {
			tb.Errorf("%s/shapes.txt:%d: %s row %q: the driver must not send it (%s)", platform, r.Line, r.Status, r.Text, r.Evidence)
		}
	}
}

// Shape is one shape compiled to a matcher.
type Shape struct {
	pat    string
	re     *regexp.Regexp
	ranges [][2]int // per capture group of a <lo-hi>, in order
}

// Placeholders are the notation's placeholders (docs/vendor-sources.md) as
// regular expressions. A platform narrows some of them (an interface name
// on Cumulus is an swp port) by passing its own to CompileShape. <lo-hi>
// ranges are not listed: they are captured and checked numerically.
var Placeholders = map[string]string{
	"int":      `[0-9]+`,
	"dec":      `[0-9]+(?:\.[0-9]+)?`,
	"word":     `[^\s>]+`, // one token; never the " > " of a mode path
	"if":       `[^\s>]+`,
	"ints":     `[0-9]+(?: [0-9]+)*`,
	"list":     `[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*`,
	"hh:mm:ss": `[0-9][0-9]:[0-9][0-9]:[0-9][0-9]`,
	"time":     `\S+`,
	"rev":      `\S+`,
	"path":     `\S+`,
	"json":     `.+`,
}

var rangeRe = regexp.MustCompile(`^(-?[0-9]+)-([0-9]+)$`)

// CompileShape compiles shape notation into an anchored matcher: <name>
// placeholders (over is consulted before Placeholders), <lo-hi> integer
// ranges, {a|b} alternatives (nested allowed), [x] optional parts. A "|"
// outside braces is a literal (the CONFIG_DB key separator), and "<<" is
// the literal here-document operator. An unknown placeholder is an error:
// the matcher never guesses.
func CompileShape(pat string, over map[string]string) (*Shape, error) {
	s := &Shape{pat: pat}
	var b strings.Builder
	b.WriteString("^")
	depth, opt := 0, 0
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '<' && i+1 < len(pat) && pat[i+1] == '<':
			b.WriteString("<<")
			i++
		case c == '<':
			j := strings.IndexByte(pat[i:], '>')
			if j < 0 {
				return nil, fmt.Errorf("shape %q: unclosed <", pat)
			}
			name := pat[i+1 : i+j]
			i += j
			if m := rangeRe.FindStringSubmatch(name); m != nil {
				lo, _ := strconv.Atoi(m[1])
				hi, _ := strconv.Atoi(m[2])
				s.ranges = append(s.ranges, [2]int{lo, hi})
				b.WriteString(`(-?[0-9]+)`)
				continue
			}
			re, ok := over[name]
			if !ok {
				re, ok = Placeholders[name]
			}
			if !ok {
				return nil, fmt.Errorf("shape %q: unknown placeholder <%s> (docs/vendor-sources.md lists the notation)", pat, name)
			}
			b.WriteString("(?:" + re + ")")
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}':
			if depth == 0 {
				return nil, fmt.Errorf("shape %q: } without {", pat)
			}
			depth--
			b.WriteString(")")
		case c == '[':
			opt++
			b.WriteString("(?:")
		case c == ']':
			if opt == 0 {
				return nil, fmt.Errorf("shape %q: ] without [", pat)
			}
			opt--
			b.WriteString(")?")
		case c == '|' && depth > 0:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 || opt != 0 {
		return nil, fmt.Errorf("shape %q: unbalanced { or [", pat)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("shape %q: %w", pat, err)
	}
	s.re = re
	return s, nil
}

// MustCompileShape is CompileShape failing tb on an error.
func MustCompileShape(tb testing.TB, pat string, over map[string]string) *Shape {
	tb.Helper()
	s, err := CompileShape(pat, over)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// String is the shape's notation.
func (s *Shape) String() string { return s.pat }

// Match reports whether v has the shape, <lo-hi> ranges checked
// (a range inside an optional part that did not take part is skipped).
func (s *Shape) Match(v string) bool {
	m := s.re.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	for i, r := range s.ranges {
		if i+1 >= len(m) || m[i+1] == "" {
			continue
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n < r[0] || n > r[1] || strconv.Itoa(n) != m[i+1] {
			return false
		}
	}
	return true
}

// CompiledRow is a shapes.txt row with its matcher.
type CompiledRow struct {
	ShapeRow
	*Shape
}

// CompileRows loads platform's shapes.txt (LoadShapes) and compiles every
// row with the platform's narrowed placeholders over.
func CompileRows(tb testing.TB, platform string, over map[string]string) []CompiledRow {
	tb.Helper()
	var rows []CompiledRow
	for _, r := range LoadShapes(tb, platform) {
		rows = append(rows, CompiledRow{r, MustCompileShape(tb, r.Text, over)})
	}
	return rows
}

// Documented returns the first row the driver sends (SOURCED or DERIVED)
// whose shape cmd has.
func Documented(rows []CompiledRow, cmd string) (CompiledRow, bool) {
	for _, r := range rows {
		if r.Sent() && r.Match(cmd) {
			return r, true
		}
	}
	return CompiledRow{}, false
}

// CheckConformance is the vendor conformance verdict over the commands a
// driver sent (normalised into the notation): each must match a SOURCED or
// DERIVED row; each such row must have been sent by some run (else it
// belongs in VENDOR-ONLY); no row may be CONTRADICTED or NO-SOURCE.
func CheckConformance(tb testing.TB, platform string, rows []CompiledRow, cmds []string) {
	tb.Helper()
	used := map[int]bool{}
	bad := map[string]bool{}
	for _, c := range cmds {
		if r, ok := Documented(rows, c); ok {
			used[r.Line] = true
		} else {
			bad[c] = true
		}
	}
	list := make([]string, 0, len(bad))
	for c := range bad {
		list = append(list, c)
	}
	sort.Strings(list)
	for _, c := range list {
		tb.Errorf("sent without a SOURCED/DERIVED shape in testdata/vendor/%s/shapes.txt: %q", platform, c)
	}
	plain := make([]ShapeRow, 0, len(rows))
	for _, r := range rows {
		plain = append(plain, r.ShapeRow)
		if r.Status != "VENDOR-ONLY" && !used[r.Line] {
			tb.Errorf("%s/shapes.txt:%d lists %q as sent, but no run sent it (VENDOR-ONLY?)", platform, r.Line, r.Text)
		}
	}
	CheckRows(tb, platform, plain)
	tb.Logf("%s: %d commands checked, %d distinct, %d shapes used", platform, len(cmds), len(bad)+countDistinct(cmds, bad), len(used))
}

func countDistinct(cmds []string, bad map[string]bool) int {
	seen := map[string]bool{}
	for _, c := range cmds {
		if !bad[c] {
			seen[c] = true
		}
	}
	return len(seen)
}
