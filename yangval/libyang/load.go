//go:build cgo && libyang

package libyang

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/yangval"
)

// Load builds the context of a platform's profile (its descriptor's
// YANG models) from the model set root/<p.Set> (root: e.g. ../shared/yang).
func Load(root string, p yangval.Profile) (*Context, error) {
	dir := filepath.Join(root, p.Set)
	texts, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	mods := p.Modules
	if mods == nil {
		seen := map[string]bool{}
		for _, m := range p.First {
			mods = append(mods, m)
			seen[m] = true
		}
		var rest []string
		for name, text := range texts {
			if !seen[name] && !isSubmodule(text) {
				rest = append(rest, name)
			}
		}
		sort.Strings(rest)
		mods = append(mods, rest...)
	}
	cfg := Config{Dir: dir, Modules: mods, Features: p.Features, Rewrites: p.Rewrites}
	applied, err := applyRewrites(texts, cfg.Rewrites)
	if err != nil {
		return nil, err
	}
	c, err := newFromTexts(cfg, texts, applied, false, p.Prefer)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func isSubmodule(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") {
			continue
		}
		return strings.HasPrefix(t, "submodule")
	}
	return false
}
