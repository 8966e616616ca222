package libyang

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fabctl/fabctl/yangval"
)

var (
	dirMu    sync.Mutex
	dirCache = map[string]*dirEntry{}
)

type dirEntry struct {
	c   *Context
	err error
}

// ForDir returns the context of profile p when dir holds its model set
// (root/<p.Set>, the layout of `fabctl render --yang-dir` and of the
// emulators' model directories), loaded once per process and shared.
// It returns nil, nil when this build has no libyang or dir is not the
// profile's set: the caller then validates with goyang (package yangval)
// alone.
func ForDir(dir string, p yangval.Profile) (*Context, error) {
	if !Available || dir == "" || p.Set == "" {
		return nil, nil
	}
	dir = filepath.Clean(dir)
	if p.Set != filepath.Base(dir) {
		return nil, nil
	}
	dirMu.Lock()
	defer dirMu.Unlock()
	e := dirCache[dir]
	if e == nil {
		c, err := Load(filepath.Dir(dir), p)
		e = &dirEntry{c: c, err: err}
		dirCache[dir] = e
	}
	if e.err != nil {
		return nil, fmt.Errorf("libyang %s models in %s: %w", p.Name, dir, e.err)
	}
	return e.c, nil
}

// ValidateConfigDBDir validates a whole CONFIG_DB (table -> key -> row,
// as a SONiC emulator holds it) with profile p's models in dir (ForDir);
// nil when there is no libyang or dir is not p's set.
func ValidateConfigDBDir(dir string, p yangval.Profile, db map[string]any) error {
	c, err := ForDir(dir, p)
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
