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
// Rows keyed by a list of ports are read as each listed port's and split
// into one row per port by a patch that changes anything (portlists.go).
//
// It reads whether the running CONFIG_DB is saved by comparing it with
// `sonic-cfggen -j /etc/sonic/config_db.json --print-data`. Every command
// form is listed with its vendor source in testdata/vendor/sonic/shapes.txt
// (shapes_test.go checks what the driver sends against it), over SSH (drivers/transport/ssh, scrapligo v1.4 with a SONiC platform
// definition).
package sonic

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Name is the platform name.
const Name = "sonic"

// Platform is a scrapligo v1.4 platform definition for a SONiC switch's
// bash login shell (scrapligo v1.4.x ships none): the admin prompt
// "admin@sonic:~$", no privilege escalation (config commands run with
// sudo, which SONiC's admin may use without a password), and the error
// texts of bash and sonic-utilities' click commands as failures.
var Platform = clicore.ShellPlatform("sonic", `(?im)^[\w.\-]+@[\w.\-]+:\S+\$\s*$`,
	"command not found", "Failed to ", "Root privileges are required", "No such file or directory", `Try "config`, `Try "show`)

// Driver is the SONiC driver: the SSH CLI core (clicore.Core) with
// SONiC's grammar (grammar, in hooks.go). One Driver serves one run: it
// remembers each applied transaction's prior CONFIG_DB for Rollback.
type Driver struct{ clicore.Core }

// New returns a driver with default SSH settings.
func New() drivers.Driver { return NewWith(sshtransport.Options{}) }

// NewWith returns a driver whose connections use o (timeouts,
// known_hosts, secret lookup).
func NewWith(o sshtransport.Options) *Driver {
	return &Driver{clicore.Core{SSH: o, Facts: facts, P: grammar{}}}
}

// facts: GCU checkpoints and rollback (`config replace` with the
// CONFIG_DB recorded before the apply); no commit-confirm timer.
var facts = clicore.Facts{Name: Name, Scrapli: Platform, SaveCommand: saveCmd, SaveStep: "config save", Refused: refused,
	PriorKind: "config", Capabilities: drivers.Capabilities{Checkpoints: true, Rollback: true}, Fields: fields}

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Saver    = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
)

// fields: ECN thresholds may be quantised to buffer cells by the ASIC.
var fields = []intent.Field{
	{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
	{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
	{Pattern: "port/*/mtu", Disruptive: "a PORT mtu change re-programs the port (brief link flap) and recomputes its lossless buffers"},
	{Pattern: "port/*/pfc", Disruptive: "changing pfc_enable re-creates the port's lossless priority-group buffers"},
	{Pattern: "tc/*/lossless", Disruptive: "adding or removing a lossless PG reallocates buffers on every port", DisruptiveOnTrue: true},
	{Pattern: "buffer/headroom", Disruptive: "a new headroom profile reallocates lossless PG buffers"},
	{Pattern: "port/*/cable", Disruptive: "a cable length change recomputes the port's headroom"},
}

// FactBufferModel is the device fact (drivers.PathFacts) Read returns
// for DEVICE_METADATA|localhost buffer_model: Changes and Unexpressible
// render for the model the planner's Read found (Target.Live), and for
// the dynamic model when the device was not read (Apply then refuses
// BUFFER_PG rows on a traditional switch).
const FactBufferModel = drivers.PathFacts + "buffer-model"

// modelOf is the buffer model t.Live reports.
func modelOf(t drivers.Target) string {
	if m := t.Live[FactBufferModel]; m != "" {
		return m
	}
	return ModelDynamic
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

func running(c *clicore.Session) ([]byte, map[string]any, error) {
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
func readSaved(c *clicore.Session) (DB, error) {
	out, err := c.Send(showSaved)
	if err != nil {
		return nil, err
	}
	return ParseConfigDB([]byte(out))
}

// Unexpressible lists desired settings SONiC cannot hold (drivers.Limiter)
// with the buffer model the planner's Read found.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	sw, err := switchIntent(t)
	if err != nil {
		return nil
	}
	out := Unexpressible(sw, modelOf(t))
	// What GCU would refuse on the switch read (gcu.go).
	for k, v := range gcuUnexpressible(sw, desired, t.Live) {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
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
