package gnmitransport

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

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

func TestRequestPath(t *testing.T) {
	path := func(s string) *gpb.Path {
		p, err := Path(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	req := &gpb.SetRequest{
		Delete:  []*gpb.Path{path("/x"), path("/y")},
		Replace: []*gpb.Update{{Path: path("/a[k=1]")}},
		Update:  []*gpb.Update{{Path: path("/b")}},
	}
	if p := requestPath(req); p != "/a[k=1] (+3 more paths)" {
		t.Errorf("request named %q", p)
	}
}
