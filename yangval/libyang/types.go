package libyang

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
)

// Kind is the class of constraint a data tree violates.
type Kind string

// The kinds of Error. KindIfFeature is a node the models define but the
// context's feature set disables.
const (
	KindMust      Kind = "must"
	KindWhen      Kind = "when"
	KindLeafref   Kind = "leafref"
	KindMandatory Kind = "mandatory"
	KindIfFeature Kind = "if-feature"
	KindType      Kind = "type"     // range, length, pattern, enum, identity, JSON type
	KindUnknown   Kind = "unknown"  // no such node in the models
	KindElements  Kind = "elements" // min-elements / max-elements
	KindUnique    Kind = "unique"   // unique statement, duplicate list entries
	KindSyntax    Kind = "syntax"   // not JSON, wrong JSON shape, bad path
	KindOther     Kind = "other"
)

// String returns the kind's name.
func (k Kind) String() string { return string(k) }

// Error is one problem libyang found in a data tree.
type Error struct {
	Path       string // data path, /module:top/list[key='v']/leaf
	Kind       Kind
	Message    string // libyang's message (a must's error-message when the model has one)
	Constraint string // the failed expression: must/when XPath, leafref path, mandatory node, if-feature
	AppTag     string // error-app-tag, if any
}

func (e *Error) Error() string {
	s := e.Path + ": " + e.Message
	if e.Constraint != "" && !strings.Contains(e.Message, e.Constraint) {
		s += " [" + string(e.Kind) + " " + e.Constraint + "]"
	} else {
		s += " [" + string(e.Kind) + "]"
	}
	return s
}

// Errors is every problem found in one validation, in the order found.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Config describes a context.
type Config struct {
	// Dir holds the .yang files (flat). Every file in it can be imported;
	// none is read except through Modules and their imports.
	Dir string
	// Modules are loaded and implemented, in this order (a module whose
	// features matter is loaded before the modules that import it).
	Modules []string
	// Features enabled per module ("*" enables all). A module not named
	// here has every feature disabled.
	Features map[string][]string
	// Rewrites are applied to the module texts in memory before loading.
	Rewrites []Rewrite
	// Contexts is the number of libyang contexts in the pool, that is
	// the validations that run in parallel (default GOMAXPROCS).
	Contexts int
}

// Options tune a validation.
type Options struct {
	// All validates every implemented module: a module without data in
	// the tree must then have none of its mandatory top-level nodes. The
	// default (false) is libyang's LYD_VALIDATE_PRESENT: only modules
	// with data in the tree are validated, as a device validates the
	// configuration of the models it is given.
	All bool
	// MaxErrors bounds the problems reported (default 100).
	MaxErrors int
	// Stats, when set, receives what the validation covered (added to
	// its counts, so one Stats can sum many validations).
	Stats *Stats
}

// Stats counts what validations covered: the data nodes of the validated
// trees (after any invalid node was reported and removed), the must
// expressions and when conditions libyang evaluated on them (one per
// instance of a schema node that carries one), and the leafref values it
// resolved. Counted after validation; a build without libyang counts
// nothing. A Stats is not safe for concurrent use: give each goroutine
// its own and add them up.
type Stats struct {
	Validations, Nodes, Musts, Whens, Leafrefs int64
}

// Constraints is the number of must, when and leafref evaluations.
func (s *Stats) Constraints() int64 { return s.Musts + s.Whens + s.Leafrefs }

func (o Options) max() int {
	if o.MaxErrors <= 0 {
		return 100
	}
	return o.MaxErrors
}

// SetRequest is a gNMI SetRequest in the form `fabctl render` writes
// (gnmi-setrequest.json, gnmic's request-file format: "deletes",
// "replaces" and "updates", each update a "path", an "encoding" and a
// "value"): JSON_IETF values at gNMI path strings.
type SetRequest struct {
	Delete  []string `json:"deletes,omitempty"`
	Replace []Update `json:"replaces,omitempty"`
	Update  []Update `json:"updates,omitempty"`
}

// Update is one replace or update of a SetRequest.
type Update struct {
	Path     string          `json:"path"`
	Encoding string          `json:"encoding,omitempty"` // json_ietf (the only one fabctl writes)
	Val      json.RawMessage `json:"value"`
}

// ConfigDB is a SONiC CONFIG_DB document as config_db.json holds it:
// table -> key -> field -> value. Values are strings (or JSON arrays for
// leaf-lists; a field "name@" holds a comma-separated leaf-list).
type ConfigDB map[string]map[string]map[string]any

// MergeConfigDB returns base with patch's rows merged over it, field by
// field (a patch value replaces the base value): the configuration a
// rendered fragment leaves on a running switch.
func MergeConfigDB(base, patch ConfigDB) ConfigDB {
	out := ConfigDB{}
	for _, db := range []ConfigDB{base, patch} {
		for t, rows := range db {
			if out[t] == nil {
				out[t] = map[string]map[string]any{}
			}
			for k, fields := range rows {
				if out[t][k] == nil {
					out[t][k] = map[string]any{}
				}
				for f, v := range fields {
					out[t][k][f] = v
				}
			}
		}
	}
	return out
}

// ErrUnavailable is returned by every function of a build without
// libyang (built without the libyang tag, or without cgo).
var ErrUnavailable = errors.New("libyang: this build has no libyang (build with -tags libyang, as make test does when libyang2-dev and pkg-config are installed)")

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
