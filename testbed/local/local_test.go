package local_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/local"
)

// TestMain doubles as the serve process: Up re-executes this test binary
// with "testbed serve --dir DIR", as fabctl re-executes itself.
func TestMain(m *testing.M) {
	if len(os.Args) == 5 && os.Args[1] == "testbed" && os.Args[2] == "serve" && os.Args[3] == "--dir" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		if err := local.Serve(ctx, os.Args[4], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// rootWhy is why the testbed tests need root.
const rootWhy = "creates network namespaces, veth pairs and emulator processes"

// A small fabric on its own addresses and namespaces, so the test never
// touches a testbed (make demo) running on the same machine.
const testSpec = `
fabric "tbtest" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 4096
}

credentials "ssh" {
  username    = "admin"
  password    = env("FABCTL_TBTEST_PASSWORD")
  known_hosts = ".fabctl/testbed/known_hosts"
}

credentials "gnmi" {
  username = "admin"
  password = env("FABCTL_TBTEST_PASSWORD")
  ca_file  = ".fabctl/testbed/gnmi-ca.pem"
}

switch "leaf1" {
  platform    = "sonic"
  address     = "127.0.31.11:2222"
  credentials = "ssh"
  role        = "leaf"
}

switch "leaf2" {
  platform    = "eos"
  address     = "127.0.31.12:2222"
  credentials = "ssh"
  role        = "leaf"
}

switch "leaf3" {
  platform    = "nxos"
  address     = "127.0.31.13:2222"
  credentials = "ssh"
  role        = "leaf"
}

switch "spine1" {
  platform    = "srlinux"
  address     = "127.0.31.21:57400"
  credentials = "gnmi"
  role        = "spine"
}

host "h1" {
  connect = "netns:fabtb-h1"
  nic "eth1" {
    device    = "rxe_h1"
    model     = "rxe"
    addresses = ["198.18.0.1/31"]
  }
}

host "h2" {
  connect = "netns:fabtb-h2"
  nic "eth1" {
    device    = "rxe_h2"
    model     = "rxe"
    addresses = ["198.18.0.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf2:Ethernet1", "h2:eth1"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf1:Ethernet124", "spine1:ethernet-1/1"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf2:Ethernet3", "spine1:ethernet-1/2"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf3:Ethernet1/12", "spine1:ethernet-1/3"]
  speed        = "10G"
  cable_length = "1m"
}
`

var testNamespaces = []string{"fabtb-h1", "fabtb-h2", "fabtb-fabric"}

func netnsExists(name string) bool {
	_, err := os.Stat(filepath.Join("/var/run/netns", name))
	return err == nil
}

func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return !(i > 0 && i+2 < len(b) && b[i+2] == 'Z')
}

// TestUpPlanApplyDown: up -> status -> plan shows changes -> apply ->
// re-plan is clean -> down leaves no namespace, no process, no file.
func TestUpPlanApplyDown(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	for _, ns := range testNamespaces {
		if netnsExists(ns) {
			t.Fatalf("namespace %s exists before the test (a previous run crashed?): ip netns del %s", ns, ns)
		}
	}
	specDir := t.TempDir()
	specFile := filepath.Join(specDir, "tb.fab.hcl")
	if err := os.WriteFile(specFile, []byte(testSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FABCTL_TBTEST_PASSWORD", "tb-test-Pa55")
	dir := local.DefaultDir(specDir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	// The SONiC emulator and the SR Linux gNMI target validate against
	// the real YANG models when they are next to the repository
	// (../shared/yang/sonic, ../shared/yang/srlinux).
	// Without them the emulators use their built-in checks.
	yangDir := testutil.SharedIfPresent(t, "yang", "sonic")
	if yangDir != "" {
		yangDir = filepath.Dir(yangDir)
	}
	st, err := local.Up(specDir, dir, local.Options{Exe: exe, Args: []string{"testbed", "serve", "--dir", dir},
		FabricNetns: "fabtb-fabric", Log: &log, YANGDir: yangDir})
	// Cleanup even when Up or an assertion fails half-way.
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, local.RecordFile)); err == nil {
			_ = local.Down(dir, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Healthy() || len(st.Emulators) != 4 || len(st.Links) != 2 {
		t.Fatalf("status after up: %+v", st)
	}
	if len(st.Skipped) != 0 {
		t.Fatalf("skipped: %+v", st.Skipped)
	}
	// The gNMI target's CA, for the credentials' ca_file.
	if _, err := os.Stat(filepath.Join(dir, local.GNMICAFile)); err != nil {
		t.Fatalf("no gNMI CA for the spec's ca_file: %v", err)
	}
	if strings.Contains(log.String(), "tb-test-Pa55") {
		t.Fatal("the password was logged")
	}
	kh, err := os.ReadFile(filepath.Join(dir, local.KnownHostsFile))
	if err != nil || !strings.Contains(string(kh), "[127.0.31.11]:2222 ssh-ed25519 ") || !strings.Contains(string(kh), "[127.0.31.12]:2222 ssh-ed25519 ") ||
		!strings.Contains(string(kh), "[127.0.31.13]:2222 ssh-ed25519 ") {
		t.Fatalf("known_hosts %v:\n%s", err, kh)
	}
	st2, err := local.Stat(dir)
	if err != nil || !st2.Healthy() {
		t.Fatalf("status: %v %+v", err, st2)
	}

	// Plan and apply through the engine with the real drivers, host keys
	// verified against the testbed's known_hosts (not --insecure).
	s := testutil.Load(t, specDir, spec.LoadOptions{})
	f := intent.Compile(s)
	reg := builtin.Registry()
	opts := plan.Options{Credentials: s.CredentialsByName}
	p := plan.Make(context.Background(), s, f, reg, opts)
	var devs []apply.Device
	for _, u := range plan.Units(f) {
		dp := p.Device(u.Device.Addr())
		if dp == nil {
			continue
		}
		if dp.Error != "" {
			t.Fatalf("%s: %s", dp.Address, dp.Error)
		}
		if !dp.HasChanges() {
			t.Errorf("%s: no changes planned on a fresh testbed", dp.Address)
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	if len(devs) != 6 {
		t.Fatalf("planned %d devices, want 6 (leaf1, leaf2, leaf3, spine1, h1, h2)", len(devs))
	}
	// The first apply is hitless: no NOS's jumbo MTU is lowered to the
	// hosts' (the spec sets no switch MTU), so no wave order conflicts.
	var plans []*plan.DevicePlan
	for _, d := range devs {
		plans = append(plans, d.Plan)
		for _, c := range d.Plan.Changes {
			if strings.HasSuffix(c.Path, "/mtu") && c.Action == intent.Update {
				b, _ := strconv.Atoi(c.Before)
				a, _ := intent.FloorValue(c.After)
				if n, _ := strconv.Atoi(a); n < b {
					t.Errorf("%s: %s lowered from %s to %s", d.Plan.Address, c.Path, c.Before, c.After)
				}
			}
		}
	}
	if wp := apply.Waves(plans); wp.Conflict {
		t.Errorf("the first apply of a fresh testbed is not hitless: %s", wp.Reason)
	}
	rec, err := local.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.Emulators {
		if e.Name == "leaf3" && (e.Platform != "nxos" || e.Ports != 12) {
			t.Errorf("leaf3: %+v, want an nxos emulator with 12 ports (Ethernet1/12 is linked)", e)
		}
		if e.Name == "spine1" && (e.Platform != "srlinux" || e.Ports != 4) {
			t.Errorf("spine1: %+v, want an srlinux gNMI target with 4 ports (ethernet-1/1..3 are linked)", e)
		}
	}
	if yangDir != "" {
		r, err := local.ReadRecord(dir)
		if err != nil || r.YANGDir == "" {
			t.Fatalf("record has no yang_dir: %v %+v", err, r)
		}
		sl, _ := os.ReadFile(filepath.Join(dir, local.LogFile))
		if !strings.Contains(string(sl), "validate patches against the YANG models") {
			t.Errorf("serve.log does not say the SONiC emulator validates with YANG:\n%s", sl)
		}
		if !strings.Contains(string(sl), "srlinux gNMI targets validate every Set against the YANG models") {
			t.Errorf("serve.log does not say the SR Linux target validates with YANG:\n%s", sl)
		}
	}
	if h := p.Device("host.h1"); len(h.Unexpressible) == 0 {
		t.Errorf("host.h1: DCB on a veth not listed as unexpressible")
	}
	res, err := apply.Run(context.Background(), devs, reg, apply.Options{})
	if err != nil {
		for _, d := range res.Devices {
			t.Logf("%s: %s %s", d.Address, d.Status, d.Error)
		}
		t.Fatalf("apply: %v", err)
	}
	p2 := plan.Make(context.Background(), s, f, reg, opts)
	for _, dp := range p2.Devices {
		if dp.Error != "" || dp.HasChanges() {
			t.Errorf("re-plan %s not clean: %s %+v", dp.Address, dp.Error, dp.Changes)
		}
	}

	pid := st.PID
	if err := local.Down(dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, ns := range testNamespaces {
		if netnsExists(ns) {
			t.Errorf("namespace %s left behind", ns)
		}
	}
	if procAlive(pid) {
		t.Errorf("serve process %d still running", pid)
	}
	if _, err := os.Stat(filepath.Join(specDir, ".fabctl")); !os.IsNotExist(err) {
		t.Errorf("testbed directory left behind: %v", err)
	}
	if _, err := local.Stat(dir); err == nil {
		t.Error("status after down still finds a testbed")
	}
}

// TestUpRefusesForeignNamespace: a namespace that exists already is not
// taken over (down would delete it), and nothing is left behind.
func TestUpRefusesForeignNamespace(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	specDir := t.TempDir()
	src := strings.ReplaceAll(testSpec, "fabtb-h", "fabtb2-h")
	src = strings.ReplaceAll(src, "127.0.31.", "127.0.32.")
	if err := os.WriteFile(filepath.Join(specDir, "tb.fab.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("/var/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	// A plain file is enough for the existence check.
	foreign := "/var/run/netns/fabtb2-h2"
	if err := os.WriteFile(foreign, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(foreign) })
	t.Setenv("FABCTL_TBTEST_PASSWORD", "x")
	_, err := local.Up(specDir, "", local.Options{FabricNetns: "fabtb2-fabric"})
	if err == nil || !strings.Contains(err.Error(), "fabtb2-h2 exists already") {
		t.Fatalf("up: %v", err)
	}
	if netnsExists("fabtb2-h1") || netnsExists("fabtb2-fabric") {
		t.Fatal("a failed up left namespaces behind")
	}
	if _, err := os.Stat(filepath.Join(specDir, ".fabctl")); !os.IsNotExist(err) {
		t.Fatalf("a failed up left its directory: %v", err)
	}
}
