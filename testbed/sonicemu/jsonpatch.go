package sonicemu

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/jsontree"
)

// This is RFC 6902 JSON Patch over a decoded JSON document, written from
// the RFC (sections 4.1-4.6) with the error texts of python-jsonpatch,
// which SONiC's generic config updater (GCU) uses: the real
// `config apply-patch` prints them after "Failed to apply patch due to: ".

// patchOp is one operation.
type patchOp struct {
	Op    string          `json:"op"`
	Path  *string         `json:"path"`
	From  *string         `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

type patchError struct{ msg string }

func (e *patchError) Error() string { return e.msg }

func perr(format string, a ...any) error { return &patchError{fmt.Sprintf(format, a...)} }

// parsePatch decodes a JSON patch document.
func parsePatch(b []byte) ([]patchOp, error) {
	var ops []patchOp
	if err := json.Unmarshal(b, &ops); err != nil {
		return nil, perr("Expecting value: invalid JSON patch: %v", err)
	}
	for _, op := range ops {
		if op.Path == nil {
			return nil, perr("Operation must have a 'path' member")
		}
		switch op.Op {
		case "add", "replace", "test":
			if op.Value == nil {
				return nil, perr("The operation does not contain a 'value' member")
			}
		case "move", "copy":
			if op.From == nil {
				return nil, perr("The operation does not contain a 'from' member")
			}
		case "remove":
		case "":
			return nil, perr("Operation does not contain 'op' member")
		default:
			return nil, perr("Unknown operation %q", op.Op)
		}
	}
	return ops, nil
}

// pointer splits an RFC 6901 JSON pointer.
func pointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, perr("Location must start with /")
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// resolve walks to the parent of the pointer's last token.
func resolve(doc any, parts []string, path string) (any, error) {
	cur := doc
	for _, p := range parts {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, perr("member '%s' not found in %s", p, path)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, perr("index '%s' out of range", p)
			}
			cur = c[i]
		default:
			return nil, perr("Unable to resolve path %s", path)
		}
	}
	return cur, nil
}

// applyPatch applies ops to a copy of doc; doc itself is never changed,
// so a failing patch changes nothing (all or nothing).
func applyPatch(doc map[string]any, ops []patchOp) (map[string]any, error) {
	root := any(jsontree.DeepCopy(doc))
	for _, op := range ops {
		var err error
		root, err = applyOp(root, op)
		if err != nil {
			return nil, err
		}
	}
	m, ok := root.(map[string]any)
	if !ok {
		return nil, perr("the patch replaced the document root with a non-object")
	}
	return m, nil
}

func applyOp(root any, op patchOp) (any, error) {
	path := *op.Path
	parts, err := pointer(path)
	if err != nil {
		return nil, err
	}
	var value any
	if op.Value != nil {
		if err := json.Unmarshal(op.Value, &value); err != nil {
			return nil, perr("invalid value for %s: %v", path, err)
		}
	}
	switch op.Op {
	case "add":
		return add(root, parts, path, value)
	case "remove":
		return remove(root, parts, path)
	case "replace":
		if len(parts) == 0 {
			return value, nil
		}
		parent, err := resolve(root, parts[:len(parts)-1], path)
		if err != nil {
			return nil, err
		}
		last := parts[len(parts)-1]
		switch p := parent.(type) {
		case map[string]any:
			if _, ok := p[last]; !ok {
				return nil, perr("can't replace a non-existent object '%s'", last)
			}
			p[last] = value
		case []any:
			i, err := strconv.Atoi(last)
			if err != nil || i < 0 || i >= len(p) {
				return nil, perr("can't replace outside of list")
			}
			p[i] = value
		default:
			return nil, perr("Unable to resolve path %s", path)
		}
		return root, nil
	case "test":
		got, err := resolve(root, parts, path)
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(got, value) {
			return nil, perr("%v (%T) is not equal to tested value %v (%T)", got, got, value, value)
		}
		return root, nil
	case "move", "copy":
		from, err := pointer(*op.From)
		if err != nil {
			return nil, err
		}
		v, err := resolve(root, from, *op.From)
		if err != nil {
			return nil, err
		}
		v = jsontree.DeepCopy(v)
		if op.Op == "move" {
			if strings.HasPrefix(path+"/", *op.From+"/") && path != *op.From {
				return nil, perr("Cannot move values into their own children")
			}
			if root, err = remove(root, from, *op.From); err != nil {
				return nil, err
			}
		}
		return add(root, parts, path, v)
	}
	return nil, perr("Unknown operation %q", op.Op)
}

func add(root any, parts []string, path string, value any) (any, error) {
	if len(parts) == 0 {
		return value, nil
	}
	parent, err := resolve(root, parts[:len(parts)-1], path)
	if err != nil {
		return nil, err
	}
	last := parts[len(parts)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = value
		return root, nil
	case []any:
		// Arrays are replaced through their parent so the new slice lands.
		var i int
		if last == "-" {
			i = len(p)
		} else if i, err = strconv.Atoi(last); err != nil || i < 0 || i > len(p) {
			return nil, perr("can't insert outside of list")
		}
		n := append(append(append([]any{}, p[:i]...), value), p[i:]...)
		return setAt(root, parts[:len(parts)-1], n)
	}
	return nil, perr("Unable to resolve path %s", path)
}

func remove(root any, parts []string, path string) (any, error) {
	if len(parts) == 0 {
		return nil, perr("can't remove the whole document")
	}
	parent, err := resolve(root, parts[:len(parts)-1], path)
	if err != nil {
		return nil, err
	}
	last := parts[len(parts)-1]
	switch p := parent.(type) {
	case map[string]any:
		if _, ok := p[last]; !ok {
			return nil, perr("can't remove a non-existent object '%s'", last)
		}
		delete(p, last)
		return root, nil
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(p) {
			return nil, perr("can't remove a non-existent object '%s'", last)
		}
		n := append(append([]any{}, p[:i]...), p[i+1:]...)
		return setAt(root, parts[:len(parts)-1], n)
	}
	return nil, perr("Unable to resolve path %s", path)
}

func setAt(root any, parts []string, v any) (any, error) {
	if len(parts) == 0 {
		return v, nil
	}
	parent, err := resolve(root, parts[:len(parts)-1], "")
	if err != nil {
		return nil, err
	}
	last := parts[len(parts)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
	case []any:
		i, _ := strconv.Atoi(last)
		p[i] = v
	}
	return root, nil
}
