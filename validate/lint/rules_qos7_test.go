package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// TestQOS7SumSeverity: an ETS sum other than 100 is an error when a host NIC's
// driver refuses it (mlx5, ice return EINVAL), a warning when only switches
// (which renormalise) and other NICs carry the classes.
func TestQOS7SumSeverity(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "rules", "QOS-7", "fail.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		want  hcl.DiagnosticSeverity
		names string
	}{
		{"connectx-7", hcl.DiagError, "h1:eth1 (connectx-7)"},
		{"e810", hcl.DiagError, "h1:eth1 (e810)"},
		{"rxe", hcl.DiagWarning, ""},
	} {
		t.Run(tc.model, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.fab.hcl")
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(src), `"connectx-7"`, `"`+tc.model+`"`)), 0o600); err != nil {
				t.Fatal(err)
			}
			res := Run(testutil.Load(t, p, spec.LoadOptions{}))
			found := false
			for _, d := range res.Diagnostics {
				if d.Summary != "ETS shares do not sum to 100" {
					continue
				}
				found = true
				if d.Severity != tc.want {
					t.Errorf("severity %v, want %v: %s", d.Severity, tc.want, d.Detail)
				}
				if tc.names != "" && !strings.Contains(d.Detail, tc.names) {
					t.Errorf("detail does not name %s: %s", tc.names, d.Detail)
				}
			}
			if !found {
				t.Fatal("no ETS-sum finding")
			}
		})
	}
}
