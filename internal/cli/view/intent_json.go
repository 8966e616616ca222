package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// IntentJSON is the JSON view of a compiled intent (intent.Switch, Host
// or SubnetManager) in render's --json document: the same values as the
// intent's own encoding (durations in nanoseconds, sizes in bytes, speeds
// in bit/s), with snake_case keys in the intent's field order. The
// intent's own encoding (Go field names) stays what the Kubernetes
// engine's FabricHostConfig objects, the agent protocol and saved plans
// carry; this view never feeds them.
//
// Keys come from the Go field names (snakeName), except where a field's
// name would mean something else in render's document (intentRenames).
// Map keys are data (NCCL variable names, NUMA node numbers, P_Keys) and
// are kept as the intent's encoding writes them. An object that would get
// one key twice is an error, not a silent drop.
func IntentJSON(v any) (any, error) {
	return intentValue(reflect.ValueOf(v), "")
}

// intentRenames names the fields whose snake_case name would collide
// with a key of render's device object of another meaning: the device's
// "address" is its plan address (switch.leaf1) and its "driver" the
// fabctl driver (eos, host), while intent.Device's Address is the
// management address and its Driver how the device is reached (ssh,
// gnmi, netns, local); spec.Connect's Kind (ssh, local, netns) is not the
// device's kind (switch, host, sm).
var intentRenames = map[reflect.Type]map[string]string{
	reflect.TypeOf(intent.Device{}): {"Address": "management_address", "Driver": "management_transport"},
	reflect.TypeOf(spec.Connect{}):  {"Kind": "method"},
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func intentValue(v reflect.Value, at string) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	if v.Type().Implements(jsonMarshaler) && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		// A type with its own encoding (spec.Source): take that encoding
		// and rename its keys; such types encode structs, not maps.
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		var tree any
		if err := json.Unmarshal(b, &tree); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return snakeKeys(tree), nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return intentValue(v.Elem(), at)
	case reflect.Struct:
		var obj orderedObject
		if err := intentFields(v, at, &obj); err != nil {
			return nil, err
		}
		return obj, nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil, nil
		}
		out := make([]any, v.Len())
		for i := range out {
			e, err := intentValue(v.Index(i), fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			var k string
			switch kv := it.Key(); kv.Kind() {
			case reflect.String:
				k = kv.String()
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				k = strconv.FormatInt(kv.Int(), 10)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				k = strconv.FormatUint(kv.Uint(), 10)
			default:
				return nil, fmt.Errorf("%s: map key of type %s", at, kv.Type())
			}
			e, err := intentValue(it.Value(), at+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	}
	return v.Interface(), nil
}

// intentFields appends a struct's exported fields to obj, embedded
// structs' fields in place (as encoding/json flattens them).
func intentFields(v reflect.Value, at string, obj *orderedObject) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if err := intentFields(v.Field(i), at, obj); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if strings.Contains(","+opts+",", ",omitempty,") && v.Field(i).IsZero() {
			continue
		}
		key := intentRenames[t][f.Name]
		if key == "" {
			if name == "" {
				name = f.Name
			}
			key = snakeName(name)
		}
		for _, m := range *obj {
			if m.key == key {
				return fmt.Errorf("%s: key %q twice in %s", at, key, t)
			}
		}
		e, err := intentValue(v.Field(i), at+"."+key)
		if err != nil {
			return err
		}
		*obj = append(*obj, orderedMember{key, e})
	}
	return nil
}

// snakeKeys renames every object key of a decoded JSON tree.
func snakeKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[snakeName(k)] = snakeKeys(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = snakeKeys(e)
		}
	}
	return v
}

// initialisms are the upper-case words of the intent's field names that
// the plain rule (a word starts at an upper-case letter after a lower-case
// one, or at the last upper-case letter of a run before a lower-case one)
// would cut wrongly: plurals (TCs, NICs), run-together initialisms
// (CNPDSCP, RDMAMTU, MaxQPWR) and mixed-case names (RoCE, IPoIB, PKey).
// Longest first. Written here rather than taken from a case-conversion
// library: none knows these words, and the rest is a dozen lines.
var initialisms = []string{
	"SL2VL", "IPoIB", "QoS", "CPUs", "PKeys", "PKey", "RoCE", "NCCL", "DSCP", "LLDP", "RDMA", "NUMA", "VLAN", "GUID",
	"NICs", "TCs", "QPs", "VLs", "CNP", "CPU", "CQE", "ECN", "IRQ", "MTU", "NIC", "PFC", "PID", "SGE",
	"CQ", "IB", "QP", "SL", "TC", "VL", "WR",
}

// snakeName converts a Go field name to snake_case: DSCPToTC ->
// dscp_to_tc, RDMAMTU -> rdma_mtu, QPsPerConn -> qps_per_conn.
func snakeName(s string) string {
	var words []string
	for len(s) > 0 {
		w := ""
		for _, in := range initialisms {
			if strings.HasPrefix(s, in) && (len(s) == len(in) || !unicode.IsLower(rune(s[len(in)]))) {
				w = in
				break
			}
		}
		if w == "" {
			n := 1
			for n < len(s) && unicode.IsUpper(rune(s[n])) && (n+1 == len(s) || !unicode.IsLower(rune(s[n+1]))) {
				n++ // an upper-case run up to the letter that starts the next word
			}
			for n < len(s) && !unicode.IsUpper(rune(s[n])) {
				n++
			}
			w = s[:n]
		}
		words = append(words, strings.ToLower(w))
		s = s[len(w):]
	}
	return strings.Join(words, "_")
}

// orderedObject is a JSON object written in its members' order.
type orderedObject []orderedMember

type orderedMember struct {
	key   string
	value any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.value); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimSuffix(e.Bytes(), []byte("\n")))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
