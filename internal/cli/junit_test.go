package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readJUnit(t *testing.T, path string) junitSuites {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, b)
	}
	return doc
}

func TestValidateJUnit(t *testing.T) {
	dir := t.TempDir()
	// A broken spec: exactly the rules its "# expect:" comments name fail.
	out := filepath.Join(dir, "safety.xml")
	f, _, _, _ := testFactory()
	if code := runCLI(f, "validate", "--static", "--junit", out, "../../testdata/broken/safety.fab.hcl"); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	doc := readJUnit(t, out)
	s := doc.Suites[0]
	if s.Tests < 28 || s.Fails != 3 || doc.Fails != 3 {
		t.Errorf("tests %d failures %d", s.Tests, s.Fails)
	}
	failed := map[string]bool{}
	for _, c := range s.Cases {
		if len(c.Failures) > 0 {
			failed[strings.SplitN(c.Name, ":", 2)[0]] = true
			if !strings.Contains(c.Failures[0].Message, "safety.fab.hcl:") {
				t.Errorf("failure without file:line: %q", c.Failures[0].Message)
			}
		}
	}
	for _, id := range []string{"SAFE-1", "SAFE-2", "SAFE-3"} {
		if !failed[id] {
			t.Errorf("%s did not fail: %v", id, failed)
		}
	}
	// A spec that does not load: the rules are skipped, not passed.
	out = filepath.Join(dir, "syntax.xml")
	if code := runCLI(f, "validate", "--static", "--junit", out, "../../testdata/broken/syntax.fab.hcl"); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	doc = readJUnit(t, out)
	s = doc.Suites[0]
	if s.Fails != 1 || s.Skipped != s.Tests-1 || s.Cases[0].Name[:4] != "load" {
		t.Errorf("syntax: tests %d failures %d skipped %d", s.Tests, s.Fails, s.Skipped)
	}
}
