package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/kube"
)

// KubeAgent is fabctl agent --kube: the agent of one node in the
// fabctl-agent DaemonSet. It lists and watches only its node's
// FabricHostConfig (field selector metadata.name=NODE), converges the
// host with exactly the --reapply path (Server.Serve of a stepless apply:
// plan locally, one verified transaction, read back), writes the status
// conditions, watches DCB drift of the applied NICs, and removes the
// fabctl.io/unconfigured taint from its Node only after a verified apply.
type KubeAgent struct {
	Node    string
	Clients *kube.Clients
	Server  *Server
	// Netns: the host driver works in this network namespace (a test knob:
	// the production agent works on its own host, hostNetwork).
	Netns string
	// Watch watches DCB drift (WatchDCB; tests replace it); nil: no drift.
	Watch WatchFunc
	// Log receives one line per event; nil discards.
	Log io.Writer
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu       sync.Mutex
	ready    readiness
	lastGen  int64 // generation converged by this process (0: none yet)
	applies  int64 // transactions with changes made by this process
	status   kube.HostStatus
	stopWtch context.CancelFunc
}

func (a *KubeAgent) logf(format string, args ...any) {
	if a.Log != nil {
		fmt.Fprintf(a.Log, "agent --kube %s: "+format+"\n", append([]any{a.Node}, args...)...)
	}
}

func (a *KubeAgent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Run lists and watches the node's object until ctx ends, re-listing
// after any watch error (an apiserver restart, an expired resource
// version) with a bounded backoff. It returns nil when ctx ends.
func (a *KubeAgent) Run(ctx context.Context) error {
	if a.Node == "" {
		return errors.New("NODE_NAME is not set: the DaemonSet sets it from the downward API (spec.nodeName)")
	}
	ri := a.Clients.Dyn.Resource(kube.GVR)
	sel := "metadata.name=" + a.Node
	backoff := 200 * time.Millisecond
	defer a.stopWatch()
	defer a.setReady(false, "stopped")
	for ctx.Err() == nil {
		list, err := ri.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			a.setReady(false, "cannot list FabricHostConfig "+a.Node+": "+err.Error())
			a.logf("list: %v (retrying in %s)", err, backoff)
			sleep(ctx, backoff)
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 200 * time.Millisecond
		for i := range list.Items {
			a.reconcile(ctx, &list.Items[i])
		}
		rv := list.GetResourceVersion()
		for ctx.Err() == nil {
			w, err := ri.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				a.setReady(false, "cannot watch FabricHostConfig "+a.Node+": "+err.Error())
				a.logf("watch: %v (re-listing)", err)
				sleep(ctx, backoff)
				break
			}
			a.setReady(true, "watching FabricHostConfig "+a.Node)
			rv = a.drain(ctx, w, rv)
			a.setReady(false, "the watch of FabricHostConfig "+a.Node+" ended; watching again")
			if rv == "" {
				break // expired or failed: list again
			}
		}
	}
	return nil
}

// drain handles a watch's events until it ends; it returns the resource
// version to resume from, "" to list again.
func (a *KubeAgent) drain(ctx context.Context, w watch.Interface, rv string) string {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv // closed (timeout, server restart): resume
			}
			switch ev.Type {
			case watch.Error:
				if st, ok := ev.Object.(*metav1.Status); ok {
					a.logf("watch error: %s", st.Message)
				}
				return ""
			case watch.Bookmark, watch.Added, watch.Modified, watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = u.GetResourceVersion()
				switch ev.Type {
				case watch.Added, watch.Modified:
					a.reconcile(ctx, u)
				case watch.Deleted:
					a.logf("object deleted: keeping the host as it is, drift watch stopped")
					a.stopWatch()
					a.mu.Lock()
					a.lastGen = 0
					a.mu.Unlock()
				}
			}
		}
	}
}

// reconcile converges one observation of the node's object: a new
// generation, or the first one this process sees (a restart or a reboot
// re-applies without a spec change). Other updates (its own status
// writes, a re-list after an apiserver restart) apply nothing.
func (a *KubeAgent) reconcile(ctx context.Context, u *unstructured.Unstructured) {
	if u.GetName() != a.Node {
		return
	}
	o, err := kube.FromUnstructured(u)
	if err != nil {
		a.logf("%v", err)
		return
	}
	a.mu.Lock()
	seen := a.lastGen == o.Metadata.Generation
	first := a.lastGen == 0
	a.mu.Unlock()
	if seen {
		return
	}
	gen := o.Metadata.Generation
	st := o.Status
	st.ObservedGeneration = gen
	st.Agent = a.Server.Handshake.Build + " " + a.Server.Handshake.Version
	mark := func() {
		a.mu.Lock()
		a.lastGen = gen
		a.mu.Unlock()
	}
	if o.Spec.Protocol != kube.Protocol {
		// Version skew: never guess how to read another envelope.
		a.setCond(&st, kube.CondApplied, "False", gen, kube.ReasonIncompatible,
			fmt.Sprintf("spec.protocol %d is not the protocol of this agent (%d): upgrade the fabctl agent DaemonSet to the publisher's fabctl version; the host was left untouched", o.Spec.Protocol, kube.Protocol))
		a.writeStatus(ctx, &st)
		mark()
		a.logf("generation %d: refused: unknown protocol %d", gen, o.Spec.Protocol)
		return
	}
	if o.Spec.Hold && !(first && st.ObservedRevision == o.Spec.Revision) {
		a.setCond(&st, kube.CondApplied, "False", gen, kube.ReasonHeld, "spec.hold is set: this revision is not applied until the publisher releases it")
		a.writeStatus(ctx, &st)
		mark()
		return
	}
	h, err := kube.DecodeIntent(o.Spec.Intent)
	if err == nil && h.Name == "" {
		err = errors.New("spec.intent has no host name")
	}
	if err != nil {
		a.setCond(&st, kube.CondApplied, "False", gen, kube.ReasonIncorrect, err.Error()+"; the host was left untouched")
		a.writeStatus(ctx, &st)
		mark()
		return
	}
	a.stopWatch()
	start := a.now()
	resp := a.Server.Serve(ctx, &agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: h, Netns: a.Netns})
	if ctx.Err() != nil {
		return // stopped mid-way: the next agent re-applies
	}
	res, _ := Result(resp)
	st.ObservedRevision = o.Spec.Revision
	st.Changes, st.Diff, st.Drift, st.NICs = 0, nil, nil, nicReport(h, resp, res)
	if res != nil {
		st.Changes = res.Changes
		st.Diff = summarize(res.Remaining, 20)
		if res.Changes > 0 && resp.OK {
			a.mu.Lock()
			a.applies++
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	st.Applies = a.applies
	a.mu.Unlock()
	degraded := false
	for _, n := range st.NICs {
		degraded = degraded || n.Reason != kube.NICVerified
	}
	if resp.OK {
		reason, msg := kube.ReasonApplied, fmt.Sprintf("applied %d setting(s), verified by read-back in %s", st.Changes, a.now().Sub(start).Round(time.Millisecond))
		if st.Changes == 0 {
			reason, msg = kube.ReasonUnchanged, "live state matches the desired state (verified by read-back)"
		}
		a.setCond(&st, kube.CondApplied, "True", gen, reason, msg)
		a.setCond(&st, kube.CondDrifted, "False", gen, kube.ReasonNoDrift, "DCB state is where this apply left it")
	} else {
		reason := map[agentproto.ErrKind]string{agentproto.KindRead: kube.ReasonReadFailed, agentproto.KindPartial: kube.ReasonPartial,
			agentproto.KindVerify: kube.ReasonVerify, agentproto.KindRequest: kube.ReasonIncorrect}[resp.Kind()]
		if reason == "" {
			reason = kube.ReasonFailed
		}
		a.setCond(&st, kube.CondApplied, "False", gen, reason, trim(resp.Err().Error(), 4000))
		degraded = true
	}
	if degraded {
		var bad []string
		for _, n := range st.NICs {
			if n.Reason != kube.NICVerified {
				bad = append(bad, n.Name+": "+n.Reason)
			}
		}
		msg := "host apply failed"
		if len(bad) > 0 {
			msg = strings.Join(bad, "; ")
		}
		a.setCond(&st, kube.CondDegraded, "True", gen, kube.ReasonNICIssues, trim(msg, 4000))
	} else {
		a.setCond(&st, kube.CondDegraded, "False", gen, kube.ReasonNICOK, "every NIC applied and verified")
	}
	a.writeStatus(ctx, &st)
	mark()
	a.logf("generation %d revision %s: %s (%d change(s))", gen, o.Spec.Revision, st.Cond(kube.CondApplied).Reason, st.Changes)
	if resp.OK {
		// Status first, then the gate: a node is schedulable only once its
		// verified state is recorded.
		if err := a.untaint(ctx); err != nil {
			a.logf("removing taint %s: %v", kube.TaintKey, err)
		}
		a.startWatch(ctx, h, gen)
	}
}

// nicReport is the per-NIC outcome: Verified, or why not (the settings
// still differing after the apply, or the error that names the NIC), so
// one bad NIC is reported as such and the others as they are.
func nicReport(h *intent.Host, resp *agentproto.Response, res *apply.DeviceResult) []kube.NICStatus {
	remaining := map[string][]intent.AttrChange{}
	if res != nil {
		for _, c := range res.Remaining {
			if rest, ok := strings.CutPrefix(c.Path, "nic/"); ok {
				nic, _, _ := strings.Cut(rest, "/")
				remaining[nic] = append(remaining[nic], c)
			}
		}
	}
	var errMsg string
	if !resp.OK {
		errMsg = resp.Err().Error()
	}
	out := make([]kube.NICStatus, 0, len(h.NICs))
	for _, n := range h.NICs {
		s := kube.NICStatus{Name: n.Name, Reason: kube.NICVerified}
		switch {
		case len(remaining[n.Name]) > 0:
			s.Reason = kube.NICDiffers
			s.Message = trim(strings.Join(summarize(remaining[n.Name], 5), "; "), 1000)
		case errMsg != "" && mentions(errMsg, n.Name):
			s.Reason = kube.NICFailed
			if resp.Kind() == agentproto.KindRead {
				s.Reason = kube.NICReadFailed
			}
			s.Message = trim(errMsg, 1000)
		case errMsg != "":
			s.Reason = kube.NICNotVerified
			s.Message = "the host's apply failed before this NIC was verified"
		}
		out = append(out, s)
	}
	return out
}

// mentions reports whether msg names the NIC (as a word: eth1 is not in
// eth10).
func mentions(msg, nic string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], nic)
		if j < 0 {
			return false
		}
		end := i + j + len(nic)
		if end == len(msg) || !isNameByte(msg[end]) {
			if i+j == 0 || !isNameByte(msg[i+j-1]) {
				return true
			}
		}
		i = end
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b == '-' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func (a *KubeAgent) setCond(st *kube.HostStatus, typ, status string, gen int64, reason, msg string) {
	ts := a.now().UTC().Format(time.RFC3339)
	if c := st.Cond(typ); c != nil {
		if c.Status == status {
			ts = c.LastTransitionTime
		}
		c.Status, c.ObservedGeneration, c.Reason, c.Message, c.LastTransitionTime = status, gen, reason, msg, ts
		return
	}
	st.Conditions = append(st.Conditions, kube.Condition{Type: typ, Status: status, ObservedGeneration: gen, LastTransitionTime: ts, Reason: reason, Message: msg})
}

// writeStatus patches the status subresource, retrying (an apiserver or
// etcd outage) until it succeeds or ctx ends.
func (a *KubeAgent) writeStatus(ctx context.Context, st *kube.HostStatus) {
	a.mu.Lock()
	a.status = *st
	a.mu.Unlock()
	b, err := kube.StatusPatch(st)
	if err != nil {
		a.logf("encoding status: %v", err)
		return
	}
	backoff := 200 * time.Millisecond
	// A 403 is retried for a while too: an apiserver that just restarted
	// answers 403 until its authorizer has caught up, and a status lost
	// then would leave the publisher waiting for a report. The while
	// counts from the first 403: from the start of the write, an outage
	// as long as it left no time for the authorizer.
	var forbidden time.Time
	for ctx.Err() == nil {
		_, err := a.Clients.Dyn.Resource(kube.GVR).Patch(ctx, a.Node, types.MergePatchType, b, metav1.PatchOptions{FieldManager: "fabctl-agent"}, "status")
		if err == nil {
			a.setStatusErr(nil)
			return
		}
		if apierrors.IsForbidden(err) && forbidden.IsZero() {
			forbidden = time.Now()
		}
		if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) && time.Since(forbidden) >= statusForbiddenWindow {
			a.setStatusErr(nil)
			a.logf("status not written: %v", err)
			return
		}
		a.setStatusErr(err)
		a.logf("status write: %v (retrying in %s)", err, backoff)
		sleep(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// statusForbiddenWindow is how long a status write retries 403s after
// the first one.
var statusForbiddenWindow = 2 * time.Minute

// untaint removes fabctl.io/unconfigured from the node, if present.
func (a *KubeAgent) untaint(ctx context.Context) error {
	defer a.setNodeErr(nil)
	backoff := 200 * time.Millisecond
	until := time.Now().Add(2 * time.Minute)
	for try := 0; try < 5; {
		n, err := a.Clients.Dyn.Resource(kube.NodeGVR).Get(ctx, a.Node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil // no Node object (not in a cluster's node list): nothing to gate
		}
		if err != nil && !apierrors.IsInvalid(err) && time.Now().Before(until) && ctx.Err() == nil {
			a.setNodeErr(err)
			a.logf("reading the node: %v (retrying in %s)", err, backoff)
			sleep(ctx, backoff)
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		if err != nil {
			return err
		}
		try++
		taints, _, _ := unstructured.NestedSlice(n.Object, "spec", "taints")
		keep := make([]any, 0, len(taints))
		for _, t := range taints {
			if m, ok := t.(map[string]any); ok && m["key"] == kube.TaintKey {
				continue
			}
			keep = append(keep, t)
		}
		if len(keep) == len(taints) {
			return nil
		}
		patch, _ := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": n.GetResourceVersion()},
			"spec":     map[string]any{"taints": keep},
		})
		_, err = a.Clients.Dyn.Resource(kube.NodeGVR).Patch(ctx, a.Node, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "fabctl-agent"})
		if apierrors.IsConflict(err) {
			continue
		}
		if err == nil {
			a.logf("verified: taint %s removed from the node", kube.TaintKey)
		}
		return err
	}
	return errors.New("the node kept changing (5 conflicts)")
}

// startWatch watches the NICs of h from the state just applied and
// reports any change as the Drifted condition: DCB of the RoCE NICs
// through the agent's DCB watch (Watch), and the MTU of every NIC with
// one through the kernel's link notifications (RTM_NEWLINK).
func (a *KubeAgent) startWatch(ctx context.Context, h *intent.Host, gen int64) {
	var ifaces []string
	mtus := map[string]int{}
	for _, n := range h.NICs {
		if n.RoCEMode != "" {
			ifaces = append(ifaces, n.Name)
		}
		if n.MTU > 0 {
			mtus[n.Name] = n.MTU
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	a.mu.Lock()
	a.stopWtch = cancel
	a.mu.Unlock()
	var dmu sync.Mutex
	drift := map[string][]intent.AttrChange{} // "dcb/NIC" or "link/NIC" -> changes
	report := func(key string, d host.Drift) {
		dmu.Lock()
		defer dmu.Unlock()
		if len(d.Changes) == 0 {
			delete(drift, key)
		} else {
			drift[key] = d.Changes
		}
		a.mu.Lock()
		st := a.status
		a.mu.Unlock()
		st.Conditions = append([]kube.Condition(nil), st.Conditions...)
		if len(drift) == 0 {
			a.setCond(&st, kube.CondDrifted, "False", gen, kube.ReasonNoDrift, "the NICs are back where the last apply left them")
			st.Drift = nil
		} else {
			nics := map[string]bool{}
			var entries []kube.DriftEntry
			for k, ch := range drift {
				_, nic, _ := strings.Cut(k, "/")
				nics[nic] = true
				for _, c := range ch {
					entries = append(entries, kube.DriftEntry{Path: c.Path, Applied: c.Before, Live: c.After})
				}
			}
			names := make([]string, 0, len(nics))
			for n := range nics {
				names = append(names, n)
			}
			sort.Strings(names)
			sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
			a.setCond(&st, kube.CondDrifted, "True", gen, kube.ReasonDrift,
				fmt.Sprintf("%s of %s changed outside fabctl (%s)", strings.Join(kinds(drift), " and "), strings.Join(names, ", "), d.Cmd))
			st.Drift = entries[:min(len(entries), 32)]
		}
		a.logf("drift: %s", st.Cond(kube.CondDrifted).Message)
		a.writeStatus(wctx, &st)
	}
	if a.Watch != nil && len(ifaces) > 0 {
		go func() {
			err := a.Watch(wctx, a.Netns, ifaces, func(d host.Drift) { report("dcb/"+d.NIC, d) })
			if err != nil && wctx.Err() == nil {
				a.logf("DCB watch: %v", err)
			}
		}()
	}
	if len(mtus) > 0 {
		go func() {
			if err := watchMTU(wctx, a.Netns, mtus, func(d host.Drift) { report("link/"+d.NIC, d) }); err != nil && wctx.Err() == nil {
				a.logf("link watch: %v", err)
			}
		}()
	}
}

// kinds names what drifted: DCB, MTU.
func kinds(drift map[string][]intent.AttrChange) []string {
	var dcb, link bool
	for k := range drift {
		dcb = dcb || strings.HasPrefix(k, "dcb/")
		link = link || strings.HasPrefix(k, "link/")
	}
	var out []string
	if dcb {
		out = append(out, "DCB state")
	}
	if link {
		out = append(out, "the MTU")
	}
	return out
}

// watchMTU reports the MTU of the named links moving away from the
// applied value (and back), from the kernel's RTM_NEWLINK notifications
// in network namespace ns ("" = the agent's own), until ctx ends.
func watchMTU(ctx context.Context, ns string, applied map[string]int, fn func(host.Drift)) error {
	opts := netlink.LinkSubscribeOptions{ListExisting: true}
	if ns != "" {
		h, err := netns.GetFromName(ns)
		if err != nil {
			return fmt.Errorf("network namespace %q: %w", ns, err)
		}
		defer h.Close()
		opts.Namespace = &h
	}
	errc := make(chan error, 1)
	opts.ErrorCallback = func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	ch := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	defer close(done)
	if err := netlink.LinkSubscribeWithOptions(ch, done, opts); err != nil {
		return err
	}
	last := map[string]int{}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case u, ok := <-ch:
			if !ok {
				return errors.New("link notifications closed")
			}
			attrs := u.Link.Attrs()
			want, ok := applied[attrs.Name]
			if !ok || u.Header.Type != unix.RTM_NEWLINK {
				continue
			}
			prev, seen := last[attrs.Name]
			if seen && prev == attrs.MTU {
				continue
			}
			last[attrs.Name] = attrs.MTU
			if !seen && attrs.MTU == want {
				continue // the applied state: nothing to report
			}
			d := host.Drift{NIC: attrs.Name, Cmd: "RTM_NEWLINK", Time: time.Now()}
			if attrs.MTU != want {
				d.Changes = []intent.AttrChange{{Path: "nic/" + attrs.Name + "/mtu", Action: intent.Update,
					Before: strconv.Itoa(want), After: strconv.Itoa(attrs.MTU)}}
			}
			fn(d)
		}
	}
}

func (a *KubeAgent) stopWatch() {
	a.mu.Lock()
	c := a.stopWtch
	a.stopWtch = nil
	a.mu.Unlock()
	if c != nil {
		c()
	}
}

func summarize(ch []intent.AttrChange, max int) []string {
	var out []string
	for i, c := range ch {
		if i == max {
			out = append(out, fmt.Sprintf("... %d more", len(ch)-max))
			break
		}
		out = append(out, fmt.Sprintf("%s: want %q, live %q", c.Path, c.After, c.Before))
	}
	return out
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
