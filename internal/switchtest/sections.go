package switchtest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// VendorSections reads testdata/vendor/<platform>/<name> (from the module
// root) and returns its "## <title>" sections by title, each the lines
// under its heading up to the next one; "# " header lines (the source
// citation) are left out, and a file without a SOURCE header fails.
func VendorSections(t testing.TB, platform, name string) map[string]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vendor", platform, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# SOURCE:") {
		t.Fatalf("%s: no '# SOURCE:' header", p)
	}
	out := map[string]string{}
	title := ""
	var body []string
	flush := func() {
		if title != "" {
			out[title] = strings.Join(body, "\n") + "\n"
		}
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			flush()
			title, body = strings.TrimPrefix(l, "## "), nil
		case title == "" && strings.HasPrefix(l, "#"):
		case title != "":
			body = append(body, l)
		}
	}
	flush()
	return out
}
