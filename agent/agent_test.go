package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
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

// memHost is a host whose live state is in a memory store (pure-logic
// tests of the runner; the real host driver is tested over real SSH).
func memHost(t *testing.T) (*memory.Store, drivers.Factory, *intent.Host) {
	h := testHost(t)
	st := memory.NewStore()
	return st, func() drivers.Driver { return &memory.Driver{Store: st} }, h
}

// result is the decoded apply result of a response.
func result(t *testing.T, r *agentproto.Response) *apply.DeviceResult {
	t.Helper()
	res, err := Result(r)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		t.Fatalf("no result in %+v", r)
	}
	return res
}

func TestServeOps(t *testing.T) {
	store, newDrv, h := memHost(t)
	ctx := context.Background()
	srv := &Server{NewDriver: newDrv, Handshake: agentproto.Handshake{Agent: "fabctl", Protocol: agentproto.Protocol, Build: "b"}}
	desired := h.Flatten()

	r := srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpRead, Host: h})
	if !r.OK || len(r.State) != 0 || r.Host != "h1" || r.Agent.Build != "b" {
		t.Fatalf("read %+v", r)
	}
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpPlan, Host: h})
	dp, err := Plan(r)
	if !r.OK || err != nil || dp == nil || len(dp.Changes) != len(desired) || len(dp.Steps) != len(desired) {
		t.Fatalf("plan %+v %v", r, err)
	}
	steps := dp.Steps
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Steps: steps})
	if !r.OK || r.Token == "" {
		t.Fatalf("apply %+v", r)
	}
	if got := store.Get("h1"); got.Fingerprint() != desired.Fingerprint() {
		t.Fatalf("applied state %v", got)
	}
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpRollback, Host: h, Token: r.Token})
	if !r.OK || len(store.Get("h1")) != 0 {
		t.Fatalf("rollback %+v, state %v", r, store.Get("h1"))
	}

	// Re-apply mode: plan + apply + verify, and save for boot.
	dir := t.TempDir()
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Netns: "n1", SaveTo: dir})
	if res := result(t, r); !r.OK || res == nil || res.Status != "applied" || res.Changes != len(desired) {
		t.Fatalf("converge %+v", r)
	}
	if len(r.Warnings) != 0 {
		t.Fatal(r.Warnings)
	}
	saved := filepath.Join(dir, agentproto.SavedName("h1"))
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
	r = srv.Reapply(ctx, files[0])
	if !r.OK || result(t, r).Changes != len(desired) || store.Get("h1").Fingerprint() != desired.Fingerprint() {
		t.Fatalf("reapply %+v", r)
	}
	r = srv.Reapply(ctx, files[0])
	if res := result(t, r); !r.OK || res.Status != "unchanged" {
		t.Fatalf("second reapply %+v", res)
	}
}

func TestServeErrors(t *testing.T) {
	store, newDrv, h := memHost(t)
	ctx := context.Background()
	srv := &Server{NewDriver: newDrv}
	store.FailRead["h1"] = errors.New("netlink: permission denied")
	r := srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpRead, Host: h})
	if r.OK || r.Kind() != agentproto.KindRead || !strings.Contains(r.Err().Error(), "read: netlink: permission denied") {
		t.Fatalf("%+v", r)
	}
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h})
	if r.OK || r.Kind() != agentproto.KindRead {
		t.Fatalf("converge with a failing read: %+v", r)
	}
	delete(store.FailRead, "h1")
	store.FailApply["h1"] = errors.New("device busy")
	steps := []drivers.Change{{Paths: []string{"nic/eth1/mtu"}, Payload: []string{`set nic/eth1/mtu "9000"`}}}
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Steps: steps})
	if r.OK || r.Kind() != agentproto.KindApply {
		t.Fatalf("%+v", r)
	}
	delete(store.FailApply, "h1")
	store.Partial["h1"] = true
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Steps: steps})
	if r.OK || r.Kind() != agentproto.KindPartial {
		t.Fatalf("%+v", r)
	}
	r = srv.Serve(ctx, &agentproto.Request{Protocol: 2, Op: agentproto.OpRead, Host: h})
	if r.OK || r.Kind() != agentproto.KindProtocol {
		t.Fatalf("%+v", r)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.json")
	if err := os.WriteFile(bad, []byte(`{"protocol":1,"op":"rollback","host":{"Name":"h1"},"token":"t"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := srv.Reapply(ctx, bad); r.OK || !strings.Contains(r.Err().Error(), "without steps") {
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
	srv := &Server{NewDriver: func() drivers.Driver { return rd }, Handshake: agentproto.Handshake{Agent: "fabctl", Protocol: agentproto.Protocol, Build: "b"}}
	r := srv.Serve(context.Background(), &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpRead, Host: h})
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

// A plan or result travels as raw JSON in the protocol's response; the
// response reads byte for byte as it did when they were typed fields,
// with and without HTML escaping, indented or not.
func TestEncodeAsTyped(t *testing.T) {
	dp := &plan.DevicePlan{Address: "host.h1", Error: "a < b && c > d \u2028"}
	typed := struct {
		Plan *plan.DevicePlan `json:"plan,omitempty"`
		More string           `json:"more"`
	}{dp, "<x>"}
	b, err := encode(dp)
	if err != nil {
		t.Fatal(err)
	}
	raw := struct {
		Plan json.RawMessage `json:"plan,omitempty"`
		More string          `json:"more"`
	}{b, "<x>"}
	for _, escape := range []bool{false, true} {
		for _, indent := range []string{"", "  "} {
			var want, got bytes.Buffer
			for _, c := range []struct {
				w *bytes.Buffer
				v any
			}{{&want, typed}, {&got, raw}} {
				enc := json.NewEncoder(c.w)
				enc.SetEscapeHTML(escape)
				enc.SetIndent("", indent)
				if err := enc.Encode(c.v); err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != want.String() {
				t.Errorf("escape %v indent %q:\n got %s\nwant %s", escape, indent, got.String(), want.String())
			}
		}
	}
	back, err := Plan(&agentproto.Response{Plan: b})
	if err != nil || back.Error != dp.Error {
		t.Fatalf("%+v %v", back, err)
	}
}

// A traffic request goes to validate/traffic; one it cannot decode is
// the request's fault.
func TestServeTrafficRequest(t *testing.T) {
	_, newDrv, h := memHost(t)
	srv := &Server{NewDriver: newDrv}
	r := srv.Serve(context.Background(), &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpTraffic, Host: h, Traffic: json.RawMessage(`{"role":"dance"}`)})
	if r.OK || r.Kind() != agentproto.KindRequest || r.Host != "h1" {
		t.Fatalf("%+v", r)
	}
	r = srv.Handle(context.Background(), strings.NewReader(" "))
	if r.OK || r.Kind() != agentproto.KindRequest {
		t.Fatalf("%+v", r)
	}
}

// TestServeLinks: the links op answers the host driver's link report,
// read on the host (its namespace for ssh+netns), as the controller
// decodes it; a driver that does not read links is an error of kind read.
func TestServeLinks(t *testing.T) {
	store, newDrv, h := memHost(t)
	store.Links["h1"] = &linktruth.DeviceLinks{Ports: map[string]*linktruth.Observation{
		"eth1": {Port: "eth1", Oper: linktruth.Up, SpeedMbps: 400000, Neighbors: []linktruth.Neighbor{{SystemName: "leaf1", PortID: "Ethernet8"}}}},
		Source: "test", LLDP: true}
	srv := &Server{NewDriver: newDrv, Handshake: agentproto.Handshake{Agent: "fabctl", Protocol: agentproto.Protocol, Build: "b"}}
	var in bytes.Buffer
	if err := json.NewEncoder(&in).Encode(agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpLinks, Host: h, Netns: "fabctl-agent-t", Build: "b"}); err != nil {
		t.Fatal(err)
	}
	r := srv.Handle(context.Background(), &in)
	if !r.OK || r.Host != "h1" || r.Op != agentproto.OpLinks {
		t.Fatalf("%+v", r)
	}
	dl, err := agentproto.DecodeLinks(r.Links, []string{"eth1"})
	if err != nil {
		t.Fatal(err)
	}
	if o := dl.Ports["eth1"]; o == nil || o.SpeedMbps != 400000 || !dl.LLDP || o.Neighbors[0].PortID != "Ethernet8" {
		t.Fatalf("%+v", dl)
	}
	srv.NewDriver = func() drivers.Driver { return readOnly{} }
	r = srv.Serve(context.Background(), &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpLinks, Host: h})
	if r.OK || r.Kind() != agentproto.KindRead || !strings.Contains(r.Err().Error(), "does not read links") {
		t.Fatalf("%+v", r)
	}
}

// readOnly is a driver without a link reader.
type readOnly struct{ drivers.Driver }

// TestServeLinksNetns: the agent's links op on a namespace host with a
// real veth runs the host driver's own read there: state up, the veth's
// speed (drivers/net/veth.c reports SPEED_10000), counters, and the note
// that no lldpd runs for the namespace.
func TestServeLinksNetns(t *testing.T) {
	testutil.RequireRoot(t, "creates a network namespace and a veth pair")
	testutil.Netns(t, "fabctl-agent-t")
	testutil.Run(t, "ip", "-n", "fabctl-agent-t", "link", "add", "eth1", "type", "veth", "peer", "name", "eth1p")
	testutil.Run(t, "ip", "-n", "fabctl-agent-t", "link", "set", "eth1", "up")
	testutil.Run(t, "ip", "-n", "fabctl-agent-t", "link", "set", "eth1p", "up")
	h := testHost(t)
	srv := &Server{NewDriver: host.New}
	r := srv.Serve(context.Background(), &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpLinks, Host: h, Netns: "fabctl-agent-t"})
	if !r.OK {
		t.Fatal(r.Err())
	}
	dl, err := agentproto.DecodeLinks(r.Links, []string{"eth1"})
	if err != nil {
		t.Fatal(err)
	}
	o := dl.Ports["eth1"]
	if o == nil || o.Oper != linktruth.Up || o.AdminDown || o.SpeedMbps != 10000 || o.Counters == nil || dl.LLDP ||
		!strings.Contains(dl.LLDPNote, "no lldpd runs for netns fabctl-agent-t") {
		t.Fatalf("%+v %+v", dl, o)
	}
}
