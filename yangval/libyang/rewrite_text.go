package libyang

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/yangval"
)

// Rewrite and Change are yangval's: a platform's profile
// (yangval.Profile) lists its rewrites.
type (
	Rewrite = yangval.Rewrite
	Change  = yangval.Change
)

// Applied is a rewrite with the changes it made.
type Applied struct {
	Name, Module, Reason string
	Changes              []Change
}

func applyRewrites(texts map[string]string, rws []Rewrite) ([]Applied, error) {
	var out []Applied
	for _, rw := range rws {
		text, ok := texts[rw.Module]
		if !ok {
			return nil, fmt.Errorf("libyang: rewrite %s: module %s not in the model directory", rw.Name, rw.Module)
		}
		var changes []Change
		if rw.Func != nil {
			text, changes = rw.Func(text)
		} else {
			n := strings.Count(text, rw.Old)
			if n != rw.Count {
				return nil, fmt.Errorf("libyang: rewrite %s: %q found %d times in %s, want %d (the models changed: review the rewrite)", rw.Name, rw.Old, n, rw.Module, rw.Count)
			}
			idx := 0
			for i := 0; i < n; i++ {
				j := strings.Index(text[idx:], rw.Old) + idx
				changes = append(changes, Change{Line: 1 + strings.Count(text[:j], "\n"), Old: rw.Old, New: rw.New})
				idx = j + len(rw.Old)
			}
			text = strings.ReplaceAll(text, rw.Old, rw.New)
		}
		if len(changes) != rw.Count {
			return nil, fmt.Errorf("libyang: rewrite %s changed %d expressions in %s, want %d (the models changed: review the rewrite)", rw.Name, len(changes), rw.Module, rw.Count)
		}
		texts[rw.Module] = text
		out = append(out, Applied{Name: rw.Name, Module: rw.Module, Reason: rw.Reason, Changes: changes})
	}
	return out, nil
}
