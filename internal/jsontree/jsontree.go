// Package jsontree holds the helpers for decoded JSON trees
// (map[string]any objects, []any arrays, scalars) that the JSON-speaking
// drivers and their emulators share: the SONiC driver and emulator
// (config_db JSON patches), the gNMI driver core and the gNMI target
// (RFC 7951 JSON_IETF). It imports only the standard library.
package jsontree

import "strings"

// DeepCopy copies a decoded JSON value: objects and arrays are copied
// all the way down, scalars are shared (they are immutable).
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = DeepCopy(e)
		}
		return a
	}
	return v
}

// LocalName strips an RFC 7951 module prefix from a member name:
// "openconfig-qos:qos" -> "qos".
func LocalName(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}
