package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// requireRoot skips without root, except in CI (CI=true), where a skip
// would hide the namespace tests: there it fails.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("needs root for network namespaces; CI runs as root, so this must not skip")
	}
	t.Skip("needs root: creates network namespaces and veth pairs")
}

func run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newNS creates a namespace with veth pairs v<i>a <-> v<i>b, both ends
// inside it, removed at cleanup.
func newNS(t testing.TB, name string, pairs int) {
	t.Helper()
	_ = exec.Command("ip", "netns", "del", name).Run()
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	for i := 0; i < pairs; i++ {
		run(t, "ip", "-n", name, "link", "add", fmt.Sprintf("v%da", i), "type", "veth", "peer", "name", fmt.Sprintf("v%db", i))
	}
}

func loadSpec(t testing.TB, src string) (*spec.Spec, *intent.Fabric) {
	t.Helper()
	s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return s, intent.Compile(s)
}

func registry(t testing.TB) *drivers.Registry {
	reg := drivers.NewRegistry()
	if err := reg.Register("host", New); err != nil {
		t.Fatal(err)
	}
	return reg
}

func applyPlan(t *testing.T, p *plan.Plan, f *intent.Fabric, reg *drivers.Registry) (*apply.Result, error) {
	t.Helper()
	var devs []apply.Device
	for _, h := range f.Hosts {
		dp := p.Device(h.Device.Addr())
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(plan.Unit{Device: h.Device, Intent: h}, plan.Options{})})
	}
	return apply.Run(context.Background(), devs, reg, apply.Options{})
}

const iwarpSpec = `
fabric "t" {
  transport = "iwarp"
  mtu       = 9000
}
host "h1" {
  connect = "netns:fabctl-host-t1"
  nic "v0a" {
    device    = "siw0"
    addresses = ["198.18.0.1/31", "2001:db8::1/64"]
  }
}
`

// TestPlanApplyReplan: empty veth -> plan -> apply (plan.Make + the apply
// engine) -> read back -> re-plan is clean; an address the spec does not
// list is removed, the peer veth (not in the spec) is untouched.
func TestPlanApplyReplan(t *testing.T) {
	requireRoot(t)
	newNS(t, "fabctl-host-t1", 1)
	run(t, "ip", "-n", "fabctl-host-t1", "addr", "add", "198.18.9.9/24", "dev", "v0a")
	run(t, "ip", "-n", "fabctl-host-t1", "addr", "add", "198.18.7.1/24", "dev", "v0b")
	s, f := loadSpec(t, iwarpSpec)
	reg := registry(t)

	p := plan.Make(context.Background(), s, f, reg, plan.Options{})
	dp := p.Device("host.h1")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	got := map[string]intent.AttrChange{}
	for _, c := range dp.Changes {
		got[c.Path] = c
	}
	if c := got["nic/v0a/mtu"]; c.Before != "1500" || c.After != "9000" || c.Disruptive == "" {
		t.Fatalf("mtu change %+v", c)
	}
	if c := got["nic/v0a/addresses"]; c.Before != "198.18.9.9/24" || c.After != "198.18.0.1/31,2001:db8::1/64" {
		t.Fatalf("addresses change %+v", c)
	}
	var payload []string
	for _, st := range dp.Steps {
		payload = append(payload, st.Payload...)
	}
	want := []string{
		"ip link set dev v0a mtu 9000 (netns fabctl-host-t1)",
		"ip link set dev v0a up (netns fabctl-host-t1)",
		"ip addr del 198.18.9.9/24 dev v0a (netns fabctl-host-t1)",
		"ip addr add 198.18.0.1/31 dev v0a (netns fabctl-host-t1)",
		"ip addr add 2001:db8::1/64 dev v0a (netns fabctl-host-t1)",
	}
	if strings.Join(payload, "\n") != strings.Join(want, "\n") {
		t.Fatalf("payload\n%s\nwant\n%s", strings.Join(payload, "\n"), strings.Join(want, "\n"))
	}

	res, err := applyPlan(t, p, f, reg)
	if err != nil {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	if res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("status %+v", res.Devices[0])
	}
	// Read back through ip, not through fabctl.
	out := run(t, "ip", "-n", "fabctl-host-t1", "-o", "addr", "show", "dev", "v0a")
	if !strings.Contains(out, "198.18.0.1/31") || !strings.Contains(out, "2001:db8::1/64") || strings.Contains(out, "198.18.9.9") {
		t.Fatalf("ip addr after apply:\n%s", out)
	}
	if out := run(t, "ip", "-n", "fabctl-host-t1", "link", "show", "v0a"); !strings.Contains(out, "mtu 9000") {
		t.Fatalf("ip link after apply:\n%s", out)
	}
	if out := run(t, "ip", "-n", "fabctl-host-t1", "-o", "addr", "show", "dev", "v0b"); !strings.Contains(out, "198.18.7.1/24") {
		t.Fatalf("the peer veth (not in the spec) was touched:\n%s", out)
	}

	p2 := plan.Make(context.Background(), s, f, reg, plan.Options{})
	if d := p2.Device("host.h1"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
}

const roceSpec = `
fabric "t" {
  transport = "rocev2"
  mtu       = 4200
}
host "h1" {
  connect = "netns:fabctl-host-t2"
  nic "v0a" {
    device    = "rxe0"
    model     = "rxe"
    addresses = ["198.18.0.3/31"]
  }
}
`

// TestRoCEOnVethDCBUnsupported: DCB paths read absent on a veth, the plan
// says why they cannot apply, and apply refuses the host before touching
// anything (the MTU stays).
func TestRoCEOnVethDCBUnsupported(t *testing.T) {
	requireRoot(t)
	newNS(t, "fabctl-host-t2", 1)
	s, f := loadSpec(t, roceSpec)
	reg := registry(t)
	p := plan.Make(context.Background(), s, f, reg, plan.Options{})
	dp := p.Device("host.h1")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	var pfcStep *drivers.Change
	for i, st := range dp.Steps {
		if strings.HasPrefix(st.Summary, "v0a: PFC") {
			pfcStep = &dp.Steps[i]
		}
	}
	if pfcStep == nil || !strings.Contains(pfcStep.Summary, "cannot apply: v0a: DCB not supported by the driver (EOPNOTSUPP)") {
		t.Fatalf("PFC step %+v", pfcStep)
	}
	res, err := applyPlan(t, p, f, reg)
	if err == nil {
		t.Fatal("apply succeeded on a veth with DCB paths")
	}
	dr := res.Devices[0]
	if dr.Status != apply.StatusFailed || !dr.Restored || !strings.Contains(dr.Error, "v0a: DCB not supported by the driver (EOPNOTSUPP)") {
		t.Fatalf("result %+v", dr)
	}
	if out := run(t, "ip", "-n", "fabctl-host-t2", "link", "show", "v0a"); !strings.Contains(out, "mtu 1500") {
		t.Fatalf("MTU changed although the transaction was refused:\n%s", out)
	}
}

func TestSSHNotBuilt(t *testing.T) {
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h"}, Connect: spec.Connect{Kind: "ssh"}}
	_, err := New().Read(context.Background(), drivers.Target{Device: h.Device, Intent: h})
	if !errors.Is(err, ErrSSHNotBuilt) {
		t.Fatal(err)
	}
	_, err = New().Apply(context.Background(), drivers.Target{Device: h.Device, Intent: h}, nil, drivers.ApplyOptions{})
	if !errors.Is(err, ErrSSHNotBuilt) {
		t.Fatal(err)
	}
}

func TestMissingNamespace(t *testing.T) {
	requireRoot(t)
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h"}, Connect: spec.Connect{Kind: "netns", Netns: "fabctl-no-such-ns"}}
	_, err := New().Read(context.Background(), drivers.Target{Device: h.Device, Intent: h})
	if err == nil || !strings.Contains(err.Error(), `network namespace "fabctl-no-such-ns"`) {
		t.Fatal(err)
	}
}

// TestRollback: Apply, then Rollback with its token, restores MTU, admin
// state and the addresses as they were.
func TestRollback(t *testing.T) {
	requireRoot(t)
	src := strings.ReplaceAll(iwarpSpec, "fabctl-host-t1", "fabctl-host-t3")
	newNS(t, "fabctl-host-t3", 1)
	run(t, "ip", "-n", "fabctl-host-t3", "addr", "add", "198.18.9.9/24", "dev", "v0a")
	s, f := loadSpec(t, src)
	reg := registry(t)
	p := plan.Make(context.Background(), s, f, reg, plan.Options{})
	h := f.Hosts[0]
	tg := plan.Target(plan.Unit{Device: h.Device, Intent: h}, plan.Options{})
	d := New()
	res, err := d.Apply(context.Background(), tg, p.Device("host.h1").Steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Rollback(context.Background(), tg, res); err != nil {
		t.Fatal(err)
	}
	live, err := d.Read(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if live["nic/v0a/mtu"] != "1500" || live["nic/v0a/addresses"] != "198.18.9.9/24" {
		t.Fatalf("after rollback: %v", live)
	}
	if out := run(t, "ip", "-n", "fabctl-host-t3", "link", "show", "v0a"); strings.Contains(out, ",UP") {
		t.Fatalf("link left up after rollback:\n%s", out)
	}
}
