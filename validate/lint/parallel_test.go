package lint

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// TestParallelRunIsSequential: RunRules runs the rules on several
// goroutines; its result must be what one goroutine gives, finding for
// finding and in the same order, on every fail case of every rule.
func TestParallelRunIsSequential(t *testing.T) {
	files, _ := filepath.Glob("testdata/rules/*/fail*.fab.hcl")
	if len(files) == 0 {
		t.Fatal("no fail cases")
	}
	show := func(res Result) string {
		var b strings.Builder
		fmt.Fprintf(&b, "suppressed %d\n", res.Suppressed)
		for _, d := range res.Diagnostics {
			fmt.Fprintf(&b, "%v %s %q %q", d.Severity, d.Subject, d.Summary, d.Detail)
			if info := spec.Info(d); info != nil {
				fmt.Fprintf(&b, " %s %s", info.Rule, info.Address)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	run := func(s *spec.Spec, procs int) Result {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		return Run(s)
	}
	total := 0
	for _, f := range files {
		s := testutil.Load(t, f, spec.LoadOptions{})
		seq := run(s, 1)
		total += len(seq.Diagnostics)
		for _, procs := range []int{2, 8} {
			if par := run(s, procs); show(par) != show(seq) {
				t.Errorf("%s: %d goroutines:\n%s\none goroutine:\n%s", f, procs, show(par), show(seq))
			}
		}
	}
	if total < len(files) {
		t.Fatalf("%d findings in %d fail cases: the comparison saw too little", total, len(files))
	}
}
