package view

import (
	"encoding/json"
	"io"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// PlanJSONDoc is the document `fabctl plan --json` and `fabctl show --json`
// write (docs/json-output.md), format_version plan.FormatVersion. Arrays are
// never null; values absent on one side of a change are null.
type PlanJSONDoc struct {
	FormatVersion string `json:"format_version"`
	FabctlVersion string `json:"fabctl_version"`
	Fabric        string `json:"fabric"`
	SpecHash      string `json:"spec_hash"`
	// Complete is false when a selected device could not be read.
	Complete   bool `json:"complete"`
	HasChanges bool `json:"has_changes"`
	// Mismatch is true when a device has a finding no change fixes
	// (severity "error"): the fabric does not match the spec even once
	// the changes are applied.
	Mismatch bool `json:"mismatch"`
	// NotCarried are the devices that cannot carry the intent: settings
	// of a lossless, RDMA or CNP class their platform cannot express,
	// not accepted by the spec (each device's unexpressible entries say
	// which: carries set, accepted empty). Plan and apply fail on them.
	NotCarried []string `json:"not_carried"`
	// RefusedByDevice are the devices whose own check refused their
	// steps (plan --check-on-device; [] without it). Plan exits 7.
	RefusedByDevice []string `json:"refused_by_device"`
	// Targeted is true when --target / --exclude limited the plan to
	// Counts.Devices of FabricDevices devices.
	Targeted      bool        `json:"targeted"`
	Targets       []string    `json:"targets"`
	Excludes      []string    `json:"excludes"`
	FabricDevices int         `json:"fabric_devices"`
	Counts        plan.Counts `json:"counts"`
	// DisruptiveChanges lists every change that interrupts traffic.
	DisruptiveChanges []PlanJSONDisruptive  `json:"disruptive_changes"`
	Devices           []PlanJSONDevice      `json:"devices"`
	Diagnostics       []spec.JSONDiagnostic `json:"diagnostics"`
	// SavedPlan describes the plan file (show only).
	SavedPlan *SavedPlanInfo `json:"saved_plan,omitempty"`
	// Links is the Ethernet cabling and link check (omitted when the spec
	// has no Ethernet links): links compared, ends read, findings (also
	// on their devices), the devices not read and why.
	Links *linktruth.Report `json:"links,omitempty"`
}

// PlanJSONDisruptive is one disruptive change.
type PlanJSONDisruptive struct {
	Address string `json:"address"`
	Path    string `json:"path"`
	Action  string `json:"action"`
	Reason  string `json:"reason"`
}

// PlanJSONDevice is one device's plan.
type PlanJSONDevice struct {
	Address  string `json:"address"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Platform string `json:"platform"`
	Role     string `json:"role"`
	Driver   string `json:"driver"`
	// Status is "changes", "no-changes" or "error".
	Status      string              `json:"status"`
	Error       string              `json:"error,omitempty"`
	Repair      bool                `json:"repair,omitempty"`
	Fingerprint string              `json:"fingerprint,omitempty"`
	Counts      plan.DeviceCounts   `json:"counts"`
	Unchanged   int                 `json:"unchanged"`
	Changes     []PlanJSONChange    `json:"changes"`
	Tolerated   []PlanJSONTolerated `json:"tolerated"`
	Drift       []PlanJSONDrift     `json:"drift"`
	Steps       []drivers.Change    `json:"steps"`
	// Findings are the driver's read-only observations (omitted when none).
	Findings []drivers.Finding `json:"findings,omitempty"`
	// Unexpressible are the spec's settings the platform cannot express
	// (not applied): path, value, reason. Always present, [] when none.
	Unexpressible []plan.Unexpressible `json:"unexpressible"`
	// Unmanaged are the settings the spec leaves as the device runs them
	// (not changes, never sent): path, live, spec, differs, reason.
	// Always present, [] when none.
	Unmanaged []plan.Unmanaged `json:"unmanaged"`
	// DeviceCheck is the device's own verdict on its steps (plan
	// --check-on-device, devices with changes; omitted otherwise).
	DeviceCheck *drivers.DeviceCheck `json:"device_check,omitempty"`
}

// PlanJSONChange is one setting change: action "add" (before null), "change"
// or "remove" (after null).
type PlanJSONChange struct {
	Path       string  `json:"path"`
	Action     string  `json:"action"`
	Before     *string `json:"before"`
	After      *string `json:"after"`
	Disruptive string  `json:"disruptive,omitempty"`
}

// PlanJSONTolerated is a setting the device holds within tolerance.
type PlanJSONTolerated struct {
	Path    string `json:"path"`
	Desired string `json:"desired"`
	Live    string `json:"live"`
}

// PlanJSONDrift is a setting changed outside fabctl: Applied is what fabctl
// last applied, Live what the device has (null: the setting is gone).
type PlanJSONDrift struct {
	Path    string  `json:"path"`
	Applied string  `json:"applied"`
	Live    *string `json:"live"`
}

// SavedPlanInfo describes a saved plan for show.
type SavedPlanInfo struct {
	Path          string `json:"path"`
	FormatVersion string `json:"format_version"`
	FabctlVersion string `json:"fabctl_version"`
	SpecPath      string `json:"spec_path"`
	// Stale is true when the spec or var files on disk differ from the
	// ones the plan embeds, or the file is an older format; Warnings say
	// why.
	Stale    bool     `json:"stale"`
	Warnings []string `json:"warnings"`
	// SpecDir is the directory the embedded spec's relative paths resolve
	// against; StateDir the state directory the plan records ("": the
	// spec directory's .fabctl); SignedBy who signed it ("": unsigned).
	SpecDir  string `json:"spec_dir"`
	StateDir string `json:"state_dir,omitempty"`
	SignedBy string `json:"signed_by,omitempty"`
	// Endpoints are what fabctl apply would connect to, derived from the
	// embedded spec; LoadError says why they could not be (the spec does
	// not load: apply would refuse the plan).
	Endpoints []plan.Endpoint `json:"endpoints"`
	LoadError string          `json:"load_error,omitempty"`
}

// ActionWord names an action in JSON: add, change, remove.
func ActionWord(a intent.Action) string {
	switch a {
	case intent.Create:
		return "add"
	case intent.Delete:
		return "remove"
	default:
		return "change"
	}
}

func strp(s string) *string { return &s }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// PlanJSON builds the JSON document of a plan.
func PlanJSON(p *plan.Plan) PlanJSONDoc {
	c := p.Counts()
	doc := PlanJSONDoc{
		FormatVersion: plan.FormatVersion, FabctlVersion: p.FabctlVersion, Fabric: p.Fabric, SpecHash: p.SpecHash,
		Complete: c.Errored == 0, HasChanges: p.HasChanges(), Mismatch: p.Mismatched(), Targeted: p.Targeted(),
		Targets: nonNil(p.Targets), Excludes: nonNil(p.Excludes), FabricDevices: p.FabricDevices,
		Counts: c, DisruptiveChanges: []PlanJSONDisruptive{}, Devices: make([]PlanJSONDevice, 0, len(p.Devices)),
		Diagnostics: nonNil(p.Diagnostics), NotCarried: []string{}, RefusedByDevice: []string{}, Links: p.Links,
	}
	for _, d := range p.Refused() {
		doc.RefusedByDevice = append(doc.RefusedByDevice, d.Address)
	}
	for _, d := range p.NotCarried() {
		doc.NotCarried = append(doc.NotCarried, d.Address)
	}
	for _, e := range disruptiveList(p) {
		doc.DisruptiveChanges = append(doc.DisruptiveChanges, PlanJSONDisruptive{Address: e.Address, Path: e.Path, Action: ActionWord(intent.Action(e.Action)), Reason: e.Reason})
	}
	for _, d := range p.Devices {
		jd := PlanJSONDevice{
			Address: d.Address, Kind: d.Kind, Name: d.Name, Platform: d.Platform, Role: d.Role, Driver: d.Driver,
			Error: d.Error, Repair: d.Repair, Fingerprint: d.Fingerprint,
			Changes: []PlanJSONChange{}, Tolerated: []PlanJSONTolerated{}, Drift: []PlanJSONDrift{}, Steps: nonNil(d.Steps),
			Findings: d.Findings, Unexpressible: nonNil(d.Unexpressible), Unmanaged: nonNil(d.Unmanaged), DeviceCheck: d.Check,
		}
		switch {
		case d.Error != "":
			jd.Status = "error"
		case d.HasChanges():
			jd.Status = "changes"
		default:
			jd.Status = "no-changes"
		}
		if d.Error == "" {
			jd.Counts = d.Counts()
			jd.Unchanged = d.Unchanged()
		}
		for _, ch := range d.Changes {
			jc := PlanJSONChange{Path: ch.Path, Action: ActionWord(ch.Action), Disruptive: ch.Disruptive}
			if ch.Action != intent.Create {
				jc.Before = strp(ch.Before)
			}
			if ch.Action != intent.Delete {
				jc.After = strp(ch.After)
			}
			jd.Changes = append(jd.Changes, jc)
		}
		for _, t := range d.Tolerated {
			jd.Tolerated = append(jd.Tolerated, PlanJSONTolerated{Path: t.Path, Desired: t.After, Live: t.Before})
		}
		for _, dr := range d.Drift {
			j := PlanJSONDrift{Path: dr.Path, Applied: dr.After}
			if dr.Action != intent.Create {
				j.Live = strp(dr.Before)
			}
			jd.Drift = append(jd.Drift, j)
		}
		doc.Devices = append(doc.Devices, jd)
	}
	return doc
}

// JSONFormatVersion is the format_version of every --json document but
// plan's (which has plan.FormatVersion). A change that could break a
// consumer (removed or retyped field) bumps the major number; added
// fields bump the minor number.
const JSONFormatVersion = "1.1"

// WriteJSON writes a JSON document indented, without HTML escaping, and
// a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
