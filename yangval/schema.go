// Package yangval validates configuration payloads against YANG models that
// are loaded at run time with github.com/openconfig/goyang. No code is
// generated from the models: a Schema is built from the .yang files of a
// directory, and payloads are checked against it (RFC 7951 / JSON_IETF
// documents, gNMI-style paths, and SONiC CONFIG_DB tables).
package yangval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/openconfig/goyang/pkg/yang"
)

type nodeKind int

const (
	kContainer nodeKind = iota
	kList
	kLeaf
	kLeafList
	kAny // anydata / anyxml: content not checked
)

// node is the compiled form of a yang.Entry, with choice and case levels
// flattened away (they never appear in data) and types pre-compiled.
type node struct {
	e        *yang.Entry
	name     string
	module   string // module whose namespace the node belongs to
	kind     nodeKind
	config   bool
	parent   *node
	children map[string]*node
	keys     []string // list keys, in order
	// mandatory children (leaves with "mandatory true" not under a choice)
	mandatory []string
	typ       *ytype
	// refs maps a leafref path (as written in the YANG) used in typ to the
	// resolved target leaf; a missing entry means the path was not resolved.
	refs map[string]*node
	// refTarget is set when some leafref points at this leaf, so that the
	// values present in a payload are collected.
	refTarget bool
	// keySelfRef marks a list key leaf whose leafref points inside its own
	// entry (OpenConfig name -> ../config/name): checked as key consistency.
	keySelfRef bool
	keyRel     []string // keySelfRef: the path of the referenced leaf inside the entry
	spath      string   // schema path /module:top/child/...
}

// Schema is a set of YANG modules, parsed and compiled once. It is safe for
// concurrent use by multiple goroutines.
type Schema struct {
	modules *yang.Modules
	roots   map[string]*node   // "module:name" -> top-level node
	byName  map[string][]*node // "name" -> top-level nodes of that name
	tables  map[string][]*node // SONiC CONFIG_DB table name -> table containers
	types   map[*yang.YangType]*ytype
	dir     string
	// Unsupported lists model constructs the validator does not check (for
	// example XSD patterns that cannot be translated to Go regular expressions
	// and leafref paths that could not be resolved). For reporting only.
	Unsupported []string
}

// Dir is the directory the models were loaded from (so that another
// validator, yangval/libyang, can load the same model set).
func (s *Schema) Dir() string { return s.dir }

// Load parses YANG modules from dir. With no module names every .yang file
// in dir is read; otherwise only the named modules (file names with or
// without ".yang") are read and their imports and includes are found in dir.
func Load(dir string, modules ...string) (*Schema, error) {
	ms := yang.NewModules()
	ms.AddPath(dir)
	var files []string
	if len(modules) == 0 {
		m, err := filepath.Glob(filepath.Join(dir, "*.yang"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("yangval: no .yang files in %s", dir)
		}
		files = m
	} else {
		for _, name := range modules {
			if !strings.HasSuffix(name, ".yang") {
				name += ".yang"
			}
			if !strings.ContainsRune(name, os.PathSeparator) {
				name = filepath.Join(dir, name)
			}
			files = append(files, name)
		}
	}
	sort.Strings(files)
	var errs []error
	for _, f := range files {
		if err := ms.Read(f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("yangval: reading modules: %w", errors.Join(errs...))
	}
	if perrs := ms.Process(); len(perrs) > 0 {
		return nil, fmt.Errorf("yangval: processing modules from %s: %w", dir, errors.Join(perrs...))
	}
	s := &Schema{
		dir:     dir,
		modules: ms,
		roots:   map[string]*node{},
		byName:  map[string][]*node{},
		tables:  map[string][]*node{},
		types:   map[*yang.YangType]*ytype{},
	}
	names := make([]string, 0, len(ms.Modules))
	seen := map[*yang.Module]bool{}
	for name, m := range ms.Modules {
		if seen[m] || strings.Contains(name, "@") {
			continue
		}
		seen[m] = true
		names = append(names, m.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		me := yang.ToEntry(ms.Modules[name])
		if errs := me.GetErrors(); len(errs) > 0 {
			return nil, fmt.Errorf("yangval: module %s: %w", name, errors.Join(errs...))
		}
		for _, cname := range sortedKeys(me.Dir) {
			ce := me.Dir[cname]
			if ce.RPC != nil || ce.Kind == yang.NotificationEntry {
				continue
			}
			s.addChildren(nil, me, name, func(n *node) {
				s.roots[n.module+":"+n.name] = n
				s.byName[n.name] = append(s.byName[n.name], n)
			}, cname)
		}
	}
	// second pass: leafref targets, SONiC table index
	for _, r := range s.sortedRoots() {
		s.walkNodes(r, func(n *node) {
			if n.typ != nil {
				s.resolveRefs(n, n.typ)
			}
			if n.kind == kList {
				for _, k := range n.keys {
					if kn := n.children[k]; kn != nil && kn.typ != nil && strings.HasPrefix(kn.typ.path, "../") &&
						!strings.HasPrefix(kn.typ.path, "../..") {
						kn.keySelfRef = true
						kn.keyRel = strings.Split(strings.TrimPrefix(stripPredicates(kn.typ.path), "../"), "/")
					}
				}
			}
		})
		if strings.HasPrefix(r.module, "sonic-") && r.kind == kContainer {
			for _, t := range r.children {
				if t.kind == kContainer {
					s.tables[t.name] = append(s.tables[t.name], t)
				}
			}
		}
	}
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func (s *Schema) sortedRoots() []*node {
	var out []*node
	for _, k := range sortedKeys(s.roots) {
		out = append(out, s.roots[k])
	}
	return out
}

func (s *Schema) walkNodes(n *node, f func(*node)) {
	f(n)
	for _, k := range sortedKeys(n.children) {
		s.walkNodes(n.children[k], f)
	}
}

// addChildren compiles the children named (or all children) of e into
// nodes, flattening choice and case statements, and hands each to add.
func (s *Schema) addChildren(parent *node, e *yang.Entry, defModule string, add func(*node), only ...string) {
	names := only
	if len(names) == 0 {
		names = sortedKeys(e.Dir)
	}
	for _, cname := range names {
		ce := e.Dir[cname]
		if ce == nil || ce.RPC != nil || ce.Kind == yang.NotificationEntry ||
			ce.Kind == yang.InputEntry || ce.Kind == yang.OutputEntry {
			continue
		}
		if ce.IsChoice() || ce.IsCase() {
			s.addChildren(parent, ce, defModule, add)
			continue
		}
		add(s.compile(parent, ce, defModule))
	}
}

func (s *Schema) compile(parent *node, e *yang.Entry, defModule string) *node {
	n := &node{e: e, name: e.Name, parent: parent, config: !e.ReadOnly()}
	n.module = defModule
	if m, err := e.InstantiatingModule(); err == nil && m != "" {
		n.module = m
	}
	if parent == nil {
		n.spath = "/" + n.module + ":" + n.name
	} else {
		n.spath = parent.spath + "/" + n.name
	}
	switch {
	case e.Kind == yang.AnyDataEntry || e.Kind == yang.AnyXMLEntry:
		n.kind = kAny
	case e.IsLeaf():
		n.kind = kLeaf
	case e.IsLeafList():
		n.kind = kLeafList
	case e.IsList():
		n.kind = kList
		n.keys = strings.Fields(e.Key)
	default:
		n.kind = kContainer
	}
	if n.kind == kLeaf || n.kind == kLeafList {
		n.typ = s.compileType(e.Type, e.Path())
		return n
	}
	n.children = map[string]*node{}
	s.addChildren(n, e, n.module, func(c *node) {
		n.children[c.name] = c
	})
	// mandatory leaves directly under this node (not under a choice)
	for _, k := range sortedKeys(e.Dir) {
		c := e.Dir[k]
		if _, hasWhen := c.GetWhenXPath(); hasWhen {
			continue // conditional: "when" is not evaluated
		}
		if l, ok := c.Node.(*yang.Leaf); ok && len(l.IfFeature) > 0 {
			// conditional on a platform feature, which goyang does not
			// evaluate (an SR Linux forwarding class's output/queue is
			// mandatory only with qos-multi-traffic-queue): libyang, with
			// the platform's features, decides (yangval/libyang)
			continue
		}
		if c.IsLeaf() && c.Mandatory == yang.TSTrue && !c.ReadOnly() {
			n.mandatory = append(n.mandatory, c.Name)
		}
	}
	return n
}

// child finds a data child by its JSON member name (with or without module
// qualification). ok is false when a module qualifier does not match.
func (n *node) child(name string) (c *node, qual string) {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		qual, name = name[:i], name[i+1:]
	}
	return n.children[name], qual
}

// suggest returns the closest name among candidates, or "".
func suggest(name string, candidates []string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := levenshteinDistance(name, c)
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	limit := len(name)/2 + 1
	if limit > 4 {
		limit = 4
	}
	if best == "" || bestD > limit {
		return ""
	}
	return best
}
