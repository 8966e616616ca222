package libyang

import (
	"fmt"
	"path/filepath"
	"sync"
)

var (
	dirMu    sync.Mutex
	dirCache = map[string]*dirEntry{}
)

type dirEntry struct {
	c   *Context
	err error
}

// ForDir returns the context of the profile whose model set is dir
// (root/<set>, the layout of `fabctl render --yang-dir` and of the
// emulators' model directories), loaded once per process and shared.
// It returns nil, nil when this build has no libyang or no profile has
// that set: the caller then validates with goyang (package yangval) alone.
func ForDir(dir string) (*Context, error) {
	if !Available || dir == "" {
		return nil, nil
	}
	dir = filepath.Clean(dir)
	var p *Profile
	for _, name := range ProfileNames() {
		if pr := Profiles[name]; pr.Set == filepath.Base(dir) {
			p = &pr
			break
		}
	}
	if p == nil {
		return nil, nil
	}
	dirMu.Lock()
	defer dirMu.Unlock()
	e := dirCache[dir]
	if e == nil {
		c, err := p.Load(filepath.Dir(dir))
		e = &dirEntry{c: c, err: err}
		dirCache[dir] = e
	}
	if e.err != nil {
		return nil, fmt.Errorf("libyang %s models in %s: %w", p.Name, dir, e.err)
	}
	return e.c, nil
}

// ValidateConfigDBDir validates a whole CONFIG_DB (table -> key -> row,
// as a SONiC emulator holds it) with the profile of model directory dir
// (ForDir); nil when there is no libyang or no profile for dir.
func ValidateConfigDBDir(dir string, db map[string]any) error {
	c, err := ForDir(dir)
	if c == nil || err != nil {
		return err
	}
	cdb := make(ConfigDB, len(db))
	for table, v := range db {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: table is not an object", table)
		}
		rows := make(map[string]map[string]any, len(m))
		for key, rv := range m {
			row, ok := rv.(map[string]any)
			if !ok {
				return fmt.Errorf("%s|%s: entry is not an object", table, key)
			}
			rows[key] = row
		}
		cdb[table] = rows
	}
	return c.ValidateConfigDB(cdb, Options{MaxErrors: 20})
}
