package gnmicore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/yangval"
)

// Operation kinds of a SetRequest, in the order a target applies them
// (gNMI specification 3.4.3: deletes, then replaces, then updates).
const (
	OpDelete  = "delete"
	OpReplace = "replace"
	OpUpdate  = "update"
)

// Op is one operation of a SetRequest: a gNMI path string
// (/qos/queues/queue[name=Q3]) and, for replace and update, its JSON_IETF
// (RFC 7951) value. A plan's change carries one Op per payload line, as
// compact JSON, so a saved plan holds exactly the request Apply sends.
type Op struct {
	Op   string          `json:"op"`
	Path string          `json:"path"`
	Val  json.RawMessage `json:"val,omitempty"`
}

// Line is the op as one line of JSON.
func (o Op) Line() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(o)
	return strings.TrimSuffix(b.String(), "\n")
}

// ParseLine reads a payload line written by Line.
func ParseLine(s string) (Op, error) {
	var o Op
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return Op{}, fmt.Errorf("payload line is not a gNMI operation: %w", err)
	}
	switch o.Op {
	case OpDelete:
		if len(o.Val) != 0 {
			return Op{}, fmt.Errorf("payload line: delete %s carries a value", o.Path)
		}
	case OpReplace, OpUpdate:
		if len(o.Val) == 0 || !json.Valid(o.Val) {
			return Op{}, fmt.Errorf("payload line: %s %s needs a JSON value", o.Op, o.Path)
		}
	default:
		return Op{}, fmt.Errorf("payload line: unknown operation %q", o.Op)
	}
	if _, err := yangval.ParsePath(o.Path); err != nil || !strings.HasPrefix(o.Path, "/") {
		return Op{}, fmt.Errorf("payload line: bad path %q", o.Path)
	}
	return o, nil
}

// NewOp builds an op from a Go value (marshalled without HTML escaping).
func NewOp(op, path string, val any) Op {
	o := Op{Op: op, Path: path}
	if op != OpDelete {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(val); err != nil {
			panic(fmt.Sprintf("gnmicore: value at %s does not marshal: %v", path, err)) // values are built by the drivers
		}
		o.Val = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	return o
}

// Request builds the SetRequest of ops: deletes, replaces and updates
// each in the order given, values as JSON_IETF.
func Request(ops []Op) (*gpb.SetRequest, error) {
	req := &gpb.SetRequest{}
	for _, o := range ops {
		p, err := gnmitransport.Path(o.Path)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Op, o.Path, err)
		}
		u := &gpb.Update{Path: p, Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(o.Val)}}}
		switch o.Op {
		case OpDelete:
			req.Delete = append(req.Delete, p)
		case OpReplace:
			req.Replace = append(req.Replace, u)
		case OpUpdate:
			req.Update = append(req.Update, u)
		default:
			return nil, fmt.Errorf("unknown operation %q at %s", o.Op, o.Path)
		}
	}
	return req, nil
}

// Sorted returns ops in the order a target applies them (deletes, then
// replaces, then updates), each kind keeping its given order, with
// duplicates (same op and path) dropped after the first.
func Sorted(ops []Op) []Op {
	rank := map[string]int{OpDelete: 0, OpReplace: 1, OpUpdate: 2}
	seen := map[string]bool{}
	out := make([]Op, 0, len(ops))
	for _, o := range ops {
		k := o.Op + " " + o.Path
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Op] < rank[out[j].Op] })
	return out
}

// requestFile is the document `gnmic set --request-file` reads: the keys
// "deletes", "replaces" and "updates", each update or replace a "path", a
// "value" and an "encoding" (gnmic docs/cmd/set.md, "Template Format";
// pkg/config/set.go SetRequestFile and UpdateItem at openconfig/gnmic
// 5977503). gnmic sends the three lists as one SetRequest, which a target
// applies deletes first, then replaces, then updates (gNMI specification
// 3.4.3), the order fabctl's ops have anyway. gnmic renders the file as a
// Go text template first (pkg/gtemplate): a "{{" would be an action, so a
// spec string can never be one: the loader refuses port names holding
// it, and RequestFile writes every "{" of a "{{" pair as the JSON escape
// \u007b, which the template step leaves alone and gnmic's JSON/YAML
// reader turns back into "{" (names are data).
type requestFile struct {
	Deletes  []string `json:"deletes,omitempty"`
	Replaces []fileOp `json:"replaces,omitempty"`
	Updates  []fileOp `json:"updates,omitempty"`
}

type fileOp struct {
	Path     string          `json:"path"`
	Encoding string          `json:"encoding"`
	Value    json.RawMessage `json:"value"`
}

// fileEncoding is gnmic's spelling of JSON_IETF in a request file.
const fileEncoding = "json_ietf"

// RequestFile renders ops as a gnmic request file, one operation per
// line (a whole port's QoS binding or a policy reads as one line and
// diffs as one line).
func RequestFile(ops []Op) []byte {
	var del, rep, upd []string
	for _, o := range Sorted(ops) {
		b, _ := json.Marshal(o.Path)
		switch o.Op {
		case OpDelete:
			del = append(del, string(b))
		case OpReplace, OpUpdate:
			line := `{"path": ` + string(b) + `, "encoding": "` + fileEncoding + `", "value": ` + string(o.Val) + `}`
			if o.Op == OpReplace {
				rep = append(rep, line)
			} else {
				upd = append(upd, line)
			}
		}
	}
	var b strings.Builder
	b.WriteString("{")
	sep := "\n"
	for _, l := range []struct {
		name  string
		items []string
	}{{"deletes", del}, {"replaces", rep}, {"updates", upd}} {
		if len(l.items) == 0 {
			continue
		}
		b.WriteString(sep + "  \"" + l.name + "\": [\n    ")
		b.WriteString(strings.Join(l.items, ",\n    "))
		b.WriteString("\n  ]")
		sep = ",\n"
	}
	b.WriteString("\n}\n")
	return []byte(EscapeTemplate(b.String()))
}

// EscapeTemplate makes JSON text inert under a Go text template with the
// default delimiters: every "{{" becomes "{\u007b". In JSON a "{{" can
// only be inside a string (an object never opens with an object), where
// \u007b is the same character to any JSON or YAML reader.
func EscapeTemplate(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return strings.ReplaceAll(s, "{{", `{\u007b`)
}

// ParseRequestFile reads a request file in gnmic's format back into ops;
// keys gnmic does not know, and encodings other than JSON_IETF, are
// refused, so a file gnmic would half-read does not pass.
func ParseRequestFile(b []byte) ([]Op, error) {
	var f requestFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a gnmic SetRequest file: %w", err)
	}
	var out []Op
	for _, p := range f.Deletes {
		out = append(out, Op{Op: OpDelete, Path: p})
	}
	for _, l := range []struct {
		op  string
		ops []fileOp
	}{{OpReplace, f.Replaces}, {OpUpdate, f.Updates}} {
		for _, u := range l.ops {
			if !strings.EqualFold(u.Encoding, fileEncoding) {
				return nil, fmt.Errorf("%s %s: encoding %q, want %q", l.op, u.Path, u.Encoding, fileEncoding)
			}
			if len(u.Value) == 0 {
				return nil, fmt.Errorf("%s %s: no value", l.op, u.Path)
			}
			out = append(out, Op{Op: l.op, Path: u.Path, Val: u.Value})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("not a gnmic SetRequest file: no deletes, replaces or updates (gnmic would send an empty Set)")
	}
	return out, nil
}

// SetOps converts ops into yangval's form for offline validation
// (Schema.ValidateSet).
func SetOps(ops []Op) ([]yangval.SetOp, error) {
	out := make([]yangval.SetOp, 0, len(ops))
	for _, o := range ops {
		elems, err := yangval.ParsePath(o.Path)
		if err != nil {
			return nil, err
		}
		so := yangval.SetOp{Path: elems}
		switch o.Op {
		case OpDelete:
			so.Op = yangval.OpDelete
		case OpReplace:
			so.Op = yangval.OpReplace
		case OpUpdate:
			so.Op = yangval.OpUpdate
		}
		if o.Op != OpDelete {
			if so.Value, err = Decode(o.Val); err != nil {
				return nil, fmt.Errorf("%s: %w", o.Path, err)
			}
		}
		out = append(out, so)
	}
	return out, nil
}

// Options tune the connections a Core opens: the gNMI transport's
// options, named here so that a platform driver needs only this package.
type Options = gnmitransport.Options

// Decode decodes JSON with numbers kept as json.Number (the transport's
// decoder of JSON_IETF values, for the drivers' readers).
func Decode(b []byte) (any, error) { return gnmitransport.Decode(b) }
