package switchtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCompileShape: the notation of docs/vendor-sources.md, each
// placeholder accepting its form and refusing others.
func TestCompileShape(t *testing.T) {
	for _, c := range []struct {
		shape string
		over  map[string]string
		yes   []string
		no    []string
	}{
		{"mtu <68-9214>", nil, []string{"mtu 68", "mtu 9214"}, []string{"mtu 67", "mtu 9215", "mtu 09000", "mtu x", "mtu 9000 x"}},
		{"qos map dscp <ints> to traffic-class <0-7>", nil, []string{"qos map dscp 8 9 10 to traffic-class 3"}, []string{"qos map dscp to traffic-class 3", "qos map dscp 8 to traffic-class 8"}},
		{"qos profile <word> > qos trust {dscp|cos}", nil, []string{"qos profile P > qos trust dscp"}, []string{"qos profile P > qos trust ip", "qos profile > > qos trust dscp"}},
		{"priority-flow-control pause watchdog default timeout <dec>", nil, []string{"priority-flow-control pause watchdog default timeout 0.2"}, []string{"priority-flow-control pause watchdog default timeout .2"}},
		{"configure session <word> commit timer <hh:mm:ss>", nil, []string{"configure session s1 commit timer 00:05:00"}, []string{"configure session s1 commit timer 5:00"}},
		{"match dscp <list>", nil, []string{"match dscp 24-31,48", "match dscp 3"}, []string{"match dscp 24-", "match dscp a"}},
		{"no priority-flow-control[ mode on]", nil, []string{"no priority-flow-control", "no priority-flow-control mode on"}, []string{"no priority-flow-control mode"}},
		{"nv set interface <if> link mtu <552-9216>", map[string]string{"if": `swp[0-9]+`}, []string{"nv set interface swp1 link mtu 9216"}, []string{"nv set interface eth0 link mtu 9216"}},
		{"CONFIG_DB PORT|<if>", map[string]string{"if": `Ethernet[0-9]+`}, []string{"CONFIG_DB PORT|Ethernet0"}, []string{"CONFIG_DB PORTXEthernet0"}},
		{"cat > <path> <<'FABCTL_EOF'", nil, []string{"cat > /tmp/p.json <<'FABCTL_EOF'"}, []string{"cat > /tmp/p.json <'FABCTL_EOF'"}},
		{"a {b|c {d|e}}", nil, []string{"a b", "a c d", "a c e"}, []string{"a c", "a d"}},
	} {
		s, err := CompileShape(c.shape, c.over)
		if err != nil {
			t.Errorf("%q: %v", c.shape, err)
			continue
		}
		for _, v := range c.yes {
			if !s.Match(v) {
				t.Errorf("%q refuses %q", c.shape, v)
			}
		}
		for _, v := range c.no {
			if s.Match(v) {
				t.Errorf("%q accepts %q", c.shape, v)
			}
		}
	}
}

// TestCompileShapeRefuses: malformed notation and unknown placeholders
// are errors, never a guess.
func TestCompileShapeRefuses(t *testing.T) {
	for _, bad := range []string{"mtu <bytes>", "mtu <68-9214", "trust {dscp|cos", "trust dscp}", "a [b", "a b]"} {
		if _, err := CompileShape(bad, nil); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}

// TestLoadShapes: every platform's index loads, its evidence resolves,
// and it lists forms the driver sends.
func TestLoadShapes(t *testing.T) {
	for _, p := range []string{"eos", "nxos", "sonic", "cumulus"} {
		rows := LoadShapes(t, p)
		sent := 0
		for _, r := range rows {
			if r.Sent() {
				sent++
			}
		}
		if sent == 0 {
			t.Errorf("%s: no SOURCED/DERIVED rows", p)
		}
	}
}

// TestCheckRow: evidence must point at a line of a corpus file.
func TestCheckRow(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "doc.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		row ShapeRow
		ok  bool
	}{
		{ShapeRow{Text: "x", Kind: "render", Status: "SOURCED", Evidence: "doc.txt:2 -- note"}, true},
		{ShapeRow{Text: "x", Kind: "render", Status: "NO-SOURCE", Evidence: "- -- nothing found"}, true},
		{ShapeRow{Text: "x", Kind: "render", Status: "SOURCED", Evidence: "doc.txt:4"}, false},
		{ShapeRow{Text: "x", Kind: "render", Status: "SOURCED", Evidence: "missing.txt:1"}, false},
		{ShapeRow{Text: "x", Kind: "render", Status: "SOURCED", Evidence: "- -- none"}, false},
		{ShapeRow{Text: "x", Kind: "render", Status: "SOURCED", Evidence: "doc.txt"}, false},
		{ShapeRow{Text: "x", Kind: "push", Status: "SOURCED", Evidence: "doc.txt:1"}, false},
		{ShapeRow{Text: "x", Kind: "render", Status: "MAYBE", Evidence: "doc.txt:1"}, false},
	} {
		if err := checkRow(dir, c.row); (err == nil) != c.ok {
			t.Errorf("%+v: err %v, want ok=%v", c.row, err, c.ok)
		}
	}
}
