package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
)

// agentFactory is a test factory whose "host" driver is the in-memory
// driver (the agent's plumbing; the real host driver is tested over SSH
// in drivers/host).
func agentFactory(t *testing.T) (f *Factory, st *memory.Store, in, out, errOut *bytes.Buffer) {
	f, in, out, errOut = testFactory()
	st = memory.NewStore()
	f.Drivers = func() *drivers.Registry {
		reg := drivers.NewRegistry()
		if err := reg.Register("host", func() drivers.Driver { return &memory.Driver{Store: st} }); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	return f, st, in, out, errOut
}

func agentHost() *intent.Host {
	return &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h1", Platform: "linux"},
		NICs: []intent.NIC{{Name: "eth1", MTU: 9000, Addresses: []string{"198.18.0.1/31"}}}}
}

func TestAgentVersionCheck(t *testing.T) {
	f, _, _, out, _ := agentFactory(t)
	if code := runCLI(f, "agent", "--version-check"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var hs agentproto.Handshake
	if err := json.Unmarshal(out.Bytes(), &hs); err != nil {
		t.Fatal(err, out.String())
	}
	if hs.Agent != "fabctl" || hs.Protocol != agentproto.Protocol || len(hs.Build) != 16 || hs.OS == "" || hs.Arch == "" {
		t.Fatalf("handshake %+v", hs)
	}
}

func TestAgentRequests(t *testing.T) {
	h := agentHost()
	req := func(r agentproto.Request) string {
		r.Protocol, r.Host = agentproto.Protocol, h
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name  string
		stdin string
		code  ExitCode
		kind  agentproto.ErrKind
		check func(*testing.T, *agentproto.Response, *memory.Store)
	}{
		{"read", req(agentproto.Request{Op: agentproto.OpRead}), ExitOK, "", func(t *testing.T, r *agentproto.Response, _ *memory.Store) {
			if r.Host != "h1" || r.Op != agentproto.OpRead || len(r.State) != 0 {
				t.Fatalf("%+v", r)
			}
		}},
		{"converge", req(agentproto.Request{Op: agentproto.OpApply}), ExitOK, "", func(t *testing.T, r *agentproto.Response, st *memory.Store) {
			res, err := agent.Result(r)
			if err != nil || res == nil || res.Status != "applied" || st.Get("h1")["nic/eth1/mtu"] != "9000" {
				t.Fatalf("%+v %v %v", res, err, st.Get("h1"))
			}
		}},
		{"empty stdin", "", ExitError, agentproto.KindRequest, nil},
		{"garbage", "hello", ExitError, agentproto.KindRequest, nil},
		{"protocol", strings.Replace(req(agentproto.Request{Op: agentproto.OpRead}), `"protocol":1`, `"protocol":7`, 1), ExitError, agentproto.KindProtocol, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, st, in, out, errOut := agentFactory(t)
			in.WriteString(tt.stdin)
			code := runCLI(f, "agent")
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			var r agentproto.Response
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("stdout is not a response: %v\n%s", err, out)
			}
			if r.Protocol != agentproto.Protocol || r.Kind() != tt.kind || r.OK != (tt.code == ExitOK) {
				t.Fatalf("response %+v", r)
			}
			if tt.check != nil {
				tt.check(t, &r, st)
			}
		})
	}
}

// reapplied is the decoded apply result of a re-apply response.
func reapplied(t *testing.T, r *agentproto.Response) *apply.DeviceResult {
	t.Helper()
	res, err := agent.Result(r)
	if err != nil || res == nil {
		t.Fatalf("result of %+v: %v", r, err)
	}
	return res
}

func TestAgentReapply(t *testing.T) {
	dir := t.TempDir()
	if err := agent.Save(dir, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: agentHost()}); err != nil {
		t.Fatal(err)
	}
	f, st, _, out, errOut := agentFactory(t)
	if code := runCLI(f, "agent", "--reapply", dir); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if out.String() != "h1: applied 3 changes, verified by read-back\n" {
		t.Fatalf("output %q", out)
	}
	if st.Get("h1")["nic/eth1/mtu"] != "9000" {
		t.Fatal(st.Get("h1"))
	}

	f, st, _, out, _ = agentFactory(t)
	st.Set("h1", agentHost().Flatten())
	if code := runCLI(f, "agent", "--reapply", filepath.Join(dir, "h1.json"), "--json"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var doc agentReapplyJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || !doc.OK || len(doc.Results) != 1 || reapplied(t, doc.Results[0]).Status != "unchanged" {
		t.Fatalf("%v %s", err, out)
	}

	f, _, _, _, errOut = agentFactory(t)
	if code := runCLI(f, "agent", "--reapply", filepath.Join(dir, "missing")); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errOut.String(), "--reapply:") || !strings.Contains(errOut.String(), "missing") {
		t.Fatalf("stderr %q", errOut)
	}
	f, _, _, _, _ = agentFactory(t)
	if code := runCLI(f, "agent", "--reapply", dir, "--version-check"); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
}

func TestAgentWatch(t *testing.T) {
	dir := t.TempDir()
	h := agentHost()
	h.NICs[0].RoCEMode = "v2"
	if err := agent.Save(dir, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Netns: "n1"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var gotNS string
	var gotIfaces []string
	fake := func(ctx context.Context, ns string, ifaces []string, fn func(host.Drift)) error {
		gotNS, gotIfaces = ns, ifaces
		fn(host.Drift{NIC: "eth1", Cmd: "IEEE_SET", Time: t0, Changes: []intent.AttrChange{{Path: "nic/eth1/pfc", Action: intent.Update, Before: "3", After: "3,4"}}})
		fn(host.Drift{NIC: "eth1", Cmd: "IEEE_SET", Time: t0})
		return nil // as when the agent is stopped
	}
	runWatch := func(json bool, watch agent.WatchFunc) (ExitCode, string) {
		f, _, _, out, _ := agentFactory(t)
		cmd := NewCmdAgent(f, func(o *AgentOptions) error {
			o.WatchDCB = watch
			return agentRun(o)
		})
		args := []string{"agent", "--watch", dir}
		if json {
			args = append(args, "--json")
		}
		return execCmd(f, cmd, args...), out.String()
	}
	code, out := runWatch(false, fake)
	want := `2026-01-02T03:04:05Z h1 eth1: DCB drift (IEEE_SET): nic/eth1/pfc "3" -> "3,4"
2026-01-02T03:04:05Z h1 eth1: DCB back at its state when the watch began (IEEE_SET)
`
	if code != ExitOK || out != want || gotNS != "n1" || strings.Join(gotIfaces, ",") != "eth1" {
		t.Fatalf("exit %d ns %q ifaces %v\n%s", code, gotNS, gotIfaces, out)
	}
	code, out = runWatch(true, fake)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var l struct {
		Host    string              `json:"host"`
		NIC     string              `json:"nic"`
		Changes []intent.AttrChange `json:"changes"`
	}
	if code != ExitOK || len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &l) != nil || l.Host != "h1" || l.NIC != "eth1" || len(l.Changes) != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out = runWatch(false, func(context.Context, string, []string, func(host.Drift)) error {
		return errors.New("watch eth1: DCB not supported by the driver (EOPNOTSUPP)")
	})
	if code != ExitError || out != "h1: watch: watch eth1: DCB not supported by the driver (EOPNOTSUPP)\n" {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
