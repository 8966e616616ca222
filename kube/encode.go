package kube

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// compactJSON is the published form of spec.intent: encoding/json's
// encoding of v (field names, or json tag names, promoted fields of
// untagged embedded structs), without
//   - a struct field whose value is the zero value of its type (a nil
//     pointer, slice or map, 0, "", false, an all-zero array or struct,
//     a struct holding only a source position):
//     decoding leaves a missing field at its zero value, so the agent
//     decodes the same intent. A non-nil empty slice or map, and a pointer
//     to a zero value, are not zero and stay;
//   - the spec source positions (fields named Src): they say where the
//     spec file was on the controller, not what the host needs.
//
// Object keys are sorted, so equal values give equal bytes (the
// revision). A map or a type with its own JSON or text marshaller is
// written by encoding/json as it is.
//
// Why: every byte of an intent is paid by each write the apiserver
// makes (decoding, deep copies, managed fields, etcd, watch events).
// The full encoding of an 8-NIC host is 6.5 KB, of which two thirds are
// zero fields (the 64-entry DSCP table of a NIC that trusts PCP alone is
// 130 bytes); compact, it is about 1.9 KB. docs/kubernetes.md ("Scale").
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(2048)
	if err := writeCompact(&buf, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// ownMarshaler reports whether encoding/json would use the type's own
// marshaller.
func ownMarshaler(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

func writeLeaf(buf *bytes.Buffer, v reflect.Value) error {
	if !v.CanInterface() {
		return fmt.Errorf("intent encoding: %s value cannot be read (unexported)", v.Type())
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

func writeCompact(buf *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		buf.WriteString("null")
		return nil
	}
	if ownMarshaler(v.Type()) {
		return writeLeaf(buf, v)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return writeCompact(buf, v.Elem())
	case reflect.Struct:
		buf.WriteByte('{')
		n := 0
		for _, f := range fieldsOf(v.Type()) {
			fv, ok := fieldByIndex(v, f.index)
			if !ok || zero(fv) {
				continue
			}
			if n > 0 {
				buf.WriteByte(',')
			}
			n++
			buf.Write(f.key)
			if err := writeCompact(buf, fv); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return writeLeaf(buf, v) // []byte is base64; [N]byte a list of numbers
		}
		buf.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCompact(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	return writeLeaf(buf, v) // map, string, number, bool
}

// zero reports whether v is written as nothing: the zero value, or a
// struct or array whose published fields are all zero (a struct holding
// only a spec source position).
func zero(v reflect.Value) bool {
	if v.IsZero() {
		return true
	}
	if ownMarshaler(v.Type()) {
		return false
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			if fv, ok := fieldByIndex(v, f.index); ok && !zero(fv) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if !zero(v.Index(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// fieldByIndex is v.FieldByIndex, false through a nil embedded pointer.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

type jsonField struct {
	name  string
	key   []byte // "name":
	index []int
}

var fieldCache sync.Map // reflect.Type -> []jsonField

// fieldsOf are the fields encoding/json writes for a struct type, sorted
// by name, leaving out the fields named Src: exported fields under their
// name or json tag name, and the fields of an untagged embedded struct
// promoted (reflect.VisibleFields hides a field shadowed by a shallower
// one of the same name, as encoding/json does).
func fieldsOf(t reflect.Type) []jsonField {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]jsonField)
	}
	var out []jsonField
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			continue // promoted: its fields are listed on their own
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == "Src" {
			continue
		}
		k, _ := json.Marshal(name)
		out = append(out, jsonField{name: name, key: append(k, ':'), index: f.Index})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	fieldCache.Store(t, out)
	return out
}
