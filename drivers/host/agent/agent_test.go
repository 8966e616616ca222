package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

func testHost(t *testing.T) *intent.Host {
	t.Helper()
	src := `
fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}
credentials "h" {
  username    = "root"
  private_key = file("/nonexistent/key")
}
host "h1" {
  address     = "127.0.0.1:2222"
  connect     = "ssh+netns:fabctl-agent-t"
  credentials = "h"
  sudo        = true
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["198.18.0.1/31"]
  }
}
`
	s := testutil.LoadSrc(t, src)
	f := intent.Compile(s)
	if len(f.Hosts) != 1 {
		t.Fatalf("hosts: %d", len(f.Hosts))
	}
	return f.Hosts[0]
}

// TestSSHNetnsConnect: connect = "ssh+netns:NAME" is SSH to the address,
// then namespace NAME on that host.
func TestSSHNetnsConnect(t *testing.T) {
	h := testHost(t)
	if h.Connect.Kind != "ssh" || h.Connect.Netns != "fabctl-agent-t" || h.Connect.String() != "ssh+netns:fabctl-agent-t" {
		t.Fatalf("connect %+v %q", h.Connect, h.Connect.String())
	}
	l := Local(h, h.Connect.Netns)
	if l.Connect.Kind != "netns" || l.Connect.Netns != "fabctl-agent-t" || l.Device.Driver != "netns" || h.Connect.Kind != "ssh" {
		t.Fatalf("local %+v (original %+v)", l.Connect, h.Connect)
	}
	if l := Local(h, ""); l.Connect.Kind != "local" {
		t.Fatalf("local %+v", l.Connect)
	}
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

// memHost is a host whose live state is in a memory store (pure-logic
// tests of the runner; the real host driver is tested over real SSH).
func memHost(t *testing.T) (*memory.Store, drivers.Factory, *intent.Host) {
	h := testHost(t)
	st := memory.NewStore()
	return st, func() drivers.Driver { return &memory.Driver{Store: st} }, h
}

func TestServeOps(t *testing.T) {
	store, newDrv, h := memHost(t)
	ctx := context.Background()
	hs := Handshake{Agent: "fabctl", Protocol: Protocol, Build: "b"}
	desired := h.Flatten()

	r := Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpRead, Host: h}, hs)
	if !r.OK || len(r.State) != 0 || r.Host != "h1" || r.Agent.Build != "b" {
		t.Fatalf("read %+v", r)
	}
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpPlan, Host: h}, hs)
	if !r.OK || r.Plan == nil || len(r.Plan.Changes) != len(desired) || len(r.Plan.Steps) != len(desired) {
		t.Fatalf("plan %+v", r)
	}
	steps := r.Plan.Steps
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpApply, Host: h, Steps: steps}, hs)
	if !r.OK || r.Token == "" {
		t.Fatalf("apply %+v", r)
	}
	if got := store.Get("h1"); got.Fingerprint() != desired.Fingerprint() {
		t.Fatalf("applied state %v", got)
	}
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpRollback, Host: h, Token: r.Token}, hs)
	if !r.OK || len(store.Get("h1")) != 0 {
		t.Fatalf("rollback %+v, state %v", r, store.Get("h1"))
	}

	// Re-apply mode: plan + apply + verify, and save for boot.
	dir := t.TempDir()
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpApply, Host: h, Netns: "n1", SaveTo: dir}, hs)
	if !r.OK || r.Result == nil || r.Result.Status != "applied" || r.Result.Changes != len(desired) {
		t.Fatalf("converge %+v", r)
	}
	if len(r.Warnings) != 0 {
		t.Fatal(r.Warnings)
	}
	saved := filepath.Join(dir, SavedName("h1"))
	if fi, err := os.Stat(saved); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved file %v %v", fi, err)
	}
	if _, err := os.Readlink(filepath.Join(dir, "fabctl")); err != nil {
		t.Fatal(err)
	}
	store.Set("h1", intent.State{}) // the host rebooted
	files, err := SavedFiles(dir)
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	r = Reapply(ctx, newDrv, files[0], hs)
	if !r.OK || r.Result.Changes != len(desired) || store.Get("h1").Fingerprint() != desired.Fingerprint() {
		t.Fatalf("reapply %+v", r)
	}
	r = Reapply(ctx, newDrv, files[0], hs)
	if !r.OK || r.Result.Status != "unchanged" {
		t.Fatalf("second reapply %+v", r.Result)
	}
}

func TestServeErrors(t *testing.T) {
	store, newDrv, h := memHost(t)
	ctx := context.Background()
	hs := Handshake{}
	store.FailRead["h1"] = errors.New("netlink: permission denied")
	r := Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpRead, Host: h}, hs)
	if r.OK || r.Kind() != KindRead || !strings.Contains(r.Err().Error(), "read: netlink: permission denied") {
		t.Fatalf("%+v", r)
	}
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpApply, Host: h}, hs)
	if r.OK || r.Kind() != KindRead {
		t.Fatalf("converge with a failing read: %+v", r)
	}
	delete(store.FailRead, "h1")
	store.FailApply["h1"] = errors.New("device busy")
	steps := []drivers.Change{{Paths: []string{"nic/eth1/mtu"}, Payload: []string{`set nic/eth1/mtu "9000"`}}}
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpApply, Host: h, Steps: steps}, hs)
	if r.OK || r.Kind() != KindApply {
		t.Fatalf("%+v", r)
	}
	delete(store.FailApply, "h1")
	store.Partial["h1"] = true
	r = Serve(ctx, newDrv, &Request{Protocol: Protocol, Op: OpApply, Host: h, Steps: steps}, hs)
	if r.OK || r.Kind() != KindPartial {
		t.Fatalf("%+v", r)
	}
	r = Serve(ctx, newDrv, &Request{Protocol: 2, Op: OpRead, Host: h}, hs)
	if r.OK || r.Kind() != KindProtocol {
		t.Fatalf("%+v", r)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.json")
	if err := os.WriteFile(bad, []byte(`{"protocol":1,"op":"rollback","host":{"Name":"h1"},"token":"t"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := Reapply(ctx, newDrv, bad, hs); r.OK || !strings.Contains(r.Err().Error(), "without steps") {
		t.Fatalf("%+v", r)
	}
	if _, err := SavedFiles(dir + "/empty"); err == nil {
		t.Fatal("missing path accepted")
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := SavedFiles(dir); err == nil || !strings.Contains(err.Error(), "no saved desired state") {
		t.Fatal(err)
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

// reportingDriver is a driver whose Read observes something read-only.
type reportingDriver struct {
	*memory.Driver
	seen drivers.Target
}

func (r *reportingDriver) Findings(t drivers.Target) []drivers.Finding {
	r.seen = t
	return []drivers.Finding{{Severity: "warning", Path: "nic/eth1/pcie", Message: "eth1: PCIe x8 of x16"}}
}

// A read's findings travel back to the controller with the state.
func TestServeFindings(t *testing.T) {
	store, _, h := memHost(t)
	rd := &reportingDriver{Driver: &memory.Driver{Store: store}}
	r := Serve(context.Background(), func() drivers.Driver { return rd }, &Request{Protocol: Protocol, Op: OpRead, Host: h},
		Handshake{Agent: "fabctl", Protocol: Protocol, Build: "b"})
	if !r.OK || len(r.Findings) != 1 || r.Findings[0].Message != "eth1: PCIe x8 of x16" {
		t.Fatalf("read response findings: %+v", r)
	}
	if rd.seen.Intent == nil {
		t.Fatal("Findings was asked without the host's target")
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"findings":[{`) {
		t.Fatalf("encoded response: %s %v", b, err)
	}
}
