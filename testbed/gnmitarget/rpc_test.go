package gnmitarget

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/portlink"
)

var ocIfs = []string{"Ethernet0", "Ethernet8"}

// ocQoS is a valid OpenConfig QoS subtree for /qos (RFC 7951).
const ocQoS = `{
  "queues": {"queue": [{"name": "Q3", "config": {"name": "Q3", "queue-id": 3}}]},
  "forwarding-groups": {"forwarding-group": [{"name": "fg-roce", "config": {"name": "fg-roce", "output-queue": "Q3"}}]},
  "queue-management-profiles": {"queue-management-profile": [{"name": "ecn", "config": {"name": "ecn"},
    "wred": {"uniform": {"config": {"min-threshold": "150000", "max-threshold": "1500000", "enable-ecn": true, "max-drop-probability-percent": 10}}}}]},
  "interfaces": {"interface": [{"interface-id": "Ethernet0", "config": {"interface-id": "Ethernet0"},
    "interface-ref": {"config": {"interface": "Ethernet0"}},
    "output": {"queues": {"queue": [{"name": "Q3", "config": {"name": "Q3", "queue-management-profile": "ecn"}}]}}}]}
}`

func TestCapabilities(t *testing.T) {
	_, c := start(t, Config{})
	r, err := c.Capabilities(ctxT(t), &gpb.CapabilityRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.SupportedModels) != 3 || r.SupportedModels[2].Name != "openconfig-qos" || len(r.Extension) != 0 {
		t.Errorf("fixed models: %v", r)
	}
	if r.SupportedEncodings[0] != gpb.Encoding_JSON_IETF || r.GNMIVersion == "" {
		t.Errorf("encodings/version: %v", r)
	}

	_, c = start(t, Config{Flavor: FlavorSRLinux, Schema: schema(t, "srlinux"), CommitConfirm: true})
	r, err = c.Capabilities(ctxT(t), &gpb.CapabilityRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range r.SupportedModels {
		got[m.Name] = m.Version
	}
	if got["srl_nokia-qos"] != "2025-03-31" || got["srl_nokia-interfaces"] != "2025-03-31" || len(got) != 14 {
		t.Errorf("loaded models: %v", got)
	}
	if len(r.Extension) != 1 || r.Extension[0].GetCommit() == nil {
		t.Errorf("commit-confirmed not advertised: %v", r.Extension)
	}
}

func TestGetSetOpenConfig(t *testing.T) {
	tg, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs})
	ctx := ctxT(t)
	// replace a subtree, update a leaf, with a prefix
	_, err := c.Set(ctx, &gpb.SetRequest{
		Prefix:  p(t, "/openconfig-qos:qos"),
		Replace: []*gpb.Update{{Path: &gpb.Path{}, Val: jv(ocQoS)}},
		Update:  []*gpb.Update{upd(t, "/queues/queue[name=Q3]/config/queue-id", "4")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, gpb.GetRequest_CONFIG, "/qos/queues/queue[name=Q3]/config"); compactJSON(t, got) != `{"name":"Q3","queue-id":4}` {
		t.Errorf("queue Q3 config: %s", got)
	}
	// update of an interface MTU through the keyed path, origin openconfig
	_, err = c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{{
		Path: &gpb.Path{Origin: "openconfig", Elem: p(t, "/interfaces/interface[name=Ethernet8]/config").Elem},
		Val:  jv(`{"mtu": 9100}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, gpb.GetRequest_CONFIG, "/interfaces/interface[name=Ethernet8]/config/mtu"); got != "9100" {
		t.Errorf("mtu: %s", got)
	}
	// the update merged: type and enabled are still there
	if got := get(t, c, gpb.GetRequest_CONFIG, "/interfaces/interface[name=Ethernet8]/config/type"); got != `"iana-if-type:ethernetCsmacd"` {
		t.Errorf("type after merge: %s", got)
	}
	// CONFIG has no state, STATE no config, ALL both
	cfg := get(t, c, gpb.GetRequest_CONFIG, "/interfaces/interface[name=Ethernet0]")
	st := get(t, c, gpb.GetRequest_STATE, "/interfaces/interface[name=Ethernet0]")
	all := get(t, c, gpb.GetRequest_ALL, "/interfaces/interface[name=Ethernet0]")
	if strings.Contains(cfg, "oper-status") || strings.Contains(st, `"config"`) || !strings.Contains(all, "oper-status") || !strings.Contains(all, `"config"`) {
		t.Errorf("data types:\nCONFIG %s\nSTATE %s\nALL %s", cfg, st, all)
	}
	// delete of a list entry; deleting it again is not an error
	for i := 0; i < 2; i++ {
		if _, err := c.Set(ctx, &gpb.SetRequest{Delete: []*gpb.Path{p(t, "/qos/interfaces/interface[interface-id=Ethernet0]")}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{p(t, "/qos/interfaces")}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.NotFound, "/qos/interfaces")
	// Get of a path the models lack
	_, err = c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{p(t, "/qos/queuez")}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.InvalidArgument, "/qos/queuez")
	// unsupported encoding and origin
	_, err = c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{p(t, "/qos")}, Encoding: gpb.Encoding_PROTO})
	wantCode(t, err, codes.Unimplemented, "PROTO")
	_, err = c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{{Origin: "cli"}}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.InvalidArgument, `origin "cli"`)
	// wildcard key: every interface's oper-status
	r, err := c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{p(t, "/interfaces/interface[name=*]/state/oper-status")}, Encoding: gpb.Encoding_JSON_IETF})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Notification[0].Update); n != 2 {
		t.Errorf("wildcard: %d updates, want 2: %v", n, r)
	}
	// RFC 7951 member names in the stored tree
	if !strings.Contains(config(t, tg), `"openconfig-qos:qos"`) {
		t.Errorf("top level not module-qualified:\n%s", config(t, tg))
	}
}

func TestTransactional(t *testing.T) {
	tg, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs})
	ctx := ctxT(t)
	if _, err := c.Set(ctx, &gpb.SetRequest{Replace: []*gpb.Update{upd(t, "/qos", ocQoS)}}); err != nil {
		t.Fatal(err)
	}
	before := config(t, tg)
	// a valid delete and update, then one bad value: nothing applies
	_, err := c.Set(ctx, &gpb.SetRequest{
		Delete: []*gpb.Path{p(t, "/qos/interfaces")},
		Update: []*gpb.Update{
			upd(t, "/interfaces/interface[name=Ethernet0]/config/mtu", "9100"),
			upd(t, "/qos/queues/queue[name=Q3]/config/queue-id", "300"),
		}})
	wantCode(t, err, codes.InvalidArgument, "/qos/queues/queue[name=Q3]/config/queue-id", "out of range")
	if after := config(t, tg); after != before {
		t.Errorf("rejected Set changed the tree:\nbefore %s\nafter %s", before, after)
	}
	// a delete that leaves a dangling reference is refused as a whole
	_, err = c.Set(ctx, &gpb.SetRequest{Delete: []*gpb.Path{p(t, "/qos/queue-management-profiles")}})
	wantCode(t, err, codes.InvalidArgument, "queue-management-profile", "leafref")
	if after := config(t, tg); after != before {
		t.Errorf("rejected delete changed the tree")
	}
	if s := tg.Stats(); s.Set != 3 || s.SetRejected != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestSchemaless(t *testing.T) {
	tg, c := start(t, Config{Flavor: FlavorSRLinux, Interfaces: []string{"ethernet-1/1"}})
	ctx := ctxT(t)
	_, err := c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{
		upd(t, "/interface[name=ethernet-1/1]", `{"mtu": 9232}`),
		upd(t, "/interface", `[{"name": "ethernet-1/1", "description": "d"}, {"name": "ethernet-1/2", "admin-state": "disable"}]`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"srl_nokia-interfaces:interface":[{"admin-state":"enable","description":"d","mtu":9232,"name":"ethernet-1/1"},{"admin-state":"disable","name":"ethernet-1/2"}]}`
	if got := compactJSON(t, config(t, tg)); got != want {
		t.Errorf("merged:\n got %s\nwant %s", got, want)
	}
	if got := get(t, c, gpb.GetRequest_STATE, "/interface[name=ethernet-1/2]/oper-state"); got != `"down"` {
		t.Errorf("oper-state of a disabled port: %s", got)
	}
	// a path through a leaf is refused without models too
	_, err = c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{upd(t, "/interface[name=ethernet-1/1]/mtu/x", `1`)}})
	wantCode(t, err, codes.InvalidArgument, "below a leaf")
}

func TestAuth(t *testing.T) {
	tg, _ := start(t, Config{})
	pk := pki(t)
	for _, cr := range []creds{{testUser, "Hunter2-guess"}, {"root", testPass}, {}} {
		c := dial(t, tg.Addr(), clientTLS(t, pk.CA, pk, false), cr)
		_, err := c.Capabilities(ctxT(t), &gpb.CapabilityRequest{})
		wantCode(t, err, codes.Unauthenticated)
		if strings.Contains(err.Error(), testPass) || (cr.pass != "" && strings.Contains(err.Error(), cr.pass)) {
			t.Errorf("error leaks a password: %v", err)
		}
		// streams are checked too
		s, err := c.Subscribe(ctxT(t))
		if err == nil {
			_, err = s.Recv()
		}
		wantCode(t, err, codes.Unauthenticated)
	}
}

func TestTLS(t *testing.T) {
	pk := pki(t)
	other, err := NewTestPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := start(t, Config{})
	// a client trusting another CA refuses the server
	c := dial(t, tg.Addr(), clientTLS(t, other.CA, other, false), creds{testUser, testPass})
	_, err = c.Capabilities(ctxT(t), &gpb.CapabilityRequest{})
	wantCode(t, err, codes.Unavailable)
	if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("want a certificate error, got %v", err)
	}
	// plaintext against TLS fails
	c = dial(t, tg.Addr(), nil, creds{testUser, testPass})
	_, err = c.Capabilities(ctxT(t), &gpb.CapabilityRequest{})
	wantCode(t, err, codes.Unavailable)

	// mTLS: no client certificate, or one from another CA, is refused
	mt, err := Start(context.Background(), Config{TLS: pk.TLS(true)})
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Close()
	for name, tc := range map[string]struct {
		p    *PKI
		cert bool
		ok   bool
	}{"no client cert": {pk, false, false}, "foreign client cert": {other, true, false}, "client cert": {pk, true, true}} {
		tcfg := clientTLS(t, pk.CA, tc.p, tc.cert)
		c := dial(t, mt.Addr(), tcfg, creds{})
		_, err := c.Capabilities(ctxT(t), &gpb.CapabilityRequest{})
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// TLS is mandatory unless Insecure is asked for
	if _, err := Start(context.Background(), Config{}); err == nil || !strings.Contains(err.Error(), "Insecure") {
		t.Errorf("start without TLS: %v", err)
	}
	ins, err := Start(context.Background(), Config{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	if _, err := dial(t, ins.Addr(), nil, creds{}).Capabilities(ctxT(t), &gpb.CapabilityRequest{}); err != nil {
		t.Errorf("insecure target: %v", err)
	}
}

func TestCommitConfirm(t *testing.T) {
	tg, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs, CommitConfirm: true})
	ctx := ctxT(t)
	before := config(t, tg)
	mtu := func(v string, ext any, id string) error {
		req := &gpb.SetRequest{Extension: commitExtension(id, ext)}
		if v != "" {
			req.Update = []*gpb.Update{upd(t, "/interfaces/interface[name=Ethernet0]/config/mtu", v)}
		}
		_, err := c.Set(ctx, req)
		return err
	}
	// timeout reverts (durations leave room for a loaded machine: the
	// checks while pending must finish before the rollback)
	if err := mtu("9100", 2*time.Second, "c1"); err != nil {
		t.Fatal(err)
	}
	if id, ok := tg.Pending(); !ok || id != "c1" {
		t.Fatalf("pending: %q %v", id, ok)
	}
	if got := get(t, c, gpb.GetRequest_CONFIG, "/interfaces/interface[name=Ethernet0]/config/mtu"); got != "9100" {
		t.Fatalf("applied before confirmation: %s", got)
	}
	// a plain Set and a second commit are refused while pending; a wrong id too
	_, err := c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{upd(t, "/interfaces/interface[name=Ethernet8]/config/mtu", "1500")}})
	wantCode(t, err, codes.FailedPrecondition, "c1")
	wantCode(t, mtu("1500", time.Minute, "c2"), codes.FailedPrecondition)
	wantCode(t, mtu("", "confirm", "c9"), codes.InvalidArgument, "c9")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := tg.Pending(); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("commit not rolled back after its rollback duration")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := config(t, tg); after != before {
		t.Errorf("rollback did not restore the configuration:\n%s\nwant\n%s", after, before)
	}
	// confirm keeps, past the rollback duration
	if err := mtu("9100", time.Second, "c3"); err != nil {
		t.Fatal(err)
	}
	if err := mtu("", "confirm", "c3"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	if got := get(t, c, gpb.GetRequest_CONFIG, "/interfaces/interface[name=Ethernet0]/config/mtu"); got != "9100" {
		t.Errorf("confirmed commit reverted: %s", got)
	}
	// cancel reverts at once
	kept := config(t, tg)
	if err := mtu("1500", time.Minute, "c4"); err != nil {
		t.Fatal(err)
	}
	if err := mtu("", "cancel", "c4"); err != nil {
		t.Fatal(err)
	}
	if config(t, tg) != kept {
		t.Errorf("cancel did not revert")
	}
	wantCode(t, mtu("", "confirm", "c4"), codes.FailedPrecondition)
	if s := tg.Stats(); s.RolledBack != 2 {
		t.Errorf("rolled back %d, want 2", s.RolledBack)
	}
	// a target without the extension refuses it
	_, c2 := start(t, Config{})
	_, err = c2.Set(ctx, &gpb.SetRequest{Extension: commitExtension("x", time.Minute)})
	wantCode(t, err, codes.Unimplemented)
}

// upLinks cables every port up (portlink.Static), as a live testbed does.
func upLinks(ports ...string) portlink.Static {
	s := portlink.Static{}
	for _, p := range ports {
		s = s.With(p, linktruth.Observation{Oper: linktruth.Up, SpeedMbps: 100_000})
	}
	return s
}

func TestSubscribe(t *testing.T) {
	tg, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs, Links: upLinks(ocIfs...)})
	ctx := ctxT(t)
	sub := func(mode gpb.SubscriptionList_Mode, path string) gpb.GNMI_SubscribeClient {
		s, err := c.Subscribe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: mode, Encoding: gpb.Encoding_JSON_IETF, Subscription: []*gpb.Subscription{{Path: p(t, path)}}}}}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// recv collects updates until the sync response
	recv := func(s gpb.GNMI_SubscribeClient) map[string]string {
		got := map[string]string{}
		for {
			r, err := s.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if r.GetSyncResponse() {
				return got
			}
			for _, u := range r.GetUpdate().GetUpdate() {
				got[pathString(u.Path)] = string(u.Val.GetJsonIetfVal())
			}
		}
	}
	s := sub(gpb.SubscriptionList_ONCE, "/interfaces/interface[name=*]/state/oper-status")
	got := recv(s)
	if got["/interfaces/interface[name=Ethernet0]/state/oper-status"] != `"UP"` || len(got) != 2 {
		t.Errorf("ONCE: %v", got)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("ONCE stream not closed after sync: %v", err)
	}
	if err := tg.SetState("/interfaces/interface[name=Ethernet8]/state/oper-status", []byte(`"DOWN"`)); err != nil {
		t.Fatal(err)
	}
	s = sub(gpb.SubscriptionList_POLL, "/interfaces/interface[name=Ethernet8]/state")
	first := recv(s)
	if err := s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Poll{Poll: &gpb.Poll{}}}); err != nil {
		t.Fatal(err)
	}
	second := recv(s)
	k := "/interfaces/interface[name=Ethernet8]/state"
	if !strings.Contains(first[k], `"oper-status":"DOWN"`) {
		t.Errorf("SetState override missing: %s", first[k])
	}
	if first[k] == second[k] || !strings.Contains(second[k], `"in-octets"`) {
		t.Errorf("counters did not move between polls:\n%s\n%s", first[k], second[k])
	}
	s.CloseSend()
	// STREAM: subscribe_test.go
}

func pathString(p *gpb.Path) string {
	var b strings.Builder
	for _, e := range p.Elem {
		b.WriteString("/" + e.Name)
		for k, v := range e.Key {
			b.WriteString("[" + k + "=" + v + "]")
		}
	}
	return b.String()
}

func TestFaults(t *testing.T) {
	tg, c := start(t, Config{Interfaces: ocIfs, SetLatency: 10 * time.Millisecond})
	ctx := ctxT(t)
	set := func(mtu string) error {
		_, err := c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{upd(t, "/interfaces/interface[name=Ethernet0]/config/mtu", mtu)}})
		return err
	}
	mtu := func() string {
		return get(t, c, gpb.GetRequest_CONFIG, "/interfaces/interface[name=Ethernet0]/config/mtu")
	}
	if err := set("1500"); err != nil {
		t.Fatal(err)
	}
	tg.Inject(Fault{Kind: FaultReject, Code: codes.ResourceExhausted, Message: "commit queue full", Count: 2})
	wantCode(t, set("9000"), codes.ResourceExhausted, "commit queue full")
	wantCode(t, set("9000"), codes.ResourceExhausted)
	if mtu() != "1500" {
		t.Errorf("rejected Set applied")
	}
	// drop before applying: the client sees Unavailable, nothing changed
	tg.Inject(Fault{Kind: FaultDrop})
	wantCode(t, set("9000"), codes.Unavailable)
	if mtu() != "1500" {
		t.Errorf("dropped Set applied")
	}
	// drop after applying: the change landed although the client saw an error
	tg.Inject(Fault{Kind: FaultDrop, Applied: true})
	wantCode(t, set("9001"), codes.Unavailable)
	if mtu() != "9001" {
		t.Errorf("Applied drop: mtu %s, want 9001", mtu())
	}
	// hang until the client's deadline
	tg.Inject(Fault{Kind: FaultHang})
	hctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := c.Set(hctx, &gpb.SetRequest{Update: []*gpb.Update{upd(t, "/interfaces/interface[name=Ethernet0]/config/mtu", "1")}})
	wantCode(t, err, codes.DeadlineExceeded)
	// faults on other RPCs
	tg.Inject(Fault{RPC: "Get", Kind: FaultReject, Code: codes.Internal})
	_, err = c.Get(ctx, &gpb.GetRequest{Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.Internal, "injected fault")
	if mtu() != "9001" {
		t.Errorf("hung Set applied")
	}
}
