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
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// Device statuses.
const (
	Match   = "match"   // the live state is the desired state
	Differs = "differs" // some setting differs (Diffs)
	Error   = "error"   // the device could not be read (Error)
	// NotCarried: what the device can express matches, but settings of a
	// lossless, RDMA or CNP class are not in effect there (it cannot
	// express them) and the spec does not accept that (NotInEffect).
	NotCarried = "not_carried"
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
	// NotCarried counts the devices with status NotCarried; Accepted the
	// devices whose only gaps the spec accepts (their status is Match).
	NotCarried int `json:"not_carried"`
	Accepted   int `json:"accepted"`
	// Unmanaged counts the matching devices with settings the spec leaves
	// unmanaged: not checked, so never reported valid.
	Unmanaged int `json:"unmanaged"`
	// Strict: settings the devices cannot express fail even when they
	// only tune the device (validate --strict); accepted ones never do.
	Strict bool `json:"strict,omitempty"`
	// Links is the cabling and link check of the same reads (the plan's,
	// plan.Plan.Links): validate reports it as its own stage.
	Links *linktruth.Report `json:"-"`
}

// Device is one device's read-back.
type Device struct {
	Address string `json:"address"`
	// Status: Match, Differs or Error (could not be read).
	Status string              `json:"status"`
	Error  string              `json:"error,omitempty"`
	Diffs  []intent.AttrChange `json:"diffs,omitempty"`
	// NotChecked are desired settings the device cannot express (not
	// applied, so not compared), each with what it carries of a class
	// (carries) and the spec's acceptance (accepted); NotInEffect are
	// those that fail the device: a class's settings the spec does not
	// accept (and, under Strict, every unaccepted one). Tolerated differ
	// within the driver's quantisation.
	NotChecked  []plan.Unexpressible `json:"not_checked,omitempty"`
	NotInEffect []plan.Unexpressible `json:"not_in_effect,omitempty"`
	Tolerated   int                  `json:"tolerated,omitempty"`
	// Unmanaged are the settings the spec leaves as the device runs them
	// (plan.Unmanaged): not compared, "unmanaged, not checked".
	Unmanaged []plan.Unmanaged `json:"unmanaged,omitempty"`
}

// Options tune a read-back.
type Options struct {
	// Parallelism bounds the devices read at once.
	Parallelism int
	// Insecure skips SSH host-key and TLS verification.
	Insecure bool
	// Version is the running fabctl's version.
	Version string
	// Strict fails a device on any setting it cannot express that the
	// spec does not accept, not only on a class's.
	Strict bool
	// LinkSettle is plan.Options.LinkSettle: how long a port may take to
	// hear its LLDP neighbour.
	LinkSettle time.Duration
}

// Run reads every device of s with the drivers of reg and compares it
// with the desired state.
func Run(ctx context.Context, s *spec.Spec, reg *drivers.Registry, o Options) *Result {
	fab := intent.Compile(s)
	p := plan.Make(ctx, s, fab, reg, plan.Options{Parallelism: o.Parallelism, Insecure: o.Insecure, LinkSettle: o.LinkSettle,
		Credentials: s.CredentialsByName, FabctlVersion: o.Version})
	rb := &Result{Devices: []Device{}, Strict: o.Strict, Links: p.Links}
	for _, d := range p.Devices {
		rd := Device{Address: d.Address, NotChecked: d.Unexpressible, Tolerated: len(d.Tolerated), Unmanaged: d.Unmanaged}
		rd.NotInEffect = d.NotCarried()
		if o.Strict {
			rd.NotInEffect = d.Unaccepted()
		}
		switch {
		case d.Error != "":
			rd.Status, rd.Error = Error, d.Error
			rb.Errored++
		case d.HasChanges():
			rd.Status, rd.Diffs = Differs, d.Changes
			rb.Differ++
		case len(rd.NotInEffect) > 0:
			rd.Status = NotCarried
			rb.NotCarried++
		default:
			rd.Status = Match
			rb.Match++
			if len(d.Accepted()) > 0 {
				rb.Accepted++
			}
			if len(d.Unmanaged) > 0 {
				rb.Unmanaged++
			}
		}
		rb.Devices = append(rb.Devices, rd)
	}
	if len(rb.Devices) == 0 {
		rb.Skipped = "the spec has no devices"
	}
	return rb
}

// Failed reports whether the read-back found a problem.
func (rb *Result) Failed() bool {
	return rb != nil && (rb.Differ+rb.Errored+rb.NotCarried > 0 || rb.Error != "")
}
