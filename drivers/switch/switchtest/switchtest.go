// Package switchtest is the test rig the SSH CLI switch drivers share:
// load a spec, point one of its switches at an emulator over real SSH
// (fresh host key in a known_hosts file, password from a secret
// reference), and plan it through the driver. Tests only.
package switchtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/sshcli"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Password is the emulators' password; PasswordEnv the variable the test
// specs' credentials reference.
const (
	Password    = "testbed-Pa55"
	PasswordEnv = "FABCTL_TESTBED_PASSWORD"
)

// Load loads and compiles the spec at path.
func Load(t testing.TB, path string, vars ...string) (*spec.Spec, *intent.Fabric) {
	t.Helper()
	s, diags := spec.Load(path, spec.LoadOptions{Vars: vars, Env: []string{PasswordEnv + "=" + Password}})
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
func Connect(t testing.TB, emu Emulator, sw *intent.Switch, user string) (drivers.Target, sshcli.Options) {
	t.Helper()
	sw.Address = emu.Addr()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := emu.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	creds := &spec.Credentials{Name: "test-ssh", Username: user,
		Password: &spec.SecretRef{Kind: "env", Name: PasswordEnv}, KnownHosts: kh}
	opts := sshcli.Options{ConnectTimeout: 3 * time.Second, CommandTimeout: 3 * time.Second,
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
	steps, err := drv.Changes(target, diff, desired)
	if err != nil {
		t.Fatal(err)
	}
	return live, diff, steps
}
