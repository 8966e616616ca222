package jsontree

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDeepCopy(t *testing.T) {
	orig := map[string]any{"a": []any{map[string]any{"b": json.Number("1")}, "x"}, "c": nil}
	cp := DeepCopy(orig).(map[string]any)
	if !reflect.DeepEqual(orig, cp) {
		t.Fatalf("copy differs: %v", cp)
	}
	cp["a"].([]any)[0].(map[string]any)["b"] = "changed"
	cp["c"] = 1
	if orig["a"].([]any)[0].(map[string]any)["b"] != json.Number("1") || orig["c"] != nil {
		t.Fatalf("the original changed: %v", orig)
	}
	if DeepCopy(nil) != nil || DeepCopy("s") != "s" {
		t.Fatal("scalars are returned as they are")
	}
}

func TestLocalName(t *testing.T) {
	for in, want := range map[string]string{"openconfig-qos:qos": "qos", "qos": "qos", "a:b:c": "b:c", "": ""} {
		if got := LocalName(in); got != want {
			t.Errorf("LocalName(%q) = %q, want %q", in, got, want)
		}
	}
}
