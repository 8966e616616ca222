package gnmiclient

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
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
	if p := requestPath(req); p != "/a[k=1] (+3 more paths)" {
		t.Errorf("request named %q", p)
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

func TestUnwrap(t *testing.T) {
	dec := func(s string) any { v, _ := Decode([]byte(s)); return v }
	for _, c := range []struct{ path, in, want string }{
		{"/qos", `{"openconfig-qos:qos":{"queues":{}}}`, `{"queues":{}}`},
		{"/qos", `{"queues":{}}`, `{"queues":{}}`},
		{"/interface", `{"srl_nokia-interfaces:interface":[{"name":"e1"}]}`, `[{"name":"e1"}]`},
		{"/interface", `[{"name":"e1"}]`, `[{"name":"e1"}]`},
		{"/interface[name=e1]", `{"interface":[{"name":"e1"}]}`, `{"name":"e1"}`},
	} {
		got, _ := json.Marshal(unwrap(c.path, dec(c.in)))
		if string(got) != c.want {
			t.Errorf("unwrap(%s, %s) = %s, want %s", c.path, c.in, got, c.want)
		}
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

func TestCredentialPath(t *testing.T) {
	c := &spec.Credentials{Name: "g", Src: spec.Source{Block: hcl.Range{Filename: "/specs/fab/net.fab.hcl"}}}
	for in, want := range map[string]string{"ca.pem": "/specs/fab/ca.pem", ".fabctl/testbed/gnmi-ca.pem": "/specs/fab/.fabctl/testbed/gnmi-ca.pem", "/etc/ca.pem": "/etc/ca.pem"} {
		if got := CredentialPath(c, in); got != want {
			t.Errorf("CredentialPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDialConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	for _, c := range []struct {
		creds *spec.Credentials
		want  string
	}{
		{nil, "no credentials block"},
		{&spec.Credentials{Name: "g", CAFile: filepath.Join(dir, "missing.pem")}, "ca_file"},
		{&spec.Credentials{Name: "g", CAFile: bad}, "holds no PEM certificate"},
		{&spec.Credentials{Name: "g", CertFile: bad}, "needs both cert_file and key_file"},
		{&spec.Credentials{Name: "g", CertFile: bad, KeyFile: bad}, "client certificate"},
		{&spec.Credentials{Name: "g", Username: "u", Password: &spec.SecretRef{Kind: "env", Name: "FABCTL_NOPE_UNSET"}}, "is not set"},
	} {
		tg := drivers.Target{Device: intent.Device{Name: "sw1", Address: "127.0.0.1:1"}, Credentials: c.creds}
		_, _, err := Dial(context.Background(), tg, Options{Getenv: func(string) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), "sw1: gNMI connect") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	// Nothing listens: unreachable, fast (not retried until the deadline).
	start := time.Now()
	tg := drivers.Target{Device: intent.Device{Name: "sw1", Address: "127.0.0.1:1"}, Credentials: &spec.Credentials{Name: "g"}}
	_, _, err := Dial(context.Background(), tg, Options{DialTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "sw1: gNMI Capabilities") || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("want unreachable, got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a refused connection took %v", d)
	}
}
