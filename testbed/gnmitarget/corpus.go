package gnmitarget

import (
	"encoding/json"
	"fmt"
	"os"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabctl/fabctl/yangval"
)

// Corpus is a set of schema violations (testdata/violations/<set>.json)
// that the target and `fabctl render --yang-dir` must both refuse: the
// same cases online and offline.
type Corpus struct {
	Interfaces []string    `json:"interfaces"` // Config.Interfaces of the device
	Base       []Op        `json:"base"`       // a valid configuration
	Violations []Violation `json:"violations"` // each applied after Base
}

// Op is one SetRequest operation: "delete", "replace" or "update", a
// gNMI path string and the JSON_IETF value.
type Op struct {
	Op   string          `json:"op"`
	Path string          `json:"path"`
	Val  json.RawMessage `json:"val,omitempty"`
}

// Violation is a request that must be refused with InvalidArgument whose
// message names Path and contains Reason.
type Violation struct {
	Name   string `json:"name"`
	Ops    []Op   `json:"ops"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Class is the constraint class (must, when, leafref, ...) of the
	// constraint corpus (testdata/constraints), whose violations only
	// libyang sees.
	Class string `json:"class,omitempty"`
	// LibYANG is what libyang's message says when libyang gives the
	// verdict (render --yang-dir of a libyang build) and it words the
	// problem differently from Reason; empty when Reason is libyang's.
	LibYANG string `json:"libyang,omitempty"`
	// Source is the model statement the violation breaks (file:line).
	Source string `json:"source,omitempty"`
}

// LoadCorpus reads a corpus file.
func LoadCorpus(file string) (*Corpus, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var c Corpus
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &c, nil
}

// SetOps converts ops into yangval's form.
func SetOps(ops []Op) ([]yangval.SetOp, error) {
	out := make([]yangval.SetOp, 0, len(ops))
	for _, o := range ops {
		elems, err := yangval.ParsePath(o.Path)
		if err != nil {
			return nil, err
		}
		so := yangval.SetOp{Path: elems}
		switch o.Op {
		case "delete":
			so.Op = yangval.OpDelete
		case "replace":
			so.Op = yangval.OpReplace
		case "update":
			so.Op = yangval.OpUpdate
		default:
			return nil, fmt.Errorf("%s: unknown operation %q", o.Path, o.Op)
		}
		if so.Op != yangval.OpDelete {
			if so.Value, err = decodeJSON(o.Val); err != nil {
				return nil, fmt.Errorf("%s: %w", o.Path, err)
			}
		}
		out = append(out, so)
	}
	return out, nil
}

// SetRequest builds the gNMI SetRequest of ops (JSON_IETF values).
func SetRequest(ops []Op) (*gpb.SetRequest, error) {
	req := &gpb.SetRequest{}
	for _, o := range ops {
		elems, err := yangval.ParsePath(o.Path)
		if err != nil {
			return nil, err
		}
		p := toPath(elems)
		u := &gpb.Update{Path: p, Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: o.Val}}}
		switch o.Op {
		case "delete":
			req.Delete = append(req.Delete, p)
		case "replace":
			req.Replace = append(req.Replace, u)
		case "update":
			req.Update = append(req.Update, u)
		default:
			return nil, fmt.Errorf("%s: unknown operation %q", o.Path, o.Op)
		}
	}
	return req, nil
}
