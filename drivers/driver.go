// Package drivers defines the contract every switch and host driver
// implements and the Registry type; the one explicit list of drivers is
// package drivers/builtin.
//
// A driver reads a device's live state into normalised intent.State,
// turns a diff into an ordered change list with the platform's native
// payload, applies a change list as one transaction, and rolls back.
package drivers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/ident"
	"github.com/fabctl/fabctl/spec"
)

// Capabilities say which transaction mechanisms a driver uses.
type Capabilities struct {
	Sessions      bool `json:"sessions"`       // named config sessions with diff + commit/abort
	CommitConfirm bool `json:"commit_confirm"` // commit with an auto-revert timer
	Checkpoints   bool `json:"checkpoints"`    // checkpoint + rollback
	Rollback      bool `json:"rollback"`       // can undo an applied transaction
}

// Target is one device a driver works on.
type Target struct {
	Device      intent.Device
	Intent      any // *intent.Switch, *intent.Host or *intent.SubnetManager
	Credentials *spec.Credentials
	// Insecure disables host-key / TLS verification (explicit flags only).
	Insecure bool
	// Live is the state the planner's Read of the device returned (nil
	// when the caller has not read it). Unexpressible, Findings and
	// Changes answer from its facts (PathFacts) rather than from
	// anything a driver remembered of an earlier Read.
	Live intent.State
}

// Change is one step of a device's change list.
type Change struct {
	Paths      []string `json:"paths"`             // the state paths it settles
	Summary    string   `json:"summary"`           // human one-liner
	Payload    []string `json:"payload,omitempty"` // native lines: CLI, JSON patch, gNMI paths, netlink ops
	Disruptive string   `json:"disruptive,omitempty"`
}

// ApplyOptions tune one device's transaction.
type ApplyOptions struct {
	// ConfirmTimeout > 0: commit with auto-revert after this long unless
	// Confirm is called (where the platform supports it).
	ConfirmTimeout time.Duration
}

// Result is what an apply did on one device.
type Result struct {
	// Token identifies the transaction for Rollback/Confirm (checkpoint
	// name, session name, commit id, or the pre-apply state for drivers
	// that roll back by re-applying it).
	Token string
	// Pending is true when a commit waits for confirmation.
	Pending bool
}

// Driver is implemented by every switch and host driver.
type Driver interface {
	// Name is the registry key: a platform ("sonic", "eos", ...), "host",
	// or "memory" for the in-memory test driver.
	Name() string
	Capabilities() Capabilities
	// Fields gives diff tolerances and disruptive flags per state path.
	Fields() []intent.Field
	// Read returns the device's live state in normalised form, limited to
	// what fabctl manages.
	Read(ctx context.Context, t Target) (intent.State, error)
	// Changes turns a diff into the ordered change list with native payload.
	Changes(t Target, diff []intent.AttrChange, desired intent.State) ([]Change, error)
	// Apply applies the change list as one transaction. On error the device
	// must be back at its prior state, or the error must say it is not
	// (PartialError).
	Apply(ctx context.Context, t Target, changes []Change, opts ApplyOptions) (Result, error)
	// Confirm makes a pending commit permanent.
	Confirm(ctx context.Context, t Target, r Result) error
	// Rollback undoes an applied transaction.
	Rollback(ctx context.Context, t Target, r Result) error
}

// PartialError reports a transaction that failed and could not be undone:
// the device is in neither the old nor the new state.
type PartialError struct {
	Device string
	Err    error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%s: apply failed and the device could not be restored: %v; inspect it before re-planning", e.Device, e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// ErrUnsupported marks an operation a driver cannot do.
var ErrUnsupported = errors.New("not supported by this driver")

// Factory builds a driver. Drivers that hold connections are per run.
type Factory func() Driver

// Registry maps driver names to factories.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Register adds a driver; a duplicate name is a programming error.
func (r *Registry) Register(name string, f Factory) error {
	if _, dup := r.factories[name]; dup {
		return fmt.Errorf("driver %q registered twice", name)
	}
	r.factories[name] = f
	return nil
}

// Names lists the registered drivers.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.factories))
	for n := range r.factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// New builds the named driver, or says which exist.
func (r *Registry) New(name string) (Driver, error) {
	f, ok := r.factories[name]
	if !ok {
		return nil, fmt.Errorf("no driver for %q in this build (drivers: %s)", name, strings.Join(r.Names(), ", "))
	}
	return f(), nil
}

// For picks the driver name for a device: switches and subnet managers
// by platform (sonic, ..., opensm), hosts by the host driver.
func For(d intent.Device) string {
	if d.Kind == intent.KindHost {
		return "host"
	}
	return d.Platform
}

// Limiter is implemented by drivers whose platform cannot express some of
// the vendor-neutral intent (EOS has no cable-length or per-PG headroom
// setting; OpenConfig has no PFC). Unexpressible returns those desired
// paths with the reason. Plans leave them out of the diff and list them
// as "not expressible on <platform>", so the user sees what is not
// applied and the plan still converges; a driver never reports the
// desired value as live to hide a gap. Plans call it after Read, so a
// driver may answer from what the device told it (a NIC without DCB).
type Limiter interface {
	Unexpressible(t Target, desired intent.State) map[string]string
}

// Finding is a read-only observation a driver made while reading a device,
// about something the spec does not set or fabctl cannot change: a PCIe
// link trained below its maximum, a NIC on another NUMA node than
// declared, queue sizes above the device's limits.
//
// Severity SeverityError is a verdict: the device does not match the
// spec and no change fixes it (an InfiniBand cable down or miswired, a
// link trained narrower, a node the spec does not declare, a port that
// could not be read). A plan holding one never says the fabric matches,
// and plan and drift exit with their documented code for it.
//
// BlocksApply makes apply refuse the whole run while a selected device
// has the finding, before anything is applied (another owner manages the
// device's settings: NVIDIA nic-configuration-operator on a node); plan
// only shows it.
type Finding struct {
	Severity string `json:"severity"`       // SeverityError, "warning" or "info"
	Path     string `json:"path,omitempty"` // the state path it concerns (nic/ens1f0/pcie)
	Message  string `json:"message"`
	// Kind classifies the finding for scripts ("link-down", "miswired"
	// for InfiniBand cabling); "" when the driver does not classify.
	Kind string `json:"kind,omitempty"`
	// IDs are the device's own identifiers of what the finding is about,
	// beside the spec's names the Message uses (InfiniBand: "node_guid",
	// "port_guid", "lid", "port").
	IDs         map[string]string `json:"ids,omitempty"`
	BlocksApply bool              `json:"blocks_apply,omitempty"`
}

// SeverityError is the severity of a finding that no change fixes.
const SeverityError = "error"

// Reporter is implemented by drivers that report findings. Plans call it
// after Read and list the findings per device; they never block apply.
type Reporter interface {
	Findings(t Target) []Finding
}

// Releaser is implemented by drivers that keep a rollback point on the
// device for the whole run (an NX-OS checkpoint) so Rollback can use it;
// the apply engine calls Release for every device still applied when the
// run ends.
type Releaser interface {
	Release(ctx context.Context, t Target, r Result) error
}

// TrafficRunner is implemented by drivers that run fabctl validate's
// traffic steps on their devices: the host driver, for hosts it reaches
// over SSH, through the agent there. body is one step's request in
// validate/traffic's shape (a side of a test pair, or a counter read),
// opaque to the driver; the step's result is returned as is, in the same
// package's shape. onLine receives the step's progress lines as they
// arrive (a server side's ready line). ctx's deadline, when it has one,
// bounds the step.
type TrafficRunner interface {
	Traffic(ctx context.Context, t Target, body json.RawMessage, onLine func(string)) (json.RawMessage, error)
}

// PathFacts prefixes the live state paths that are facts about a device
// rather than settings fabctl manages: what the device is decides how a
// driver renders for it (SONiC's buffer model, whether NVUE's RoCE mode
// is on) or what it reports (NVUE's auto-save). Read returns them with
// the settings; the planner hands them back in Target.Live. A desired
// state never holds them, so a diff never names them.
const PathFacts = "fact/"

// PathSaved is the state path of a device's persistence: "true" when the
// configuration the device would come up with after a reload (its startup
// configuration) holds what is running, "false" when a reload would lose
// running changes. Drivers that implement Saver read it with the rest of
// the state; the planner wants it "true" on their devices, so "applied but
// not saved" is a change that apply repairs and drift that drift reports.
const PathSaved = "config/saved"

// Saver is implemented by drivers of platforms that keep a startup
// configuration apart from the running one (EOS, NX-OS, SONiC, NVUE). The
// apply engine calls Save after a device's transaction is verified and,
// with commit-confirm, confirmed, so the device never saves a
// configuration it might still revert; a plan whose only change is
// PathSaved runs Save alone. Drivers leave PathSaved out of their own
// change lists and transactions: the planner adds the save step.
type Saver interface {
	// SaveSteps is the save in the platform's native form, as plans show it.
	SaveSteps() []string
	// Save persists the running configuration so that it survives a reload.
	Save(ctx context.Context, t Target) error
}

// SaveStep is the change list's last step on a Saver's device: what the
// engine will run after the transaction.
func SaveStep(s Saver) Change {
	return Change{Paths: []string{PathSaved}, Summary: "save the running configuration (it survives a reload)", Payload: s.SaveSteps()}
}

// IsSaveStep reports a change that only saves.
func IsSaveStep(c Change) bool { return len(c.Paths) == 1 && c.Paths[0] == PathSaved }

// WithoutSaveSteps is steps without the save step: what a transaction or
// a non-committing check sends (the engine saves after the transaction; a
// check changes nothing to save).
func WithoutSaveSteps(steps []Change) []Change {
	var out []Change
	for _, c := range steps {
		if !IsSaveStep(c) {
			out = append(out, c)
		}
	}
	return out
}

// WithoutSaved is changes without PathSaved: what a Saver's driver renders
// (the engine saves) and what a transaction's verification compares (the
// save comes after it).
func WithoutSaved(changes []intent.AttrChange) []intent.AttrChange {
	out := changes[:0:0]
	for _, c := range changes {
		if c.Path != PathSaved {
			out = append(out, c)
		}
	}
	return out
}

// SwitchIntent returns the target's switch intent, or an error naming the
// device and the driver that needs it.
//
// Every switch driver takes its intent here (render, steps, read), so
// this is where a port name that would carry a CLI or shell
// metacharacter, a line break or template text into a command line or a
// request file is refused (ident.Port): the spec loader refuses it first,
// against the platform's own grammar; this is the renderers' check.
func SwitchIntent(t Target, driver string) (*intent.Switch, error) {
	sw, ok := t.Intent.(*intent.Switch)
	if !ok || sw == nil {
		return nil, fmt.Errorf("%s: the %s driver needs a switch intent, got %T", t.Device.Name, driver, t.Intent)
	}
	for i := range sw.Ports {
		if err := ident.Port(sw.Ports[i].Name); err != nil {
			return nil, fmt.Errorf("%s: port %q %w: refused before rendering", t.Device.Name, sw.Ports[i].Name, err)
		}
	}
	return sw, nil
}

// CheckedApplier is implemented by drivers that reach a device through
// something that can run a whole transaction in one round trip (the host
// agent over SSH): read the device, check that its state still has the
// fingerprint the plan recorded, apply the steps as one transaction, and
// read the device back. The engine then skips its separate staleness
// re-read and verifying read-back for the device (it verifies the
// returned state itself, with the driver's Fields, exactly as after a
// Read), so a host costs one agent run per apply instead of three.
//
// Fingerprint is the plan's (intent.State.Fingerprint of the state it
// read). When the live state's fingerprint differs, nothing is applied
// and the error is a *StaleError. After a transaction, after is the state
// read back ("" error and nil after: the driver could not read back; the
// engine then reads it with Read). Errors of the transaction itself are
// as Apply's.
type CheckedApplier interface {
	ApplyChecked(ctx context.Context, t Target, steps []Change, fingerprint string, opts ApplyOptions) (res Result, after intent.State, err error)
}

// StaleError: the device's live state moved since the plan (its
// fingerprint is Live, the plan saw Planned); nothing was applied.
type StaleError struct {
	Device        string
	Planned, Live string
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s: live state changed since the plan (fingerprint %.12s -> %.12s); nothing was applied: run fabctl plan again", e.Device, e.Planned, e.Live)
}

// UnconfirmedError is what Read returns for a device whose own agent
// reports that it did not take its configuration (the Kubernetes
// driver: the node's agent reported Applied=False for the published
// revision): the device's state is not known. The plan lists the device
// with the error (plan and drift fail on it) and every desired setting
// as a change; apply configures the device again instead of refusing
// the run as it refuses a device that could not be read.
type UnconfirmedError struct{ Err error }

func (e *UnconfirmedError) Error() string { return e.Err.Error() }
func (e *UnconfirmedError) Unwrap() error { return e.Err }

// AgentApplier is implemented by drivers that hand a device's
// configuration to an agent on the device, which applies it, reads it
// back and reports later (the Kubernetes driver: a FabricHostConfig
// revision and its node agent's Applied condition). Apply only hands the
// configuration over; the engine journals that (device_applied), then
// Await waits for the agent's report: nil when the agent applied and
// verified it, a *PartialError when it failed and could not restore the
// device, an *AgentError otherwise. The engine trusts the agent on
// whether a failed device was restored (it cannot read the device
// itself), and runs no rollback of its own for it. Rollback hands the
// previous configuration over and waits for the agent the same way.
type AgentApplier interface {
	Await(ctx context.Context, t Target, r Result) error
	// Delivery describes the driver's hand-over of t's configuration for
	// the journal: before Apply what it will hand over, after each step
	// what it handed over and what the agent reported.
	Delivery(t Target) Delivery
}

// Delivery is a hand-over to a device's agent (AgentApplier): the
// revision of the configuration and the one it replaces, the generation
// that stored it, and the agent's report (the generation it reported on
// and its reason: Applied, Unchanged, ApplyFailed, Timeout, ...).
type Delivery struct {
	Revision           string
	PreviousRevision   string
	Generation         int64
	ObservedGeneration int64
	Reason             string
}

// AgentError is an agent's report that it did not apply a configuration
// (AgentApplier.Await), with its reason. Restored: the agent left the
// device as it was (its transaction was undone, or never began); false:
// the device's state is not known (no report in time).
type AgentError struct {
	Reason   string
	Message  string
	Restored bool
}

func (e *AgentError) Error() string { return e.Message }
