package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/validate/ibreadback"
	"github.com/fabctl/fabctl/validate/readback"
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

// Issue 38: the InfiniBand stage is in the JUnit report: a case per port
// with one failure per finding (kind as type, GUID and LID in the text),
// one passing case for a matching fabric, a skipped one when it did not
// apply; Mismatch holds only when every finding is one no change fixes.
func TestIBJUnitSuite(t *testing.T) {
	down := ibreadback.Finding{Kind: "link-down", Where: "leaf1 port 2", Message: "no link to cn01:ib0", Verdict: ibreadback.VerdictMismatch, NodeGUID: "0x0210000000000100", LID: 3}
	width := ibreadback.Finding{Kind: "width", Where: "leaf1 port 2", Message: "trained at 1x", Verdict: ibreadback.VerdictMismatch}
	pkey := ibreadback.Finding{Kind: "switch-pkey", Where: "leaf2 port 2", Message: "lacks P_Key 0x0002", Verdict: ibreadback.VerdictRestorable}
	r := &ibreadback.Result{Summary: "4 switches", Ports: 18, Findings: []ibreadback.Finding{down, width, pkey}}
	s := ibJUnitSuite(r)
	if s.Tests != 2 || s.Fails != 2 || len(s.Cases[0].Failures) != 2 || s.Cases[0].Name != "leaf1 port 2" || s.Cases[0].Failures[0].Type != "link-down" ||
		!strings.Contains(s.Cases[0].Failures[0].Text, "node 0x0210000000000100, LID 3") {
		t.Errorf("suite %+v", s)
	}
	if r.Mismatch() {
		t.Error("a restorable finding beside the cabling ones: not a pure mismatch")
	}
	r.Findings = r.Findings[:2]
	if !r.Mismatch() {
		t.Error("cabling findings only: a mismatch")
	}
	if s := ibJUnitSuite(&ibreadback.Result{Summary: "x", Ports: 2, Findings: []ibreadback.Finding{}}); s.Tests != 1 || s.Fails != 0 {
		t.Errorf("clean fabric: %+v", s)
	}
	if s := ibJUnitSuite(&ibreadback.Result{Skipped: "no fabric"}); s.Skipped != 1 {
		t.Errorf("skipped: %+v", s)
	}
	if s := ibJUnitSuite(&ibreadback.Result{Error: "ibnetdiscover: exit 1"}); s.Fails != 1 {
		t.Errorf("not read: %+v", s)
	}
}

// TestReadbackNotesFabricPorts: the subnet manager's port tables, which
// validate's InfiniBand stage reads, are not counted as settings the
// device cannot express (the one opensm setting is: not in effect, it
// reads !, never ✔).
func TestReadbackNotesFabricPorts(t *testing.T) {
	var b strings.Builder
	writeReadback(&b, newStyles(&b, false), &readback.Result{Match: 1, Devices: []readback.Device{{
		Address: "sm.sm01", Status: readback.Match,
		NotChecked: []plan.Unexpressible{
			{Path: "ib/cn01/ib0/sl2vl", Reason: "the InfiniBand stage of validate reads the fabric's ports"},
			{Path: "ib/leaf1/2/pkey/storage", Reason: "the InfiniBand stage of validate reads the fabric's ports"},
			{Path: "opensm/qos_max_vls", Reason: "not readable"},
		},
	}}})
	if got, want := b.String(), "! sm.sm01: matches; 1 setting the device cannot express is not in effect (not checked) (2 table settings of the fabric's ports: see InfiniBand)"; !strings.Contains(got, want) {
		t.Errorf("read-back view:\n%s\nwant %q", got, want)
	}
}

// First run, defect 16: a rule with nothing to check in the spec is
// <skipped>, not passed, and a test case carries at most one failure (a
// rule with several failing findings gets a case per finding).
func TestValidateJUnitSkipsAndSplits(t *testing.T) {
	dir := t.TempDir()
	f, _, _, _ := testFactory()
	out := filepath.Join(dir, "roce.xml")
	if code := runCLI(f, "validate", "--static", "--junit", out, "../../testdata/broken/qos.fab.hcl"); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	s := readJUnit(t, out).Suites[0]
	skipped := map[string]string{}
	perRule := map[string]int{}
	for _, c := range s.Cases {
		id := strings.SplitN(c.Name, ":", 2)[0]
		if c.Skipped != nil {
			skipped[id] = c.Skipped.Message
		}
		if len(c.Failures) > 1 {
			t.Errorf("case %q has %d failures", c.Name, len(c.Failures))
		}
		if len(c.Failures) == 1 {
			perRule[id]++
		}
	}
	for _, id := range []string{"IB-1", "IB-2", "IB-3", "IB-4", "IB-5", "IB-6", "IB-7", "BUF-2"} {
		if !strings.HasPrefix(skipped[id], "not applicable: ") {
			t.Errorf("%s on a RoCE spec without buffer facts: skipped %q, want not applicable", id, skipped[id])
		}
	}
	if skipped["QOS-1"] != "" || skipped["QOS-7"] != "" {
		t.Errorf("a rule with findings is skipped: %v", skipped)
	}
	if s.Skipped != len(skipped) {
		t.Errorf("suite skipped=%d, cases %d", s.Skipped, len(skipped))
	}
	split := false
	for _, n := range perRule {
		split = split || n > 1
	}
	if !split {
		t.Errorf("no rule with several failing findings in broken/qos: %v", perRule)
	}
}
