package opensm

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gliderlabs/ssh"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// The subnet manager over a real SSH connection: an SSH server on a
// loopback port (gliderlabs/ssh, host key in a known_hosts file, public
// key login) that runs each command with /bin/sh on this machine, as
// sshd would. The driver's file paths point into a temp directory, and
// "opensm" is a real process with a pid file that counts the SIGHUPs it
// gets.

type smRig struct {
	t        *testing.T
	root     string // the SM host's /etc/opensm and /run, in a temp dir
	opts     Options
	addr     string
	keyFile  string
	khFile   string
	hupCount string
}

func startSSHHost(t *testing.T) (addr, keyFile, khFile string) {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := gossh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	clientPub, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	authorized, err := gossh.NewPublicKey(clientPub)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &ssh.Server{
		Handler: func(s ssh.Session) {
			cmd := exec.Command("/bin/sh", "-c", s.RawCommand())
			cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s.Stderr()
			code := 0
			if err := cmd.Run(); err != nil {
				code = 255
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				}
			}
			_ = s.Exit(code)
		},
		PublicKeyHandler: func(_ ssh.Context, key ssh.PublicKey) bool { return ssh.KeysEqual(key, authorized) },
	}
	srv.AddHostKey(hostSigner)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	dir := t.TempDir()
	block, err := gossh.MarshalPrivateKey(clientPriv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(dir, "id_ed25519")
	khFile = filepath.Join(dir, "known_hosts")
	addr = ln.Addr().String()
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, hostSigner.PublicKey())
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(khFile, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return addr, keyFile, khFile
}

func newSMRig(t *testing.T) *smRig {
	t.Helper()
	r := &smRig{t: t, root: t.TempDir()}
	r.addr, r.keyFile, r.khFile = startSSHHost(t)
	etc := filepath.Join(r.root, "etc", "opensm")
	r.opts = Options{
		ConfFile:       filepath.Join(etc, "opensm.conf"),
		PartitionsFile: filepath.Join(etc, "partitions.conf"),
		QoSPolicyFile:  filepath.Join(etc, "qos-policy.conf"),
		PIDFile:        filepath.Join(r.root, "run", "opensm.pid"),
	}
	r.opts.SSH.Getenv = func(string) string { return "" }
	return r
}

// startOpenSM runs the stand-in opensm: a shell that writes its pid file
// and appends a line to a count file for every SIGHUP.
func (r *smRig) startOpenSM() {
	t := r.t
	r.hupCount = filepath.Join(r.root, "hups")
	if err := os.MkdirAll(filepath.Dir(r.opts.PIDFile), 0o755); err != nil {
		t.Fatal(err)
	}
	// env --default-signal=HUP (coreutils 8.31+): a shell cannot trap a
	// signal it was started with ignored (POSIX), and a test run under
	// nohup ignores SIGHUP in every child.
	cmd := exec.Command("env", "--default-signal=HUP", "/bin/sh", "-c", `trap 'echo hup >> "$COUNT"' HUP
echo $$ > "$PIDFILE"
while :; do sleep 1 & wait $!; done`)
	cmd.Env = append(os.Environ(), "COUNT="+r.hupCount, "PIDFILE="+r.opts.PIDFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile(r.opts.PIDFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the stand-in opensm did not write its pid file")
}

// hups returns how many SIGHUPs opensm got, waiting until it equals want
// (signals arrive asynchronously) or a second has passed.
func (r *smRig) hups(want int) int {
	n := 0
	for i := 0; i < 100; i++ {
		b, _ := os.ReadFile(r.hupCount)
		n = strings.Count(string(b), "hup")
		if n == want {
			// stay a moment: a further (wrong) signal would show now
			time.Sleep(50 * time.Millisecond)
			b, _ = os.ReadFile(r.hupCount)
			return strings.Count(string(b), "hup")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

func (r *smRig) spec(body string) (*spec.Spec, *intent.Fabric) {
	t := r.t
	dir := t.TempDir()
	src := fmt.Sprintf(`
fabric "lab" {
  transport = "infiniband"
  mtu       = 4092
}
class "default" {
  role      = "other"
  default   = true
  sl        = 0
  bandwidth = 40
}
class "mpi" {
  role      = "rdma"
  sl        = 1
  bandwidth = 60
}
credentials "sm" {
  username    = "fabctl"
  private_key = file(%q)
  known_hosts = %q
}
host "sm01" {
  address     = %q
  credentials = "sm"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0c42a10300000101"
  }
}
host "cn01" {
  address = "192.0.2.11"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0c42a10300000b01"
  }
}
host "cn02" {
  address = "192.0.2.12"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0c42a10300000c01"
  }
}
%s
`, r.keyFile, r.khFile, r.addr, body)
	if err := os.WriteFile(filepath.Join(dir, "lab.fab.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
	return s, intent.Compile(s)
}

const labIB = `
infiniband {
  subnet_manager = "sm01"
  sl2vl          = [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
  vl_arb_low     = { "0" = 64, "1" = 128 }
  partition "compute" {
    pkey    = "0x8001"
    members = ["cn01:ib0", "cn02:ib0", "sm01:ib0"]
    rate    = "400G"
    sl      = 1
    ipoib   = true
  }
}
`

// labApplied is a rig whose running opensm has siteConf with labIB
// applied.
func labApplied(t *testing.T) (*smRig, *spec.Spec, *intent.Fabric) {
	t.Helper()
	r := newSMRig(t)
	r.startOpenSM()
	r.write(r.opts.ConfFile, siteConf)
	s, f := r.spec(labIB)
	if res, err := r.apply(s, f, r.plan(s, f)); err != nil || res.Counts.Failed > 0 {
		t.Fatalf("apply: %v %+v", err, res)
	}
	return r, s, f
}

func (r *smRig) registry() *drivers.Registry {
	reg := drivers.NewRegistry()
	if err := reg.Register(Name, func() drivers.Driver { return &Driver{Opts: r.opts} }); err != nil {
		r.t.Fatal(err)
	}
	return reg
}

func (r *smRig) plan(s *spec.Spec, f *intent.Fabric) *plan.DevicePlan {
	t := r.t
	p := plan.Make(context.Background(), s, f, r.registry(), plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName})
	if len(p.Devices) != 1 {
		t.Fatalf("plan has %d devices, want the subnet manager only", len(p.Devices))
	}
	dp := p.Devices[0]
	if dp.Error != "" {
		t.Fatalf("plan: %s", dp.Error)
	}
	return dp
}

func (r *smRig) target(s *spec.Spec, f *intent.Fabric) drivers.Target {
	sm := f.SubnetManagers[0]
	return plan.Target(plan.Unit{Device: sm.Device, Intent: sm}, plan.Options{Credentials: s.CredentialsByName})
}

func (r *smRig) apply(s *spec.Spec, f *intent.Fabric, dp *plan.DevicePlan) (*apply.Result, error) {
	return apply.Run(context.Background(), []apply.Device{{Plan: dp, Target: r.target(s, f)}}, r.registry(), apply.Options{})
}

func (r *smRig) read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func (r *smRig) write(path, data string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// An opensm.conf as a site has it: other options, QoS off, a per-CA
// SL2VL left over from an earlier setup.
const siteConf = `# site opensm.conf
sweep_interval 10
qos FALSE
qos_ca_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7
qos_sl2vl (null)
log_file /var/log/opensm.log
`

// TestSSHRoundTrip: plan from empty, apply over SSH (the apply engine
// with its read-back), re-plan clean; hand edits are drift, formatting
// noise is not; opensm gets one SIGHUP per apply that changed a file and
// none otherwise.
func TestSSHRoundTrip(t *testing.T) {
	r := newSMRig(t)
	r.startOpenSM()
	r.write(r.opts.ConfFile, siteConf)
	s, f := r.spec(labIB)

	// 1. Plan from empty: partitions.conf and qos-policy.conf do not
	// exist, opensm.conf has QoS off.
	dp := r.plan(s, f)
	creates := 0
	for _, c := range dp.Changes {
		if c.Action == intent.Create {
			creates++
		}
	}
	want := f.SubnetManagers[0].Flatten()
	if creates != len(want)-1 { // opensm/qos exists (FALSE): an update
		t.Errorf("%d creates for %d desired settings:\n%v", creates, len(want), dp.Changes)
	}
	var files []string
	for _, st := range dp.Steps {
		files = append(files, st.Summary)
	}
	if len(dp.Steps) != 4 || !strings.Contains(dp.Steps[3].Summary, "SIGHUP") {
		t.Fatalf("steps: want a write per file and the reload:\n%s", strings.Join(files, "\n"))
	}
	if fs := dp.Findings; len(fs) != 0 {
		t.Errorf("findings with opensm running and default paths: %v", fs)
	}

	// 2. Apply: the engine applies, reads back and verifies.
	res, err := r.apply(s, f, dp)
	if err != nil || res.Counts.Failed > 0 {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if n := r.hups(1); n != 1 {
		t.Errorf("opensm got %d SIGHUPs after the first apply, want 1", n)
	}
	conf := r.read(r.opts.ConfFile)
	for _, l := range []string{"sweep_interval 10\n", "log_file /var/log/opensm.log\n", "qos TRUE\n", "qos_ca_sl2vl (null)\n",
		"qos_sl2vl 0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n", "qos_vlarb_low 0:64,1:128\n"} {
		if !strings.Contains(conf, l) {
			t.Errorf("opensm.conf lacks %q:\n%s", l, conf)
		}
	}
	if bak := r.read(r.opts.ConfFile + ".fabctl.bak"); bak != siteConf {
		t.Errorf("opensm.conf.fabctl.bak is not the previous file:\n%s", bak)
	}
	if _, err := os.Stat(r.opts.PartitionsFile + ".fabctl.bak"); !os.IsNotExist(err) {
		t.Errorf("a backup of a file that did not exist: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(r.opts.ConfFile), "*.fabctl.tmp"))
	if len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}

	// 3. Re-plan: clean, nothing to do.
	if dp := r.plan(s, f); dp.HasChanges() {
		t.Fatalf("re-plan after apply is not clean: %v", dp.Changes)
	}

	// 4. Noise is not drift: reformat partitions.conf (comments, spacing,
	// member order, number spelling), keep its meaning.
	noisy := "# reformatted by hand\nDefault = 32767 , ipoib , mtu = 5 : ALL = full ;\n" +
		"compute=0x8001,ipoib,mtu=5,rate=21,sl=1:0xc42a10300000c01=full,\n 0x0C42A10300000B01=full , # cn01\n\t0xc42a10300000101=full;\n"
	r.write(r.opts.PartitionsFile, noisy)
	if dp := r.plan(s, f); dp.HasChanges() {
		t.Fatalf("formatting noise planned as changes: %v", dp.Changes)
	}

	// 5. Drift: cn02 removed from compute by hand, and the SL2VL changed.
	r.write(r.opts.PartitionsFile, strings.Replace(noisy, "0xc42a10300000c01=full,", "", 1))
	r.write(r.opts.ConfFile, strings.Replace(r.read(r.opts.ConfFile), "qos_sl2vl 0,1,0,", "qos_sl2vl 0,0,0,", 1))
	dp = r.plan(s, f)
	var got []string
	for _, c := range dp.Changes {
		got = append(got, string(c.Action)+" "+c.Path)
	}
	if strings.Join(got, ", ") != "~ opensm/qos_sl2vl, + partitions/compute/member/0x0c42a10300000c01" {
		t.Fatalf("drift: got %v", got)
	}
	// cn02 put back into compute restores its traffic: not disruptive
	// (removing a member is: TestMemberRestoreNotDisruptive).
	if dp.Changes[1].Disruptive != "" {
		t.Errorf("a member put back into its partition is marked disruptive: %s", dp.Changes[1].Disruptive)
	}
	if len(dp.Steps) != 3 || !strings.HasPrefix(dp.Steps[0].Summary, r.opts.PartitionsFile) {
		t.Fatalf("steps for drift: %+v", dp.Steps)
	}
	if !strings.Contains(strings.Join(dp.Steps[0].Payload, "\n"), "+\t0x0c42a10300000c01=full ; # cn02:ib0") {
		t.Errorf("payload does not show the member line:\n%s", strings.Join(dp.Steps[0].Payload, "\n"))
	}
	if res, err := r.apply(s, f, dp); err != nil || res.Counts.Failed > 0 {
		t.Fatalf("apply drift: %v %+v", err, res)
	}
	if n := r.hups(2); n != 2 {
		t.Errorf("opensm got %d SIGHUPs after the second apply, want 2", n)
	}

	// 6. Applying steps whose files already are as desired writes nothing
	// and sends no signal.
	drv := &Driver{Opts: r.opts}
	if _, err := drv.Apply(context.Background(), r.target(s, f), dp.Steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := r.hups(3); n != 2 {
		t.Errorf("opensm got a SIGHUP although no file changed (%d)", n)
	}
}

// TestSSHFailedWriteKeepsFiles: a write that fails leaves that file as it
// was, restores the files written before it, and sends no signal; a
// rollback puts an applied change back.
func TestSSHFailedWriteKeepsFiles(t *testing.T) {
	r, _, _ := labApplied(t)
	r.hups(1)
	before := map[string]string{}
	for _, p := range []string{r.opts.PartitionsFile, r.opts.QoSPolicyFile, r.opts.ConfFile} {
		before[p] = r.read(p)
	}

	// A new SL for compute changes partitions.conf and qos-policy.conf;
	// the policy's temp file cannot be created (a directory is in the way).
	s2, f2 := r.spec(strings.Replace(labIB, "sl      = 1", "sl      = 2", 1))
	dp := r.plan(s2, f2)
	if len(dp.Steps) != 3 {
		t.Fatalf("steps: %+v", dp.Steps)
	}
	if err := os.Mkdir(r.opts.QoSPolicyFile+".fabctl.tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	drv := &Driver{Opts: r.opts}
	_, err := drv.Apply(context.Background(), r.target(s2, f2), dp.Steps, drivers.ApplyOptions{})
	var pe *drivers.PartialError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "write "+r.opts.QoSPolicyFile) || !strings.Contains(err.Error(), "restored") {
		t.Fatalf("apply with a blocked write: err = %v", err)
	}
	for p, want := range before {
		if got := r.read(p); got != want {
			t.Errorf("%s changed by a failed apply:\n%s", p, got)
		}
	}
	if n := r.hups(2); n != 1 {
		t.Errorf("opensm got a SIGHUP from a failed apply (%d)", n)
	}

	// Unblocked, the same steps apply; Rollback puts the files back and
	// signals again.
	if err := os.Remove(r.opts.QoSPolicyFile + ".fabctl.tmp"); err != nil {
		t.Fatal(err)
	}
	res, err := drv.Apply(context.Background(), r.target(s2, f2), dp.Steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.read(r.opts.PartitionsFile), "sl=2") {
		t.Fatal("the apply did not write the new SL")
	}
	if bak := r.read(r.opts.PartitionsFile + ".fabctl.bak"); bak != before[r.opts.PartitionsFile] {
		t.Errorf("partitions.conf.fabctl.bak is not the file before this apply")
	}
	r.hups(2)
	if err := drv.Rollback(context.Background(), r.target(s2, f2), res); err != nil {
		t.Fatal(err)
	}
	for p, want := range before {
		if got := r.read(p); got != want {
			t.Errorf("%s not restored by rollback:\n%s", p, got)
		}
	}
	if n := r.hups(3); n != 3 {
		t.Errorf("opensm got %d SIGHUPs after the rollback, want 3", n)
	}
}

// TestSSHErrors: a wrong host key and an unreadable file fail naming the
// device and the cause.
func TestSSHErrors(t *testing.T) {
	r := newSMRig(t)
	s, f := r.spec(labIB)
	// opensm.conf is a directory: cat fails.
	if err := os.MkdirAll(r.opts.ConfFile, 0o755); err != nil {
		t.Fatal(err)
	}
	p := plan.Make(context.Background(), s, f, r.registry(), plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName})
	if e := p.Devices[0].Error; !strings.Contains(e, "sm01") || !strings.Contains(e, "read "+r.opts.ConfFile) || !strings.Contains(e, "Is a directory") {
		t.Errorf("unreadable opensm.conf: %q", e)
	}
	// Another host key in known_hosts.
	_, _, otherKH := startSSHHost(t)
	kh, _ := os.ReadFile(otherKH)
	fields := strings.Fields(string(kh))
	if err := os.WriteFile(r.khFile, []byte(knownhosts.Normalize(r.addr)+" "+fields[1]+" "+fields[2]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = plan.Make(context.Background(), s, f, r.registry(), plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName})
	if e := p.Devices[0].Error; !strings.Contains(e, "host key") {
		t.Errorf("changed host key: %q", e)
	}
}
