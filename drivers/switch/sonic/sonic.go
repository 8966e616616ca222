// Package sonic is fabctl's SONiC switch driver. It renders a switch
// intent into CONFIG_DB tables (PORT mtu, DSCP_TO_TC_MAP,
// TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE,
// SCHEDULER, WRED_PROFILE, QUEUE, PORT_QOS_MAP with pfc_enable,
// CABLE_LENGTH, BUFFER_PG/BUFFER_PROFILE, PFC_WD; syntax from
// sonic-buildimage src/sonic-yang-models/doc/Configuration.md), reads
// `show runningconfiguration all` back into normalised state, and applies
// changes as one JSON patch with SONiC's generic config updater:
//
//	sudo config checkpoint fabctl-<id>
//	cat > /tmp/fabctl-<id>.json <<'FABCTL_EOF' ... FABCTL_EOF
//	sudo config apply-patch /tmp/fabctl-<id>.json
//	show runningconfiguration all            (verify)
//	sudo config rollback fabctl-<id>         (on any failure)
//	sudo config delete-checkpoint fabctl-<id>
//
// over SSH (drivers/transport/ssh, scrapligo v1.4 with a SONiC platform
// definition).
package sonic

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Name is the platform name.
const Name = "sonic"

// Driver is the SONiC driver. One Driver serves one run: it remembers
// each applied transaction's prior CONFIG_DB for Rollback.
type Driver struct {
	// SSH tunes connections (timeouts, known_hosts, secret lookup);
	// Platform is always the SONiC definition.
	SSH sshtransport.Options

	mu    sync.Mutex
	prior map[string][]byte // token -> CONFIG_DB before the apply
}

// New returns a driver with default SSH settings.
func New() drivers.Driver { return &Driver{} }

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
)

// Name is "sonic".
func (d *Driver) Name() string { return Name }

// Capabilities: GCU checkpoints and rollback; no commit-confirm timer.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{Checkpoints: true, Rollback: true}
}

// Fields: ECN thresholds may be quantised to buffer cells by the ASIC.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
		{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
		{Pattern: "port/*/mtu", Disruptive: "a PORT mtu change re-programs the port (brief link flap) and recomputes its lossless buffers"},
		{Pattern: "port/*/pfc", Disruptive: "changing pfc_enable re-creates the port's lossless priority-group buffers"},
		{Pattern: "tc/*/lossless", Disruptive: "adding or removing a lossless PG reallocates buffers on every port"},
		{Pattern: "buffer/headroom", Disruptive: "a new headroom profile reallocates lossless PG buffers"},
		{Pattern: "port/*/cable", Disruptive: "a cable length change recomputes the port's headroom"},
	}
}

func switchIntent(t drivers.Target) (*intent.Switch, error) { return drivers.SwitchIntent(t, Name) }

func (d *Driver) dial(ctx context.Context, t drivers.Target) (*sshtransport.Conn, error) {
	o := d.SSH
	o.Platform = sshtransport.SONiC
	return sshtransport.Dial(ctx, t, o)
}

const showRunning = "show runningconfiguration all"

func running(c *sshtransport.Conn) ([]byte, map[string]any, error) {
	out, err := c.Send(showRunning)
	if err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: not CONFIG_DB JSON: %w", c.Device(), showRunning, err)
	}
	return []byte(out), doc, nil
}

// Read returns the managed settings of the running CONFIG_DB.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out, _, err := running(c)
	if err != nil {
		return nil, err
	}
	return ReadConfigDB(out, sw)
}

// Changes turns a diff into steps carrying JSON patch operations.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	return changes(sw, diff, d.Fields())
}

// Render writes the managed CONFIG_DB rows as a config_db.json fragment.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	db, err := Desired(sw)
	if err != nil {
		return nil, err
	}
	return []drivers.RenderedFile{{Name: "config_db.json", Data: db.JSON()}}, nil
}

func newToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "fabctl-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}

// stepError names the step of the transaction that failed.
type stepError = clicore.StepError

// Apply applies the steps as one GCU patch inside a checkpoint.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	name := t.Device.Name
	c, err := d.dial(ctx, t)
	if err != nil {
		return drivers.Result{}, err
	}
	defer func() { c.Close() }()
	preBytes, pre, err := running(c)
	if err != nil {
		return drivers.Result{}, &stepError{Device: name, Step: "read running config before apply", Err: err}
	}
	patch, target, err := effectivePatch(pre, steps)
	if err != nil {
		return drivers.Result{}, &stepError{Device: name, Step: "build patch", Err: err}
	}
	if len(patch) == 0 {
		return drivers.Result{}, nil
	}
	token := newToken()
	file := "/tmp/" + token + ".json"
	if _, err := c.Send("sudo config checkpoint " + token); err != nil {
		return drivers.Result{}, &stepError{Device: name, Step: "config checkpoint", Err: err}
	}
	lines := make([]string, len(patch))
	for i, op := range patch {
		lines[i] = op.line()
		if i < len(patch)-1 {
			lines[i] += ","
		}
	}
	content := "[\n" + strings.Join(lines, "\n") + "\n]\n"

	// fail restores the prior config and says so, or reports a partial
	// apply when it cannot.
	fail := func(step string, cause error) (drivers.Result, error) {
		se := &stepError{Device: name, Step: step, Err: cause}
		conn := c
		if isConnLoss(cause) {
			c.Close()
			nc, err := d.dial(ctx, t)
			if err != nil {
				return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reconnecting to roll back failed: %v; checkpoint %s on the switch holds the prior config", se, err, token)}
			}
			c, conn = nc, nc
			if now, _, err := running(conn); err == nil && string(now) == string(preBytes) {
				_, _ = conn.Send("sudo config delete-checkpoint " + token)
				_, _ = conn.Send("rm -f " + file)
				return drivers.Result{}, fmt.Errorf("%v; the patch did not take effect, the switch is at its prior config", se)
			}
		}
		if _, err := conn.Send("sudo config rollback " + token); err != nil {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; config rollback %s failed: %v", se, token, err)}
		}
		now, _, err := running(conn)
		if err != nil || string(now) != string(preBytes) {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rolled back to %s but the running config differs from before the apply", se, token)}
		}
		_, _ = conn.Send("sudo config delete-checkpoint " + token)
		_, _ = conn.Send("rm -f " + file)
		return drivers.Result{}, fmt.Errorf("%v; rolled back to checkpoint %s", se, token)
	}

	if err := c.WriteFile(file, content); err != nil {
		return fail("write patch file "+file, err)
	}
	if _, err := c.Send("sudo config apply-patch " + file); err != nil {
		return fail("config apply-patch", err)
	}
	_, after, err := running(c)
	if err != nil {
		return fail("read-back after apply-patch", err)
	}
	if !reflect.DeepEqual(after, target) {
		return fail("verify", errors.New("the running config differs from the patched config"))
	}
	_, _ = c.Send("sudo config delete-checkpoint " + token)
	_, _ = c.Send("rm -f " + file)
	d.mu.Lock()
	if d.prior == nil {
		d.prior = map[string][]byte{}
	}
	d.prior[token] = preBytes
	d.mu.Unlock()
	return drivers.Result{Token: token}, nil
}

func isConnLoss(err error) bool {
	var e *sshtransport.Error
	return errors.As(err, &e) && (e.Kind == sshtransport.KindClosed || e.Kind == sshtransport.KindTimeout)
}

// Confirm: SONiC has no commit-confirm; nothing is ever pending.
func (d *Driver) Confirm(context.Context, drivers.Target, drivers.Result) error { return nil }

// Rollback restores the CONFIG_DB from before the apply with
// `config replace` (the apply's checkpoint is deleted once it succeeds;
// the driver keeps the prior config for the run).
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil // nothing was applied
	}
	d.mu.Lock()
	pre, ok := d.prior[r.Token]
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: no prior config recorded for transaction %s in this run", t.Device.Name, r.Token)
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return err
	}
	defer c.Close()
	file := "/tmp/" + r.Token + "-prior.json"
	if err := c.WriteFile(file, string(pre)); err != nil {
		return &stepError{Device: t.Device.Name, Step: "write " + file, Err: err}
	}
	if _, err := c.Send("sudo config replace " + file); err != nil {
		return &stepError{Device: t.Device.Name, Step: "config replace", Err: err}
	}
	_, _ = c.Send("rm -f " + file)
	now, _, err := running(c)
	if err != nil {
		return &stepError{Device: t.Device.Name, Step: "read-back after rollback", Err: err}
	}
	if string(now) != string(pre) {
		return fmt.Errorf("%s: after config replace the running config differs from before the apply", t.Device.Name)
	}
	return nil
}
