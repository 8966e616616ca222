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
//	sudo config save -y                      (drivers.Saver, after verify)
//
// and reads whether the running CONFIG_DB is saved by comparing it with
// `sonic-cfggen -j /etc/sonic/config_db.json --print-data`. Every command
// form is listed with its vendor source in testdata/vendor/sonic/shapes.txt
// (shapes_test.go checks what the driver sends against it), over SSH (drivers/transport/ssh, scrapligo v1.4 with a SONiC platform
// definition).
package sonic

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

	core clicore.Core // token -> CONFIG_DB before the apply
	mu   sync.Mutex
	// model is each device's buffer model as Read last saw it
	// (DEVICE_METADATA|localhost buffer_model); Changes and Unexpressible
	// render for it.
	model map[string]string
}

// New returns a driver with default SSH settings.
func New() drivers.Driver { return &Driver{} }

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Saver    = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
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

const (
	showRunning = "show runningconfiguration all"
	// saveCmd writes the running CONFIG_DB to /etc/sonic/config_db.json,
	// what the switch loads at boot and at `config reload`
	// (sonic-utilities config/main.py save: gcu-and-save.txt:19-22).
	saveCmd = "sudo config save -y"
	// StartupFile and showSaved: sonic-cfggen -j FILE --print-data prints
	// a CONFIG_DB JSON file as JSON (sonic-buildimage sonic-cfggen -j,
	// --print-data: gcu-and-save.txt, "saved configuration").
	StartupFile = "/etc/sonic/config_db.json"
	showSaved   = "sonic-cfggen -j " + StartupFile + " --print-data"
)

// send runs a command and fails on sonic-utilities' click errors as well
// as the transport's failure texts (refused).
func send(c *sshtransport.Conn, cmd string) (string, error) { return clicore.Send(c, refused, cmd) }

// refused finds sonic-utilities' click errors: click 8 (sonic-utilities
// pins click>=8.0,<8.2) prints "Usage: ...", "Try 'config -h' for help."
// and "Error: ..." (sonic-utilities tests/bgp_commands_test.py,
// config_test.py).
func refused(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Error: ") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func running(c *sshtransport.Conn) ([]byte, map[string]any, error) {
	out, err := send(c, showRunning)
	if err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: not CONFIG_DB JSON: %w", c.Device(), showRunning, err)
	}
	return []byte(out), doc, nil
}

// configDB drops what `show runningconfiguration all` adds to CONFIG_DB:
// the "bgpraw" string (FRR's running config; sonic-utilities show/main.py,
// gcu-and-save.txt:5-6). GCU refuses tables without a YANG model, so a
// CONFIG_DB written back with `config replace` must not carry it.
func configDB(doc map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		if _, ok := v.(map[string]any); ok {
			out[k] = v
		}
	}
	return out
}

// SavedTables are the CONFIG_DB tables whose saved copy Read compares
// with the running one for drivers.PathSaved: the tables fabctl writes
// (and DEVICE_METADATA, whose buffer_model decides what it writes). Other
// writers' unsaved changes to other tables (counters, features, BGP) are
// theirs: comparing the whole DB would report every device as unsaved
// forever on switches where daemons write CONFIG_DB at run time. `config
// save` still saves the whole CONFIG_DB.
var SavedTables = []string{"BUFFER_PG", "BUFFER_PROFILE", "CABLE_LENGTH", "DEVICE_METADATA", "DOT1P_TO_TC_MAP",
	"DSCP_TO_TC_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_WD", "PORT", "PORT_QOS_MAP", "QUEUE", "SCHEDULER",
	"TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "WRED_PROFILE"}

// savedMatches reports whether the saved CONFIG_DB holds the running one
// on SavedTables.
func savedMatches(run, saved DB) bool {
	for _, t := range SavedTables {
		a, b := run[t], saved[t]
		if len(a) == 0 && len(b) == 0 {
			continue
		}
		if !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return true
}

// readSaved reads /etc/sonic/config_db.json.
func readSaved(c *sshtransport.Conn) (DB, error) {
	out, err := send(c, showSaved)
	if err != nil {
		return nil, err
	}
	return ParseConfigDB([]byte(out))
}

// Read returns the managed settings of the running CONFIG_DB and whether
// they are saved (drivers.PathSaved).
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	return d.core.Read(ctx, t, hooks{d})
}

// modelOf is the device's buffer model as Read last saw it (dynamic
// before any Read: Apply refuses BUFFER_PG rows on a traditional switch).
func (d *Driver) modelOf(t drivers.Target) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.model[t.Device.Name]; ok {
		return m
	}
	return ModelDynamic
}

// Unexpressible lists desired settings SONiC cannot hold (drivers.Limiter).
func (d *Driver) Unexpressible(t drivers.Target, _ intent.State) map[string]string {
	sw, err := switchIntent(t)
	if err != nil {
		return nil
	}
	return Unexpressible(sw, d.modelOf(t))
}

// SaveSteps is the save as plans show it.
func (d *Driver) SaveSteps() []string { return d.core.SaveSteps(hooks{d}) }

// Save runs `sudo config save -y` and checks that the saved CONFIG_DB
// now holds the running one; a failure carries the command's output.
func (d *Driver) Save(ctx context.Context, t drivers.Target) error {
	return d.core.Save(ctx, t, hooks{d})
}

// Changes turns a diff into steps carrying JSON patch operations.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	return d.core.Changes(t, diff, desired, hooks{d})
}

// Render writes the managed CONFIG_DB rows as a config_db.json fragment.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	// Settings Unexpressible lists (a fixed headroom, pause) are left
	// out, as plans leave them out.
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

// Apply applies the steps as one GCU patch inside a checkpoint (patch in
// hooks.go).
func (d *Driver) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, opts drivers.ApplyOptions) (drivers.Result, error) {
	return d.core.Apply(ctx, t, steps, opts, hooks{d})
}

// firstMismatch is the first path the patch set whose running value is
// not the patched one ("" when all match). Only the patched paths are
// compared: other CONFIG_DB writers (buffermgrd writing BUFFER_PG in the
// traditional model, cfgmgrs, operators) may change other rows meanwhile.
func firstMismatch(patch []Op, after, target map[string]any) string {
	for _, op := range patch {
		if m, ok := op.Value.(map[string]any); ok && len(m) == 0 {
			continue // a parent created for the next operations
		}
		parts, err := split(op.Path)
		if err != nil {
			return op.Path
		}
		a, aok := lookup(after, parts)
		b, bok := lookup(target, parts)
		if aok != bok || (aok && !reflect.DeepEqual(a, b)) {
			return op.Path
		}
	}
	return ""
}

func lookup(doc map[string]any, parts []string) (any, bool) {
	var node any = doc
	for _, p := range parts {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		if node, ok = m[p]; !ok {
			return nil, false
		}
	}
	return node, true
}

var isConnLoss = clicore.IsConnLoss

// Confirm: SONiC has no commit-confirm; nothing is ever pending.
func (d *Driver) Confirm(context.Context, drivers.Target, drivers.Result) error { return nil }

// Rollback restores the CONFIG_DB from before the apply with
// `config replace` (the apply's checkpoint is deleted once it succeeds;
// the driver keeps the prior config for the run).
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	return d.core.Rollback(ctx, t, r, hooks{d})
}
