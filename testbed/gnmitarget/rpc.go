package gnmitarget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/yangval"
)

const gnmiVersion = "0.10.0"

// fixedModels are advertised without loaded models (the modules and
// revisions of ../shared/yang, see its README).
var fixedModels = map[string][]*gpb.ModelData{
	FlavorOpenConfig: {
		{Name: "openconfig-if-ethernet", Organization: "OpenConfig working group", Version: "2.18.0"},
		{Name: "openconfig-interfaces", Organization: "OpenConfig working group", Version: "3.8.1"},
		{Name: "openconfig-qos", Organization: "OpenConfig working group", Version: "2.2.0"},
	},
	FlavorSRLinux: {
		{Name: "srl_nokia-interfaces", Organization: "Nokia", Version: "2025-03-31"},
		{Name: "srl_nokia-qos", Organization: "Nokia", Version: "2025-03-31"},
	},
}

// Capabilities lists the models, encodings, version and extensions.
func (t *Target) Capabilities(ctx context.Context, _ *gpb.CapabilityRequest) (*gpb.CapabilityResponse, error) {
	t.count(func(s *Stats) { s.Capabilities++ })
	if err := t.fault(ctx, "Capabilities"); err != nil {
		return nil, err
	}
	resp := &gpb.CapabilityResponse{
		SupportedEncodings: []gpb.Encoding{gpb.Encoding_JSON_IETF, gpb.Encoding_JSON},
		GNMIVersion:        gnmiVersion,
	}
	if t.schema != nil {
		for _, m := range t.schema.Modules() {
			resp.SupportedModels = append(resp.SupportedModels, &gpb.ModelData{Name: m.Name, Organization: m.Organization, Version: m.Revision})
		}
	} else {
		resp.SupportedModels = fixedModels[t.cfg.Flavor]
	}
	if t.cfg.CommitConfirm {
		resp.Extension = append(resp.Extension, &gnmi_ext.Extension{Ext: &gnmi_ext.Extension_Commit{Commit: &gnmi_ext.Commit{}}})
	}
	return resp, nil
}

func (t *Target) count(f func(*Stats)) {
	t.mu.Lock()
	f(&t.stats)
	t.mu.Unlock()
}

// takeFault returns the next queued fault for rpc, consuming one use.
func (t *Target) takeFault(rpc string) *Fault {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.faults {
		if t.faults[i].RPC != rpc {
			continue
		}
		f := t.faults[i]
		t.faults[i].Count--
		if t.faults[i].Count == 0 {
			t.faults = append(t.faults[:i], t.faults[i+1:]...)
		}
		return &f
	}
	return nil
}

// fault runs a queued fault for rpc that acts before the RPC's work
// (reject, hang, drop without applying). A FaultDrop with Applied is
// returned to the Set handler through t.dropAfter.
func (t *Target) fault(ctx context.Context, rpc string) error {
	f := t.takeFault(rpc)
	if f == nil {
		return nil
	}
	return t.runFault(ctx, f)
}

func (t *Target) runFault(ctx context.Context, f *Fault) error {
	switch f.Kind {
	case FaultReject:
		code, msg := f.Code, f.Message
		if code == codes.OK {
			code = codes.Unavailable
		}
		if msg == "" {
			msg = "injected fault"
		}
		return status.Error(code, msg)
	case FaultHang:
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-t.done:
			return status.Error(codes.Unavailable, "target shutting down")
		}
	case FaultDrop:
		t.drop(ctx)
		return status.Error(codes.Unavailable, "connection dropped (injected fault)")
	}
	return status.Errorf(codes.Internal, "unknown fault kind %d", f.Kind)
}

// drop closes the TCP connection the RPC of ctx arrived on.
func (t *Target) drop(ctx context.Context) {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		_ = t.lis.drop(p.Addr.String())
	}
}

// origins a flavor serves ("" always).
var origins = map[string][]string{
	FlavorOpenConfig: {"openconfig"},
	FlavorSRLinux:    {"srl", "srl_nokia", "native"},
}

// joinPath joins prefix and path into elements, checking origins.
func (t *Target) joinPath(prefix, p *gpb.Path) ([]yangval.PathElem, error) {
	var out []yangval.PathElem
	for i, x := range []*gpb.Path{prefix, p} {
		if x == nil {
			continue
		}
		if len(x.GetElement()) > 0 {
			return nil, status.Error(codes.InvalidArgument, "path.element is deprecated and not supported; use path.elem")
		}
		if o := x.GetOrigin(); o != "" {
			ok := false
			for _, a := range origins[t.cfg.Flavor] {
				ok = ok || a == o
			}
			if !ok {
				return nil, status.Errorf(codes.InvalidArgument, "origin %q is not served by this %s target", o, t.cfg.Flavor)
			}
		}
		for _, e := range x.GetElem() {
			if e.GetName() == "" {
				what := "path"
				if i == 0 {
					what = "prefix"
				}
				return nil, status.Errorf(codes.InvalidArgument, "%s has an element without a name", what)
			}
			pe := yangval.PathElem{Name: e.GetName()}
			if len(e.GetKey()) > 0 {
				pe.Keys = make(map[string]string, len(e.GetKey()))
				for k, v := range e.GetKey() {
					pe.Keys[k] = v
				}
			}
			out = append(out, pe)
		}
	}
	return out, nil
}

// toPath converts elements to a gNMI path.
func toPath(elems []yangval.PathElem) *gpb.Path {
	p := &gpb.Path{}
	for _, e := range elems {
		pe := &gpb.PathElem{Name: e.Name}
		if e.Keys != nil {
			pe.Key = make(map[string]string, len(e.Keys))
			for k, v := range e.Keys {
				pe.Key[k] = v
			}
		}
		p.Elem = append(p.Elem, pe)
	}
	return p
}

// decodeValue turns a TypedValue into decoded JSON.
func decodeValue(tv *gpb.TypedValue) (any, error) {
	switch v := tv.GetValue().(type) {
	case *gpb.TypedValue_JsonIetfVal:
		return decodeJSON(v.JsonIetfVal)
	case *gpb.TypedValue_JsonVal:
		return decodeJSON(v.JsonVal)
	case *gpb.TypedValue_StringVal:
		return v.StringVal, nil
	case *gpb.TypedValue_IntVal:
		return json.Number(strconv.FormatInt(v.IntVal, 10)), nil
	case *gpb.TypedValue_UintVal:
		return json.Number(strconv.FormatUint(v.UintVal, 10)), nil
	case *gpb.TypedValue_BoolVal:
		return v.BoolVal, nil
	case *gpb.TypedValue_DoubleVal:
		return json.Number(strconv.FormatFloat(v.DoubleVal, 'f', -1, 64)), nil
	case *gpb.TypedValue_LeaflistVal:
		var out []any
		for _, e := range v.LeaflistVal.GetElement() {
			x, err := decodeValue(e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case nil:
		return nil, errors.New("no value")
	default:
		return nil, fmt.Errorf("value type %T is not supported (use json_ietf_val)", v)
	}
}

func wantEncoding(e gpb.Encoding) error {
	if e != gpb.Encoding_JSON_IETF && e != gpb.Encoding_JSON {
		return status.Errorf(codes.Unimplemented, "encoding %s is not supported (JSON_IETF, JSON)", e)
	}
	return nil
}

func typedValue(e gpb.Encoding, v any) (*gpb.TypedValue, error) {
	b, err := jsonBytes(v)
	if err != nil {
		return nil, err
	}
	if e == gpb.Encoding_JSON {
		return &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: b}}, nil
	}
	return &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: b}}, nil
}

// view is the data a read of type typ sees, interface state from links
// (Target.linkPorts). Caller holds t.mu.
func (t *Target) view(typ gpb.GetRequest_DataType, links map[string]linktruth.Observation) (map[string]any, error) {
	if typ == gpb.GetRequest_CONFIG {
		return t.tree, nil
	}
	st := t.stateTree(links)
	if err := t.validateState(st); err != nil {
		return nil, err
	}
	if typ == gpb.GetRequest_STATE || typ == gpb.GetRequest_OPERATIONAL {
		return st, nil
	}
	return t.mergeTrees(t.tree, st), nil
}

// checkReadPath reports a read path the models do not have
// (InvalidArgument), so a typo is not mistaken for absent data.
func (t *Target) checkReadPath(elems []yangval.PathElem) error {
	if t.schema == nil || len(elems) == 0 {
		return nil
	}
	n := t.rootNode(elems[0].Name)
	if t.lldpPath(elems) {
		lldp := n
		if t.cfg.Flavor == FlavorSRLinux {
			lldp = n.Child(elems[1].Name)
		}
		if !lldp.Valid() {
			return nil // the models lack LLDP: served outside them (links.go)
		}
	}
	if !n.Valid() {
		return status.Errorf(codes.InvalidArgument, "%s: no such top-level node in the models", yangval.PathString(elems[:1]))
	}
	for i := 1; i < len(elems); i++ {
		if n = n.Child(elems[i].Name); !n.Valid() {
			return status.Errorf(codes.InvalidArgument, "%s: no such node in the models", yangval.PathString(elems[:i+1]))
		}
	}
	return nil
}

// Get returns the data at each path.
func (t *Target) Get(ctx context.Context, req *gpb.GetRequest) (*gpb.GetResponse, error) {
	t.count(func(s *Stats) { s.Get++ })
	if err := t.fault(ctx, "Get"); err != nil {
		return nil, err
	}
	if err := wantEncoding(req.GetEncoding()); err != nil {
		return nil, err
	}
	paths := req.GetPath()
	if len(paths) == 0 {
		paths = []*gpb.Path{{}}
	}
	var all [][]yangval.PathElem
	for _, p := range paths {
		elems, err := t.joinPath(req.GetPrefix(), p)
		if err != nil {
			return nil, err
		}
		if err := t.checkReadPath(elems); err != nil {
			return nil, err
		}
		all = append(all, elems)
	}
	links, err := t.linkPortsFor(ctx, req.GetType(), all)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	view, err := t.view(req.GetType(), links)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	var notes []*gpb.Notification
	now := time.Now().UnixNano()
	for _, elems := range all {
		var ms []match
		t.collect(view, yangval.Node{}, true, elems, nil, &ms)
		if len(ms) == 0 {
			t.mu.Unlock()
			return nil, status.Errorf(codes.NotFound, "%s: no data", yangval.PathString(elems))
		}
		n := &gpb.Notification{Timestamp: now, Prefix: &gpb.Path{Target: req.GetPrefix().GetTarget()}}
		for _, m := range ms {
			tv, err := typedValue(req.GetEncoding(), m.val)
			if err != nil {
				t.mu.Unlock()
				return nil, status.Errorf(codes.Internal, "encode %s: %v", yangval.PathString(m.path), err)
			}
			n.Update = append(n.Update, &gpb.Update{Path: toPath(m.path), Val: tv})
		}
		notes = append(notes, n)
	}
	t.mu.Unlock()
	return &gpb.GetResponse{Notification: notes}, nil
}

// commit is a confirmed commit awaiting confirmation.
type commit struct {
	id     string
	before map[string]any
	timer  *time.Timer
}

func commitExt(req *gpb.SetRequest) *gnmi_ext.Commit {
	for _, e := range req.GetExtension() {
		if c := e.GetCommit(); c != nil {
			return c
		}
	}
	return nil
}

// Set applies a SetRequest all-or-nothing.
func (t *Target) Set(ctx context.Context, req *gpb.SetRequest) (resp *gpb.SetResponse, err error) {
	t.count(func(s *Stats) { s.Set++ })
	defer func() {
		if err != nil {
			t.count(func(s *Stats) { s.SetRejected++ })
		}
	}()
	var dropAfter bool
	if f := t.takeFault("Set"); f != nil {
		if f.Kind == FaultDrop && f.Applied {
			dropAfter = true
		} else if err := t.runFault(ctx, f); err != nil {
			return nil, err
		}
	}
	if d := t.cfg.SetLatency; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-t.done:
			timer.Stop()
			return nil, status.Error(codes.Unavailable, "target shutting down")
		}
	}
	if len(req.GetUnionReplace()) > 0 {
		return nil, status.Error(codes.Unimplemented, "union_replace is not supported by this target")
	}
	ops, results, err := t.setOps(req)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if toolsOp(op) {
			return t.tools(ctx, req, ops, results)
		}
	}
	cx := commitExt(req)
	if cx != nil && !t.cfg.CommitConfirm {
		return nil, status.Error(codes.Unimplemented, "the commit-confirmed extension is not supported by this target")
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.commitAction(cx, len(ops)); err != nil || (cx != nil && cx.GetCommit() == nil) {
		if err == nil {
			resp = &gpb.SetResponse{Prefix: req.GetPrefix(), Timestamp: time.Now().UnixNano()}
		}
		return resp, err
	}
	next, err := t.applyOps(ops)
	if err != nil {
		return nil, err
	}
	before := t.tree
	t.tree = next
	if cx != nil {
		d := t.cfg.DefaultRollback
		if rd := cx.GetCommit().GetRollbackDuration(); rd != nil {
			d = rd.AsDuration()
		}
		if d <= 0 {
			t.tree = before
			return nil, status.Error(codes.InvalidArgument, "commit: rollback_duration must be positive")
		}
		t.arm(&commit{id: cx.GetId(), before: before}, d)
	}
	resp = &gpb.SetResponse{Prefix: req.GetPrefix(), Response: results, Timestamp: time.Now().UnixNano()}
	if dropAfter {
		t.drop(ctx)
		return nil, status.Error(codes.Unavailable, "connection dropped after the Set was applied (injected fault)")
	}
	return resp, nil
}

// commitAction handles the commit-confirmed extension (and its absence)
// against the pending commit. Caller holds t.mu. Confirm, cancel and
// set_rollback_duration are complete here; a commit request continues
// with the Set's operations.
func (t *Target) commitAction(cx *gnmi_ext.Commit, nops int) error {
	p := t.pending
	if cx == nil {
		if p != nil {
			return status.Errorf(codes.FailedPrecondition, "commit %q is awaiting confirmation: confirm or cancel it first", p.id)
		}
		return nil
	}
	if cx.GetId() == "" {
		return status.Error(codes.InvalidArgument, "commit extension without an id")
	}
	if cx.GetCommit() == nil && nops > 0 {
		return status.Error(codes.InvalidArgument, "confirm, cancel and set_rollback_duration carry no operations")
	}
	switch {
	case cx.GetCommit() != nil:
		if p != nil {
			return status.Errorf(codes.FailedPrecondition, "commit %q is already awaiting confirmation", p.id)
		}
		return nil
	case p == nil:
		return status.Error(codes.FailedPrecondition, "no commit is awaiting confirmation")
	case cx.GetId() != p.id:
		return status.Errorf(codes.InvalidArgument, "commit id %q does not match the pending commit %q", cx.GetId(), p.id)
	}
	switch {
	case cx.GetConfirm() != nil:
		p.timer.Stop()
		t.pending = nil
	case cx.GetCancel() != nil:
		p.timer.Stop()
		t.tree = p.before
		t.pending = nil
		t.stats.RolledBack++
	case cx.GetSetRollbackDuration() != nil:
		d := cx.GetSetRollbackDuration().GetRollbackDuration().AsDuration()
		if d <= 0 {
			return status.Error(codes.InvalidArgument, "set_rollback_duration: rollback_duration must be positive")
		}
		p.timer.Stop()
		t.arm(p, d)
	default:
		return status.Error(codes.InvalidArgument, "commit extension without an action")
	}
	return nil
}

// arm makes c the pending commit, reverted after d unless confirmed.
// Caller holds t.mu.
func (t *Target) arm(c *commit, d time.Duration) {
	t.pending = c
	c.timer = time.AfterFunc(d, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.pending == c {
			t.tree = c.before
			t.pending = nil
			t.stats.RolledBack++
		}
	})
}

// setOps decodes the request into operations (deletes, replaces,
// updates: the order gNMI applies them in) and their results.
func (t *Target) setOps(req *gpb.SetRequest) ([]yangval.SetOp, []*gpb.UpdateResult, error) {
	var ops []yangval.SetOp
	var res []*gpb.UpdateResult
	for _, p := range req.GetDelete() {
		elems, err := t.joinPath(req.GetPrefix(), p)
		if err != nil {
			return nil, nil, err
		}
		if err := noWildcards(elems); err != nil {
			return nil, nil, err
		}
		ops = append(ops, yangval.SetOp{Op: yangval.OpDelete, Path: elems})
		res = append(res, &gpb.UpdateResult{Path: p, Op: gpb.UpdateResult_DELETE})
	}
	for i, list := range [][]*gpb.Update{req.GetReplace(), req.GetUpdate()} {
		kind, rop := yangval.OpReplace, gpb.UpdateResult_REPLACE
		if i == 1 {
			kind, rop = yangval.OpUpdate, gpb.UpdateResult_UPDATE
		}
		for _, u := range list {
			elems, err := t.joinPath(req.GetPrefix(), u.GetPath())
			if err != nil {
				return nil, nil, err
			}
			if err := noWildcards(elems); err != nil {
				return nil, nil, err
			}
			v, err := decodeValue(u.GetVal())
			if err != nil {
				return nil, nil, status.Errorf(codes.InvalidArgument, "%s %s: %v", kind, yangval.PathString(elems), err)
			}
			ops = append(ops, yangval.SetOp{Op: kind, Path: elems, Value: v})
			res = append(res, &gpb.UpdateResult{Path: u.GetPath(), Op: rop})
		}
	}
	return ops, res, nil
}

// noWildcards refuses "*" names and key values in a Set path: a Set
// names data exactly (gNMI specification 3.4).
func noWildcards(elems []yangval.PathElem) error {
	for _, e := range elems {
		if e.Name == "*" || e.Name == "..." {
			return status.Errorf(codes.InvalidArgument, "%s: wildcards are not allowed in Set paths", yangval.PathString(elems))
		}
		for _, v := range e.Keys {
			if v == "*" {
				return status.Errorf(codes.InvalidArgument, "%s: wildcards are not allowed in Set paths", yangval.PathString(elems))
			}
		}
	}
	return nil
}

// applyOps validates the operations, applies them to a copy of the tree
// and validates the result. Caller holds t.mu.
func (t *Target) applyOps(ops []yangval.SetOp) (map[string]any, error) {
	if t.schema != nil {
		// the validator sees top-level names qualified the flavor's way
		qops := t.schema.QualifySet(ops, modulePrefix[t.cfg.Flavor])
		if errs := t.schema.ValidateSet(qops); len(errs) > 0 {
			return nil, status.Errorf(codes.InvalidArgument, "schema violation: %s", joinErrors(errs))
		}
	}
	tree := jsontree.DeepCopy(t.tree).(map[string]any)
	for _, op := range ops {
		var err error
		if tree, err = t.apply(tree, op); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s %v", op.Op, err)
		}
	}
	if t.schema != nil {
		if errs := t.schema.ValidateTree(tree); len(errs) > 0 {
			return nil, status.Errorf(codes.InvalidArgument, "schema violation in the resulting configuration: %s", joinErrors(errs))
		}
	}
	if err := t.validateLibYANG(tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// joinErrors lists up to 20 violations, one "path: reason" each.
func joinErrors(errs []yangval.Error) string {
	var parts []string
	for i, e := range errs {
		if i == 20 {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-i))
			break
		}
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}

// Subscribe serves ONCE and POLL subscriptions, and STREAM ones (subscribe.go).
func (t *Target) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	t.count(func(s *Stats) { s.Subscribe++ })
	ctx := stream.Context()
	if err := t.fault(ctx, "Subscribe"); err != nil {
		return err
	}
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	sl := req.GetSubscribe()
	if sl == nil {
		return status.Error(codes.InvalidArgument, "the first SubscribeRequest must carry a SubscriptionList")
	}
	if err := wantEncoding(sl.GetEncoding()); err != nil {
		return err
	}
	var paths [][]yangval.PathElem
	for _, s := range sl.GetSubscription() {
		elems, err := t.joinPath(sl.GetPrefix(), s.GetPath())
		if err != nil {
			return err
		}
		if err := t.checkReadPath(elems); err != nil {
			return err
		}
		paths = append(paths, elems)
	}
	if len(paths) == 0 {
		return status.Error(codes.InvalidArgument, "no subscriptions")
	}
	if sl.GetMode() == gpb.SubscriptionList_STREAM {
		return t.stream(stream, sl, paths) // subscribe.go
	}
	send := func(data bool) error {
		if data {
			links, err := t.linkPortsFor(ctx, gpb.GetRequest_ALL, paths)
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
			now := time.Now().UnixNano()
			for _, elems := range paths {
				var ms []match
				t.collect(view, yangval.Node{}, true, elems, nil, &ms)
				for _, m := range ms {
					tv, err := typedValue(sl.GetEncoding(), m.val)
					if err != nil {
						t.mu.Unlock()
						return status.Errorf(codes.Internal, "encode %s: %v", yangval.PathString(m.path), err)
					}
					notes = append(notes, &gpb.Notification{Timestamp: now, Prefix: &gpb.Path{Target: sl.GetPrefix().GetTarget()},
						Update: []*gpb.Update{{Path: toPath(m.path), Val: tv}}})
				}
			}
			t.mu.Unlock()
			for _, n := range notes {
				if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
					return err
				}
			}
		}
		return stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}})
	}
	if err := send(!sl.GetUpdatesOnly()); err != nil {
		return err
	}
	if sl.GetMode() == gpb.SubscriptionList_ONCE {
		return nil
	}
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if req.GetPoll() == nil {
			return status.Error(codes.InvalidArgument, "a POLL subscription accepts only Poll requests after the SubscriptionList")
		}
		if err := send(true); err != nil {
			return err
		}
	}
}
