package gnmitarget

import (
	"strconv"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
)

// streamRecv reads a STREAM's responses into per-leaf value histories
// until stop says enough or the deadline passes.
func streamRecv(t *testing.T, s gpb.GNMI_SubscribeClient, stop func(hist map[string][]string, synced bool) bool) map[string][]string {
	t.Helper()
	hist := map[string][]string{}
	synced := false
	for !stop(hist, synced) {
		r, err := s.Recv()
		if err != nil {
			t.Fatalf("stream: %v (so far %v)", err, hist)
		}
		if r.GetSyncResponse() {
			synced = true
			continue
		}
		for _, u := range r.GetUpdate().GetUpdate() {
			k := pathString(u.Path)
			hist[k] = append(hist[k], string(u.Val.GetJsonIetfVal()))
		}
	}
	return hist
}

func TestSubscribeStream(t *testing.T) {
	tg, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs, Links: upLinks(ocIfs...)})
	ctx := ctxT(t)
	open := func(subs ...*gpb.Subscription) gpb.GNMI_SubscribeClient {
		s, err := c.Subscribe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON_IETF, Subscription: subs}}}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	const octets = "/interfaces/interface[name=Ethernet0]/state/counters/in-octets"
	const oper = "/interfaces/interface[name=Ethernet8]/state/oper-status"

	// SAMPLE every 100ms: the whole counters container arrives, flattened
	// to leaves, again and again, growing.
	s := open(&gpb.Subscription{Path: p(t, "/interfaces/interface[name=*]/state/counters"), Mode: gpb.SubscriptionMode_SAMPLE,
		SampleInterval: uint64(100 * time.Millisecond)})
	start := time.Now()
	hist := streamRecv(t, s, func(h map[string][]string, synced bool) bool { return synced && len(h[octets]) >= 4 })
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Errorf("4 samples at 100ms arrived in %v", el)
	}
	var prev uint64
	for i, v := range hist[octets] {
		n, err := strconv.ParseUint(strings.Trim(v, `"`), 10, 64)
		if err != nil || (i > 0 && n <= prev) {
			t.Errorf("in-octets samples do not grow: %v", hist[octets])
			break
		}
		prev = n
	}
	s.CloseSend()

	// ON_CHANGE: the initial value, then nothing until it changes.
	s = open(&gpb.Subscription{Path: p(t, "/interfaces/interface[name=*]/state/oper-status"), Mode: gpb.SubscriptionMode_ON_CHANGE})
	hist = streamRecv(t, s, func(h map[string][]string, synced bool) bool { return synced })
	if len(hist[oper]) != 1 || hist[oper][0] != `"UP"` {
		t.Fatalf("initial on-change state: %v", hist)
	}
	time.Sleep(3 * MinSampleInterval) // no change: nothing may arrive
	if err := tg.SetState(oper, []byte(`"DOWN"`)); err != nil {
		t.Fatal(err)
	}
	hist = streamRecv(t, s, func(h map[string][]string, _ bool) bool { return len(h) > 0 })
	if len(hist) != 1 || len(hist[oper]) != 1 || hist[oper][0] != `"DOWN"` {
		t.Errorf("on-change update: want only %s DOWN, got %v", oper, hist)
	}
	s.CloseSend()

	// updates_only: no initial values, the sync first.
	s, err := c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON_IETF, UpdatesOnly: true,
		Subscription: []*gpb.Subscription{{Path: p(t, oper), Mode: gpb.SubscriptionMode_ON_CHANGE}}}}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Recv()
	if err != nil || !r.GetSyncResponse() {
		t.Errorf("updates_only: first response %v, %v; want the sync", r, err)
	}
	s.CloseSend()

	// A sample interval below the minimum is refused.
	s = open(&gpb.Subscription{Path: p(t, "/interfaces"), Mode: gpb.SubscriptionMode_SAMPLE, SampleInterval: uint64(time.Millisecond)})
	_, err = s.Recv()
	wantCode(t, err, codes.InvalidArgument, "sample_interval")
}
