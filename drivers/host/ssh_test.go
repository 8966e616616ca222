package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/sshdtest"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// The SSH transport against a real OpenSSH server (sshdtest: Debian's
// /usr/sbin/sshd on a loopback port, generated host key). The hosts are
// network namespaces on this machine, reached as connect =
// "ssh+netns:NAME": the agent runs on the far side of SSH with the netns
// transport. Root logs in directly, except in TestSSHSudo, where a test
// user runs the agent through a NOPASSWD sudo rule.

type sshFixture struct {
	srv      *sshdtest.Server
	bin      string // the fabctl the controller ships
	keyFile  string // root's private key
	save     string // SaveDir on the "host"
	remote   string // RemoteDir on the "host"
	mu       sync.Mutex
	copies   []string
	insecure bool
	pool     *connPool // the connections of one controller process
}

func newSSHFixture(t testing.TB) *sshFixture {
	t.Helper()
	sshdtest.Require(t)
	fx := &sshFixture{srv: sshdtest.Start(t, sshdtest.Options{}), bin: sshdtest.Fabctl(t)}
	key := sshdtest.NewKey(t)
	fx.srv.Authorize(t, "root", key)
	dir := t.TempDir()
	fx.keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(fx.keyFile, key.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	fx.save, fx.remote = filepath.Join(dir, "saved"), filepath.Join(dir, "agent")
	fx.pool = newConnPool()
	t.Cleanup(func() { closePool(fx.pool) })
	return fx
}

// closePool closes the idle connections a test's controller kept.
func closePool(p *connPool) { p.CloseIdle() }

func (fx *sshFixture) driver() *Driver {
	d := New().(*Driver)
	d.SSH = SSHOptions{Binary: fx.bin, RemoteDir: fx.remote, SaveDir: fx.save,
		Getenv: func(k string) string {
			if k == "FABCTL_T_PW" {
				return os.Getenv("FABCTL_T_PW")
			}
			return "" // FABCTL_AGENT_* of the developer's shell stay out
		},
		pool: fx.pool}
	return d
}

func (fx *sshFixture) registry(t testing.TB, mod func(*Driver)) *drivers.Registry {
	reg := drivers.NewRegistry()
	if err := reg.Register("host", func() drivers.Driver {
		d := fx.driver()
		if mod != nil {
			mod(d)
		}
		return d
	}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// ctx is a context whose driver events (drivers.Eventf) the fixture
// records: the agent copies among them.
func (fx *sshFixture) ctx() context.Context {
	return drivers.WithEvents(context.Background(), func(msg string) {
		if strings.Contains(msg, "; copying ") {
			fx.mu.Lock()
			fx.copies = append(fx.copies, msg)
			fx.mu.Unlock()
		}
	})
}

func (fx *sshFixture) copied() int {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return len(fx.copies)
}

// spec returns a spec with one RoCEv2 host per namespace, reached over
// the fixture's sshd; extra is added to the credentials block.
func (fx *sshFixture) spec(t testing.TB, user, extra string, hosts map[string]string) (*spec.Spec, *intent.Fabric) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `
fabric "t" {
  transport = "rocev2"
  mtu       = 4200
}
credentials "ssh" {
  username    = %q
  known_hosts = %q
  %s
}
`, user, fx.srv.KnownHosts, extra)
	for name, ns := range hosts {
		fmt.Fprintf(&b, `
host %q {
  address     = %q
  connect     = "ssh+netns:%s"
  credentials = "ssh"
  sudo        = %v
  nic "v0a" {
    device    = "rxe0"
    model     = "rxe"
    addresses = ["198.18.0.3/31"]
    numa_node = 0 # a veth has no NUMA information: a read-only finding says so
  }
}
`, name, fx.srv.Addr, ns, user != "root")
	}
	return loadSpec(t, b.String())
}

func (fx *sshFixture) target(s *spec.Spec, f *intent.Fabric, i int) drivers.Target {
	creds := func(n string) *spec.Credentials { return s.CredentialsByName(n) }
	h := f.Hosts[i]
	return plan.Target(plan.Unit{Device: h.Device, Intent: h}, plan.Options{Credentials: creds, Insecure: fx.insecure})
}

func (fx *sshFixture) planOpts(s *spec.Spec) plan.Options {
	return plan.Options{Credentials: func(n string) *spec.Credentials { return s.CredentialsByName(n) }, Insecure: fx.insecure}
}

// specDir writes a spec to a new directory: one host per namespace
// (h1, h2, ...) behind the fixture's sshd, logging in as root with the
// key, each with NIC v0a on RDMA device dev at 198.18.1.<2i>/31; extra
// is added.
func (fx *sshFixture) specDir(t testing.TB, transport, dev, extra string, namespaces ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `
fabric "t" {
  transport = %q
  mtu       = 9000
}
credentials "ssh" {
  username    = "root"
  known_hosts = %q
  private_key = file(%q)
}
%s`, transport, fx.srv.KnownHosts, fx.keyFile, extra)
	for i, ns := range namespaces {
		fmt.Fprintf(&b, `
host "h%d" {
  address     = %q
  connect     = "ssh+netns:%s"
  credentials = "ssh"
  nic "v0a" {
    device    = %q
    addresses = ["198.18.1.%d/31"]
  }
}
`, i+1, fx.srv.Addr, ns, dev, 2*i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.fab.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (fx *sshFixture) keyCreds() string { return fmt.Sprintf("private_key = file(%q)", fx.keyFile) }

// TestSSHPlanApplyReadBack: plan, apply (the engine, with its journal),
// read back and re-plan a namespace host over SSH; the agent is copied
// once and then found in place; the unexpressible DCB settings of the
// veth come back over the wire with their reasons; the desired state is
// saved and `fabctl agent --reapply` restores it after an out-of-band
// change; a transaction rolls back over SSH.
func TestSSHPlanApplyReadBack(t *testing.T) {
	fx := newSSHFixture(t)
	newNS(t, "fabctl-ssh-t1", 1)
	testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "addr", "add", "198.18.9.9/24", "dev", "v0a")
	s, f := fx.spec(t, "root", fx.keyCreds(), map[string]string{"h1": "fabctl-ssh-t1"})
	reg := fx.registry(t, nil)
	ctx := fx.ctx()

	p := plan.Make(ctx, s, f, reg, fx.planOpts(s))
	dp := p.Device("host.h1")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	if fx.copied() != 1 {
		t.Fatalf("agent copies after the first plan: %v", fx.copies)
	}
	reasons := map[string]string{}
	for _, u := range dp.Unexpressible {
		reasons[u.Path] = u.Reason
	}
	if r := reasons["nic/v0a/pfc"]; r != "v0a: no DCB support in the kernel driver (EOPNOTSUPP)" {
		t.Fatalf("unexpressible pfc over SSH: %q (all: %v)", r, reasons)
	}
	// The agent's read-only findings reach the controller's plan.
	if len(dp.Findings) != 1 || !strings.Contains(dp.Findings[0].Message, "v0a: numa_node = 0 is declared, but the device has no NUMA information") {
		t.Fatalf("findings over SSH: %+v", dp.Findings)
	}
	var payload []string
	for _, st := range dp.Steps {
		payload = append(payload, st.Payload...)
	}
	if want := "ip link set dev v0a mtu 4200 (netns fabctl-ssh-t1)"; len(payload) == 0 || payload[0] != want {
		t.Fatalf("payload %q, want first %q", payload, want)
	}

	journal := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := apply.CreateJournal(journal, "run1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	devs := []apply.Device{{Plan: dp, Target: fx.target(s, f, 0)}}
	res, err := apply.Run(ctx, devs, reg, apply.Options{Parallelism: 4, Journal: j, CheckStale: true})
	j.Close()
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "-o", "addr", "show", "dev", "v0a"); !strings.Contains(out, "198.18.0.3/31") || strings.Contains(out, "198.18.9.9") {
		t.Fatalf("ip addr after apply:\n%s", out)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "link", "show", "v0a"); !strings.Contains(out, "mtu 4200") {
		t.Fatalf("ip link after apply:\n%s", out)
	}
	if b, _ := os.ReadFile(journal); !strings.Contains(string(b), `"host.h1"`) || !strings.Contains(string(b), "applied") {
		t.Fatalf("journal:\n%s", b)
	}
	p2 := plan.Make(ctx, s, f, reg, fx.planOpts(s))
	if d := p2.Device("host.h1"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
	if fx.copied() != 1 {
		t.Fatalf("the agent was copied again although the versions match: %v", fx.copies)
	}

	// Saved for boot: the desired state and a stable link to the agent.
	if _, err := os.Stat(filepath.Join(fx.save, agentproto.SavedName("h1"))); err != nil {
		t.Fatal(err)
	}
	testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "link", "set", "v0a", "mtu", "1500")
	out, err := exec.Command(filepath.Join(fx.save, "fabctl"), "agent", "--reapply", fx.save).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "h1: applied 1 change, verified by read-back") {
		t.Fatalf("agent --reapply: %v\n%s", err, out)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "link", "show", "v0a"); !strings.Contains(out, "mtu 4200") {
		t.Fatalf("MTU not re-applied:\n%s", out)
	}
	// --watch on the same saved state: a veth has no DCB to watch, and
	// the kernel's answer comes back naming host and NIC.
	out, err = exec.Command(filepath.Join(fx.save, "fabctl"), "agent", "--watch", fx.save).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "h1: watch: watch v0a:") {
		t.Fatalf("agent --watch on a veth: %v\n%s", err, out)
	}

	// Apply + rollback over SSH restore the prior MTU.
	testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "link", "set", "v0a", "mtu", "1500")
	drv := fx.driver()
	tg := fx.target(s, f, 0)
	if _, err := drv.Read(ctx, tg); err != nil {
		t.Fatal(err)
	}
	r, err := drv.Apply(ctx, tg, []drivers.Change{{Paths: []string{"nic/v0a/mtu"}}}, drivers.ApplyOptions{})
	if err != nil || r.Token == "" {
		t.Fatalf("apply: %v %+v", err, r)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "link", "show", "v0a"); !strings.Contains(out, "mtu 4200") {
		t.Fatalf("MTU not applied:\n%s", out)
	}
	if err := drv.Rollback(ctx, tg, r); err != nil {
		t.Fatal(err)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-ssh-t1", "link", "show", "v0a"); !strings.Contains(out, "mtu 1500") {
		t.Fatalf("MTU not rolled back:\n%s", out)
	}
	// A step the host cannot do is refused by the agent, naming host and step.
	_, err = drv.Apply(ctx, tg, []drivers.Change{{Paths: []string{"nic/v0a/pfc"}}}, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "h1: agent apply: agent failed: apply: h1: nothing applied: v0a: DCB not supported") {
		t.Fatalf("DCB step on a veth over SSH: %v", err)
	}
}

// TestSSHAgentVersions: the agent is copied when missing or another
// build, skipped when the build matches; the copy is atomic (no temp
// file left) and executable. Each read is a new controller process (a
// fresh connection pool), except where the pooled connection is tested.
func TestSSHAgentVersions(t *testing.T) {
	fx := newSSHFixture(t)
	newNS(t, "fabctl-ssh-t2", 1)
	s, f := fx.spec(t, "root", fx.keyCreds(), map[string]string{"h1": "fabctl-ssh-t2"})
	ctx := fx.ctx()
	read := func() {
		t.Helper()
		closePool(fx.pool)
		fx.pool = newConnPool()
		if _, err := fx.driver().Read(ctx, fx.target(s, f, 0)); err != nil {
			t.Fatal(err)
		}
	}
	read()
	read()
	if fx.copied() != 1 {
		t.Fatalf("copies: %v", fx.copies)
	}
	ents, err := os.ReadDir(fx.remote)
	if err != nil || len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "fabctl-") {
		t.Fatalf("remote dir: %v %v", ents, err)
	}
	remote := filepath.Join(fx.remote, ents[0].Name())
	if fi, _ := os.Stat(remote); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", fi.Mode())
	}
	// Another build answers the version check: copied again.
	fake := `#!/bin/sh
echo '{"agent":"fabctl","protocol":1,"build":"0000000000000000","os":"linux","arch":"amd64"}'
`
	if err := os.WriteFile(remote, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	read()
	if fx.copied() != 2 || !strings.Contains(fx.copies[1], "build 0000000000000000") {
		t.Fatalf("copies: %v", fx.copies)
	}
	// Missing: copied again.
	if err := os.Remove(remote); err != nil {
		t.Fatal(err)
	}
	read()
	if fx.copied() != 3 || !strings.Contains(fx.copies[2], "not installed") {
		t.Fatalf("copies: %v", fx.copies)
	}
	// Not a fabctl at all.
	if err := os.WriteFile(remote, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	read()
	if fx.copied() != 4 || !strings.Contains(fx.copies[3], "not a fabctl handshake") {
		t.Fatalf("copies: %v", fx.copies)
	}
	if ents, _ := os.ReadDir(fx.remote); len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}

	// One process: the pooled connection skips the version check; an
	// agent removed in between is noticed (nothing ran), copied again and
	// the read retried.
	if _, err := fx.driver().Read(ctx, fx.target(s, f, 0)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(remote); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.driver().Read(ctx, fx.target(s, f, 0)); err != nil {
		t.Fatal(err)
	}
	if fx.copied() != 5 {
		t.Fatalf("copies: %v", fx.copies)
	}
}

// TestSSHSudo: a test user (not root) runs the agent through a NOPASSWD
// sudo rule for its agent directory only, the one docs/agent.md shows;
// an agent path outside the rule gets sudo's password demand, reported
// clearly; without sudo the agent cannot enter the namespace and says so.
// Password authentication is used here (key auth in the other tests).
func TestSSHSudo(t *testing.T) {
	fx := newSSHFixture(t)
	newNS(t, "fabctl-ssh-t3", 1)
	const user = "fabctl-sudo-t"
	u := sshdtest.AddUser(t, user, user+" ALL=(root) NOPASSWD: %h/.cache/fabctl/fabctl-*")
	t.Setenv("FABCTL_T_PW", u.Password)
	s, f := fx.spec(t, user, `password = env("FABCTL_T_PW")`, map[string]string{"h1": "fabctl-ssh-t3"})
	ctx := fx.ctx()
	tg := fx.target(s, f, 0)

	d := fx.driver()
	d.SSH.RemoteDir = "" // the default, ~/.cache/fabctl of the login
	st, err := d.Read(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	if st["nic/v0a/mtu"] != "1500" {
		t.Fatalf("state %v", st)
	}
	matches, _ := filepath.Glob(filepath.Join(u.Home, ".cache/fabctl/fabctl-*"))
	if len(matches) != 1 {
		t.Fatalf("agent in the user's home: %v", matches)
	}

	d = fx.driver()
	d.SSH.RemoteDir = "~/elsewhere"
	_, err = d.Read(ctx, tg)
	if err == nil || !strings.Contains(err.Error(), "h1: agent read: sudo refused: sudo needs a password for "+user) {
		t.Fatalf("sudo without a rule: %v", err)
	}
	if strings.Contains(err.Error(), u.Password) {
		t.Fatal("the password is in the error")
	}

	h := *f.Hosts[0]
	h.Sudo = false
	tg.Intent = &h
	d = fx.driver()
	d.SSH.RemoteDir = ""
	_, err = d.Read(ctx, tg)
	if err == nil || !strings.Contains(err.Error(), "h1: agent read: agent failed: read:") || !strings.Contains(err.Error(), "fabctl-ssh-t3") {
		t.Fatalf("agent without root: %v", err)
	}
}

// TestSSHConnectErrors: host-key mismatch and unknown host are refused,
// auth failures name the host and never the secret, and --insecure
// skips the host key check only when asked.
func TestSSHConnectErrors(t *testing.T) {
	fx := newSSHFixture(t)
	newNS(t, "fabctl-ssh-t4", 1)
	ctx := fx.ctx()
	hosts := map[string]string{"h1": "fabctl-ssh-t4"}

	s, f := fx.spec(t, "root", fx.keyCreds(), hosts)
	fx.srv.WriteKnownHosts(t, fx.srv.KnownHosts, sshdtest.NewKey(t).Signer.PublicKey())
	_, err := fx.driver().Read(ctx, fx.target(s, f, 0))
	if err == nil || !strings.Contains(err.Error(), "h1: connect: host key verification failed: the host key of "+fx.srv.Addr+" does not match its entry in") {
		t.Fatalf("mismatch: %v", err)
	}
	if fx.copied() != 0 {
		t.Fatal("copied to a host whose key does not match")
	}
	fx.insecure = true
	if _, err := fx.driver().Read(ctx, fx.target(s, f, 0)); err != nil {
		t.Fatalf("--insecure: %v", err)
	}
	fx.insecure = false

	if err := os.WriteFile(fx.srv.KnownHosts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = fx.driver().Read(ctx, fx.target(s, f, 0))
	if err == nil || !strings.Contains(err.Error(), "h1: connect: host key verification failed: "+fx.srv.Addr+" is not in") {
		t.Fatalf("unknown host: %v", err)
	}
	fx.srv.WriteKnownHosts(t, fx.srv.KnownHosts, fx.srv.HostKey.Signer.PublicKey())

	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, sshdtest.NewKey(t).PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s, f = fx.spec(t, "root", fmt.Sprintf("private_key = file(%q)", other), hosts)
	_, err = fx.driver().Read(ctx, fx.target(s, f, 0))
	if err == nil || !strings.Contains(err.Error(), `h1: connect: authentication failed: `+fx.srv.Addr+` rejected user "root" (tried private_key)`) {
		t.Fatalf("wrong key: %v", err)
	}

	t.Setenv("FABCTL_T_PW", "not-the-password-s3cr3t")
	s, f = fx.spec(t, "root", `password = env("FABCTL_T_PW")`, hosts)
	_, err = fx.driver().Read(ctx, fx.target(s, f, 0))
	if err == nil || !strings.Contains(err.Error(), `h1: connect: authentication failed: `+fx.srv.Addr+` rejected user "root" (tried password)`) ||
		strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("wrong password: %v", err)
	}
}

// TestSSHFabctlApply: the fabctl binary as the controller: apply two
// namespace hosts over SSH, then plan again with --detailed-exitcode (0:
// nothing to change).
func TestSSHFabctlApply(t *testing.T) {
	fx := newSSHFixture(t)
	newNS(t, "fabctl-ssh-t5", 1)
	newNS(t, "fabctl-ssh-t6", 1)
	dir := fx.specDir(t, "iwarp", "siw0", "", "fabctl-ssh-t5", "fabctl-ssh-t6")
	env := append(os.Environ(), "FABCTL_AGENT_DIR="+fx.remote, "FABCTL_AGENT_SAVE_DIR="+fx.save, "NO_COLOR=1")
	cmd := exec.Command(fx.bin, "apply", "--auto-approve", "--json", "--parallelism", "2", dir)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fabctl apply: %v\n%s\n%s", err, out, stderr.String())
	}
	// The agent copy is told as it happens, on stderr (stdout is the JSON).
	if !regexp.MustCompile(`(?m)^note: h[12]: agent \S+/fabctl-\S+: not installed; copying \S+ over SFTP$`).MatchString(stderr.String()) {
		t.Errorf("apply did not report the agent copy on stderr:\n%s", stderr.String())
	}
	var doc struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Status != "applied" {
		t.Fatalf("apply: %v %s", err, out)
	}
	cmd = exec.Command(fx.bin, "plan", "--detailed-exitcode", dir)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("re-plan not clean: %v\n%s", err, out)
	} else if strings.Contains(string(out), "copying") {
		t.Errorf("the agent was copied again although it is this build:\n%s", out)
	}
	for _, ns := range []string{"fabctl-ssh-t5", "fabctl-ssh-t6"} {
		if out := testutil.Run(t, "ip", "-n", ns, "link", "show", "v0a"); !strings.Contains(out, "mtu 9000") {
			t.Fatalf("%s: %s", ns, out)
		}
	}
}

// TestSSHTraffic: fabctl validate's traffic steps on hosts reached over
// SSH. The driver's Traffic runs a counter read through the agent in the
// host's namespace (the veth's ethtool statistics come back); then the
// fabctl binary validates two ssh+netns hosts: each pair's server side
// runs on its host through the agent, which answers that this build (no
// verbs tag) cannot run a side, and the pair is reported as not run with
// that reason, naming the side; validate exits 5 (nothing tested). The
// VM testbed's ssh section runs the same path with real RDMA traffic.
func TestSSHTraffic(t *testing.T) {
	fx := newSSHFixture(t)
	newNS(t, "fabctl-ssh-t7", 1)
	newNS(t, "fabctl-ssh-t8", 0)
	testutil.Run(t, "ip", "-n", "fabctl-ssh-t7", "link", "set", "v0b", "netns", "fabctl-ssh-t8")
	testutil.Run(t, "ip", "-n", "fabctl-ssh-t8", "link", "set", "v0b", "name", "v0a")

	s, f := fx.spec(t, "root", fx.keyCreds(), map[string]string{"h1": "fabctl-ssh-t7"})
	d := fx.driver()
	body := []byte(`{"role":"counters","local":{"Netdev":"v0a","Port":1,"GIDIndex":-1,"Addr":"198.18.0.3"}}`)
	out, err := d.Traffic(context.Background(), fx.target(s, f, 0), body, nil)
	if err != nil {
		t.Fatalf("counters over SSH: %v", err)
	}
	var res struct {
		Counters map[string]uint64 `json:"counters"`
		Error    string            `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Error != "" {
		t.Fatalf("counters: %v %s", err, out)
	}
	if _, ok := res.Counters["eth:peer_ifindex"]; !ok {
		t.Errorf("the veth's ethtool statistics did not come back from the host's namespace: %v", res.Counters)
	}
	// A malformed step is the agent's request error, named.
	if _, err := d.Traffic(context.Background(), fx.target(s, f, 0), []byte(`{"role":"dance"}`), nil); err == nil ||
		!strings.Contains(err.Error(), `unknown traffic role "dance"`) {
		t.Errorf("bad role: %v", err)
	}

	dir := fx.specDir(t, "rocev2", "rxe0", `
validate "ring" {
  pattern       = "ring"
  op            = "write"
  iterations    = 100
  min_bandwidth = "1M"
}
`, "fabctl-ssh-t7", "fabctl-ssh-t8")
	cmd := exec.Command(fx.bin, "validate", "--json", "--skip-readback", dir)
	cmd.Env = append(os.Environ(), "FABCTL_AGENT_DIR="+fx.remote, "FABCTL_AGENT_SAVE_DIR="+fx.save, "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Fatalf("fabctl validate: %v (want exit 5, nothing tested)\n%s\n%s", err, stdout, stderr.String())
	}
	var doc struct {
		Traffic struct {
			Outcomes []struct {
				Client, Server, Status, Reason string
			} `json:"outcomes"`
		} `json:"traffic"`
	}
	if err := json.Unmarshal(stdout, &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(doc.Traffic.Outcomes) != 2 {
		t.Fatalf("want the ring's 2 pairs: %s", stdout)
	}
	for _, o := range doc.Traffic.Outcomes {
		want := "server " + o.Server + ": traffic test unavailable: "
		if o.Status != "not-run" || !strings.HasPrefix(o.Reason, want) || !strings.Contains(o.Reason, "without verbs support") {
			t.Errorf("outcome %+v: want not run with the server host's own reason %q...", o, want)
		}
	}
}
