package gnmitarget

import (
	"bytes"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/yangval"
)

// STREAM subscriptions (gNMI specification 3.5.1.5.2). Every subscription
// is checked at the target's tick (MinSampleInterval); its leaves are
// flattened so ON_CHANGE and suppress_redundant compare leaf by leaf.

// MinSampleInterval is the shortest sample interval the target honours
// and the period at which it looks for on-change updates.
const MinSampleInterval = 50 * time.Millisecond

// DefaultSampleInterval is the interval of a SAMPLE subscription that
// names none.
const DefaultSampleInterval = time.Second

type streamSub struct {
	elems     []yangval.PathElem
	mode      gpb.SubscriptionMode
	interval  time.Duration
	heartbeat time.Duration
	suppress  bool
	next      time.Time // next sample
	lastBeat  time.Time
	last      map[string][]byte // leaf path -> JSON value last sent
}

func (t *Target) stream(stream gpb.GNMI_SubscribeServer, sl *gpb.SubscriptionList, paths [][]yangval.PathElem) error {
	ctx := stream.Context()
	subs := make([]*streamSub, len(paths))
	now := time.Now()
	for i, s := range sl.GetSubscription() {
		ss := &streamSub{elems: paths[i], mode: s.GetMode(), suppress: s.GetSuppressRedundant(), last: map[string][]byte{}}
		ss.interval = time.Duration(s.GetSampleInterval())
		ss.heartbeat = time.Duration(s.GetHeartbeatInterval())
		switch ss.mode {
		case gpb.SubscriptionMode_SAMPLE:
			if ss.interval == 0 {
				ss.interval = DefaultSampleInterval
			}
			if ss.interval < MinSampleInterval {
				return status.Errorf(codes.InvalidArgument, "%s: sample_interval %s is below the target's minimum %s",
					yangval.PathString(ss.elems), ss.interval, MinSampleInterval)
			}
		case gpb.SubscriptionMode_ON_CHANGE, gpb.SubscriptionMode_TARGET_DEFINED:
			// TARGET_DEFINED: this target sends every leaf on change.
		default:
			return status.Errorf(codes.InvalidArgument, "subscription mode %s", ss.mode)
		}
		if ss.heartbeat != 0 && ss.heartbeat < MinSampleInterval {
			return status.Errorf(codes.InvalidArgument, "%s: heartbeat_interval %s is below the target's minimum %s",
				yangval.PathString(ss.elems), ss.heartbeat, MinSampleInterval)
		}
		ss.next, ss.lastBeat = now.Add(ss.interval), now
		subs[i] = ss
	}
	// Initial state: every leaf once (unless updates_only), then sync.
	if err := t.streamSend(stream, sl, subs, true, !sl.GetUpdatesOnly(), now); err != nil {
		return err
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	// The client sends nothing more on a STREAM; a closed send side or a
	// cancelled context ends it.
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				done <- err
				return
			}
		}
	}()
	tick := time.NewTicker(MinSampleInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		case now := <-tick.C:
			if err := t.streamSend(stream, sl, subs, false, true, now); err != nil {
				return err
			}
		}
	}
}

// streamSend sends the updates due at now: every leaf when initial (and
// send), else samples whose interval elapsed, changed leaves of on-change
// subscriptions, and heartbeats. Updates go in one notification per
// subscription.
func (t *Target) streamSend(stream gpb.GNMI_SubscribeServer, sl *gpb.SubscriptionList, subs []*streamSub, initial, send bool, now time.Time) error {
	due := false
	for _, s := range subs {
		if initial || s.mode == gpb.SubscriptionMode_SAMPLE && !now.Before(s.next) || s.mode != gpb.SubscriptionMode_SAMPLE || s.heartbeat > 0 && now.Sub(s.lastBeat) >= s.heartbeat {
			due = true
		}
	}
	if !due {
		return nil
	}
	elems := make([][]yangval.PathElem, len(subs))
	for i, s := range subs {
		elems[i] = s.elems
	}
	links, err := t.linkPortsFor(stream.Context(), gpb.GetRequest_ALL, elems)
	if err != nil {
		return err
	}
	t.mu.Lock()
	view, err := t.view(gpb.GetRequest_ALL, links)
	if err != nil {
		t.mu.Unlock()
		return err
	}
	var notes []*gpb.Notification
	for _, s := range subs {
		sample := s.mode == gpb.SubscriptionMode_SAMPLE && !now.Before(s.next)
		beat := s.heartbeat > 0 && now.Sub(s.lastBeat) >= s.heartbeat
		if !initial && !sample && !beat && s.mode == gpb.SubscriptionMode_SAMPLE {
			continue
		}
		if sample {
			s.next = now.Add(s.interval)
		}
		if beat {
			s.lastBeat = now
		}
		var ms []match
		t.collect(view, yangval.Node{}, true, s.elems, nil, &ms)
		n := &gpb.Notification{Timestamp: now.UnixNano(), Prefix: &gpb.Path{Target: sl.GetPrefix().GetTarget()}}
		for _, m := range ms {
			for _, lf := range leaves(m.path, m.val) {
				key := yangval.PathString(lf.path)
				b, err := jsonBytes(lf.val)
				if err != nil {
					t.mu.Unlock()
					return status.Errorf(codes.Internal, "encode %s: %v", key, err)
				}
				prev, seen := s.last[key]
				changed := !seen || !bytes.Equal(prev, b)
				s.last[key] = b
				switch {
				case initial:
				case beat:
				case s.mode == gpb.SubscriptionMode_SAMPLE && (!s.suppress || changed):
				case s.mode != gpb.SubscriptionMode_SAMPLE && changed:
				default:
					continue
				}
				if initial && !send {
					continue
				}
				tv, err := typedValue(sl.GetEncoding(), lf.val)
				if err != nil {
					t.mu.Unlock()
					return status.Errorf(codes.Internal, "encode %s: %v", key, err)
				}
				n.Update = append(n.Update, &gpb.Update{Path: toPath(lf.path), Val: tv})
			}
		}
		if len(n.Update) > 0 {
			notes = append(notes, n)
		}
	}
	t.mu.Unlock()
	for _, n := range notes {
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
	}
	return nil
}

// leaves flattens the value at path into its leaves (a leaf-list is one
// leaf; list entries get their key values from the entry's scalar
// members named like the list's keys when known, else "name").
func leaves(path []yangval.PathElem, v any) []match {
	var out []match
	var walk func(p []yangval.PathElem, v any)
	walk = func(p []yangval.PathElem, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if arr, ok := c.([]any); ok && len(arr) > 0 {
					if _, isObj := arr[0].(map[string]any); isObj {
						for _, e := range arr {
							m, _ := e.(map[string]any)
							keys := map[string]string{}
							for _, kn := range listKeyNames(m) {
								keys[kn], _ = scalarText(m[kn])
							}
							walk(append(append([]yangval.PathElem{}, p...), yangval.PathElem{Name: k, Keys: keys}), m)
						}
						continue
					}
				}
				walk(append(append([]yangval.PathElem{}, p...), yangval.PathElem{Name: k}), c)
			}
		default:
			out = append(out, match{path: p, val: v})
		}
	}
	walk(append([]yangval.PathElem{}, path...), v)
	return out
}

// listKeyNames guesses a list entry's keys without a schema: the
// well-known key leaves of the models the target serves.
func listKeyNames(m map[string]any) []string {
	var out []string
	for _, k := range []string{"name", "index", "interface-id", "queue-name", "queue-id", "id", "sequence-id"} {
		if _, ok := m[k]; ok {
			out = append(out, k)
			break
		}
	}
	return out
}
