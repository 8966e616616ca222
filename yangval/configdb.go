package yangval

import (
	"fmt"
	"sort"
	"strings"
)

// ConfigDB is a SONiC CONFIG_DB document: table -> key -> field -> value
// (the shape of config_db.json; values are strings, leaf-lists are fields
// named "name@" with comma-separated values).
type ConfigDB map[string]map[string]map[string]any

// ValidateConfigDB validates CONFIG_DB tables against the SONiC YANG models
// of s. Each table TABLE maps to the container TABLE of a sonic-* module and
// one of its lists (TABLE_LIST, or another list of the table whose key has as
// many leaves as the row key has '|'-separated parts). Fields map to leaves
// of the list entry; fields that are not leaves map onto a nested list with
// one key and one value leaf (e.g. DSCP_TO_TC_MAP|AZURE {"0": "1"}).
// Rows are complete entries, so mandatory leaves are checked.
func (s *Schema) ValidateConfigDB(db map[string]map[string]map[string]any) []Error {
	return s.validateConfigDB(db, true)
}

// ValidateConfigDBFragment validates rows that are merged into a device's
// CONFIG_DB (a rendered config_db.json fragment, a patch's result for
// the rows it touches): as ValidateConfigDB, except that mandatory fields
// are not required, the device's rows already carrying them (PORT speed).
func (s *Schema) ValidateConfigDBFragment(db map[string]map[string]map[string]any) []Error {
	return s.validateConfigDB(db, false)
}

func (s *Schema) validateConfigDB(db map[string]map[string]map[string]any, mandatory bool) []Error {
	root := map[string]any{}
	var pre []Error
	for _, table := range sortedKeys(db) {
		conts := s.tables[table]
		if len(conts) == 0 {
			pre = append(pre, Error{Path: "/" + table, Msg: "no SONiC YANG model for this table" + didYouMean(table, sortedKeys(s.tables))})
			continue
		}
		cont := conts[0]
		top := cont.parent
		for _, key := range sortedKeys(db[table]) {
			parts := strings.Split(key, "|")
			list := s.pickList(cont, parts)
			if c := cont.children[key]; list == nil && c != nil && c.kind == kContainer {
				// A table modelled as containers keyed by name
				// (DEVICE_METADATA|localhost): the row is that container.
				entry := map[string]any{}
				for f, val := range db[table][key] {
					name := strings.TrimSuffix(f, "@")
					if lc := c.children[name]; lc != nil && lc.kind == kLeafList {
						if str, ok := val.(string); ok {
							var arr []any
							for _, p := range strings.Split(str, ",") {
								arr = append(arr, p)
							}
							val = arr
						}
					}
					entry[name] = val
				}
				tm, _ := root[top.module+":"+top.name].(map[string]any)
				if tm == nil {
					tm = map[string]any{}
					root[top.module+":"+top.name] = tm
				}
				cm, _ := tm[cont.name].(map[string]any)
				if cm == nil {
					cm = map[string]any{}
					tm[cont.name] = cm
				}
				cm[key] = entry
				continue
			}
			if list == nil {
				pre = append(pre, Error{Path: "/" + table + "|" + key, Msg: fmt.Sprintf("no list in %s has a key of %d part(s)", cont.spath, len(parts)), Value: key})
				continue
			}
			entry := map[string]any{}
			for i, k := range list.keys {
				entry[k] = parts[i]
			}
			row := db[table][key]
			fields := make([]string, 0, len(row))
			for f := range row {
				fields = append(fields, f)
			}
			sort.Strings(fields)
			for _, f := range fields {
				val := row[f]
				name := strings.TrimSuffix(f, "@")
				if c := list.children[name]; c != nil {
					if c.kind == kLeafList {
						if str, ok := val.(string); ok {
							var arr []any
							for _, p := range strings.Split(str, ",") {
								arr = append(arr, p)
							}
							val = arr
						}
					}
					entry[name] = val
					continue
				}
				if nl := nestedMap(list); nl != nil {
					var vleaf string
					for _, cn := range sortedKeys(nl.children) {
						if cn != nl.keys[0] {
							vleaf = cn
						}
					}
					arr, _ := entry[nl.name].([]any)
					entry[nl.name] = append(arr, map[string]any{nl.keys[0]: f, vleaf: val})
					continue
				}
				entry[f] = val // reported as unknown by the walker
			}
			tm, _ := root[top.module+":"+top.name].(map[string]any)
			if tm == nil {
				tm = map[string]any{}
				root[top.module+":"+top.name] = tm
			}
			cm, _ := tm[cont.name].(map[string]any)
			if cm == nil {
				cm = map[string]any{}
				tm[cont.name] = cm
			}
			arr, _ := cm[list.name].([]any)
			cm[list.name] = append(arr, entry)
		}
	}
	errs := s.Validate("/", root, Options{Mandatory: mandatory, stringScalars: true})
	return append(pre, errs...)
}

// pickList chooses the list of table container cont that a CONFIG_DB key
// with the given parts belongs to.
func (s *Schema) pickList(cont *node, parts []string) *node {
	var cands []*node
	for _, name := range sortedKeys(cont.children) {
		c := cont.children[name]
		if c.kind == kList && len(c.keys) == len(parts) {
			cands = append(cands, c)
		}
	}
	if len(cands) <= 1 {
		if len(cands) == 1 {
			return cands[0]
		}
		return nil
	}
	for _, c := range cands {
		ok := true
		for i, k := range c.keys {
			kn := c.children[k]
			if kn == nil || kn.typ == nil {
				continue
			}
			if msg, _ := s.check(kn, kn.typ, parts[i], 0, true); msg != "" {
				ok = false
				break
			}
		}
		if ok {
			return c
		}
	}
	return cands[0]
}

// nestedMap returns the single nested list of list that has one key and
// one other leaf (a CONFIG_DB "map" row), or nil.
func nestedMap(list *node) *node {
	var found *node
	for _, c := range list.children {
		if c.kind == kList && len(c.keys) == 1 && len(c.children) == 2 {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}
