package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// rootWhy is why the host driver's kernel tests need root.
const rootWhy = "creates network namespaces and veth pairs"

// newNS creates a namespace with veth pairs v<i>a <-> v<i>b, both ends
// inside it, removed at cleanup.
func newNS(t testing.TB, name string, pairs int) {
	t.Helper()
	testutil.Netns(t, name)
	for i := 0; i < pairs; i++ {
		testutil.Run(t, "ip", "-n", name, "link", "add", fmt.Sprintf("v%da", i), "type", "veth", "peer", "name", fmt.Sprintf("v%db", i))
	}
}

func loadSpec(t testing.TB, src string) (*spec.Spec, *intent.Fabric) {
	t.Helper()
	s := testutil.LoadSrc(t, src)
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
	testutil.RequireRoot(t, rootWhy)
	newNS(t, "fabctl-host-t1", 1)
	testutil.Run(t, "ip", "-n", "fabctl-host-t1", "addr", "add", "198.18.9.9/24", "dev", "v0a")
	testutil.Run(t, "ip", "-n", "fabctl-host-t1", "addr", "add", "198.18.7.1/24", "dev", "v0b")
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
	out := testutil.Run(t, "ip", "-n", "fabctl-host-t1", "-o", "addr", "show", "dev", "v0a")
	if !strings.Contains(out, "198.18.0.1/31") || !strings.Contains(out, "2001:db8::1/64") || strings.Contains(out, "198.18.9.9") {
		t.Fatalf("ip addr after apply:\n%s", out)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-host-t1", "link", "show", "v0a"); !strings.Contains(out, "mtu 9000") {
		t.Fatalf("ip link after apply:\n%s", out)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-host-t1", "-o", "addr", "show", "dev", "v0b"); !strings.Contains(out, "198.18.7.1/24") {
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

// TestRoCEOnVethDCBUnsupported: a veth has no DCB, no DCQCN sysfs, no
// rdma_cm configfs, no IRQs and no global pause: the plan lists those
// settings as not expressible with the precise reason (drivers.Limiter)
// instead of planning changes that fail, the rest (MTU, addresses)
// applies, and the re-plan is clean. A change list that still holds a DCB
// path (an old saved plan) is refused before anything is touched.
func TestRoCEOnVethDCBUnsupported(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	newNS(t, "fabctl-host-t2", 1)
	s, f := loadSpec(t, roceSpec)
	reg := registry(t)
	p := plan.Make(context.Background(), s, f, reg, plan.Options{})
	dp := p.Device("host.h1")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	reasons := map[string]string{}
	for _, u := range dp.Unexpressible {
		reasons[u.Path] = u.Reason
	}
	wantReasons := map[string]string{
		"nic/v0a/pfc":        "v0a: no DCB support in the kernel driver (EOPNOTSUPP)",
		"nic/v0a/trust":      "v0a: no DCB support in the kernel driver (EOPNOTSUPP)",
		"nic/v0a/dscp/26":    "v0a: no DCB support in the kernel driver (EOPNOTSUPP)",
		"nic/v0a/tc/3/sched": "v0a: no DCB support in the kernel driver (EOPNOTSUPP)",
		"nic/v0a/ecn":        "v0a: no DCQCN sysfs (ecn/roce_np, ecn/roce_rp: MLNX_OFED driver only)",
		"nic/v0a/tos":        `v0a: no RDMA device "rxe0" on this host (/sys/class/infiniband/rxe0)`,
		"nic/v0a/irq_cpus":   "v0a: no device IRQs (virtual device)",
	}
	for k, want := range wantReasons {
		if reasons[k] != want {
			t.Errorf("unexpressible %s: %q, want %q", k, reasons[k], want)
		}
	}
	for _, c := range dp.Changes {
		if f := feature(c.Path); f != "mtu" && f != "addresses" {
			t.Errorf("planned change %s: Read found it impossible, it must not be planned", c.Path)
		}
	}
	for _, st := range dp.Steps {
		if strings.Contains(st.Summary, "cannot apply") {
			t.Errorf("step that cannot apply: %s", st.Summary)
		}
	}
	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-host-t2", "link", "show", "v0a"); !strings.Contains(out, "mtu 4200") {
		t.Fatalf("MTU not applied:\n%s", out)
	}
	p2 := plan.Make(context.Background(), s, f, reg, plan.Options{})
	if d := p2.Device("host.h1"); d.Error != "" || d.HasChanges() || len(d.Unexpressible) != len(dp.Unexpressible) {
		t.Fatalf("re-plan not clean: %v %+v (unexpressible %d, was %d)", d.Error, d.Changes, len(d.Unexpressible), len(dp.Unexpressible))
	}

	// A DCB step handed to Apply anyway is refused up front.
	testutil.Run(t, "ip", "-n", "fabctl-host-t2", "link", "set", "v0a", "mtu", "1500")
	h := f.Hosts[0]
	tg := plan.Target(plan.Unit{Device: h.Device, Intent: h}, plan.Options{})
	d := New()
	_, err = d.Apply(context.Background(), tg, []drivers.Change{
		{Paths: []string{"nic/v0a/mtu"}}, {Paths: []string{"nic/v0a/pfc"}}}, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "v0a: DCB not supported by the driver (EOPNOTSUPP)") {
		t.Fatalf("apply of a DCB step on a veth: %v", err)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-host-t2", "link", "show", "v0a"); !strings.Contains(out, "mtu 1500") {
		t.Fatalf("MTU changed although the transaction was refused:\n%s", out)
	}
}

// TestUnexpressibleFromRead: the Limiter answers from what Read learned;
// a NIC with DCB (nothing unsupported) reports nothing, a missing NIC
// stays planned (applying it fails, naming the device).
func TestUnexpressibleFromRead(t *testing.T) {
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h1"}}
	tg := drivers.Target{Device: h.Device, Intent: h}
	desired := intent.State{"irqbalance": "keep", "nic/a/mtu": "9000", "nic/a/pfc": "3", "nic/a/trust": "dscp",
		"nic/a/tc/3/sched": "ets", "nic/a/ecn": "3", "nic/b/pfc": "3", "nic/c/pfc": "3"}
	d := New().(*Driver)
	if got := d.Unexpressible(tg, desired); len(got) != 0 {
		t.Fatalf("before Read / with DCB: %v", got)
	}
	d.unsupported["h1"] = map[string]string{
		"nic/a/dcb": "a: no DCB support in the kernel driver (EOPNOTSUPP)",
		"nic/a/ecn": "a: no DCQCN sysfs",
		"nic/c/":    "c: no such network device on local",
	}
	got := d.Unexpressible(tg, desired)
	want := map[string]string{
		"nic/a/pfc": "a: no DCB support in the kernel driver (EOPNOTSUPP)", "nic/a/trust": "a: no DCB support in the kernel driver (EOPNOTSUPP)",
		"nic/a/tc/3/sched": "a: no DCB support in the kernel driver (EOPNOTSUPP)", "nic/a/ecn": "a: no DCQCN sysfs",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// TestSSHNeedsCredentials: an SSH host without credentials fails before
// any connection, naming the host and the step (ssh_test.go has the real
// OpenSSH tests).
func TestSSHNeedsCredentials(t *testing.T) {
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h", Address: "192.0.2.1"}, Connect: spec.Connect{Kind: "ssh"}}
	_, err := New().Read(context.Background(), drivers.Target{Device: h.Device, Intent: h})
	if err == nil || !strings.Contains(err.Error(), "h: connect: bad connection settings: no credentials") {
		t.Fatal(err)
	}
	_, err = New().Apply(context.Background(), drivers.Target{Device: h.Device, Intent: h}, nil, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "h: connect:") {
		t.Fatal(err)
	}
}

func TestMissingNamespace(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h"}, Connect: spec.Connect{Kind: "netns", Netns: "fabctl-no-such-ns"}}
	_, err := New().Read(context.Background(), drivers.Target{Device: h.Device, Intent: h})
	if err == nil || !strings.Contains(err.Error(), `network namespace "fabctl-no-such-ns"`) {
		t.Fatal(err)
	}
}

// TestRollback: Apply, then Rollback with its token, restores MTU, admin
// state and the addresses as they were.
func TestRollback(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	src := strings.ReplaceAll(iwarpSpec, "fabctl-host-t1", "fabctl-host-t3")
	newNS(t, "fabctl-host-t3", 1)
	testutil.Run(t, "ip", "-n", "fabctl-host-t3", "addr", "add", "198.18.9.9/24", "dev", "v0a")
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
	if out := testutil.Run(t, "ip", "-n", "fabctl-host-t3", "link", "show", "v0a"); strings.Contains(out, ",UP") {
		t.Fatalf("link left up after rollback:\n%s", out)
	}
}
