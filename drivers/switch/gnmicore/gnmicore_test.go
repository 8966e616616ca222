package gnmicore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
)

func TestOpLineRoundTrip(t *testing.T) {
	for _, o := range []Op{
		NewOp(OpReplace, "/qos/queues/queue[name=Q3]", map[string]any{"name": "Q3", "config": map[string]any{"name": "Q3", "queue-id": 3}}),
		NewOp(OpUpdate, "/interface[name=ethernet-1/1]", map[string]any{"mtu": 9014, "description": "a<b&c"}),
		{Op: OpDelete, Path: `/qos/classifiers/classifier[name=we\]ird]`},
	} {
		got, err := ParseLine(o.Line())
		if err != nil {
			t.Fatalf("%s: %v", o.Line(), err)
		}
		if got.Op != o.Op || got.Path != o.Path || string(got.Val) != string(o.Val) {
			t.Errorf("round trip: %+v, want %+v", got, o)
		}
	}
	if l := NewOp(OpUpdate, "/a", map[string]any{"x": "<&>"}).Line(); !strings.Contains(l, "<&>") {
		t.Errorf("HTML-escaped payload: %s", l)
	}
}

func TestParseLineErrors(t *testing.T) {
	for _, line := range []string{
		``, `{}`, `not json`, `{"op":"merge","path":"/a","val":{}}`,
		`{"op":"delete","path":"/a","val":{}}`, `{"op":"replace","path":"/a"}`,
		`{"op":"update","path":"a/b","val":1}`, `{"op":"update","path":"/a[k=v","val":1}`,
		`{"op":"update","path":"/a","val":1,"extra":2}`,
	} {
		if _, err := ParseLine(line); err == nil {
			t.Errorf("%q accepted", line)
		}
	}
}

func TestRequestOrderAndDedup(t *testing.T) {
	ops := Sorted([]Op{
		NewOp(OpUpdate, "/b", 1), {Op: OpDelete, Path: "/x"}, NewOp(OpReplace, "/a[k=1]", map[string]any{"k": "1"}),
		NewOp(OpUpdate, "/b", 1), {Op: OpDelete, Path: "/y"},
	})
	var got []string
	for _, o := range ops {
		got = append(got, o.Op+" "+o.Path)
	}
	if strings.Join(got, ", ") != "delete /x, delete /y, replace /a[k=1], update /b" {
		t.Fatalf("order: %v", got)
	}
	req, err := Request(ops)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Delete) != 2 || len(req.Replace) != 1 || len(req.Update) != 1 || req.Replace[0].Path.Elem[0].Key["k"] != "1" {
		t.Fatalf("request %v", req)
	}
	// The render document reads back as the same operations.
	back, err := ParseRequestFile(RequestFile(ops))
	if err != nil || !reflect.DeepEqual(back, ops) {
		t.Fatalf("request file round trip: %v\n%+v\n%+v", err, back, ops)
	}
}

func TestApplyOpsAndInverse(t *testing.T) {
	dec := func(s string) map[string]any {
		v, err := Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v.(map[string]any)
	}
	pre := dec(`{"openconfig-qos:qos":{"queues":{"queue":[{"name":"Q0","config":{"name":"Q0","queue-id":0}}]}},
	  "openconfig-interfaces:interfaces":{"interface":[{"name":"Ethernet0","config":{"name":"Ethernet0","type":"iana-if-type:ethernetCsmacd","mtu":1514}}]}}`)
	ops := []Op{
		NewOp(OpUpdate, "/openconfig-interfaces:interfaces/interface[name=Ethernet0]", map[string]any{"name": "Ethernet0", "config": map[string]any{"mtu": 9014}}),
		NewOp(OpReplace, "/openconfig-qos:qos/forwarding-groups/forwarding-group[name=fg3]", map[string]any{"name": "fg3", "config": map[string]any{"name": "fg3", "output-queue": "Q0"}}),
		{Op: OpDelete, Path: "/openconfig-qos:qos/queues/queue[name=Q0]"},
	}
	post, err := ApplyOps(pre, ops)
	if err != nil {
		t.Fatal(err)
	}
	ifc := N(post).At("interfaces").Entry("interface", "name", "Ethernet0")
	if mtu, _ := ifc.At("config", "mtu").Int(); mtu != 9014 {
		t.Errorf("update did not merge the MTU: %v", ifc.Raw())
	}
	if typ, _ := ifc.At("config", "type").String(); typ != "iana-if-type:ethernetCsmacd" {
		t.Errorf("update dropped a sibling leaf: %v", ifc.Raw())
	}
	if N(post).At("qos", "queues").Exists() {
		t.Errorf("delete of the last queue left the list: %v", N(post).Get("qos").Raw())
	}
	if q, _ := N(post).At("qos", "forwarding-groups").Entry("forwarding-group", "name", "fg3").At("config", "output-queue").String(); q != "Q0" {
		t.Errorf("replace missing")
	}
	inv, err := inverse(pre, Sorted(ops))
	if err != nil {
		t.Fatal(err)
	}
	restored, err := ApplyOps(post, inv)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(restored)
	b, _ := json.Marshal(pre)
	if string(a) != string(b) {
		t.Fatalf("inverse does not restore:\n%s\n%s", a, b)
	}
}

func TestStepOps(t *testing.T) {
	steps := []drivers.Change{{Payload: []string{NewOp(OpUpdate, "/a", 1).Line(), (Op{Op: OpDelete, Path: "/b"}).Line()}}}
	ops, err := StepOps(steps)
	if err != nil || len(ops) != 2 || ops[0].Op != OpDelete {
		t.Fatalf("%v %+v", err, ops)
	}
	steps[0].Payload = append(steps[0].Payload, "garbage")
	if _, err := StepOps(steps); err == nil {
		t.Fatal("garbage payload accepted")
	}
}

// The rendered file is in gnmic's request-file format (docs/cmd/set.md,
// "Template Format"): the keys deletes/replaces/updates, each item a path,
// a value and the encoding json_ietf. fabctl's earlier keys (replace,
// update, val) made gnmic send an empty Set and exit 0; they are refused.
func TestRequestFileIsGnmicFormat(t *testing.T) {
	ops := []Op{
		{Op: OpDelete, Path: "/qos/queues/queue[name=Q7]"},
		{Op: OpReplace, Path: "/qos/queues/queue[name=Q3]", Val: json.RawMessage(`{"name":"Q3"}`)},
		{Op: OpUpdate, Path: "/interfaces/interface[name=e1]/config/mtu", Val: json.RawMessage(`9100`)},
	}
	var doc map[string][]any
	if err := json.Unmarshal(RequestFile(ops), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 3 || len(doc["deletes"]) != 1 || len(doc["replaces"]) != 1 || len(doc["updates"]) != 1 {
		t.Fatalf("keys: %v", doc)
	}
	for _, k := range []string{"replaces", "updates"} {
		item := doc[k][0].(map[string]any)
		if len(item) != 3 || item["path"] == nil || item["value"] == nil || item["encoding"] != "json_ietf" {
			t.Fatalf("%s item: %v", k, item)
		}
	}
	if _, ok := doc["deletes"][0].(string); !ok {
		t.Fatalf("deletes are path strings: %v", doc["deletes"])
	}
	for _, bad := range []string{
		`{"encoding": "JSON_IETF", "replace": [{"path": "/a", "val": 1}]}`,
		`{"updates": [{"path": "/a", "encoding": "json", "value": 1}]}`,
		`{"updates": [{"path": "/a", "encoding": "json_ietf"}]}`,
		`{}`,
	} {
		if _, err := ParseRequestFile([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
