//go:build cgo && libyang

package libyang

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Load builds the context of profile name from the model sets under
// root (root/<set>/*.yang, e.g. ../shared/yang).
func Load(root, name string) (*Context, error) {
	p, ok := Profiles[name]
	if !ok {
		return nil, fmt.Errorf("libyang: no profile %q (have %s)", name, strings.Join(ProfileNames(), ", "))
	}
	return p.Load(root)
}

// Load builds p's context from root/<p.Set>.
func (p Profile) Load(root string) (*Context, error) {
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
