package sonic

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

const platform = "sonic"

// corpusDir is the SONiC vendor corpus.
var corpusDir = filepath.Join("..", "..", "..", "testdata", "vendor", platform)

// shape is one row of shapes.txt compiled to a matcher (switchtest: the
// notation of docs/vendor-sources.md); CONFIG_DB rows also get table, key
// and field matchers.
type shape struct {
	*switchtest.Shape
	text, kind, status, evidence string
	table                        string
	key                          *shape
	fields                       []fieldShape
}

type fieldShape struct{ name, value *shape }

// sonicPlaceholders narrow the notation for SONiC: CONFIG_DB names and
// keys, Ethernet ports, PFC priority lists, and the PATCH path parts.
var sonicPlaceholders = map[string]string{
	"word":  `[A-Za-z0-9_.:\-]+`,
	"if":    `Ethernet[0-9]+`,
	"list":  `(?:[0-7](?:,[0-7])*)?`,
	"path":  `/[^\s]+`,
	"TABLE": `[A-Z][A-Z0-9_]*`, "key": `[^/]+`, "field": `[^/]+`,
}

func compile(pat string) (*shape, error) {
	c, err := switchtest.CompileShape(pat, sonicPlaceholders)
	if err != nil {
		return nil, err
	}
	return &shape{Shape: c, text: pat}, nil
}

func (s *shape) match(v string) bool { return s.Match(v) }

// loadShapes reads shapes.txt (switchtest.LoadShapes: malformed rows and
// evidence pointing outside the corpus fail) and compiles every row.
func loadShapes(t testing.TB) []*shape {
	t.Helper()
	var out []*shape
	for _, r := range switchtest.LoadShapes(t, platform) {
		s, err := compileRow(r.Text)
		if err != nil {
			t.Fatalf("shapes.txt:%d: %v", r.Line, err)
		}
		s.kind, s.status, s.evidence = r.Kind, r.Status, r.Evidence
		out = append(out, s)
	}
	return out
}

// compileRow compiles a shape row; CONFIG_DB rows get table, key and
// field matchers.
func compileRow(text string) (*shape, error) {
	if !strings.HasPrefix(text, "CONFIG_DB ") {
		return compile(text)
	}
	toks := strings.Fields(strings.TrimPrefix(text, "CONFIG_DB "))
	table, key, ok := strings.Cut(toks[0], "|")
	if !ok {
		return nil, fmt.Errorf("CONFIG_DB row without a key: %q", text)
	}
	s := &shape{text: text, table: table}
	var err error
	if s.key, err = compile(key); err != nil {
		return nil, err
	}
	for _, tok := range toks[1:] {
		f, v, ok := strings.Cut(tok, "=")
		if !ok {
			return nil, fmt.Errorf("field %q without =", tok)
		}
		var fs fieldShape
		if fs.name, err = compile(f); err != nil {
			return nil, err
		}
		if fs.value, err = compile(v); err != nil {
			return nil, err
		}
		s.fields = append(s.fields, fs)
	}
	return s, nil
}

// sent is the driver's usable vocabulary: rows with status SOURCED or DERIVED.
func sent(all []*shape) []*shape {
	var out []*shape
	for _, s := range all {
		if s.status == "SOURCED" || s.status == "DERIVED" {
			out = append(out, s)
		}
	}
	return out
}

// rowShape finds the CONFIG_DB shape of a row write: every field (with
// its value, or alone for a removal) matched by one shape.
func rowShape(shapes []*shape, table, key string, fields map[string]string, removal bool) *shape {
	for _, s := range shapes {
		if s.table != table || !s.key.match(key) {
			continue
		}
		all := true
		for f, v := range fields {
			ok := false
			for _, fs := range s.fields {
				if fs.name.match(f) && (removal || fs.value.match(v)) {
					ok = true
					break
				}
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return s
		}
	}
	return nil
}

// shapesOf maps every line the emulator received to the shape it has
// ("" and the line when it has none). Heredoc bodies of patch files are
// checked op by op: the PATCH notation and the CONFIG_DB row written.
func shapesOf(t testing.TB, shapes []*shape, lines []string) (used map[string]bool, bad []string) {
	used = map[string]bool{}
	var cmdShapes, rows []*shape
	for _, s := range sent(shapes) {
		if s.table != "" {
			rows = append(rows, s)
		} else {
			cmdShapes = append(cmdShapes, s)
		}
	}
	find := func(v string) *shape {
		for _, s := range cmdShapes {
			if s.match(v) {
				return s
			}
		}
		return nil
	}
	heredoc := regexp.MustCompile(`^cat > (\S+) <<'FABCTL_EOF'$`)
	inDoc, docFile := false, ""
	for _, l := range lines {
		if inDoc {
			if l == "FABCTL_EOF" {
				inDoc = false
				continue
			}
			if strings.HasSuffix(docFile, "-prior.json") {
				continue // the device's own CONFIG_DB, written back by config replace
			}
			op := strings.TrimSuffix(strings.TrimSpace(l), ",")
			if op == "[" || op == "]" {
				continue
			}
			var o struct {
				Op    string          `json:"op"`
				Path  string          `json:"path"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal([]byte(op), &o); err != nil {
				bad = append(bad, "patch line not a JSON op: "+l)
				continue
			}
			parts, _ := split(o.Path)
			notation := "PATCH " + o.Op + " " + o.Path
			s := find(notation)
			if s == nil {
				bad = append(bad, notation+"    ("+l+")")
			} else {
				used[s.text] = true
			}
			if len(parts) < 2 {
				continue
			}
			fields := map[string]string{}
			switch {
			case len(parts) == 3:
				var v string
				_ = json.Unmarshal(o.Value, &v)
				fields[parts[2]] = v
			case o.Op == "add":
				if err := json.Unmarshal(o.Value, &fields); err != nil {
					bad = append(bad, "row value not an object of strings: "+l)
					continue
				}
			}
			if rs := rowShape(rows, parts[0], parts[1], fields, o.Op == "remove"); rs == nil {
				bad = append(bad, fmt.Sprintf("CONFIG_DB %s|%s %v (%s)", parts[0], parts[1], fields, o.Op))
			} else {
				used[rs.text] = true
			}
			continue
		}
		if strings.TrimSpace(l) == "" {
			continue // a bare return (the transport finding the prompt), no command
		}
		if m := heredoc.FindStringSubmatch(l); m != nil {
			inDoc, docFile = true, m[1]
		}
		if s := find(l); s != nil {
			used[s.text] = true
		} else {
			bad = append(bad, l)
		}
	}
	return used, bad
}

// exercise drives the driver through every path that sends something:
// plan/apply from factory default (dynamic and traditional buffer model),
// a PCP switch, the template's overlapping BUFFER_PG rows, drift repair,
// a refused patch (checkpoint rollback), Rollback (config replace), Save
// and Read. It returns every line each emulator received.
func exercise(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	// Dynamic model, template rows present, full cycle.
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	r.emu.Edit(template)
	_, _, steps := r.plan(t)
	res, err := r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Save(ctx, r.target); err != nil {
		t.Fatal(err)
	}
	if _, err := r.drv.ReadLinks(ctx, r.target); err != nil {
		t.Fatal(err)
	}
	r.emu.Edit(func(db map[string]any) {
		db["PORT_QOS_MAP"].(map[string]any)["Ethernet0"].(map[string]any)["pfc_enable"] = "3,4"
		delete(db["BUFFER_PG"].(map[string]any), "Ethernet4|3")
	})
	// More lossless classes and a lossy one dropped: keys, ranges, removals.
	r.sw.TCs = append(r.sw.TCs, intent.TC{TC: 4, Lossless: true, Bandwidth: 10})
	r.applyAll(t)
	for i := range r.sw.TCs {
		if r.sw.TCs[i].TC == 4 {
			r.sw.TCs[i].Lossless = false
		}
	}
	r.applyAll(t)
	if err := r.drv.Rollback(ctx, r.target, res); err != nil {
		t.Fatal(err)
	}
	r.emu.RejectPatches("Modification of PFC_WD table is illegal")
	_, _, steps = r.plan(t)
	if _, err := r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{}); err == nil {
		t.Fatal("rejected patch applied")
	}
	lines = append(lines, r.emu.Commands()...)
	// PCP switch.
	p := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	p.sw.Trust = spec.TrustPCP
	for i := range p.sw.Ports {
		p.sw.Ports[i].Trust = spec.TrustPCP
	}
	p.applyAll(t)
	lines = append(lines, p.emu.Commands()...)
	// Traditional model.
	tr := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "traditional"})
	tr.applyAll(t)
	if err := tr.drv.Save(ctx, tr.target); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.drv.ReadCounters(ctx, tr.target); err != nil { // a telemetry poll (counters.go)
		t.Fatal(err)
	}
	lines = append(lines, tr.emu.Commands()...)
	return lines
}

// TestShapesConformance: every command and CONFIG_DB row shape the driver
// sends is a SOURCED or DERIVED row of testdata/vendor/sonic/shapes.txt.
func TestShapesConformance(t *testing.T) {
	shapes := loadShapes(t)
	used, bad := shapesOf(t, shapes, exercise(t))
	for _, b := range bad {
		t.Errorf("sent without a SOURCED/DERIVED shape in shapes.txt: %s", b)
	}
	var list []string
	for s := range used {
		list = append(list, s)
	}
	sort.Strings(list)
	t.Logf("%d shapes used:\n%s", len(list), strings.Join(list, "\n"))
	// The index has no CONTRADICTED or NO-SOURCE row: the driver sends
	// none (rows kept for the record are comments).
	for _, s := range shapes {
		if s.status == "CONTRADICTED" || s.status == "NO-SOURCE" {
			t.Errorf("shapes.txt still lists %s %q", s.status, s.text)
		}
	}
}

// TestShapesCheckerFails: the checker refuses an undocumented form (it
// cannot pass vacuously).
func TestShapesCheckerFails(t *testing.T) {
	shapes := loadShapes(t)
	for _, l := range []string{
		"sudo config reload -y",
		"show running-config",
		"cat > /tmp/x.json <<'FABCTL_EOF'", `{"op":"add","path":"/PORT/Ethernet0/mtu","value":"9022x"}`, "FABCTL_EOF",
		"cat > /tmp/y.json <<'FABCTL_EOF'", `{"op":"add","path":"/PORT_QOS_MAP/global/dot1p_to_tc_map","value":"FABCTL"}`, "FABCTL_EOF",
		"cat > /tmp/z.json <<'FABCTL_EOF'", `{"op":"add","path":"/BUFFER_PROFILE/FABCTL_HEADROOM","value":{"pool":"ingress_lossless_pool","xon":"0"}}`, "FABCTL_EOF",
		"cat > /tmp/w.json <<'FABCTL_EOF'", `{"op":"add","path":"/PORT/Ethernet0/mtu","value":"9300"}`, "FABCTL_EOF",
	} {
		if _, bad := shapesOf(t, shapes, []string{l}); len(bad) == 0 && !strings.HasPrefix(l, "cat >") && l != "FABCTL_EOF" && !strings.HasPrefix(l, "{") {
			t.Errorf("undocumented command %q passed", l)
		}
	}
	_, bad := shapesOf(t, shapes, []string{
		"cat > /tmp/x.json <<'FABCTL_EOF'",
		`{"op":"add","path":"/PORT_QOS_MAP/global/dot1p_to_tc_map","value":"FABCTL"}`,
		`{"op":"add","path":"/BUFFER_PROFILE/FABCTL_HEADROOM","value":{"pool":"ingress_lossless_pool","xon":"0"}}`,
		`{"op":"add","path":"/PORT/Ethernet0/mtu","value":"9300"}`,
		`{"op":"replace","path":"/PORT/Ethernet0/mtu","value":"9000"}`,
		"FABCTL_EOF",
	})
	if len(bad) != 4 { // global dot1p, BUFFER_PROFILE, mtu 9300; replace op
		t.Fatalf("checker accepted undocumented rows: %d refusals %v", len(bad), bad)
	}
}
