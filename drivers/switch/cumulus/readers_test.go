package cumulus

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/internal/testutil"
)

// TestReadersGolden parses NVUE output fixtures into state (golden):
// testdata/readers/roce-guide-examples.json (the documented list shape
// of nv config show -o json holding what NVIDIA's CL 5.14 examples set;
// see testdata/readers/README) and the NVUE reference's table of nv config
// revision, read straight from the corpus file.
func TestReadersGolden(t *testing.T) {
	_, f := load(t, "testdata/cllab")
	sw := clSwitch(t, f, "leaf2")
	b, err := os.ReadFile(filepath.Join("testdata", "readers", "roce-guide-examples.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadConfigJSON(b, sw)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := configTree(b)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.WriteString("# ReadConfigJSON(testdata/readers/roce-guide-examples.json) for cllab leaf2\n")
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&out, "%s = %s\n", k, st[k])
	}
	fmt.Fprintf(&out, "# auto-save: %s\n", autoSaveState(tree))

	// nv config revision: the NVUE reference's table (Cumulus Linux rows).
	corpus, err := os.ReadFile(filepath.Join(switchtest.CorpusDir(t, platform), "nvue-reference-config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(corpus), "\n")
	table := strings.Join(lines[15:21], "\n") // lines 16-21
	rev, err := AppliedRevision(table)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "# AppliedRevision(nvue-reference-config.txt:16-21) = %s\n", rev)
	testutil.Golden(t, filepath.Join("testdata", "readers", "roce-guide-examples.golden"), []byte(out.String()))

	// Outputs that are not NVUE's documented shapes are refused.
	for _, bad := range []string{`{"qos":{}}`, `null`, `[{"set":7}]`} {
		if _, err := ReadConfigJSON([]byte(bad), sw); err == nil {
			t.Errorf("ReadConfigJSON(%s) accepted", bad)
		}
	}
	// Not the documented table: NVOS's history JSON, a history table.
	for _, bad := range []string{`{"rev_1_apply_1": {"date": "2023-09-05 10:29:25", "rev-id": "1"}}`, "Rev ID  Apply date\n1  2024-04-26"} {
		if _, err := AppliedRevision(bad); err == nil {
			t.Errorf("AppliedRevision accepted %q", bad)
		}
	}
	// The latest apply wins, whatever the row order; a revision re-applied
	// (rev_1_apply_2) later than revision 4 is the applied one.
	re := strings.Replace(table, "rev_1_apply_1                     2024-04-26 11:24:50", "rev_1_apply_2                     2024-04-27 09:00:00", 1)
	if got, err := AppliedRevision(re); err != nil || got != "1" {
		t.Errorf("re-applied revision: %q %v", got, err)
	}
}
