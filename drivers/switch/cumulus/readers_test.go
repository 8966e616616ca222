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
// see testdata/readers/README) and the NVIDIA ngts sample of nv config
// history --output json, read straight from the corpus file.
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

	// nv config history --output json: the corpus excerpt (ngts docstring).
	corpus, err := os.ReadFile(filepath.Join(switchtest.CorpusDir(t, platform), "nvue-config-show-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(corpus), "\n")
	hist := strings.Join(lines[14:32], "\n") // lines 15-32
	rev, err := AppliedRevision(hist)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "# AppliedRevision(nvue-config-show-json.txt:15-32) = %s\n", rev)
	testutil.Golden(t, filepath.Join("testdata", "readers", "roce-guide-examples.golden"), []byte(out.String()))

	// Outputs that are not NVUE's documented shapes are refused.
	for _, bad := range []string{`{"qos":{}}`, `null`, `[{"set":7}]`} {
		if _, err := ReadConfigJSON([]byte(bad), sw); err == nil {
			t.Errorf("ReadConfigJSON(%s) accepted", bad)
		}
	}
	if _, err := AppliedRevision("Rev ID  Apply date\n1  2024-04-26"); err == nil {
		t.Error("AppliedRevision accepted the text table")
	}
}
