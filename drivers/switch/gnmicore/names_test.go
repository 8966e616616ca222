package gnmicore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/testbed/gnmic"
)

// Issue 30 item 5: names are data. A spec string in a request file
// never reads as a Go template action in gnmic (which renders the file
// as a template first): every "{{" is written "{\u007b", and gnmic's
// reader (the testbed's substitute follows its template step and YAML
// parse) gets the name back as written, not expanded.
func TestRequestFileNamesAreData(t *testing.T) {
	const name = "Ethernet{{.TargetName}}"
	ops := []Op{
		{Op: OpDelete, Path: "/interfaces/interface[name=" + name + "]/config/description"},
		{Op: OpUpdate, Path: "/interfaces/interface[name=" + name + "]/config", Val: []byte(`{"description":"{{{x}}}","name":"` + name + `"}`)},
	}
	file := RequestFile(ops)
	if strings.Contains(string(file), "{{") {
		t.Fatalf("the request file holds a template action:\n%s", file)
	}
	back, err := ParseRequestFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var val map[string]string
	if len(back) != 2 || back[0].Path != ops[0].Path || back[1].Path != ops[1].Path || json.Unmarshal(back[1].Val, &val) != nil || val["description"] != "{{{x}}}" || val["name"] != name {
		t.Errorf("read back %+v (%v)", back, val)
	}
	req, err := gnmic.SetRequest(file, "")
	if err != nil {
		t.Fatalf("gnmic: %v\n%s", err, file)
	}
	if got := req.Update[0].Path.Elem[1].Key["name"]; got != name {
		t.Errorf("gnmic reads the key as %q, want %q", got, name)
	}
	if got := string(req.Update[0].Val.GetJsonIetfVal()); !strings.Contains(got, `"{{{x}}}"`) || !strings.Contains(got, name) {
		t.Errorf("gnmic reads the value as %s", got)
	}
	if EscapeTemplate(`{"a":"x"}`) != `{"a":"x"}` {
		t.Error("a file without {{ changed")
	}
}
