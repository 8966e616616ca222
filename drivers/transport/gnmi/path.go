package gnmitransport

import (
	"bytes"
	"encoding/json"
	"fmt"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/yangval"
)

// Path converts a gNMI path string to its proto form.
func Path(s string) (*gpb.Path, error) {
	elems, err := yangval.ParsePath(s)
	if err != nil {
		return nil, err
	}
	p := &gpb.Path{}
	for _, e := range elems {
		pe := &gpb.PathElem{Name: e.Name}
		if len(e.Keys) > 0 {
			pe.Key = make(map[string]string, len(e.Keys))
			for k, v := range e.Keys {
				pe.Key[k] = v
			}
		}
		p.Elem = append(p.Elem, pe)
	}
	return p, nil
}

// PathString renders a proto path (its prefix joined) as a string.
func PathString(prefix, p *gpb.Path) string {
	var elems []yangval.PathElem
	for _, pp := range []*gpb.Path{prefix, p} {
		for _, e := range pp.GetElem() {
			elems = append(elems, yangval.PathElem{Name: e.GetName(), Keys: e.GetKey()})
		}
	}
	return yangval.PathString(elems)
}

// Decode decodes JSON with numbers kept as json.Number.
func Decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// unwrap turns the value a target returned for a Get of path into the
// node's own value: targets answer /qos with either the container's
// members or {"openconfig-qos:qos": {...}}, and a keyless list path with
// the entries or an object holding them.
func unwrap(path string, v any) any {
	elems, err := yangval.ParsePath(path)
	if err != nil || len(elems) == 0 {
		return v
	}
	last := elems[len(elems)-1]
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for k, inner := range m {
		if jsontree.LocalName(k) != jsontree.LocalName(last.Name) {
			return v
		}
		// A keyed list entry's value is the entry itself, which may hold
		// a single member of the list's name only by coincidence: unwrap
		// only a container, a keyless list, or an array.
		if a, isArray := inner.([]any); isArray && last.Keys != nil && len(a) == 1 {
			return a[0]
		}
		return inner
	}
	return v
}
