package srlinux

import (
	"context"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// SavePath is SR Linux's save of the running configuration as the
// startup configuration (/etc/opt/srlinux/config.json, which SR Linux
// loads when it boots): leaf "save" (type empty) of container
// configuration, which srl_nokia-tools-configuration augments into
// /srl_nokia-tools-system:system, the tools datastore ("Save current
// running configuration as initial (startup) configuration -
// config.json"; nokia/srlinux-yang-models srl_nokia/models/system/
// srl_nokia-tools-configuration.yang, grouping configuration-top; the
// CLI's `tools system configuration save`). Nokia's configuration guide
// (config-basics, "Configuration management": default configuration,
// datastores) describes the startup file and the tools datastore of
// executable commands; the gNMI path names the tools datastore by its
// first element, as SR Linux's CLI and JSON-RPC do.
const SavePath = "/tools/system/configuration/save"

// saveValue is the JSON_IETF encoding of a leaf of type empty: [null]
// (RFC 7951 section 6.9).
var saveValue = []byte("[null]")

var (
	_ drivers.Saver    = (*Driver)(nil)
	_ drivers.Reporter = (*Driver)(nil)
)

// SaveSteps: one gNMI Set updating the tools datastore's save leaf.
func (d *Driver) SaveSteps() []string {
	return []string{"gNMI Set update " + SavePath + " = [null] (tools system configuration save: running -> startup config.json)"}
}

// Save persists the running configuration: the apply engine calls it
// after the transaction is verified and, with commit-confirm,
// confirmed, so SR Linux never saves a commit it may still revert.
func (d *Driver) Save(ctx context.Context, t drivers.Target) error {
	if err := d.Core.Operate(ctx, t, SavePath, saveValue); err != nil {
		return fmt.Errorf("%s: save the running configuration (%s): %w", t.Device.Name, SavePath, err)
	}
	return nil
}

// Read is the managed state, with config/saved (drivers.PathSaved).
//
// SR Linux offers no way to read over gNMI whether the startup
// configuration holds the running one: a Get reads the running and state
// datastores, the startup configuration is a file (config.json), and the
// configuration state (srl_nokia-configuration: last-change, checkpoints,
// commits, sessions) has no saved or unsaved indication. So config/saved
// reads "true": fabctl saves after every apply that changes the device
// (the plan's last step), a failed save fails that apply as NOT SAVED and
// records config/saved=false in the applied record, which the next plan
// and `fabctl drift` report as drift; Findings says this on every plan.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	st, err := d.Core.Read(ctx, t)
	if err != nil {
		return nil, err
	}
	st[drivers.PathSaved] = "true"
	return st, nil
}

// Findings says what config/saved means on SR Linux.
func (d *Driver) Findings(drivers.Target) []drivers.Finding {
	return []drivers.Finding{{Severity: "info", Path: drivers.PathSaved,
		Message: "SR Linux: every apply that changes the device ends with " + SavePath + " (running -> startup); " +
			"gNMI cannot read whether startup holds running, so config/saved is not checked on the device: " +
			"a save that failed (apply says NOT SAVED) shows as drift from the applied record"}}
}
