// Package plan computes what fabctl would change: it compiles the spec to
// per-device intent, reads every device's live state through its driver
// (in parallel), diffs desired against live, and asks each driver for the
// native change list. A Plan can be saved (planfile.go), shown, and applied
// by package apply.
package plan

import (
	"context"
	"fmt"
	"path"
	"sort"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// FormatVersion is the version of the plan's JSON form (saved plans and
// `plan --json`): minor = additive, major = breaking.
const FormatVersion = "1.0"

// Plan is the result of planning a fabric.
type Plan struct {
	FormatVersion string                `json:"format_version"`
	FabctlVersion string                `json:"fabctl_version"`
	Fabric        string                `json:"fabric"`
	SpecHash      string                `json:"spec_hash"`
	Devices       []*DevicePlan         `json:"devices"`
	Diagnostics   []spec.JSONDiagnostic `json:"diagnostics,omitempty"`
}

// DevicePlan is the plan for one device.
type DevicePlan struct {
	Address  string `json:"address"` // switch.leaf1 / host.gpu01
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Platform string `json:"platform"`
	Role     string `json:"role,omitempty"`
	Driver   string `json:"driver"`
	// Fingerprint of the live state read at plan time.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Desired is the full desired state (so apply can verify by read-back).
	Desired intent.State `json:"desired"`
	// Changes are the settings that differ; Drift those changed outside
	// fabctl since its last apply.
	Changes []intent.AttrChange `json:"changes"`
	Drift   []intent.AttrChange `json:"drift,omitempty"`
	// Steps is the driver's ordered change list with native payload.
	Steps []drivers.Change `json:"steps,omitempty"`
	// Error is why the device could not be planned (unreachable, ...).
	Error string `json:"error,omitempty"`
}

// HasChanges reports whether applying would change the device.
func (d *DevicePlan) HasChanges() bool { return len(d.Changes) > 0 }

// Disruptive returns the changes that interrupt traffic.
func (d *DevicePlan) Disruptive() []intent.AttrChange {
	var out []intent.AttrChange
	for _, c := range d.Changes {
		if c.Disruptive != "" {
			out = append(out, c)
		}
	}
	return out
}

// Counts summarises a plan.
type Counts struct {
	Devices    int `json:"devices"`
	Changed    int `json:"changed"`
	Add        int `json:"add"`
	Change     int `json:"change"`
	Remove     int `json:"remove"`
	Disruptive int `json:"disruptive"`
	Drifted    int `json:"drifted"`
	Errored    int `json:"errored"`
}

// Counts totals the plan.
func (p *Plan) Counts() Counts {
	c := Counts{Devices: len(p.Devices)}
	for _, d := range p.Devices {
		if d.Error != "" {
			c.Errored++
			continue
		}
		if d.HasChanges() {
			c.Changed++
		}
		if len(d.Drift) > 0 {
			c.Drifted++
		}
		for _, ch := range d.Changes {
			switch ch.Action {
			case intent.Create:
				c.Add++
			case intent.Update:
				c.Change++
			case intent.Delete:
				c.Remove++
			}
			if ch.Disruptive != "" {
				c.Disruptive++
			}
		}
	}
	return c
}

// HasChanges reports whether any device would change.
func (p *Plan) HasChanges() bool {
	for _, d := range p.Devices {
		if d.HasChanges() {
			return true
		}
	}
	return false
}

// Errored reports whether any device could not be planned.
func (p *Plan) Errored() bool {
	for _, d := range p.Devices {
		if d.Error != "" {
			return true
		}
	}
	return false
}

// Device returns the plan of a device by address or name, or nil.
func (p *Plan) Device(name string) *DevicePlan {
	for _, d := range p.Devices {
		if d.Address == name || d.Name == name {
			return d
		}
	}
	return nil
}

// Options tune planning.
type Options struct {
	// Parallelism bounds concurrent device reads (default 16).
	Parallelism int
	// Targets and Excludes are globs over device names, addresses
	// (switch.leaf*) and roles (role:spine).
	Targets  []string
	Excludes []string
	// Applied is what fabctl last applied per device, for drift.
	Applied map[string]intent.State
	// Credentials resolves a credentials block name.
	Credentials func(name string) *spec.Credentials
	// Insecure passes through to drivers (skip host-key / TLS checks).
	Insecure bool
	// Progress, when set, is told as each device finishes.
	Progress func(done, total int, device string)
	// FabctlVersion is recorded in the plan.
	FabctlVersion string
}

// Unit is one device to plan: its intent and driver.
type Unit struct {
	Device intent.Device
	Intent any
	State  intent.State
}

// Units lists the devices of a compiled fabric, switches first, each with
// its desired state.
func Units(f *intent.Fabric) []Unit {
	out := make([]Unit, 0, len(f.Switches)+len(f.Hosts))
	for _, sw := range f.Switches {
		out = append(out, Unit{Device: sw.Device, Intent: sw, State: sw.Flatten()})
	}
	for _, h := range f.Hosts {
		out = append(out, Unit{Device: h.Device, Intent: h, State: h.Flatten()})
	}
	return out
}

// Selected reports whether a device passes --target / --exclude.
func Selected(d intent.Device, targets, excludes []string) bool {
	match := func(globs []string) bool {
		for _, g := range globs {
			for _, s := range []string{d.Name, d.Addr(), "role:" + d.Role} {
				if ok, _ := path.Match(g, s); ok {
					return true
				}
			}
		}
		return false
	}
	if len(targets) > 0 && !match(targets) {
		return false
	}
	return !match(excludes)
}

// Make plans every selected device of a fabric. Devices that cannot be
// read still appear, with Error set; the plan covers all the others.
func Make(ctx context.Context, s *spec.Spec, f *intent.Fabric, reg *drivers.Registry, opts Options) *Plan {
	p := &Plan{FormatVersion: FormatVersion, FabctlVersion: opts.FabctlVersion, Fabric: f.Name, SpecHash: s.SourceHash}
	var units []Unit
	for _, u := range Units(f) {
		if Selected(u.Device, opts.Targets, opts.Excludes) {
			units = append(units, u)
		}
	}
	p.Devices = make([]*DevicePlan, len(units))
	par := opts.Parallelism
	if par <= 0 {
		par = 16
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, u := range units {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, u Unit) {
			defer wg.Done()
			defer func() { <-sem }()
			dp := planDevice(ctx, u, reg, opts)
			p.Devices[i] = dp
			if opts.Progress != nil {
				mu.Lock()
				done++
				opts.Progress(done, len(units), dp.Address)
				mu.Unlock()
			}
		}(i, u)
	}
	wg.Wait()
	return p
}

// Target builds a driver target for a unit.
func Target(u Unit, opts Options) drivers.Target {
	t := drivers.Target{Device: u.Device, Intent: u.Intent, Insecure: opts.Insecure}
	if opts.Credentials != nil && u.Device.Credentials != "" {
		t.Credentials = opts.Credentials(u.Device.Credentials)
	}
	return t
}

func planDevice(ctx context.Context, u Unit, reg *drivers.Registry, opts Options) *DevicePlan {
	dp := &DevicePlan{Address: u.Device.Addr(), Kind: u.Device.Kind, Name: u.Device.Name,
		Platform: u.Device.Platform, Role: u.Device.Role, Driver: drivers.For(u.Device), Desired: u.State}
	drv, err := reg.New(dp.Driver)
	if err != nil {
		dp.Error = err.Error()
		return dp
	}
	t := Target(u, opts)
	live, err := drv.Read(ctx, t)
	if err != nil {
		dp.Error = fmt.Sprintf("read %s: %v", dp.Address, err)
		return dp
	}
	dp.Fingerprint = live.Fingerprint()
	fields := drv.Fields()
	dp.Changes = intent.Diff(u.State, live, fields)
	if last, ok := opts.Applied[dp.Address]; ok {
		// Drift: what differs between what fabctl last applied and what the
		// device has now, on the settings fabctl applied.
		for _, c := range intent.Diff(last, live, fields) {
			if c.Action != intent.Delete {
				dp.Drift = append(dp.Drift, c)
			}
		}
	}
	if len(dp.Changes) > 0 {
		steps, err := drv.Changes(t, dp.Changes, u.State)
		if err != nil {
			dp.Error = fmt.Sprintf("render %s: %v", dp.Address, err)
			return dp
		}
		dp.Steps = steps
	}
	return dp
}

// SortDevices orders device plans by address.
func SortDevices(ds []*DevicePlan) {
	sort.Slice(ds, func(i, j int) bool { return ds[i].Address < ds[j].Address })
}
