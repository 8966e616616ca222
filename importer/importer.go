// Package importer writes the spec of a running fabric: from an inventory
// (a spec naming the devices, how to reach them and their links, possibly
// with some blocks already written) and each device's live state as its
// driver's Read returns it, it infers the fabric-level settings (classes,
// trust, MTU, the PFC watchdog, rdma_tos) by majority across the devices,
// writes every device's or port's deviation as the spec's own overrides,
// and lists each live setting the spec language cannot say, line by line.
//
// It is the inverse of package intent: Compile+Flatten turn a spec into
// per-device desired States; Import turns observed States back into a
// spec. It checks its own answer the way plan does: the written spec is
// loaded, compiled and flattened, and diffed against each device's live
// State with the driver's tolerances and limits; whatever still differs
// is reported as left out, never hidden (the round-trip property: plan
// of the imported spec against the same fabric shows no changes but
// those listed).
//
// Import is pure logic: the caller reads the devices (plan.ReadAll) and
// loads specs (the Load option, with the build's platforms).
package importer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Observed is what was read from one device.
type Observed struct {
	// Live is the device's live State (drivers.Driver.Read); nil when
	// it could not be read (Err says why).
	Live intent.State
	Err  string
	// Fields are the driver's diff tolerances.
	Fields []intent.Field
	// Read reads the device again for another intent of it (nil: the
	// device is not read again). Drivers read the traffic classes an
	// intent names beside those the device has configured, so import
	// reads each switch once with no classes named (what is configured)
	// and once with the classes it infers.
	Read func(in any) (intent.State, error)
	// Unexpressible answers the driver's Limiter for a candidate intent
	// (the device's compiled intent, *intent.Switch or *intent.Host) and
	// its desired State: the paths the platform cannot express, which
	// plan leaves out of the diff. nil: the driver has no limits.
	Unexpressible func(in any, desired intent.State) map[string]string
}

// Options tune Import.
type Options struct {
	// Load loads a spec from in-memory files with the build's platforms
	// and the caller's environment (spec.LoadFiles with LoadOptions).
	Load func(files []spec.File) (*spec.Spec, hcl.Diagnostics)
	// Name is the file name the written spec is loaded under (its
	// directory resolves relative paths such as known_hosts): where the
	// caller will write it.
	Name string
	// Parallelism bounds the devices read again at a time (default 16).
	Parallelism int
}

// Result is the written spec and what import did.
type Result struct {
	HCL    []byte `json:"-"`
	Report Report `json:"report"`
}

// Report says what import chose, wrote and left out.
type Report struct {
	Devices   int        `json:"devices"`
	Read      int        `json:"read"`
	Unread    []Unread   `json:"unread,omitempty"`
	Choices   []Choice   `json:"choices"`
	Overrides []Override `json:"overrides"`
	LeftOut   []LeftOut  `json:"left_out"`
	Notes     []string   `json:"notes,omitempty"`
	// SubnetManager is what import read from the InfiniBand subnet
	// manager and wrote into the infiniband block (nil: none read).
	SubnetManager *SubnetManagerImport `json:"subnet_manager,omitempty"`
}

// Unread is a device that could not be read: the inventory's blocks for
// it are kept as they are.
type Unread struct {
	Device string `json:"device"`
	Error  string `json:"error"`
}

// Choice is one fabric-level setting import inferred: the value most
// devices have, how many agree, and the devices that differ (written as
// overrides, or left out).
type Choice struct {
	Setting string   `json:"setting"` // class "roce" lossless, fabric trust, ...
	Value   string   `json:"value"`
	Agree   int      `json:"agree"`
	Of      int      `json:"of"`
	Dissent []string `json:"dissent,omitempty"`
	Why     string   `json:"why,omitempty"`
}

// Override is one attribute import wrote on a device, port or NIC
// because the device differs from the fabric's choice.
type Override struct {
	Device    string `json:"device"`           // switch.leaf1, host.gpu01
	Block     string `json:"block"`            // `port "Ethernet0"`, `nic "ens1f0"`, "" for the device block
	Attribute string `json:"attribute"`        // pfc, dscp_map, ...
	Value     string `json:"value"`            // as written (HCL)
	Path      string `json:"path,omitempty"`   // the state path it settles
	Before    string `json:"fabric,omitempty"` // what the fabric's choice would have set
	Live      string `json:"live,omitempty"`   // what the device has
	Note      string `json:"note,omitempty"`
}

// LeftOut is a live setting the written spec does not reproduce: the
// spec language cannot say it (a per-switch ECN profile, a setting
// fabctl does not model on that device), or the device's block cannot
// carry an override (declared with for_each). Where the device's block
// can say so, import writes the setting into its unmanaged map with the
// reason (Unmanaged): plan of the imported spec leaves it as the device
// runs it and lists it as unmanaged. Otherwise plan shows it as a
// change.
type LeftOut struct {
	Device  string `json:"device"`
	Path    string `json:"path"`
	Live    string `json:"live,omitempty"`    // "" when the device lacks it
	Desired string `json:"desired,omitempty"` // what the written spec would ask without unmanaged
	Reason  string `json:"reason"`
	// Unmanaged: the written spec has it in the block's unmanaged map.
	Unmanaged bool `json:"unmanaged,omitempty"`
}

// maxRounds bounds the write-diff-absorb rounds: each round's overrides
// can only settle settings the previous round's left (a port's PFC set,
// then its watchdog), so a few suffice.
const maxRounds = 4

// savedPath is drivers.PathSaved: "false" when the device's running
// configuration is not its startup configuration.
const savedPath = "config/saved"

// device is one device of the inventory and what was read from it.
type device struct {
	addr, kind, name string
	obs              *Observed
	live             intent.State // without facts and the saved flag
	readTCs          []int        // the traffic classes live was read naming (nil: the inventory's)
	ov               *overrides
}

// overrides are the attributes import writes on one device.
type overrides struct {
	attrs   map[string]value            // device block
	sub     map[string]map[string]value // `port "X"` / `nic "X"` -> attribute -> value
	dscp    map[int]int                 // switch dscp_map
	nicDSCP map[string]map[int]int      // nic -> dscp_map
	// unmanaged: block ("" the device's, subKey("nic", X) a NIC's) ->
	// unmanaged key -> reason.
	unmanaged map[string]map[string]string
}

func newOverrides() *overrides {
	return &overrides{attrs: map[string]value{}, sub: map[string]map[string]value{}, dscp: map[int]int{}, nicDSCP: map[string]map[int]int{},
		unmanaged: map[string]map[string]string{}}
}

func (o *overrides) set(sub, attr string, v value) {
	if sub == "" {
		o.attrs[attr] = v
		return
	}
	m := o.sub[sub]
	if m == nil {
		m = map[string]value{}
		o.sub[sub] = m
	}
	m[attr] = v
}

// Import infers the spec of the fabric the inventory names from what was
// read of its devices (by plan address: switch.leaf1, host.gpu01).
func Import(inv []spec.File, observed map[string]*Observed, opts Options) (*Result, error) {
	if opts.Load == nil {
		return nil, fmt.Errorf("importer: no spec loader")
	}
	for _, f := range inv {
		if strings.HasSuffix(f.Name, ".json") {
			return nil, fmt.Errorf("%s: import writes native HCL and reads native HCL inventories; convert the JSON file (or leave it out of the inventory)", f.Name)
		}
	}
	invSpec, diags := opts.Load(inv)
	if diags.HasErrors() {
		return nil, diagError("the inventory", diags)
	}
	doc, err := newDocument(inv, invSpec)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	rep := &res.Report
	rep.Choices, rep.Overrides, rep.LeftOut = []Choice{}, []Override{}, []LeftOut{}
	fab := intent.Compile(invSpec)
	var devs []*device
	add := func(kind, name string) {
		d := &device{addr: kind + "." + name, kind: kind, name: name, ov: newOverrides()}
		rep.Devices++
		if o := observed[d.addr]; o != nil && o.Live != nil {
			d.obs, d.live = o, clean(o.Live)
			rep.Read++
		} else {
			why := "not read"
			if o != nil && o.Err != "" {
				why = o.Err
			}
			rep.Unread = append(rep.Unread, Unread{Device: d.addr, Error: why})
		}
		devs = append(devs, d)
	}
	for _, sw := range fab.Switches {
		add(intent.KindSwitch, sw.Name)
	}
	for _, h := range fab.Hosts {
		add(intent.KindHost, h.Name)
	}
	var smObs *Observed
	if len(fab.SubnetManagers) > 0 {
		sm := fab.SubnetManagers[0]
		switch o := observed[sm.Addr()]; {
		case o == nil:
			rep.Notes = append(rep.Notes, fmt.Sprintf("the subnet manager %s was not selected: the infiniband block's partitions and QoS are kept as the inventory writes them", sm.Addr()))
		case o.Live == nil:
			why := "not read"
			if o.Err != "" {
				why = o.Err
			}
			rep.Unread = append(rep.Unread, Unread{Device: sm.Addr(), Error: why})
			rep.Notes = append(rep.Notes, fmt.Sprintf("the subnet manager %s was not read: the infiniband block's partitions and QoS are kept as the inventory writes them", sm.Addr()))
		default:
			smObs = o
			doc.sm, rep.SubnetManager = newSMDoc(invSpec, sm, clean(readSM(sm, o)))
		}
	}
	for _, f := range inv {
		if spec.IsOverrideFile(f.Name) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s is an override file: it is not copied into the written spec; keep it beside it", f.Name))
		}
	}
	reread(fab, devs, rep, opts.Parallelism)
	ch := infer(invSpec, devs)
	rereadWritten(fab, devs, ch.classes, rep, opts.Parallelism)
	rep.Choices = ch.choices
	doc.fabric = ch

	// Write, load, diff, absorb what the spec can say, until nothing new
	// is written: the last round's diff is what the written spec leaves
	// out, as plan will show it.
	var last []*residual
	var cand *spec.Spec
	// write renders the spec, loads it and diffs it against the devices.
	write := func() ([]*residual, error) {
		src, err := doc.render(devs)
		if err != nil {
			return nil, err
		}
		var diags hcl.Diagnostics
		cand, diags = opts.Load([]spec.File{{Name: opts.Name, Data: src}})
		if diags.HasErrors() {
			return nil, diagError("the written spec", diags)
		}
		res.HCL = src
		return residuals(cand, devs), nil
	}
	for round := 0; ; round++ {
		var err error
		if last, err = write(); err != nil {
			return nil, err
		}
		if round == maxRounds {
			break // written and checked: what differs now stays
		}
		grew := false
		for _, r := range last {
			if absorb(r, doc) {
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	// What the spec cannot say is left as the devices run it: each such
	// setting goes into its block's unmanaged map with its reason, and
	// the spec is written and diffed once more.
	wrote := false
	for _, r := range last {
		if unmanage(r, doc) {
			wrote = true
		}
	}
	if doc.sm != nil && doc.sm.unmanage(smDiff(cand, doc.sm, smObs)) {
		wrote = true
	}
	if wrote {
		after, err := write()
		if err != nil {
			return nil, err
		}
		last = stillDiffers(last, after)
	}
	// A running configuration not saved: plan saves it, and nothing in
	// the spec says otherwise.
	for _, d := range devs {
		if d.obs != nil && d.obs.Live[savedPath] == "false" {
			rep.LeftOut = append(rep.LeftOut, LeftOut{Device: d.addr, Path: savedPath, Live: "false", Desired: "true",
				Reason: "the running configuration is not saved to the startup configuration: plan saves it (the spec has nothing to say about it)"})
		}
	}
	for _, r := range last {
		for _, c := range r.changes {
			reason := c.reason
			if reason == "" {
				reason = "an override was written but the setting still differs (it depends on others that differ)"
			}
			rep.LeftOut = append(rep.LeftOut, LeftOut{Device: r.dev.addr, Path: c.Path, Live: c.Before, Desired: c.After, Reason: reason, Unmanaged: c.unmanaged})
		}
	}
	if doc.sm != nil {
		if doc.sm.wroteClass != "" {
			rep.SubnetManager.Written = append(rep.SubnetManager.Written, fmt.Sprintf("class %q sl", doc.sm.wroteClass))
		}
		rep.LeftOut = append(rep.LeftOut, smResidual(cand, doc.sm, smObs, rep.SubnetManager)...)
	}
	rep.Overrides = doc.overrideList(devs)
	sort.SliceStable(rep.LeftOut, func(i, j int) bool {
		if rep.LeftOut[i].Device != rep.LeftOut[j].Device {
			return rep.LeftOut[i].Device < rep.LeftOut[j].Device
		}
		return rep.LeftOut[i].Path < rep.LeftOut[j].Path
	})
	return res, nil
}

// clean drops what is not a setting: device facts (fact/...) and the
// saved flag (config/...), which plan handles on its own.
func clean(st intent.State) intent.State {
	out := make(intent.State, len(st))
	for k, v := range st {
		if strings.HasPrefix(k, "fact/") || strings.HasPrefix(k, "config/") {
			continue
		}
		out[k] = v
	}
	return out
}

func diagError(what string, diags hcl.Diagnostics) error {
	var b strings.Builder
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		if d.Subject != nil {
			fmt.Fprintf(&b, "%s:%d: ", d.Subject.Filename, d.Subject.Start.Line)
		}
		b.WriteString(d.Summary)
		if d.Detail != "" {
			b.WriteString(": " + d.Detail)
		}
	}
	return fmt.Errorf("%s does not load: %s", what, b.String())
}

// atoi parses a device's integer value; ok false for anything else.
func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}
