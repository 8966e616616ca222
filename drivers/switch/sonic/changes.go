package sonic

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/jsontree"
)

// Op is one RFC 6902 operation over CONFIG_DB paths (/TABLE/KEY[/FIELD]).
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func (o Op) line() string {
	b, _ := json.Marshal(o)
	return string(b)
}

func esc(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }

func ptr(parts ...string) string {
	for i, p := range parts {
		parts[i] = esc(p)
	}
	return "/" + strings.Join(parts, "/")
}

// owned rows are fabctl's whole (replaced as a row); shared rows hold
// fields fabctl does not manage (PORT speed, lanes, ...) and are patched
// field by field.
var sharedFields = map[string][]string{
	"PORT":         {"mtu"},
	"PORT_QOS_MAP": {"dscp_to_tc_map", "dot1p_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map", "pfc_enable", "pfcwd_sw_enable"},
	"CABLE_LENGTH": nil, // fields are port names
}

// fieldsOf are the fields fabctl settles in a shared row. Under
// PORT_QOS_MAP|global only dscp_to_tc_map takes effect
// (testdata/vendor/sonic/configdb-global-map-pfcwd.txt:20).
func fieldsOf(table, key string) []string {
	switch {
	case table == "PORT_QOS_MAP" && key == "global":
		return []string{"dscp_to_tc_map"}
	case table == "PFC_WD":
		return []string{"POLL_INTERVAL"}
	}
	return sharedFields[table]
}

func shared(table, key string) bool {
	_, ok := sharedFields[table]
	return ok || (table == "PFC_WD" && key == "GLOBAL")
}

type rowRef struct{ table, key string }

// rowsFor lists the CONFIG_DB rows that implement a state path.
func rowsFor(path string, sw *intent.Switch, model string) []rowRef {
	var out []rowRef
	allPorts := func(table string, suffix string) {
		for _, p := range sw.Ports {
			out = append(out, rowRef{table, p.Name + suffix})
		}
	}
	maps := []rowRef{{"DSCP_TO_TC_MAP", MapName}, {"DOT1P_TO_TC_MAP", MapName}, {"TC_TO_PRIORITY_GROUP_MAP", MapName},
		{"TC_TO_QUEUE_MAP", MapName}, {"MAP_PFC_PRIORITY_TO_QUEUE", MapName}, {"PORT_QOS_MAP", "global"}}
	switch {
	case path == "trust" || strings.HasPrefix(path, "dscp/"):
		out = append(out, maps...)
		allPorts("PORT_QOS_MAP", "")
	case strings.HasPrefix(path, "tc/"):
		parts := strings.Split(path, "/")
		tc, _ := strconv.Atoi(parts[1])
		out = append(out, rowRef{"SCHEDULER", schedName(tc)}, rowRef{"WRED_PROFILE", wredName(tc)})
		out = append(out, maps...)
		allPorts("PORT_QOS_MAP", "")
		allPorts("QUEUE", "|"+parts[1])
		if model != ModelTraditional {
			// The port's lossless PG rows as keys or ranges ("3-4"), and
			// this class's own key when it is not lossless: Apply's
			// effectivePatch replaces the live keys they overlap.
			ranges := pgRanges(losslessTCs(sw))
			for _, p := range sw.Ports {
				for _, r := range ranges {
					out = append(out, rowRef{"BUFFER_PG", p.Name + "|" + r})
				}
				if tc != 0 && !covered(ranges, tc) {
					out = append(out, rowRef{"BUFFER_PG", p.Name + "|" + parts[1]})
				}
			}
		}
	case strings.HasPrefix(path, "pfcwd/"):
		out = append(out, rowRef{"PFC_WD", "GLOBAL"})
		allPorts("PFC_WD", "")
		allPorts("PORT_QOS_MAP", "")
	case strings.HasPrefix(path, "port/"):
		rest := path[len("port/"):]
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return nil
		}
		port, attr := rest[:i], rest[i+1:]
		switch attr {
		case "mtu":
			out = append(out, rowRef{"PORT", port})
		case "pfc", "trust":
			out = append(out, maps...)
			out = append(out, rowRef{"PORT_QOS_MAP", port})
		case "pfcwd":
			out = append(out, rowRef{"PFC_WD", port}, rowRef{"PORT_QOS_MAP", port})
		case "cable":
			out = append(out, rowRef{"CABLE_LENGTH", CableTable})
		}
	}
	return out
}

// rowOps are the operations that bring one row to its desired content.
func rowOps(want DB, r rowRef) []Op {
	row, ok := want.row(r.table, r.key)
	if !shared(r.table, r.key) {
		if !ok {
			return []Op{{Op: "remove", Path: ptr(r.table, r.key)}}
		}
		return []Op{{Op: "add", Path: ptr(r.table, r.key), Value: copyRow(row)}}
	}
	fields := fieldsOf(r.table, r.key)
	switch {
	case r.table == "CABLE_LENGTH":
		for f := range row {
			fields = append(fields, f)
		}
		sort.Strings(fields)
	}
	var out []Op
	for _, f := range fields {
		if v, ok := row[f]; ok {
			out = append(out, Op{Op: "add", Path: ptr(r.table, r.key, f), Value: v})
		} else {
			out = append(out, Op{Op: "remove", Path: ptr(r.table, r.key, f)})
		}
	}
	return out
}

func copyRow(r map[string]string) map[string]string {
	out := make(map[string]string, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// changes groups a diff into change steps, each carrying the JSON patch
// operations (one per payload line) that settle its paths. An operation
// appears once, in the first step that needs it. Operations are written
// without knowing the live CONFIG_DB: Apply adds the parent tables and
// rows a patch needs and drops removals of what is already absent.
func changes(sw *intent.Switch, diff []intent.AttrChange, fields []intent.Field, model string) ([]drivers.Change, error) {
	want, err := DesiredFor(sw, model)
	if err != nil {
		return nil, err
	}
	// A row's operations are the same whichever path asks for it, and
	// two rows never share an operation path: settle each row once (a
	// factory-default switch has ~100 changed paths naming the same maps
	// and port rows over and over).
	seenRow := map[rowRef]bool{}
	seen := map[string]bool{}
	var out []drivers.Change
	for _, gr := range clicore.GroupDiff(diff, fields, groupOf, groupRank) {
		g := gr.Key
		var payload []string
		for _, p := range gr.Paths {
			for _, r := range rowsFor(p, sw, model) {
				if seenRow[r] {
					continue
				}
				seenRow[r] = true
				for _, op := range rowOps(want, r) {
					if seen[op.Path] {
						continue
					}
					seen[op.Path] = true
					payload = append(payload, op.line())
				}
			}
		}
		out = append(out, drivers.Change{Paths: gr.Paths, Summary: fmt.Sprintf("%s (%d setting(s))", g, len(gr.Paths)),
			Payload: payload, Disruptive: gr.Disruptive})
	}
	return out, nil
}

func groupOf(path string) string {
	switch {
	case path == "trust" || strings.HasPrefix(path, "dscp/"):
		return "classification (DSCP_TO_TC_MAP, PORT_QOS_MAP)"
	case strings.HasPrefix(path, "tc/"):
		return "traffic class " + strings.Split(path, "/")[1] + " (SCHEDULER, WRED_PROFILE, QUEUE, BUFFER_PG)"
	case strings.HasPrefix(path, "pfcwd/"):
		return "PFC watchdog (PFC_WD)"
	case strings.HasPrefix(path, "port/"):
		rest := path[len("port/"):]
		return "port " + rest[:max(strings.LastIndexByte(rest, '/'), 0)]
	}
	return path
}

func groupRank(g string) int {
	switch {
	case strings.HasPrefix(g, "classification"):
		return 0
	case strings.HasPrefix(g, "traffic class"):
		return 1
	case strings.HasPrefix(g, "PFC watchdog"):
		return 3
	}
	return 4
}

// effectivePatch turns the steps' operations into the patch sent to the
// switch, against its running CONFIG_DB: parents a patch adds into are
// created first, removals of absent paths are dropped, and rows or tables
// a removal leaves empty are removed too (GCU refuses empty tables). It
// returns the patch and the CONFIG_DB it should produce.
//
// A patch that changes anything first splits every row keyed by a list
// of ports (splitListRows, portlists.go): GCU validates the whole target
// CONFIG_DB against the SONiC YANG, whose PORT_QOS_MAP, QUEUE and
// BUFFER_PG keys are leafrefs to one PORT name each, so it refuses any
// patch whose target still holds one.
func effectivePatch(cur map[string]any, steps []drivers.Change) ([]Op, map[string]any, error) {
	ops, doc, err := effectiveOps(jsontree.DeepCopy(cur).(map[string]any), steps, nil)
	if err != nil || len(ops) == 0 {
		return ops, doc, err
	}
	fresh := jsontree.DeepCopy(cur).(map[string]any)
	split := splitAllListRows(fresh)
	if len(split) == 0 {
		return ops, doc, nil
	}
	return effectiveOps(fresh, steps, split)
}

// effectiveOps is effectivePatch's work on doc (changed in place), the
// operations starting with out.
func effectiveOps(doc map[string]any, steps []drivers.Change, out []Op) ([]Op, map[string]any, error) {
	for _, st := range steps {
		for _, line := range st.Payload {
			var op Op
			if err := json.Unmarshal([]byte(line), &op); err != nil {
				return nil, nil, fmt.Errorf("bad payload line %q: %w", line, err)
			}
			parts, err := split(op.Path)
			if err != nil || len(parts) == 0 {
				return nil, nil, fmt.Errorf("bad patch path %q", op.Path)
			}
			if parts[0] == "BUFFER_PG" && len(parts) >= 2 {
				// A BUFFER_PG row fabctl writes replaces the live keys of the
				// port it overlaps; a lossy class's key removes the live key
				// that covers its PG. Only in the dynamic model: in the
				// traditional one buffermgrd owns BUFFER_PG.
				if model(doc) == ModelTraditional {
					return nil, nil, fmt.Errorf("%s %s: the switch runs the traditional buffer model (DEVICE_METADATA|localhost buffer_model), where buffermgrd writes BUFFER_PG; plan again", op.Op, op.Path)
				}
				port, pgs, _ := strings.Cut(parts[1], "|")
				for _, k := range overlapping(doc, port, pgs) {
					if o, ok := removeOp(doc, []string{"BUFFER_PG", k}); ok {
						out = append(out, o)
					}
				}
			}
			switch op.Op {
			case "add":
				node := doc
				for i, p := range parts[:len(parts)-1] {
					next, ok := node[p].(map[string]any)
					if !ok {
						next = map[string]any{}
						node[p] = next
						out = append(out, Op{Op: "add", Path: "/" + strings.Join(escAll(parts[:i+1]), "/"), Value: map[string]any{}})
					}
					node = next
				}
				node[parts[len(parts)-1]] = toAny(op.Value)
				out = append(out, op)
			case "remove":
				if o, ok := removeOp(doc, parts); ok {
					out = append(out, o)
				}
			default:
				return nil, nil, fmt.Errorf("unsupported op %q in payload", op.Op)
			}
		}
	}
	return out, doc, nil
}

// covered reports whether a PG key list ("3-4", "6") covers pg.
func covered(keys []string, pg int) bool {
	for _, k := range keys {
		if lo, hi, ok := parsePG(k); ok && pg >= lo && pg <= hi {
			return true
		}
	}
	return false
}

// overlapping lists the live BUFFER_PG keys of a port that share a PG
// with pgs ("3", "3-4") other than pgs itself: the template's
// "<port>|3-4" row next to fabctl's "<port>|3", say. The CLI refuses
// overlapping PGs ("Buffer ... overlaps with existing ...",
// configdb-buffer-pg.txt:7-9); fabctl owns and replaces them.
func overlapping(doc map[string]any, port, pgs string) []string {
	lo, hi, ok := parsePG(pgs)
	if !ok {
		return nil
	}
	tab, _ := doc["BUFFER_PG"].(map[string]any)
	var out []string
	for k := range tab {
		p, s, _ := strings.Cut(k, "|")
		if p != port || s == pgs {
			continue
		}
		if l2, h2, ok := parsePG(s); ok && l2 <= hi && lo <= h2 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// removeOp removes /parts from doc, and the row or table it leaves empty
// (GCU refuses empty tables); it returns the operation, false when the
// path is absent.
func removeOp(doc map[string]any, parts []string) (Op, bool) {
	chain := []map[string]any{doc}
	node := doc
	for _, p := range parts[:len(parts)-1] {
		next, isMap := node[p].(map[string]any)
		if !isMap {
			return Op{}, false
		}
		node = next
		chain = append(chain, node)
	}
	if _, present := node[parts[len(parts)-1]]; !present {
		return Op{}, false
	}
	delete(node, parts[len(parts)-1])
	cut := len(parts)
	for i := len(chain) - 1; i >= 1 && len(chain[i]) == 0; i-- {
		cut = i
		delete(chain[i-1], parts[i-1])
	}
	return Op{Op: "remove", Path: "/" + strings.Join(escAll(parts[:cut]), "/")}, true
}

func escAll(parts []string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = esc(p)
	}
	return out
}

// model is the buffer model of a CONFIG_DB document.
func model(doc map[string]any) string {
	dm, _ := doc["DEVICE_METADATA"].(map[string]any)
	lh, _ := dm["localhost"].(map[string]any)
	if v, _ := lh["buffer_model"].(string); v == ModelDynamic {
		return ModelDynamic
	}
	return ModelTraditional
}

func split(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path must start with /")
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func toAny(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
