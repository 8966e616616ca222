package vm

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultSectionTimeout applies to a section without a "# fabtb-timeout:" header.
const DefaultSectionTimeout = 300 * time.Second

// Section is one sections/<name>.sh with what its header lines ask for.
type Section struct {
	Name    string
	Path    string
	Timeout time.Duration
	GoTests []GoTest // "# fabtb-gotest: ./pkg/path [tags]"
	Files   []string // "# fabtb-file: repo/relative/path"
	Needs   []string // "# fabtb-needs: fabctl-verbs"
}

// GoTest is a Go test binary a section runs in the guest: built with
// `go test -c [-tags Tags] Pkg` into bin/<Bin>.
type GoTest struct {
	Pkg  string
	Tags string
}

// Bin is the binary's file name in the share's bin/: <last path element>.test.
func (g GoTest) Bin() string { return path.Base(g.Pkg) + ".test" }

// knownNeeds are the values "# fabtb-needs:" accepts.
var knownNeeds = map[string]bool{"fabctl-verbs": true}

// ListSections returns every section in dir (every *.sh but lib.sh), sorted by name.
func ListSections(dir string) ([]Section, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.sh"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Section
	for _, p := range paths {
		if filepath.Base(p) == "lib.sh" {
			continue
		}
		s, err := ParseSection(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sections (*.sh) in %s", dir)
	}
	return out, nil
}

// ParseSection reads a section's header lines. A malformed header is an
// error naming file:line, so a typo cannot silently drop a test binary.
func ParseSection(p string) (Section, error) {
	s := Section{Name: strings.TrimSuffix(filepath.Base(p), ".sh"), Path: p, Timeout: DefaultSectionTimeout}
	f, err := os.Open(p)
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	// The headers are read from the section's leading comment block, however
	// long it is (a fixed line count once dropped a header below a long
	// description); the first line that is not a comment ends it.
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			break
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(key, "# fabtb-") {
			continue
		}
		key = strings.TrimPrefix(key, "# fabtb-")
		fields := strings.Fields(val)
		bad := func(why string) error { return fmt.Errorf("%s:%d: fabtb-%s: %s", p, n, key, why) }
		if len(fields) == 0 {
			return s, bad("no value")
		}
		switch key {
		case "timeout":
			secs, err := strconv.Atoi(fields[0])
			if err != nil || secs <= 0 || len(fields) > 1 {
				return s, bad(fmt.Sprintf("want a number of seconds, got %q", strings.TrimSpace(val)))
			}
			s.Timeout = time.Duration(secs) * time.Second
		case "gotest":
			if !strings.HasPrefix(fields[0], "./") || len(fields) > 2 {
				return s, bad(fmt.Sprintf("want ./pkg/path [tag,tag], got %q", strings.TrimSpace(val)))
			}
			g := GoTest{Pkg: fields[0]}
			if len(fields) == 2 {
				g.Tags = fields[1]
			}
			s.GoTests = append(s.GoTests, g)
		case "file":
			c := path.Clean(fields[0])
			if len(fields) > 1 || path.IsAbs(c) || c == "." || strings.HasPrefix(c, "../") || c == ".." {
				return s, bad(fmt.Sprintf("want one path inside the repository, got %q", strings.TrimSpace(val)))
			}
			s.Files = append(s.Files, c)
		case "needs":
			for _, v := range fields {
				if !knownNeeds[v] {
					return s, bad(fmt.Sprintf("unknown %q (known: fabctl-verbs)", v))
				}
				s.Needs = append(s.Needs, v)
			}
		default:
			return s, bad("unknown header (known: timeout, gotest, file, needs)")
		}
	}
	return s, sc.Err()
}

// selectSections picks the named sections, in the order given; none named means all.
func selectSections(all []Section, names []string) ([]Section, error) {
	if len(names) == 0 {
		return all, nil
	}
	by := map[string]Section{}
	var known []string
	for _, s := range all {
		by[s.Name] = s
		known = append(known, s.Name)
	}
	var out []Section
	seen := map[string]bool{}
	for _, n := range names {
		s, ok := by[n]
		if !ok {
			return nil, fmt.Errorf("no section %q (known: %s)", n, strings.Join(known, ", "))
		}
		if !seen[n] {
			out = append(out, s)
			seen[n] = true
		}
	}
	return out, nil
}

// SplitNames splits a FABTB_SECTIONS-style list (spaces and/or commas).
func SplitNames(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
