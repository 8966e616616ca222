// Package switchtest is the test rig the switch drivers share (it runs the
// engine, so it lives outside drivers/ and only tests import it):
// load a spec, point one of its switches at an emulator over real SSH
// (fresh host key in a known_hosts file, password from a secret
// reference), and plan it through the driver. Tests only.
package switchtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// MixedQoS is the test spec whose leaves (one per SSH CLI platform) have
// host-facing and fabric-facing ports of different QoS shapes, as a path
// from a driver package's directory (drivers/switch/<platform>).
const MixedQoS = "../../../internal/switchtest/testdata/mixedqos"

// Password is the emulators' password; PasswordEnv the variable the test
// specs' credentials reference.
const (
	Password    = "testbed-Pa55"
	PasswordEnv = "FABCTL_TESTBED_PASSWORD"
)

// Load loads and compiles the spec at path.
func Load(t testing.TB, path string, vars ...string) (*spec.Spec, *intent.Fabric) {
	t.Helper()
	s, diags := spec.Load(path, spec.LoadOptions{Platforms: testutil.Platforms(), Vars: vars, Env: []string{PasswordEnv + "=" + Password}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return s, intent.Compile(s)
}

// Switch returns the named switch of the given platform.
func Switch(t testing.TB, f *intent.Fabric, name, platform string) *intent.Switch {
	t.Helper()
	for _, sw := range f.Switches {
		if sw.Name == name && sw.Platform == platform {
			return sw
		}
	}
	t.Fatalf("no %s switch %s", platform, name)
	return nil
}

// Emulator is what Connect needs of an emulator.
type Emulator interface {
	Addr() string
	WriteKnownHosts(path string) error
}

// Connect points sw at the emulator and returns the driver target
// (credentials with a known_hosts file holding the emulator's key) and the
// SSH options (short timeouts, the password through Getenv).
func Connect(t testing.TB, emu Emulator, sw *intent.Switch, user string) (drivers.Target, sshtransport.Options) {
	t.Helper()
	sw.Address = emu.Addr()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := emu.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	creds := &spec.Credentials{Name: "test-ssh", Username: user,
		Password: &spec.SecretRef{Kind: "env", Name: PasswordEnv}, KnownHosts: kh}
	opts := sshtransport.Options{ConnectTimeout: 3 * time.Second, CommandTimeout: 3 * time.Second,
		Getenv: func(k string) string {
			if k == PasswordEnv {
				return Password
			}
			return ""
		}}
	return drivers.Target{Device: sw.Device, Intent: sw, Credentials: creds}, opts
}

// Desired is the switch's desired state without what the driver declares
// it cannot express (drivers.Limiter): what a read-back can ever show.
func Desired(drv drivers.Driver, sw *intent.Switch) intent.State {
	st := sw.Flatten()
	if lim, ok := drv.(drivers.Limiter); ok {
		for k := range lim.Unexpressible(drivers.Target{Device: sw.Device, Intent: sw}, st) {
			delete(st, k)
		}
	}
	return st
}

// Plan reads the device and returns its live state, the diff against
// desired and the driver's steps.
func Plan(t testing.TB, drv drivers.Driver, target drivers.Target, desired intent.State) (intent.State, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	live, err := drv.Read(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	diff := intent.Diff(desired, live, drv.Fields())
	target.Live = live
	steps, err := drv.Changes(target, diff, desired)
	if err != nil {
		t.Fatal(err)
	}
	return live, diff, steps
}

// PlanExpressed plans as the planner does (plan.Make): Read, the
// driver's Unexpressible (a drivers.Limiter) on what was read, the diff
// of desired without those paths and without their removals (what
// fabctl does not express it neither sets nor removes:
// plan.DevicePlan.WithoutUnexpressible), the steps rendered for what was
// read (target.Live). It returns the unexpressible paths with their
// reasons, the diff and the steps.
func PlanExpressed(t testing.TB, drv drivers.Driver, target drivers.Target, desired intent.State) (map[string]string, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	live, err := drv.Read(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	target.Live = live
	want := make(intent.State, len(desired))
	for k, v := range desired {
		want[k] = v
	}
	var un map[string]string
	if lim, ok := drv.(drivers.Limiter); ok {
		un = lim.Unexpressible(target, want)
	}
	for k := range un {
		delete(want, k)
	}
	var diff []intent.AttrChange
	for _, c := range intent.Diff(want, live, drv.Fields()) {
		if _, ok := un[c.Path]; !ok || c.Action != intent.Delete {
			diff = append(diff, c)
		}
	}
	steps, err := drv.Changes(target, diff, want)
	if err != nil {
		t.Fatal(err)
	}
	return un, diff, steps
}

// Engine runs the plan/apply engine over one switch with the driver under
// test registered for its platform.
type Engine struct {
	S    *spec.Spec
	F    *intent.Fabric
	SW   *intent.Switch
	Reg  *drivers.Registry
	Opts plan.Options
}

// NewEngine registers drv for the switch's platform and targets the switch.
func NewEngine(t testing.TB, drv drivers.Driver, s *spec.Spec, f *intent.Fabric, sw *intent.Switch, creds *spec.Credentials) *Engine {
	t.Helper()
	reg := drivers.NewRegistry()
	if err := reg.Register(sw.Platform, func() drivers.Driver { return drv }); err != nil {
		t.Fatal(err)
	}
	return &Engine{S: s, F: f, SW: sw, Reg: reg,
		Opts: plan.Options{Targets: []string{sw.Name}, Credentials: func(string) *spec.Credentials { return creds }}}
}

// Plan plans the switch with plan.Make.
func (e *Engine) Plan(t testing.TB) *plan.DevicePlan {
	t.Helper()
	dp := plan.Make(context.Background(), e.S, e.F, e.Reg, e.Opts).Device(e.SW.Name)
	if dp == nil {
		t.Fatalf("plan has no %s", e.SW.Name)
	}
	return dp
}

// Apply applies a device plan with apply.Run.
func (e *Engine) Apply(dp *plan.DevicePlan) (*apply.Result, error) {
	u := plan.Unit{Device: e.SW.Device, Intent: e.SW}
	return apply.Run(context.Background(), []apply.Device{{Plan: dp, Target: plan.Target(u, e.Opts)}}, e.Reg, apply.Options{})
}

// EndToEnd plans the (empty) switch, applies the plan through the engine,
// and checks the device is applied and verified and a re-plan is clean.
func (e *Engine) EndToEnd(t testing.TB) {
	t.Helper()
	dp := e.Plan(t)
	if dp.Error != "" || !dp.HasChanges() {
		t.Fatalf("plan: %+v", dp)
	}
	start := time.Now()
	res, err := e.Apply(dp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apply.Run took %v", time.Since(start))
	if !res.OK() || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %+v", res.Devices[0])
	}
	if d2 := e.Plan(t); d2.Error != "" || d2.HasChanges() {
		t.Fatalf("re-plan: %+v", d2.Changes)
	}
}
