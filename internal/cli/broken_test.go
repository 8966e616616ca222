package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// brokenFamilies maps each file under <repo>/testdata/broken to the rule
// id prefix it demonstrates ("LOAD" for loader errors).
var brokenFamilies = map[string]string{
	"syntax":    "LOAD",
	"schema":    "LOAD",
	"secrets":   "LOAD",
	"mtu":       "MTU-",
	"transport": "TR-",
	"qos":       "QOS-",
	"buffer":    "BUF-",
	"ecn":       "ECN-",
	"safety":    "SAFE-",
	"host":      "HOST-",
	"ib":        "IB-", // InfiniBand: the IB rules, and TR-4 on IB
}

// requiredBroken must all exist: one broken spec per family.
var requiredBroken = []string{"syntax", "schema", "secrets", "mtu", "transport", "qos", "buffer", "ecn", "safety", "host", "ib"}

// expectRE matches a trailing "# expect: QOS-1" or "# expect: LOAD, MTU-2".
var expectRE = regexp.MustCompile(`#\s*expect:\s*([A-Z0-9, -]+)\s*$`)

func brokenExpectations(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		if m := expectRE.FindStringSubmatch(line); m != nil {
			for _, id := range strings.Split(m[1], ",") {
				if id = strings.TrimSpace(id); id != "" {
					out = append(out, fmt.Sprintf("%s@%d", id, i+1))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestBrokenSpecs runs `fabctl validate --json` on every spec in
// <repo>/testdata/broken: each must fail with exactly the findings its
// "# expect:" comments list (rule id, or LOAD for loader errors, on the
// line the finding's subject starts), and its human output must match the
// golden file in testdata/broken.
func TestBrokenSpecs(t *testing.T) {
	goldenDir, err := filepath.Abs(filepath.Join("testdata", "broken"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", ".."))
	files, err := filepath.Glob(filepath.Join("testdata", "broken", "*.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".fab.hcl")
		have[name] = true
		t.Run(name, func(t *testing.T) {
			family, ok := brokenFamilies[name]
			if !ok {
				t.Fatalf("%s: unknown family; add it to brokenFamilies", path)
			}
			want := brokenExpectations(t, path)
			ownFamily := false
			for _, w := range want {
				ownFamily = ownFamily || strings.HasPrefix(w, family)
			}
			if !ownFamily {
				t.Errorf("%s expects no %s finding", path, family)
			}

			f, _, stdout, stderr := testFactory()
			if code := runCLI(f, "validate", "--static", "--json", path); code != ExitError {
				t.Errorf("exit code %d, want 1 (stderr %q)", code, stderr)
			}
			var doc struct {
				Valid       bool                  `json:"valid"`
				Diagnostics []spec.JSONDiagnostic `json:"diagnostics"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("%v:\n%s", err, stdout)
			}
			var got []string
			for _, d := range doc.Diagnostics {
				id, line := d.Rule, 0
				if id == "" {
					id = "LOAD"
				}
				if d.Range != nil {
					line = d.Range.Start.Line
					if d.Range.Filename != path {
						line = -1
					}
				}
				got = append(got, fmt.Sprintf("%s@%d", id, line))
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s:\n got  %v\n want %v", path, got, want)
			}

			f, _, stdout, _ = testFactory()
			runCLI(f, "validate", "--static", path)
			testutil.Golden(t, filepath.Join(goldenDir, name+".txt"), stdout.Bytes())
		})
	}
	for _, name := range requiredBroken {
		if !have[name] {
			t.Errorf("testdata/broken/%s.fab.hcl is missing", name)
		}
	}
}
