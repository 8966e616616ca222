package builtin

import (
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// First run, defect 12: a plan that adds tc/N/lossless = false (or removes
// it) adds or removes no lossless priority group, so no switch driver marks
// it disruptive; turning a class lossless or lossy still is.
func TestLosslessPGDisruptiveOnlyOnFlip(t *testing.T) {
	seen := 0
	for _, p := range Platforms() {
		if p.New == nil {
			continue
		}
		var fields []intent.Field
		for _, f := range p.New().Fields() {
			if f.Pattern == "tc/*/lossless" && f.Disruptive != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) == 0 {
			continue
		}
		seen++
		for _, c := range []struct {
			name       string
			live, want intent.State
			disruptive bool
		}{
			{"create false", intent.State{}, intent.State{"tc/0/lossless": "false"}, false},
			{"create true", intent.State{}, intent.State{"tc/3/lossless": "true"}, true},
			{"false to true", intent.State{"tc/3/lossless": "false"}, intent.State{"tc/3/lossless": "true"}, true},
			{"true to false", intent.State{"tc/3/lossless": "true"}, intent.State{"tc/3/lossless": "false"}, true},
		} {
			ch := intent.Diff(c.want, c.live, fields)
			if len(ch) != 1 {
				t.Fatalf("%s %s: %d changes %+v", p.Name, c.name, len(ch), ch)
			}
			if (ch[0].Disruptive != "") != c.disruptive {
				t.Errorf("%s %s: disruptive %q, want %v", p.Name, c.name, ch[0].Disruptive, c.disruptive)
			}
		}
	}
	if seen < 5 {
		t.Errorf("%d platforms mark tc/*/lossless disruptive, want sonic, cumulus, eos, nxos and srlinux", seen)
	}
}
