package opensm

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/sshdtest"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/ibsim"
)

// TestSSHFabricReadBack: the fabric read-back of plan, apply and validate
// over a real OpenSSH server (sshdtest: Debian's sshd on a loopback
// port, key login, known_hosts checked). The subnet manager host is this
// machine behind sshd; its fabric is examples/ib-testbed simulated by
// ibsim with the real opensm, and infiniband-diags run on it through the
// wrappers diags_dir names. Plan over SSH sees opensm at its defaults
// (the partitions missing from the files and from the ports), apply
// writes the files, signals opensm and returns once a re-read over SSH
// shows the fabric programmed; a cable taken down is then a plan finding
// named by port, and DiagRunner (validate's runner) reads the same
// fabric clean again once it is back.
func TestSSHFabricReadBack(t *testing.T) {
	sshdtest.Require(t)
	if err := ibsim.Available(); err != nil {
		testutil.SkipOrFail(t, "ibsim testbed unavailable: "+err.Error())
	}
	srv := sshdtest.Start(t, sshdtest.Options{})
	key := sshdtest.NewKey(t)
	srv.Authorize(t, "root", key)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, key.PEM, 0o600); err != nil {
		t.Fatal(err)
	}

	// The simulated fabric first: its directory goes into the spec.
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "ib-testbed", "ib-testbed.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(text string) (*spec.Spec, *intent.Fabric) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "ib.fab.hcl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
		return s, intent.Compile(s)
	}
	s0, _ := load(string(src))
	fab, err := ibspec.FromSpec(s0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	simDir := filepath.Join(dir, "ibsim")
	sim, err := ibsim.Start(ctx, ibsim.Config{Topology: fab.Topology, SMNode: fab.SMNode, Dir: simDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Stop() })
	bin, err := sim.WriteDiagWrappers()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(simDir, "opensm.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(sim.OpenSMPID)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The spec with the subnet manager reached over SSH.
	text := string(src)
	for _, r := range [][2]string{
		{`  sm_connect      = "local"`, `  sm_connect      = "ssh"`},
		{`".fabctl/testbed/ibsim/opensm/opensm.conf"`, strconv.Quote(filepath.Join(simDir, ibsim.OpenSMDir, "opensm.conf"))},
		{`".fabctl/testbed/ibsim/opensm.pid"`, strconv.Quote(pidFile)},
		{`".fabctl/testbed/ibsim/bin"`, strconv.Quote(bin)},
		{`  connect  = "none"`, `  connect     = "none"
  address     = ` + strconv.Quote(srv.Addr) + `
  credentials = "sm"`},
	} {
		if !strings.Contains(text, r[0]) {
			t.Fatalf("examples/ib-testbed lacks %q", r[0])
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	text += `
credentials "sm" {
  username    = "root"
  private_key = file(` + strconv.Quote(keyFile) + `)
  known_hosts = ` + strconv.Quote(srv.KnownHosts) + `
}
`
	s, f := load(text)
	sm := f.SubnetManagers[0]
	if sm.Driver != "ssh" || sm.Address != srv.Addr {
		t.Fatalf("the subnet manager is not reached over SSH: driver %q, address %q", sm.Driver, sm.Address)
	}
	reg := drivers.NewRegistry()
	if err := reg.Register(Name, func() drivers.Driver {
		return &Driver{Opts: Options{SSH: sshOpts(), SweepTimeout: time.Minute}}
	}); err != nil {
		t.Fatal(err)
	}
	planSM := func() *plan.DevicePlan {
		t.Helper()
		p := plan.Make(context.Background(), s, f, reg, plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName})
		if len(p.Devices) != 1 || p.Devices[0].Error != "" {
			t.Fatalf("plan: %+v", p.Devices)
		}
		return p.Devices[0]
	}
	target := plan.Target(plan.Unit{Device: sm.Device, Intent: sm}, plan.Options{Credentials: s.CredentialsByName})

	// 1. opensm at its defaults: every partition member is a change; no
	// cabling finding (the cabling is the spec's).
	dp := planSM()
	if len(dp.Changes) == 0 {
		t.Fatal("plan over SSH: no changes against opensm at its defaults")
	}
	for _, fd := range dp.Findings {
		if fd.Severity == "warning" || fd.Severity == drivers.SeverityError {
			t.Errorf("finding on a clean fabric: %s", fd.Message)
		}
	}

	// 2. Apply over SSH: files, SIGHUP, the wait for the sweep, the
	// engine's read-back (which reads the fabric again) verified.
	t0 := time.Now()
	res, err := apply.Run(context.Background(), []apply.Device{{Plan: dp, Target: target}}, reg, apply.Options{})
	if err != nil || res.Counts.Failed > 0 {
		t.Fatalf("apply: %v %+v", err, res.Devices)
	}
	t.Logf("apply over SSH, with the fabric programmed and read back: %s", time.Since(t0).Round(time.Millisecond))
	if dp := planSM(); len(dp.Changes) != 0 {
		t.Fatalf("re-plan after apply: %v", dp.Changes)
	}

	// 3. validate's runner over SSH reads the fabric clean.
	d := &Driver{Opts: Options{SSH: sshOpts()}}
	r, closeFn, err := d.DiagRunner(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	read := func() []ibfabric.Finding {
		t.Helper()
		got, err := ibfabric.Discover(ctx, r, ibfabric.All)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := ibfabric.Compare(fab.Intent(s, sm), got)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if _, ok := r.(ibfabric.BatchRunner); !ok {
		t.Fatal("the diag runner over SSH does not batch")
	}
	t1 := time.Now()
	if fs := read(); len(fs) != 0 {
		t.Fatalf("findings over SSH on the applied fabric: %v", fs)
	}
	mad := time.Since(t1)
	// The same read with infiniband-diags (a SM host without fabctl): in
	// one batch, and with one SSH session per call (RunBatch hidden).
	t1 = time.Now()
	viaDiags, err := ibfabric.Discover(ctx, r, ibfabric.Options{PortInfo: true, PKeys: true, QoS: true, Diags: true})
	if err != nil {
		t.Fatal(err)
	}
	batched := time.Since(t1)
	if fs, err := ibfabric.Compare(fab.Intent(s, sm), viaDiags); err != nil || len(fs) != 0 {
		t.Fatalf("findings over SSH with infiniband-diags on the applied fabric: %v %v", fs, err)
	}
	t1 = time.Now()
	if _, err := ibfabric.Discover(ctx, struct{ ibfabric.Runner }{r}, ibfabric.Options{PortInfo: true, PKeys: true, QoS: true, Diags: true}); err != nil {
		t.Fatal(err)
	}
	t.Logf("discovery over SSH of %d switches, %d adapters, %d links: %s with fabctl ibmad, %s with infiniband-diags in one batch, %s with one session per smpquery",
		len(fab.Topology.Switches), len(fab.Topology.HCAs), len(fab.Topology.Links), mad.Round(time.Millisecond), batched.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))

	// 4. A cable down: a plan finding named by port, and validate's
	// runner names it too.
	if err := sim.LinkDown(ctx, ibfabric.PortRef{Node: "leaf2", Port: 2}); err != nil {
		t.Fatal(err)
	}
	dp = planSM()
	var msgs []string
	for _, fd := range dp.Findings {
		msgs = append(msgs, fd.Message)
	}
	if all := strings.Join(msgs, "\n"); !strings.Contains(all, "leaf2 port 2: no link to cn04:ib0 (link down, or no cable) [link-down]") {
		t.Errorf("plan findings lack the cable down at leaf2 port 2:\n%s", all)
	}
	mismatched := false
	for _, fd := range dp.Findings {
		mismatched = mismatched || fd.Severity == drivers.SeverityError && fd.Kind == "link-down" && fd.IDs["lid"] != ""
	}
	if !mismatched {
		t.Errorf("the cable down is not an error finding with the switch's LID: %+v", dp.Findings)
	}
	fs := read()
	if len(fs) == 0 || fs[0].Kind != ibfabric.KindUnreachable && fs[0].Kind != ibfabric.KindLinkDown {
		t.Errorf("validate's runner over SSH: %v", fs)
	}
	if err := sim.LinkUp(ctx, ibfabric.PortRef{Node: "leaf2", Port: 2}); err != nil {
		t.Fatal(err)
	}
}

// sshOpts keep the developer's environment out of the SSH options.
func sshOpts() sshtransport.ExecOptions {
	return sshtransport.ExecOptions{Getenv: func(string) string { return "" }}
}
