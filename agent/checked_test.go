package agent

import (
	"context"
	"testing"

	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
)

// TestServeCheckedApply: one apply request with the plan's fingerprint
// and read_back checks the host's state, applies and returns the state
// read back; a host that moved since the plan is left alone (stale, with
// its live fingerprint); a request of another build does nothing.
func TestServeCheckedApply(t *testing.T) {
	store, newDrv, h := memHost(t)
	ctx := context.Background()
	srv := &Server{NewDriver: newDrv, Handshake: agentproto.Handshake{Agent: "fabctl", Protocol: agentproto.Protocol, Build: "b"}}
	desired := h.Flatten()
	r := srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpPlan, Host: h, Build: "b"})
	dp, err := Plan(r)
	if !r.OK || err != nil || dp == nil || dp.Fingerprint == "" {
		t.Fatalf("plan %+v %v", r, err)
	}
	apply := func(build, fp string) *agentproto.Response {
		return srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Steps: dp.Steps,
			Build: build, Fingerprint: fp, ReadBack: true})
	}

	// Another build: refused, nothing applied.
	if r := apply("other", dp.Fingerprint); r.OK || r.Kind() != agentproto.KindBuild || len(store.Get("h1")) != 0 {
		t.Fatalf("other build: %+v, state %v", r, store.Get("h1"))
	}
	// Moved since the plan: stale, nothing applied, the live fingerprint told.
	store.Set("h1", intent.State{"nic/eth1/mtu": "1500"})
	moved := store.Get("h1").Fingerprint()
	if r := apply("b", dp.Fingerprint); r.OK || r.Kind() != agentproto.KindStale || r.Fingerprint != moved {
		t.Fatalf("stale: %+v", r)
	}
	if got := store.Get("h1"); got.Fingerprint() != moved {
		t.Fatalf("a stale host was changed: %v", got)
	}
	// As planned: applied, and the read-back is the state after.
	store.Set("h1", intent.State{})
	r = apply("b", dp.Fingerprint)
	if !r.OK || r.Token == "" || r.State.Fingerprint() != desired.Fingerprint() {
		t.Fatalf("checked apply %+v", r)
	}
	// fingerprint and read_back belong to an apply with steps.
	r = srv.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpRead, Host: h, Fingerprint: dp.Fingerprint})
	if r.OK || r.Kind() != agentproto.KindRequest {
		t.Fatalf("read with a fingerprint: %+v", r)
	}
}
