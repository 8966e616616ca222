package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// Hosts reached over SSH are read, applied and rolled back by the agent
// on the host (transport_ssh.go); Changes stays on the controller: it is
// pure logic over the diff and what the agent's Read reported.

func (d *Driver) readRemote(ctx context.Context, t drivers.Target, h *intent.Host) (intent.State, error) {
	resp, err := d.viaAgent(ctx, t, h, agentproto.Request{Op: agentproto.OpRead})
	if err != nil {
		return nil, err
	}
	unsup := resp.Unsupported
	if unsup == nil {
		unsup = map[string]string{}
	}
	d.mu.Lock()
	d.unsupported[h.Name] = unsup
	d.facts[h.Name] = resp.Facts
	d.findings[h.Name] = resp.Findings
	d.mu.Unlock()
	if resp.State == nil {
		return intent.State{}, nil
	}
	return resp.State, nil
}

// readLinksRemote reads a host's link truth through its agent
// (agentproto.OpLinks) and checks the report against the host's spec
// NICs before anyone compares it.
func (d *Driver) readLinksRemote(ctx context.Context, t drivers.Target, h *intent.Host) (*linktruth.DeviceLinks, error) {
	resp, err := d.viaAgent(ctx, t, h, agentproto.Request{Op: agentproto.OpLinks})
	if err != nil {
		return nil, err
	}
	nics := make([]string, len(h.NICs))
	for i := range h.NICs {
		nics[i] = h.NICs[i].Name
	}
	dl, err := agentproto.DecodeLinks(resp.Links, nics)
	if err != nil {
		return nil, fmt.Errorf("%s: agent links: %w", h.Name, err)
	}
	return dl, nil
}

func (d *Driver) applyRemote(ctx context.Context, t drivers.Target, h *intent.Host, changes []drivers.Change) (drivers.Result, error) {
	o := d.SSH.withDefaults()
	resp, err := d.viaAgent(ctx, t, h, agentproto.Request{Op: agentproto.OpApply, Steps: changes, SaveTo: o.SaveDir})
	if err != nil {
		return drivers.Result{}, err
	}
	// The transaction succeeded; a warning (the desired state could not be
	// saved for --reapply) must not fail it.
	for _, w := range resp.Warnings {
		drivers.Eventf(ctx, "%s: agent: %s", h.Name, w)
	}
	return drivers.Result{Token: resp.Token}, nil
}

var _ drivers.CheckedApplier = (*Driver)(nil)

// ApplyChecked is the one-round-trip apply (drivers.CheckedApplier): for
// a host over SSH one agent run reads the host, checks the plan's
// fingerprint, runs the transaction and reads the host back; a local or
// netns host does the same here.
func (d *Driver) ApplyChecked(ctx context.Context, t drivers.Target, changes []drivers.Change, fingerprint string, opts drivers.ApplyOptions) (drivers.Result, intent.State, error) {
	h, err := hostOf(t)
	if err != nil {
		return drivers.Result{}, nil, err
	}
	if h.Connect.Kind != "ssh" {
		live, err := d.Read(ctx, t)
		if err != nil {
			return drivers.Result{}, nil, fmt.Errorf("staleness check: %w", err)
		}
		if fp := live.Fingerprint(); fp != fingerprint {
			return drivers.Result{}, nil, &drivers.StaleError{Device: "host." + h.Name, Planned: fingerprint, Live: fp}
		}
		res, err := d.Apply(ctx, t, changes, opts)
		if err != nil {
			return res, nil, err
		}
		after, err := d.Read(ctx, t)
		if err != nil {
			return res, nil, nil // the engine reads back itself
		}
		return res, after, nil
	}
	o := d.SSH.withDefaults()
	resp, err := d.viaAgent(ctx, t, h, agentproto.Request{Op: agentproto.OpApply, Steps: changes, SaveTo: o.SaveDir,
		Fingerprint: fingerprint, ReadBack: true})
	if err != nil {
		return drivers.Result{}, nil, err
	}
	for _, w := range resp.Warnings {
		drivers.Eventf(ctx, "%s: agent: %s", h.Name, w)
	}
	return drivers.Result{Token: resp.Token}, resp.State, nil
}

func (d *Driver) rollbackRemote(ctx context.Context, t drivers.Target, h *intent.Host, r drivers.Result) error {
	_, err := d.viaAgent(ctx, t, h, agentproto.Request{Op: agentproto.OpRollback, Token: r.Token})
	return err
}

// Unsupported returns what the last Read of a host found it cannot do,
// per NIC path prefix, with the reason; the agent sends it to the
// controller with the state it read.
func (d *Driver) Unsupported(host string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.unsupported[host])
}

var _ drivers.TrafficRunner = (*Driver)(nil)

// Traffic runs one traffic request of fabctl validate (a side of a test
// pair, or a counter read: body is validate/traffic's request, opaque
// here) on a host reached over SSH, through the agent there as plan and
// apply do: shipped when missing, under sudo when the host says so, in
// the host's namespace for ssh+netns. onLine receives the agent's stderr
// lines as they arrive (its "ready" announcements); the agent's answer is
// returned as is. ctx's deadline, when it has one, bounds the call
// instead of the transport's command timeout (a long test runs longer).
func (d *Driver) Traffic(ctx context.Context, t drivers.Target, body json.RawMessage, onLine func(string)) (json.RawMessage, error) {
	h, ok := t.Intent.(*intent.Host)
	if !ok || h == nil {
		return nil, fmt.Errorf("host driver: traffic request for a %T, not a host", t.Intent)
	}
	var limit time.Duration
	if dl, ok := ctx.Deadline(); ok {
		limit = time.Until(dl)
	}
	resp, err := d.agentCall(ctx, t, h, agentproto.Request{Op: agentproto.OpTraffic, Traffic: body}, onLine, limit)
	if err != nil {
		return nil, err
	}
	return resp.Traffic, nil
}
