// Package gnmicore is the driver core fabctl's gNMI switch drivers
// (openconfig, srlinux) share: the SetRequest operations a plan carries
// as payload lines, a JSON_IETF tree reader (Node) and applier
// (ApplyOps), and Core, which implements the drivers.Driver methods over
// a Platform: read with Get, one SetRequest per device, the gNMI
// commit-confirmed extension when the target advertises it, rollback to
// the configuration read before the Set. The connection itself is
// drivers/transport/gnmi's.
//
// It may import drivers, intent, yangval, internal/jsontree and
// drivers/transport/gnmi, never a platform driver.
package gnmicore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/fabctl/fabctl/drivers"
	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/yangval"
)

// Object is one configuration subtree a platform renders: a list entry
// or a container at a gNMI path. Owned objects are fabctl's whole (its
// named policies, profiles and per-port QoS bindings): they are replaced,
// and deleted when no longer desired. Shared objects hold settings
// fabctl does not manage (an interface's description, speed, ...): they
// are updated (merged) and never deleted.
type Object struct {
	Path  string
	Owned bool
	Val   any
}

// Platform is what a gNMI driver knows about its models.
type Platform interface {
	// Name is the platform ("openconfig", "srlinux").
	Name() string
	// Model is a module the device must advertise in Capabilities.
	Model() string
	// ReadPaths are the Get paths holding everything fabctl manages.
	ReadPaths() []string
	// Decode normalises what Get returned (read path -> the node's
	// value; absent paths are missing) into the switch's live State.
	Decode(data map[string]any, sw *intent.Switch) intent.State
	// Desired renders the switch intent into objects.
	Desired(sw *intent.Switch) ([]Object, error)
	// Affected lists the object paths a changed setting is rendered
	// into, including objects that may no longer be desired (to delete
	// them; the change's Before value names the old ones).
	Affected(ch intent.AttrChange, sw *intent.Switch) []string
	// Rank orders object paths so that a referenced object comes before
	// the objects that refer to it (queues before forwarding groups
	// before classifiers before interface bindings).
	Rank(path string) int
	// Owned says whether an object path is fabctl's whole, to delete
	// when no longer desired (Object.Owned for a desired one).
	Owned(path string) bool
	// Factory is the configuration every device of the platform has
	// before fabctl touches it (a root JSON_IETF object): the switch's
	// ports and, on SR Linux, the system-reserved forwarding classes and
	// queues the rendering refers to. Offline validation applies the
	// rendered request to it.
	Factory(sw *intent.Switch) map[string]any
}

// Core implements the drivers.Driver methods the gNMI drivers share; a
// platform driver embeds it and adds Name, Fields and Unexpressible.
// One Core serves one run: it remembers each applied transaction's
// inverse request for Rollback.
type Core struct {
	P       Platform
	Options Options

	mu    sync.Mutex
	txns  map[string]*txn
	conns map[string]*pooled
	// read is each device's configuration at its last Read: Changes
	// leaves out deletes of objects the device does not have (a plan
	// reads a device, then asks the same driver for its changes).
	read map[string]map[string]any
}

type txn struct {
	inverse []Op // restores the configuration read before the Set
	pending bool // a confirmed commit awaits Confirm
}

// Capabilities: a SetRequest is one transaction; the commit-confirmed
// extension where the target advertises it; rollback.
func (c *Core) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{CommitConfirm: true, Rollback: true}
}

func (c *Core) switchIntent(t drivers.Target) (*intent.Switch, error) {
	return drivers.SwitchIntent(t, c.P.Name())
}

// dial connects and checks the device speaks the platform's models; it
// also says whether the device advertises commit-confirmed.
func (c *Core) dial(ctx context.Context, t drivers.Target) (*gnmitransport.Client, bool, error) {
	cl, caps, err := gnmitransport.Dial(ctx, t, c.Options)
	if err != nil {
		return nil, false, err
	}
	if models := caps.GetSupportedModels(); len(models) > 0 {
		var names []string
		found := false
		for _, m := range models {
			names = append(names, m.GetName())
			found = found || m.GetName() == c.P.Model()
		}
		if !found {
			cl.Close()
			sort.Strings(names)
			if len(names) > 8 {
				names = append(names[:8], fmt.Sprintf("... %d more", len(names)-8))
			}
			return nil, false, &gnmitransport.Error{Device: cl.Device(), RPC: "Capabilities", Detail: fmt.Sprintf(
				"the device does not advertise the model %s that the %s driver writes (it advertises %s): check the switch's platform",
				c.P.Model(), c.P.Name(), strings.Join(names, ", "))}
		}
	}
	commit := false
	for _, e := range caps.GetExtension() {
		if e.GetCommit() != nil {
			commit = true
		}
	}
	return cl, commit, nil
}

// idleClose is how long a connection stays open unused. A plan reads a
// device and an apply verifies it right after its Set, each through one
// driver instance: reusing the connection saves a TLS handshake and a
// Capabilities round trip per step (a quarter of the CPU of a large
// apply); a connection nobody uses is closed soon after.
const idleClose = 5 * time.Second

// pooled is an open connection to one device.
type pooled struct {
	cl     *gnmitransport.Client
	commit bool
	users  int
	timer  *time.Timer // armed while idle
}

// acquire returns an open connection to t's device, dialing when there
// is none (or its credentials or verification mode differ); release
// hands it back.
func (c *Core) acquire(ctx context.Context, t drivers.Target) (*gnmitransport.Client, bool, func(), error) {
	key := fmt.Sprintf("%s|%s|%p|%v", t.Device.Name, t.Device.Address, t.Credentials, t.Insecure)
	c.mu.Lock()
	p := c.conns[key]
	if p != nil && (p.timer == nil || p.timer.Stop()) {
		p.users++
		p.timer = nil
		c.mu.Unlock()
		return p.cl, p.commit, func() { c.release(key, p) }, nil
	}
	c.mu.Unlock()
	cl, commit, err := c.dial(ctx, t)
	if err != nil {
		return nil, false, nil, err
	}
	p = &pooled{cl: cl, commit: commit, users: 1}
	c.mu.Lock()
	if c.conns == nil {
		c.conns = map[string]*pooled{}
	}
	if old := c.conns[key]; old != nil && old.users == 0 && old.timer != nil && old.timer.Stop() {
		old.cl.Close() // a concurrent dial raced this one and went idle
	}
	c.conns[key] = p
	c.mu.Unlock()
	return cl, commit, func() { c.release(key, p) }, nil
}

func (c *Core) release(key string, p *pooled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p.users--
	if p.users > 0 {
		return
	}
	if c.conns[key] != p {
		p.cl.Close() // replaced by a newer connection
		return
	}
	p.timer = time.AfterFunc(idleClose, func() {
		c.mu.Lock()
		if c.conns[key] == p && p.users == 0 {
			delete(c.conns, key)
		}
		c.mu.Unlock()
		p.cl.Close()
	})
}

// snapshot reads every managed path into one configuration tree.
func (c *Core) snapshot(ctx context.Context, cl *gnmitransport.Client) (map[string]any, map[string]any, error) {
	data := map[string]any{}
	var ops []Op
	for _, p := range c.P.ReadPaths() {
		v, ok, err := cl.Get(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			data[p] = v
			ops = append(ops, NewOp(OpReplace, p, v))
		}
	}
	tree, err := ApplyOps(nil, ops)
	if err != nil {
		return nil, nil, &gnmitransport.Error{Device: cl.Device(), RPC: "Get", Detail: err.Error()}
	}
	return data, tree, nil
}

// Read returns the device's managed settings in normalised form.
func (c *Core) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	sw, err := c.switchIntent(t)
	if err != nil {
		return nil, err
	}
	cl, _, release, err := c.acquire(ctx, t)
	if err != nil {
		return nil, err
	}
	defer release()
	data, tree, err := c.snapshot(ctx, cl)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.read == nil {
		c.read = map[string]map[string]any{}
	}
	c.read[t.Device.Name] = tree
	c.mu.Unlock()
	return c.P.Decode(data, sw), nil
}

// DesiredOps is the SetRequest that configures an empty device: owned
// objects replaced, shared ones updated, in dependency order.
func DesiredOps(p Platform, sw *intent.Switch) ([]Op, error) {
	objs, err := p.Desired(sw)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(objs, func(i, j int) bool { return p.Rank(objs[i].Path) < p.Rank(objs[j].Path) })
	ops := make([]Op, 0, len(objs))
	for _, o := range objs {
		ops = append(ops, objectOp(o))
	}
	return Sorted(ops), nil
}

func objectOp(o Object) Op {
	if o.Owned {
		return NewOp(OpReplace, o.Path, o.Val)
	}
	return NewOp(OpUpdate, o.Path, o.Val)
}

// RenderFile is the name of the file Render writes.
const RenderFile = "gnmi-setrequest.json"

// Render writes the SetRequest that configures the device from empty.
func (c *Core) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := c.switchIntent(t)
	if err != nil {
		return nil, err
	}
	ops, err := DesiredOps(c.P, sw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	return []drivers.RenderedFile{{Name: RenderFile, Data: RequestFile(ops)}}, nil
}

var _ drivers.YANGRenderer = (*Core)(nil)

// YANGPayload is Render's request in structured form, with the
// configuration it leaves on a factory-default device, for
// `fabctl render --yang-dir`. The model set is the platform's name.
func (c *Core) YANGPayload(t drivers.Target) (drivers.YANGPayload, error) {
	sw, err := c.switchIntent(t)
	if err != nil {
		return drivers.YANGPayload{}, err
	}
	ops, err := DesiredOps(c.P, sw)
	if err != nil {
		return drivers.YANGPayload{}, fmt.Errorf("%s: %w", sw.Name, err)
	}
	tree, err := ApplyOps(c.P.Factory(sw), ops)
	if err != nil {
		return drivers.YANGPayload{}, fmt.Errorf("%s: %w", sw.Name, err)
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return drivers.YANGPayload{}, err
	}
	p := drivers.YANGPayload{Models: c.P.Name(), Tree: b}
	for _, o := range ops {
		p.Ops = append(p.Ops, drivers.YANGOp{Op: o.Op, Path: o.Path, Val: o.Val})
	}
	return p, nil
}

// Changes turns a diff into ONE step carrying the device's whole
// SetRequest, one operation per payload line: every object a changed
// setting lives in is replaced (owned) or updated (shared) with its
// desired content, or deleted when it is owned and no longer desired.
func (c *Core) Changes(t drivers.Target, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	sw, err := c.switchIntent(t)
	if err != nil {
		return nil, err
	}
	if len(diff) == 0 {
		return nil, nil
	}
	objs, err := c.P.Desired(sw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	byPath := make(map[string]Object, len(objs))
	for _, o := range objs {
		byPath[o.Path] = o
	}
	c.mu.Lock()
	live := c.read[t.Device.Name]
	c.mu.Unlock()
	// absent: the device, as last read, has nothing at path, so there is
	// nothing to delete there.
	absent := func(path string) bool {
		if live == nil {
			return false
		}
		elems, err := yangval.ParsePath(path)
		if err != nil {
			return false
		}
		_, ok := lookup(live, elems)
		return !ok
	}
	var ops []Op
	seen := map[string]bool{}
	var paths []string
	dis := ""
	for _, ch := range diff {
		paths = append(paths, ch.Path)
		if dis == "" && ch.Disruptive != "" {
			dis = ch.Disruptive
		}
		affected := c.P.Affected(ch, sw)
		if len(affected) == 0 {
			return nil, fmt.Errorf("%s: the %s driver renders no configuration for %s", sw.Name, c.P.Name(), ch.Path)
		}
		for _, p := range affected {
			if seen[p] {
				continue
			}
			seen[p] = true
			if o, ok := byPath[p]; ok {
				ops = append(ops, objectOp(o))
			} else if c.P.Owned(p) && !absent(p) {
				ops = append(ops, Op{Op: OpDelete, Path: p})
			}
		}
	}
	sort.SliceStable(ops, func(i, j int) bool {
		ri, rj := c.P.Rank(ops[i].Path), c.P.Rank(ops[j].Path)
		if ops[i].Op == OpDelete && ops[j].Op == OpDelete {
			return ri > rj // referrers go before what they refer to
		}
		return ri < rj
	})
	ops = Sorted(ops)
	lines := make([]string, len(ops))
	n := map[string]int{}
	for i, o := range ops {
		lines[i] = o.Line()
		n[o.Op]++
	}
	return []drivers.Change{{
		Paths:      paths,
		Summary:    fmt.Sprintf("one gNMI SetRequest (%d delete, %d replace, %d update), applied as one transaction", n[OpDelete], n[OpReplace], n[OpUpdate]),
		Payload:    lines,
		Disruptive: dis,
	}}, nil
}

func newToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "fabctl-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}

// StepOps reads the operations of a change list's payload lines.
func StepOps(steps []drivers.Change) ([]Op, error) {
	var ops []Op
	for _, st := range steps {
		for _, line := range st.Payload {
			o, err := ParseLine(line)
			if err != nil {
				return nil, err
			}
			ops = append(ops, o)
		}
	}
	return Sorted(ops), nil
}

// inverse is the request that restores tree (the configuration before
// ops) at every path ops touch: the old subtree replaced back, or the
// path deleted where nothing was.
func inverse(tree map[string]any, ops []Op) ([]Op, error) {
	var out []Op
	seen := map[string]bool{}
	for _, o := range ops {
		if seen[o.Path] {
			continue
		}
		seen[o.Path] = true
		elems, err := yangval.ParsePath(o.Path)
		if err != nil {
			return nil, err
		}
		if old, ok := lookup(tree, elems); ok {
			out = append(out, NewOp(OpReplace, o.Path, old))
		} else {
			out = append(out, Op{Op: OpDelete, Path: o.Path})
		}
	}
	return Sorted(out), nil
}

func commitExt(id string, action any) *gnmi_ext.Extension {
	c := &gnmi_ext.Commit{Id: id}
	switch a := action.(type) {
	case time.Duration:
		c.Action = &gnmi_ext.Commit_Commit{Commit: &gnmi_ext.CommitRequest{RollbackDuration: durationpb.New(a)}}
	case *gnmi_ext.CommitConfirm:
		c.Action = &gnmi_ext.Commit_Confirm{Confirm: a}
	case *gnmi_ext.CommitCancel:
		c.Action = &gnmi_ext.Commit_Cancel{Cancel: a}
	}
	return &gnmi_ext.Extension{Ext: &gnmi_ext.Extension_Commit{Commit: c}}
}

// Apply sends the steps' operations as one SetRequest. It reads the
// managed configuration first (to roll back to), and uses the
// commit-confirmed extension when opts.ConfirmTimeout > 0 and the device
// advertises it. A rejected Set leaves a gNMI target unchanged; Apply
// reads the device back to say so, and restores it when a lost
// connection leaves it changed.
func (c *Core) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, opts drivers.ApplyOptions) (drivers.Result, error) {
	ops, err := StepOps(steps)
	if err != nil {
		return drivers.Result{}, fmt.Errorf("%s: %w", t.Device.Name, err)
	}
	if len(ops) == 0 {
		return drivers.Result{}, nil
	}
	cl, canCommit, release, err := c.acquire(ctx, t)
	if err != nil {
		return drivers.Result{}, err
	}
	defer release()
	_, pre, err := c.snapshot(ctx, cl)
	if err != nil {
		return drivers.Result{}, fmt.Errorf("read the configuration before the Set: %w", err)
	}
	inv, err := inverse(pre, ops)
	if err != nil {
		return drivers.Result{}, fmt.Errorf("%s: %w", cl.Device(), err)
	}
	req, err := Request(ops)
	if err != nil {
		return drivers.Result{}, fmt.Errorf("%s: %w", cl.Device(), err)
	}
	token := newToken()
	pending := opts.ConfirmTimeout > 0 && canCommit
	if pending {
		req.Extension = append(req.Extension, commitExt(token, opts.ConfirmTimeout))
	}
	if err := cl.Set(ctx, req); err != nil {
		return drivers.Result{}, c.recover(ctx, cl, pre, inv, token, pending, err)
	}
	c.mu.Lock()
	if c.txns == nil {
		c.txns = map[string]*txn{}
	}
	c.txns[token] = &txn{inverse: inv, pending: pending}
	c.mu.Unlock()
	return drivers.Result{Token: token, Pending: pending}, nil
}

// recover handles a failed Set: it reads the device back and says it is
// unchanged, or restores it (cancelling a pending commit, else sending
// the inverse request), or reports a partial apply.
func (c *Core) recover(ctx context.Context, cl *gnmitransport.Client, pre map[string]any, inv []Op, token string, pending bool, cause error) error {
	unchanged := func() (bool, error) {
		_, now, err := c.snapshot(ctx, cl)
		if err != nil {
			return false, err
		}
		return reflect.DeepEqual(now, pre), nil
	}
	same, rerr := unchanged()
	switch {
	case rerr == nil && same && gnmitransport.ConnLost(cause):
		return fmt.Errorf("%w; read back after the connection loss: the Set did not take effect, the device is unchanged", cause)
	case rerr == nil && same:
		return fmt.Errorf("%w; the device rejected the SetRequest and is unchanged", cause)
	case rerr != nil:
		return &drivers.PartialError{Device: cl.Device(), Err: fmt.Errorf("%v; reading the device back failed too (%v): it may hold part or all of the SetRequest", cause, rerr)}
	}
	// The Set took effect although the RPC failed (connection lost after
	// the commit): undo it.
	var undo error
	if pending {
		undo = cl.Set(ctx, &gpb.SetRequest{Extension: []*gnmi_ext.Extension{commitExt(token, &gnmi_ext.CommitCancel{})}})
	}
	if !pending || undo != nil {
		req, err := Request(inv)
		if err == nil {
			err = cl.Set(ctx, req)
		}
		undo = err
	}
	if undo == nil {
		if same, err := unchanged(); err == nil && same {
			return fmt.Errorf("%w; the Set had taken effect and was undone: the device is back at its prior configuration", cause)
		}
		undo = errors.New("the device differs from its prior configuration after the undo")
	}
	return &drivers.PartialError{Device: cl.Device(), Err: fmt.Errorf("%v; the Set had taken effect and undoing it failed: %v", cause, undo)}
}

// Confirm makes a pending confirmed commit permanent.
func (c *Core) Confirm(ctx context.Context, t drivers.Target, r drivers.Result) error {
	c.mu.Lock()
	tx := c.txns[r.Token]
	c.mu.Unlock()
	if tx == nil || !tx.pending {
		return nil
	}
	cl, _, release, err := c.acquire(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	if err := cl.Set(ctx, &gpb.SetRequest{Extension: []*gnmi_ext.Extension{commitExt(r.Token, &gnmi_ext.CommitConfirm{})}}); err != nil {
		return fmt.Errorf("confirm commit %s: %w", r.Token, err)
	}
	c.mu.Lock()
	tx.pending = false
	c.mu.Unlock()
	return nil
}

// Rollback restores the configuration from before the apply: a pending
// commit is cancelled (the device reverts it), a confirmed one is undone
// with the inverse request.
func (c *Core) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil // nothing was applied
	}
	c.mu.Lock()
	tx := c.txns[r.Token]
	c.mu.Unlock()
	if tx == nil {
		return fmt.Errorf("%s: no prior configuration recorded for transaction %s in this run", t.Device.Name, r.Token)
	}
	cl, _, release, err := c.acquire(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	if tx.pending {
		err := cl.Set(ctx, &gpb.SetRequest{Extension: []*gnmi_ext.Extension{commitExt(r.Token, &gnmi_ext.CommitCancel{})}})
		if err == nil {
			c.mu.Lock()
			tx.pending = false
			c.mu.Unlock()
			return nil
		}
		// The commit is gone (it timed out and reverted, or the device
		// restarted): the inverse request restores the prior
		// configuration either way.
	}
	req, err := Request(tx.inverse)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Device.Name, err)
	}
	if err := cl.Set(ctx, req); err != nil {
		return fmt.Errorf("roll back %s: %w", r.Token, err)
	}
	c.mu.Lock()
	tx.pending = false
	c.mu.Unlock()
	return nil
}

// Operate sends one update outside any transaction: an operational
// command a platform models as a data node of its tools datastore (SR
// Linux's /tools/system/configuration/save). val is the JSON_IETF value.
// It is not a configuration change: nothing is read before it, and
// there is nothing to roll back.
func (c *Core) Operate(ctx context.Context, t drivers.Target, path string, val []byte) error {
	cl, _, release, err := c.acquire(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	req, err := Request([]Op{{Op: OpUpdate, Path: path, Val: val}})
	if err != nil {
		return fmt.Errorf("%s: %w", cl.Device(), err)
	}
	return cl.Set(ctx, req)
}
