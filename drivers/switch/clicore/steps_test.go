package clicore

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// TestSections: one step per group in rank order, each section rendered
// once, in the first step that names it, and a group whose sections all
// went out earlier keeps its paths with an empty payload.
func TestSections(t *testing.T) {
	diff := []intent.AttrChange{{Path: "port/E1/mtu"}, {Path: "dscp/0"}, {Path: "dscp/1"}, {Path: "port/E1/pfc"}, {Path: "trust"}}
	fields := []intent.Field{{Pattern: "port/*/pfc", Disruptive: "flaps"}}
	key := func(p string) string {
		if p == "trust" {
			return "" // left out
		}
		return strings.SplitN(p, "/", 2)[0]
	}
	rank := func(k string) int {
		if k == "dscp" {
			return 0
		}
		return 1
	}
	renders := map[string]int{}
	steps := Sections(diff, fields, key, rank, func(p string, add func(string, func() []string)) {
		add("map", func() []string { renders["map"]++; return []string{"map"} })
		if strings.HasPrefix(p, "port/") {
			add("if E1", func() []string { renders["if"]++; return []string{"interface E1", "  mtu 9000"} })
		}
	})
	if len(steps) != 2 {
		t.Fatalf("steps %+v", steps)
	}
	if s := steps[0]; s.Summary != "dscp (2 setting(s))" || !reflect.DeepEqual(s.Payload, []string{"map"}) || s.Disruptive != "" {
		t.Errorf("first step %+v", s)
	}
	if s := steps[1]; s.Summary != "port (2 setting(s))" || !reflect.DeepEqual(s.Payload, []string{"interface E1", "  mtu 9000"}) ||
		s.Disruptive != "flaps" || !reflect.DeepEqual(s.Paths, []string{"port/E1/mtu", "port/E1/pfc"}) {
		t.Errorf("second step %+v", s)
	}
	if renders["map"] != 1 || renders["if"] != 1 {
		t.Errorf("sections rendered %v times, want once each", renders)
	}
}

// TestShellPlatform: the YAML keeps single quotes in a value quoted.
func TestShellPlatform(t *testing.T) {
	y := string(ShellPlatform("x", `^\S+\$\s*$`, "it's bad"))
	for _, want := range []string{"platform-type: 'x'\n", `pattern: '^\S+\$\s*$'`, "    - 'it''s bad'\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("definition lacks %q:\n%s", want, y)
		}
	}
}
