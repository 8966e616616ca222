// Package readback is the read-back stage of fabctl validate: every
// device's running state is read and compared with the spec's desired
// state, with the planner's reads and diffs. What could not be read is
// reported as such, never as a match.
//
// It may import spec, intent, drivers and plan; the CLI renders its
// Result (internal/cli, validate_live.go).
package readback

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// Device statuses.
const (
	Match   = "match"   // the live state is the desired state
	Differs = "differs" // some setting differs (Diffs)
	Error   = "error"   // the device could not be read (Error)
)

// Result is the read-back stage's finding.
type Result struct {
	Skipped string `json:"skipped,omitempty"`
	// Error is why the stage could not run at all (a secret the devices
	// log in with cannot be resolved): a failure, no device contacted.
	Error   string   `json:"error,omitempty"`
	Devices []Device `json:"devices"`
	Match   int      `json:"match"`
	Differ  int      `json:"differ"`
	Errored int      `json:"errored"`
}

// Device is one device's read-back.
type Device struct {
	Address string `json:"address"`
	// Status: Match, Differs or Error (could not be read).
	Status string              `json:"status"`
	Error  string              `json:"error,omitempty"`
	Diffs  []intent.AttrChange `json:"diffs,omitempty"`
	// NotChecked are desired settings the device cannot express (not
	// applied, so not compared); Tolerated differ within the driver's
	// quantisation.
	NotChecked []plan.Unexpressible `json:"not_checked,omitempty"`
	Tolerated  int                  `json:"tolerated,omitempty"`
}

// Options tune a read-back.
type Options struct {
	// Parallelism bounds the devices read at once.
	Parallelism int
	// Insecure skips SSH host-key and TLS verification.
	Insecure bool
	// Version is the running fabctl's version.
	Version string
}

// Run reads every device of s with the drivers of reg and compares it
// with the desired state.
func Run(ctx context.Context, s *spec.Spec, reg *drivers.Registry, o Options) *Result {
	fab := intent.Compile(s)
	p := plan.Make(ctx, s, fab, reg, plan.Options{Parallelism: o.Parallelism, Insecure: o.Insecure,
		Credentials: s.CredentialsByName, FabctlVersion: o.Version})
	rb := &Result{Devices: []Device{}}
	for _, d := range p.Devices {
		rd := Device{Address: d.Address, NotChecked: d.Unexpressible, Tolerated: len(d.Tolerated)}
		switch {
		case d.Error != "":
			rd.Status, rd.Error = Error, d.Error
			rb.Errored++
		case d.HasChanges():
			rd.Status, rd.Diffs = Differs, d.Changes
			rb.Differ++
		default:
			rd.Status = Match
			rb.Match++
		}
		rb.Devices = append(rb.Devices, rd)
	}
	if len(rb.Devices) == 0 {
		rb.Skipped = "the spec has no devices"
	}
	return rb
}

// Failed reports whether the read-back found a problem.
func (rb *Result) Failed() bool { return rb != nil && (rb.Differ+rb.Errored > 0 || rb.Error != "") }
