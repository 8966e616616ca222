// Package plan computes what fabctl would change: it compiles the spec to
// per-device intent, reads every device's live state through its driver
// (in parallel), diffs desired against live, and asks each driver for the
// native change list. A Plan can be saved (planfile.go), shown, and applied
// by package apply. The package is the planner, the plan model and the
// saved plan file; its human, markdown and JSON views are in internal/cli/view.
package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
)

// FormatVersion is the version of the plan's JSON form (saved plans and
// `plan --json`): minor = additive, major = breaking.
const FormatVersion = "1.1"

// Plan is the result of planning a fabric.
type Plan struct {
	FormatVersion string `json:"format_version"`
	FabctlVersion string `json:"fabctl_version"`
	Fabric        string `json:"fabric"`
	SpecHash      string `json:"spec_hash"`
	// FabricDevices is how many devices the spec has; Devices holds the
	// ones --target / --exclude selected (all of them when neither is set).
	FabricDevices int      `json:"fabric_devices"`
	Targets       []string `json:"targets,omitempty"`
	Excludes      []string `json:"excludes,omitempty"`
	// Devices are ordered switches first, then hosts, each by name in
	// natural order (leaf2 before leaf10).
	Devices []*DevicePlan `json:"devices"`
	// Diagnostics are the lint findings (warnings) of the spec planned.
	Diagnostics []spec.JSONDiagnostic `json:"diagnostics,omitempty"`
	// Links is the Ethernet cabling and link check (links.go): the
	// devices' link reads against the spec's links. nil when the spec
	// has no Ethernet links.
	Links *linktruth.Report `json:"links,omitempty"`
}

// Targeted reports whether --target or --exclude limited the plan.
func (p *Plan) Targeted() bool { return len(p.Targets) > 0 || len(p.Excludes) > 0 }

// DevicePlan is the plan for one device.
type DevicePlan struct {
	// unrendered: the driver could not render the changes (Error says
	// why); Make adds where the spec declares the device.
	unrendered bool
	// missingPorts: spec ports the device does not have (Error says
	// so); Make adds where the spec names them.
	missingPorts []string
	// links is the device's link read (links.go); nil when not tried.
	links *linktruth.Read
	// relink reads the device's links again (settleLinks); nil when
	// they were not read.
	relink func(context.Context) *linktruth.Read

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
	// Unexpressible are desired settings the platform cannot express
	// (drivers.Limiter): not part of Desired, not changes, listed so the
	// user knows they are not applied on this device.
	Unexpressible []Unexpressible `json:"unexpressible,omitempty"`
	// Unmanaged are the settings the spec leaves as the device runs
	// them (spec unmanaged): not part of Desired, not changes, never
	// rendered, sent or checked (unmanaged.go).
	Unmanaged []Unmanaged `json:"unmanaged,omitempty"`
	// Tolerated are settings whose live value differs from the desired
	// one within the driver's tolerance (hardware quantisation): not
	// changes. Before is the live, After the desired value.
	Tolerated []intent.AttrChange `json:"tolerated,omitempty"`
	// Findings are the driver's read-only observations (drivers.Reporter).
	Findings []drivers.Finding `json:"findings,omitempty"`
	// Steps is the driver's ordered change list with native payload.
	Steps []drivers.Change `json:"steps,omitempty"`
	// Check is the device's own verdict on Steps (plan
	// --check-on-device); nil when it was not asked.
	Check *drivers.DeviceCheck `json:"device_check,omitempty"`
	// Error is why the device could not be planned (unreachable, ...).
	Error string `json:"error,omitempty"`
	// Repair: Error is the device's own report that it did not take its
	// configuration (drivers.UnconfirmedError); Changes are every desired
	// setting, and apply configures the device again rather than
	// refusing the run.
	Repair bool `json:"repair,omitempty"`
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
	// Mismatched counts the devices with a finding no change fixes
	// (drivers.SeverityError): the fabric does not match the spec even
	// after apply.
	Mismatched int `json:"mismatched"`
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
		if len(d.Mismatches()) > 0 {
			c.Mismatched++
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

// DeviceCounts are one device's change counts.
type DeviceCounts struct {
	Add        int `json:"add"`
	Change     int `json:"change"`
	Remove     int `json:"remove"`
	Disruptive int `json:"disruptive"`
}

// Counts totals a device's changes.
func (d *DevicePlan) Counts() DeviceCounts {
	var c DeviceCounts
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
	return c
}

// Unchanged is the number of desired settings the device already has
// (exactly or within tolerance).
func (d *DevicePlan) Unchanged() int {
	c := d.Counts()
	return max(0, len(d.Desired)-c.Add-c.Change)
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

// Mismatches are the device's findings no change fixes
// (drivers.SeverityError).
func (d *DevicePlan) Mismatches() []drivers.Finding {
	var out []drivers.Finding
	for _, f := range d.Findings {
		if f.Severity == drivers.SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// Mismatched reports whether a device has a finding no change fixes: the
// fabric does not match the spec, and applying the plan does not make it.
func (p *Plan) Mismatched() bool {
	for _, d := range p.Devices {
		if d.Error == "" && len(d.Mismatches()) > 0 {
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
	// LinkSettle, when > 0, is how long a port that should hear an LLDP
	// neighbour and heard none may take to hear one: its device and the
	// peer's are read again every second until it does or LinkSettle
	// has passed (settleLinks). An LLDP agent learns a neighbour only
	// from the peer's next frame, so a link apply has just brought up is
	// not called silent. 0: judged on the first read.
	LinkSettle time.Duration
	// HostDriver is the driver hosts are planned (and applied) with: ""
	// for the host driver (SSH or local), "kubernetes" for delivery
	// through the cluster (kube.Driver, --engine kubernetes).
	HostDriver string
	// Started, when set, is told as the read of a device begins; Progress
	// as each device finishes. Both are called from the planning
	// goroutines, Progress under a lock with done counting up to total.
	Started  func(device string)
	Progress func(done, total int, device string)
	// FabctlVersion is recorded in the plan.
	FabctlVersion string
	// CheckOnDevice sends each changed device's steps through its
	// platform's non-committing check (drivers.Checker) after planning
	// it: DevicePlan.Check. The caller holds the fabric lock.
	CheckOnDevice bool
	// skipLinks: no link read (Derive re-derives one device's steps).
	skipLinks bool
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
	for _, sm := range f.SubnetManagers {
		out = append(out, Unit{Device: sm.Device, Intent: sm, State: sm.Flatten()})
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
	p := &Plan{FormatVersion: FormatVersion, FabctlVersion: opts.FabctlVersion, Fabric: f.Name, SpecHash: s.SourceHash,
		FabricDevices: len(f.Switches) + len(f.Hosts) + len(f.SubnetManagers), Targets: opts.Targets, Excludes: opts.Excludes}
	// Units without State: each worker flattens its own device, so
	// flattening runs in parallel with the reads.
	units := selectedUnits(f, opts, true)
	p.Devices = make([]*DevicePlan, len(units))
	if !linktruth.Applies(s) {
		// No Ethernet link to compare: no link read (on a host over SSH
		// it is one more agent run).
		opts.skipLinks = true
	}
	eachUnit(units, opts, func(i int, u Unit) {
		p.Devices[i] = planDevice(ctx, u, reg, opts)
	})
	// What each unexpressible setting carries, and whether the spec
	// accepts it not in effect.
	ci := newClassIndex(s)
	for _, dp := range p.Devices {
		classify(s, ci, dp)
	}
	// Ports the switch lacks: where the spec names them.
	for _, dp := range p.Devices {
		if len(dp.missingPorts) > 0 {
			dp.Error += portLocations(s, dp.Name, dp.missingPorts)
		}
	}
	// A switch its platform cannot express: where the spec declares it.
	for _, dp := range p.Devices {
		if !dp.unrendered || dp.Kind != intent.KindSwitch {
			continue
		}
		if sw := s.Switch(dp.Name); sw != nil && sw.Src.Block.Filename != "" {
			dp.Error += fmt.Sprintf(" (switch %q at %s:%d: change what it asks of the platform, or the platform)", dp.Name, sw.Src.Block.Filename, sw.Src.Block.Start.Line)
		}
	}
	p.Links = settleLinks(ctx, s, p.Devices, compareLinks(s, p.Devices), opts)
	sortDevices(p.Devices)
	return p
}

// selectedUnits are the devices --target/--exclude select, switches
// first, without their desired State; subnet managers with withSM.
func selectedUnits(f *intent.Fabric, opts Options, withSM bool) []Unit {
	var units []Unit
	for _, sw := range f.Switches {
		if Selected(sw.Device, opts.Targets, opts.Excludes) {
			units = append(units, Unit{Device: sw.Device, Intent: sw})
		}
	}
	for _, h := range f.Hosts {
		if Selected(h.Device, opts.Targets, opts.Excludes) {
			units = append(units, Unit{Device: h.Device, Intent: h})
		}
	}
	if withSM {
		for _, sm := range f.SubnetManagers {
			if Selected(sm.Device, opts.Targets, opts.Excludes) {
				units = append(units, Unit{Device: sm.Device, Intent: sm})
			}
		}
	}
	return units
}

// eachUnit runs fn for every unit, opts.Parallelism (default 16) at a
// time, telling opts.Started as each begins and opts.Progress (under a
// lock) as each ends.
func eachUnit(units []Unit, opts Options, fn func(i int, u Unit)) {
	var mu sync.Mutex
	done := 0
	bounded(opts.Parallelism, len(units), func(i int) {
		u := units[i]
		if opts.Started != nil {
			opts.Started(u.Device.Addr())
		}
		fn(i, u)
		if opts.Progress != nil {
			mu.Lock()
			done++
			opts.Progress(done, len(units), u.Device.Addr())
			mu.Unlock()
		}
	})
}

// bounded runs fn(0..n-1), par at a time (default 16), and waits for all.
func bounded(par, n int, fn func(i int)) {
	if par <= 0 {
		par = 16
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}

// Target builds a driver target for a unit.
func Target(u Unit, opts Options) drivers.Target {
	t := drivers.Target{Device: u.Device, Intent: u.Intent, Insecure: opts.Insecure}
	if opts.Credentials != nil && u.Device.Credentials != "" {
		t.Credentials = opts.Credentials(u.Device.Credentials)
	}
	return t
}

// flatten fills in a unit's desired State.
func flatten(u Unit) Unit {
	if u.State != nil {
		return u
	}
	switch in := u.Intent.(type) {
	case *intent.Switch:
		u.State = in.Flatten()
	case *intent.Host:
		u.State = in.Flatten()
	case *intent.SubnetManager:
		u.State = in.Flatten()
	}
	return u
}

// Derive plans one device as Make does (without drift): apply uses it
// to re-derive a saved plan's steps from the plan's spec and the live
// state (SameWork).
func Derive(ctx context.Context, u Unit, reg *drivers.Registry, opts Options) *DevicePlan {
	opts.Applied, opts.CheckOnDevice, opts.skipLinks = nil, false, true
	return planDevice(ctx, u, reg, opts)
}

// SameWork reports whether two plans of a device would do the same: the
// same desired state, changes and native steps.
func SameWork(a, b *DevicePlan) bool {
	return a.Desired.Fingerprint() == b.Desired.Fingerprint() &&
		sameJSON(a.Changes, b.Changes) && sameJSON(a.Steps, b.Steps)
}

func sameJSON[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	x, errx := json.Marshal(a)
	y, erry := json.Marshal(b)
	return errx == nil && erry == nil && bytes.Equal(x, y)
}

func planDevice(ctx context.Context, u Unit, reg *drivers.Registry, opts Options) *DevicePlan {
	u = flatten(u)
	dp := &DevicePlan{Address: u.Device.Addr(), Kind: u.Device.Kind, Name: u.Device.Name,
		Platform: u.Device.Platform, Role: u.Device.Role, Driver: driverFor(u.Device, opts), Desired: u.State}
	drv, err := reg.New(dp.Driver)
	if err != nil {
		dp.Error = err.Error()
		if len(reg.Names()) == 0 {
			dp.Error = fmt.Sprintf("no driver for %q in this build (it has no device drivers yet)", dp.Driver)
		}
		return dp
	}
	t := Target(u, opts)
	live, err := drv.Read(ctx, t)
	var ue *drivers.UnconfirmedError
	switch {
	case errors.As(err, &ue):
		// The device says it failed its configuration: nothing of its
		// state is confirmed, every setting is to set.
		dp.Error, dp.Repair, live = ue.Error(), true, intent.State{}
	case err != nil:
		dp.Error = fmt.Sprintf("read %s: %v", dp.Address, err)
		return dp
	}
	t.Live = live
	// A spec port the switch lacks: not planned, so apply refuses before
	// it touches any device.
	if missing, inv := missingPorts(u.Intent, live); len(missing) > 0 {
		dp.Error = portsError(dp.Address, missing, inv)
		dp.missingPorts = missing
		return dp
	}
	// After Read: a driver may learn from the device what it cannot
	// express (a NIC without DCB support).
	held := unmanagedOf(u.Intent)
	if lim, ok := drv.(drivers.Limiter); ok {
		for k, reason := range lim.Unexpressible(t, u.State) {
			if _, ok := unmanages(held, k); ok {
				continue // the spec leaves it as the device runs it
			}
			if v, ok := u.State[k]; ok {
				dp.Unexpressible = append(dp.Unexpressible, Unexpressible{Path: k, Value: v, Reason: reason})
			} else if _, on := live[k]; on {
				// A setting the spec leaves out that only a removal the
				// platform cannot express would clear: listed unset, and
				// its removal is not planned (WithoutUnexpressible).
				dp.Unexpressible = append(dp.Unexpressible, Unexpressible{Path: k, Value: "", Reason: reason})
			}
		}
		sort.Slice(dp.Unexpressible, func(i, j int) bool { return dp.Unexpressible[i].Path < dp.Unexpressible[j].Path })
	}
	// A platform with a startup configuration: the plan wants it saved.
	saver, saves := drv.(drivers.Saver)
	u.State = expressedState(u.State, dp.Unexpressible, saves)
	dp.Desired = u.State
	if rep, ok := drv.(drivers.Reporter); ok {
		dp.Findings = rep.Findings(t)
	}
	if !opts.skipLinks {
		dp.links = readLinks(ctx, drv, t, dp)
		dp.relink = func(ctx context.Context) *linktruth.Read { return readLinks(ctx, drv, t, dp) }
	}
	dp.Fingerprint = live.Fingerprint()
	fields := drv.Fields()
	dp.Changes, dp.Tolerated = intent.DiffTolerated(u.State, live, fields)
	dp.Changes = dp.WithoutUnexpressible(dp.Changes)
	sortChanges(dp.Changes)
	sortChanges(dp.Tolerated)
	if last, ok := opts.Applied[dp.Address]; ok {
		// Drift: what differs between what fabctl last applied and what the
		// device has now, on the settings fabctl applied.
		for _, c := range intent.Diff(last, live, fields) {
			if c.Action != intent.Delete {
				dp.Drift = append(dp.Drift, c)
			}
		}
	}
	sortChanges(dp.Drift)
	if held != nil {
		u.State = leaveUnmanaged(dp, held, u.State, live)
		dp.Desired = u.State
	}
	if len(dp.Changes) > 0 {
		changes, desired := dp.Changes, u.State
		if saves {
			changes, desired = withoutSaved(changes, desired)
		}
		if len(changes) > 0 {
			t.Intent = liveFloors(t.Intent, live)
			steps, err := drv.Changes(t, changes, desired)
			if err != nil {
				dp.Error = fmt.Sprintf("render %s: %v", dp.Address, err)
				dp.unrendered = true
				return dp
			}
			dp.Steps = steps
			markDisruptiveSteps(dp.Changes, steps)
		}
		if saves {
			// Every apply on such a device ends with a save, and a device
			// whose only change is being unsaved gets the save alone.
			dp.Steps = append(dp.Steps, drivers.SaveStep(saver))
		}
		if opts.CheckOnDevice {
			dp.Check = checkOnDevice(ctx, drv, t, dp.Steps)
		}
	}
	return dp
}

// driverFor is the driver of a device: drivers.For, or the host driver
// the options name.
func driverFor(d intent.Device, opts Options) string {
	if d.Kind == intent.KindHost && opts.HostDriver != "" {
		return opts.HostDriver
	}
	return drivers.For(d)
}

// markDisruptiveSteps marks the changes of a step the driver found
// disruptive from the device (a host NIC's kernel driver, say) where its
// static Fields could not tell: a disruptive step none of whose changes
// is marked. A step whose mark came from one of its changes' Fields
// leaves the others as they are.
func markDisruptiveSteps(changes []intent.AttrChange, steps []drivers.Change) {
	idx := make(map[string]int, len(changes))
	for i, c := range changes {
		idx[c.Path] = i
	}
	for _, st := range steps {
		if st.Disruptive == "" {
			continue
		}
		marked := false
		for _, p := range st.Paths {
			if i, ok := idx[p]; ok && changes[i].Disruptive != "" {
				marked = true
			}
		}
		if marked {
			continue
		}
		for _, p := range st.Paths {
			if i, ok := idx[p]; ok {
				changes[i].Disruptive = st.Disruptive
			}
		}
	}
}

// liveFloors is a switch intent whose MTU floors (intent.Port.MTUFloor)
// the device already exceeds carry the device's MTU instead: a step that
// rewrites such a port for another reason (an SR Linux interface object,
// an NVUE port) then renders the MTU the device has rather than lowering
// it to the floor. Other intents are returned as they are.
func liveFloors(in any, live intent.State) any {
	sw, ok := in.(*intent.Switch)
	if !ok || sw == nil {
		return in
	}
	var out *intent.Switch
	for i, p := range sw.Ports {
		if !p.MTUFloor {
			continue
		}
		have, err := strconv.Atoi(live["port/"+p.Name+"/mtu"])
		if err != nil || have <= p.MTU {
			continue
		}
		if out == nil {
			cp := *sw
			cp.Ports = slices.Clone(sw.Ports)
			out = &cp
		}
		out.Ports[i].MTU = have
	}
	if out == nil {
		return in
	}
	return out
}

// Expressed is the state a device plan wants: st, the device's compiled
// state, without the settings its platform cannot express
// (dp.Unexpressible) and those the spec leaves unmanaged (dp.Unmanaged), with config/saved when the device is saved after an
// apply (a drivers.Saver). The planner makes dp.Desired this way, and
// apply checks with it that a saved plan's spec still compiles to the
// state the plan recorded.
func Expressed(st intent.State, dp *DevicePlan) intent.State {
	st = expressedState(st, dp.Unexpressible, dp.Desired[drivers.PathSaved] == "true")
	if len(dp.Unmanaged) == 0 {
		return st
	}
	out := make(intent.State, len(st))
	for k, v := range st {
		out[k] = v
	}
	for _, u := range dp.Unmanaged {
		delete(out, u.Path)
	}
	return out
}

func expressedState(st intent.State, un []Unexpressible, saves bool) intent.State {
	if len(un) == 0 && !saves {
		return st
	}
	out := make(intent.State, len(st)+1)
	for k, v := range st {
		out[k] = v
	}
	for _, x := range un {
		delete(out, x.Path)
	}
	if saves {
		out[drivers.PathSaved] = "true"
	}
	return out
}

// withoutSaved drops PathSaved from a Saver's diff and desired state: the
// driver renders configuration, the engine saves it.
func withoutSaved(changes []intent.AttrChange, desired intent.State) ([]intent.AttrChange, intent.State) {
	d := make(intent.State, len(desired))
	for k, v := range desired {
		if k != drivers.PathSaved {
			d[k] = v
		}
	}
	return drivers.WithoutSaved(changes), d
}

// WithoutUnexpressible drops the removals of settings the plan lists as
// not expressible, and every change of a setting it lists as unmanaged:
// fabctl leaves such a setting as the device has it (the desired state
// no longer names it, and its live value is not fabctl's to change).
// Plan and apply's verification both use it.
func (d *DevicePlan) WithoutUnexpressible(changes []intent.AttrChange) []intent.AttrChange {
	if held := d.unmanagedPaths(); held != nil {
		out := changes[:0:0]
		for _, c := range changes {
			if !held[c.Path] {
				out = append(out, c)
			}
		}
		changes = out
	}
	if len(d.Unexpressible) == 0 {
		return changes
	}
	un := make(map[string]bool, len(d.Unexpressible))
	for _, x := range d.Unexpressible {
		un[x.Path] = true
	}
	out := changes[:0:0]
	for _, c := range changes {
		if c.Action == intent.Delete && un[c.Path] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Unexpressible is a desired setting a device's platform cannot express.
type Unexpressible struct {
	Path   string `json:"path"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	// Carries is what the setting carries of a lossless, RDMA or CNP
	// class ("PFC of the lossless priorities 3"); "" for a setting that
	// only tunes the device (carry.go).
	Carries string `json:"carries,omitempty"`
	// Accepted is the spec's reason for accepting the setting not in
	// effect (accept_not_in_effect); "" when it does not.
	Accepted string `json:"accepted,omitempty"`
}

// SortDevices orders device plans by address.
func SortDevices(ds []*DevicePlan) {
	sort.Slice(ds, func(i, j int) bool { return ds[i].Address < ds[j].Address })
}

// sortChanges orders changes by path in natural order (port/Ethernet4
// before port/Ethernet12), the order plans show and drivers receive.
func sortChanges(cs []intent.AttrChange) {
	slices.SortStableFunc(cs, func(a, b intent.AttrChange) int { return naturalCmp(a.Path, b.Path) })
}

// naturalCmp is NaturalLess as a comparison.
func naturalCmp(a, b string) int {
	switch {
	case NaturalLess(a, b):
		return -1
	case NaturalLess(b, a):
		return 1
	}
	return 0
}

// sortDevices orders device plans the way plans show them: switches
// first, then hosts, each by name in natural order.
func sortDevices(ds []*DevicePlan) {
	slices.SortStableFunc(ds, func(a, b *DevicePlan) int {
		if a.Kind != b.Kind {
			if a.Kind == intent.KindSwitch {
				return -1
			}
			if b.Kind == intent.KindSwitch {
				return 1
			}
			return 0
		}
		return naturalCmp(a.Name, b.Name)
	})
}

// NaturalLess orders names with embedded numbers by value: leaf2 before
// leaf10, Ethernet4 before Ethernet12; equal-valued numbers with
// different zero padding fall back to byte order so the order is total.
func NaturalLess(a, b string) bool {
	x, y := a, b
	for x != "" && y != "" {
		dx, dy := digits(x), digits(y)
		if dx > 0 && dy > 0 {
			nx, ny := strings.TrimLeft(x[:dx], "0"), strings.TrimLeft(y[:dy], "0")
			if len(nx) != len(ny) {
				return len(nx) < len(ny)
			}
			if nx != ny {
				return nx < ny
			}
			x, y = x[dx:], y[dy:]
			continue
		}
		if x[0] != y[0] {
			return x[0] < y[0]
		}
		x, y = x[1:], y[1:]
	}
	if len(x) != len(y) {
		return len(x) < len(y)
	}
	return a < b
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
