package agentproto

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

func testHost(t *testing.T) *intent.Host {
	t.Helper()
	s := testutil.LoadSrc(t, testutil.NetnsHostSpec)
	f := intent.Compile(s)
	if len(f.Hosts) != 1 {
		t.Fatalf("hosts: %d", len(f.Hosts))
	}
	return f.Hosts[0]
}

// TestRequestRoundTrip: the host intent survives the wire: the agent
// computes the same desired state as the controller.
func TestRequestRoundTrip(t *testing.T) {
	h := testHost(t)
	b, err := json.Marshal(Request{Protocol: Protocol, Op: OpPlan, Host: h, Netns: "x"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := DecodeRequest(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.Host.Flatten().Fingerprint(), h.Flatten().Fingerprint(); got != want {
		t.Fatalf("desired state changed on the wire: %s != %s", got, want)
	}
	if req.Host.Sudo != true || req.Netns != "x" || req.Op != OpPlan {
		t.Fatalf("request %+v", req)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "  \n", "no request on stdin"},
		{"syntax", "{\n\"op\": }", "line 2"},
		{"unknown field", `{"protocol":1,"op":"read","hots":{}}`, `unknown field "hots"`},
		{"trailing", `{"protocol":1} {}`, "trailing data"},
		{"not object", `[1]`, "not valid JSON for this agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	h := &intent.Host{Device: intent.Device{Name: "h1"}}
	tests := []struct {
		name string
		req  Request
		kind ErrKind
		want string
	}{
		{"ok", Request{Protocol: Protocol, Op: OpRead, Host: h}, "", ""},
		{"protocol", Request{Protocol: 99, Op: OpRead, Host: h}, KindProtocol, "request protocol 99, this agent speaks 1"},
		{"no op", Request{Protocol: Protocol, Host: h}, KindRequest, `no "op"`},
		{"bad op", Request{Protocol: Protocol, Op: "destroy", Host: h}, KindRequest, `unknown op "destroy"`},
		{"no host", Request{Protocol: Protocol, Op: OpRead}, KindRequest, `no "host"`},
		{"rollback token", Request{Protocol: Protocol, Op: OpRollback, Host: h}, KindRequest, `"token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.req.Check()
			if tt.kind == "" {
				if e != nil {
					t.Fatal(e)
				}
				return
			}
			if e == nil || e.Kind != tt.kind || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("got %+v, want %s %q", e, tt.kind, tt.want)
			}
		})
	}
}

// TestIdentity: stable for a binary, different for another one.
func TestIdentity(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Identity(exe)
	if err != nil || len(a) != 16 {
		t.Fatal(a, err)
	}
	if b, _ := Identity(exe); a != b {
		t.Fatal("identity not stable")
	}
	if _, err := goBuildID(exe); err != nil {
		t.Fatalf("go build id of the test binary: %v", err)
	}
	other := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := Identity(other); err != nil || b == a {
		t.Fatal(b, err)
	}
	if _, err := Machine(other); err == nil {
		t.Fatal("machine of a shell script")
	}
	if m, err := Machine(exe); err != nil || m == "" {
		t.Fatal(m, err)
	}
	hs := Self("v1")
	if !hs.Matches(a) || hs.Matches("") || hs.Version != "v1" {
		t.Fatalf("%+v vs %s", hs, a)
	}
}

// FuzzDecodeRequest: any input gives a request or an error, never a panic.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"protocol":1,"op":"read","host":{"Name":"h1","Connect":{"Kind":"ssh"}}}`))
	f.Add([]byte(`{"protocol":1,"op":"apply","host":{"Name":"h1","NICs":[{"Name":"eth1","MTU":9000,"DSCPToTC":[0,1]}]},"steps":[{"paths":["nic/eth1/mtu"]}]}`))
	f.Add([]byte(`{"protocol":1,"op":"rollback","token":"{}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeRequest(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		if e := req.Check(); e == nil && req.Host == nil {
			t.Fatal("a request without host passed Check")
		}
	})
}
