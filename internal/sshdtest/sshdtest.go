// Package sshdtest runs a real OpenSSH server (Debian's openssh-server,
// /usr/sbin/sshd) for the SSH tests and benchmarks of the host driver
// and of the opensm driver's fabric read-back: a generated ed25519 host key, a loopback port, keys
// authorised per user, internal-sftp, and test users with or without
// sudo rules. It needs root; without root or sshd it skips, except under
// CI=true, where it fails.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
)

// SSHD is the OpenSSH server binary.
const SSHD = "/usr/sbin/sshd"

// Require skips (or, under CI=true, fails) unless the test runs as root
// on a machine with OpenSSH's sshd.
func Require(t testing.TB) {
	t.Helper()
	testutil.RequireRoot(t, "starts sshd, adds test users and network namespaces")
	if _, err := os.Stat(SSHD); err != nil {
		testutil.SkipOrFail(t, SSHD+" missing: apt-get install openssh-server (CI installs it, .ci/run)")
	}
}

// Key is an ed25519 key pair.
type Key struct {
	Signer  ssh.Signer
	PEM     []byte // OpenSSH private key
	AuthKey string // authorized_keys line
}

// NewKey generates a key pair.
func NewKey(t testing.TB) Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return Key{Signer: s, PEM: pem.EncodeToMemory(blk), AuthKey: string(ssh.MarshalAuthorizedKey(s.PublicKey()))}
}

// Server is a running sshd.
type Server struct {
	Addr       string // 127.0.0.1:PORT
	Dir        string
	HostKey    Key
	KnownHosts string // a known_hosts file with the server's key
	authDir    string
	cpuFile    string // cgroup v1 cpuacct.usage of sshd and everything it runs
	logFile    string
}

// Sessions counts, from the log of a Verbose server, the logins (SSH
// connections authenticated) and the command sessions (exec requests:
// each one process the login's shell starts, e.g. an agent run) so far.
func (s *Server) Sessions() (logins, commands int) {
	b, err := os.ReadFile(s.logFile)
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(l, "Accepted publickey for ") || strings.Contains(l, "Accepted password for "):
			logins++
		case strings.Contains(l, "Starting session: command "):
			commands++
		}
	}
	return logins, commands
}

// CPU is the CPU time sshd and everything it started (sessions, shells,
// sudo, agents) have used so far: the "hosts'" side of a benchmark, apart
// from the controller's. ok is false without a cpuacct cgroup.
func (s *Server) CPU() (d time.Duration, ok bool) {
	if s.cpuFile == "" {
		return 0, false
	}
	b, err := os.ReadFile(s.cpuFile)
	if err != nil {
		return 0, false
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ns), true
}

// cpuCgroup moves pid (and so its future children) into a new cgroup v1
// cpuacct group, removed at cleanup, and returns its usage file; "" when
// the machine has no cgroup v1 cpuacct hierarchy (the metric is skipped).
func cpuCgroup(t testing.TB, pid int) string {
	root := "/sys/fs/cgroup/cpuacct"
	if _, err := os.Stat(filepath.Join(root, "cpuacct.usage")); err != nil {
		return ""
	}
	dir := filepath.Join(root, fmt.Sprintf("fabctl-sshdtest-%d", pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return ""
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		os.Remove(dir)
		return ""
	}
	// Registered before sshd's own cleanup, so it runs after it (LIFO):
	// the group is empty by then and can be removed.
	t.Cleanup(func() {
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(20 * time.Millisecond) // killed sessions still exiting
		}
	})
	return filepath.Join(dir, "cpuacct.usage")
}

// Options tune the server.
type Options struct {
	// MaxStartups allows this many unauthenticated connections at once
	// (sshd's default, 10:30:100, drops connections of a parallel run).
	MaxStartups int
	// Verbose logs every login and session (sshd LogLevel VERBOSE), for
	// Sessions.
	Verbose bool
}

// Start runs sshd on a free loopback port until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	Require(t)
	if o.MaxStartups == 0 {
		o.MaxStartups = 100
	}
	dir := t.TempDir()
	// sshd reads authorized_keys as the user logging in: the directory
	// must be reachable for every user (t.TempDir's is root-only).
	authDir, err := os.MkdirTemp("", "fabctl-sshd-keys-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(authDir) })
	if err := os.Chmod(authDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, HostKey: NewKey(t), authDir: authDir}
	hk := filepath.Join(dir, "host_ed25519")
	if err := os.WriteFile(hk, s.HostKey.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd's privilege separation directory (created by the service unit,
	// which does not run here).
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile none
AuthorizedKeysFile %s/%%u
StrictModes no
UsePAM no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
Subsystem sftp internal-sftp
MaxStartups %d
MaxSessions 64
LogLevel %s
`, port, hk, s.authDir, o.MaxStartups, map[bool]string{false: "ERROR", true: "VERBOSE"}[o.Verbose])
	cf := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(SSHD, "-t", "-f", cf).CombinedOutput(); err != nil {
		t.Fatalf("sshd -t: %v\n%s", err, out)
	}
	// The log is a file, not a pipe: the per-connection sshd processes
	// inherit it, and a pipe would keep Wait waiting for them.
	logf := filepath.Join(dir, "sshd.log")
	s.logFile = logf
	lf, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	cmd := exec.Command(SSHD, "-D", "-e", "-f", cf)
	cmd.Stderr = lf
	// Its own process group: cleanup ends the listener and the sessions
	// still open (a controller keeps idle connections).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cpuFile = cpuCgroup(t, cmd.Process.Pid)
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if b, _ := os.ReadFile(logf); t.Failed() && len(b) > 0 {
			t.Logf("sshd log:\n%s", b)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf)
			t.Fatalf("sshd did not listen on %s: %v\n%s", s.Addr, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.KnownHosts = filepath.Join(dir, "known_hosts")
	s.WriteKnownHosts(t, s.KnownHosts, s.HostKey.Signer.PublicKey())
	return s
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WriteKnownHosts writes a known_hosts file holding key for the server.
func (s *Server) WriteKnownHosts(t testing.TB, path string, key ssh.PublicKey) {
	t.Helper()
	line := knownhosts.Line([]string{s.Addr}, key) + "\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Authorize lets user log in with key.
func (s *Server) Authorize(t testing.TB, user string, key Key) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(s.authDir, user), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(key.AuthKey); err != nil {
		t.Fatal(err)
	}
}

// User is a local test account.
type User struct {
	Name, Home, Password string
}

// AddUser creates a local account with a home directory of its own and
// a password, removed at cleanup. sudoRule, when set, is installed as
// /etc/sudoers.d/<name> (checked with visudo first); "%h" in it is the
// home directory.
func AddUser(t testing.TB, name, sudoRule string) User {
	t.Helper()
	home, err := os.MkdirTemp("", "fabctl-sshd-home-")
	if err != nil {
		t.Fatal(err)
	}
	_ = exec.Command("userdel", "--force", name).Run() // a previous run killed mid-way
	run(t, "useradd", "--no-create-home", "--home-dir", home, "--shell", "/bin/sh", "--user-group", name)
	t.Cleanup(func() {
		// --force: the server's sessions of this user may still be exiting.
		_ = exec.Command("userdel", "--force", name).Run()
		os.RemoveAll(home)
	})
	run(t, "chown", name+":"+name, home)
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	u := User{Name: name, Home: home, Password: "pw-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(name + ":" + u.Password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v\n%s", err, out)
	}
	if sudoRule != "" {
		rule := strings.ReplaceAll(sudoRule, "%h", home) + "\n"
		tmp := filepath.Join(t.TempDir(), "sudoers")
		if err := os.WriteFile(tmp, []byte(rule), 0o440); err != nil {
			t.Fatal(err)
		}
		run(t, "visudo", "-c", "-q", "-f", tmp)
		dst := "/etc/sudoers.d/fabctl-test-" + name
		if err := os.WriteFile(dst, []byte(rule), 0o440); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dst) })
	}
	return u
}

func run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var build struct {
	once sync.Once
	path string
	err  error
}

// Fabctl builds cmd/fabctl once per test binary and returns its path (the
// controller ships this binary to the hosts). The binary is kept in
// $TMPDIR/fabctl-sshdtest/ (replaced atomically by each build, so test
// binaries running at once do not disturb each other) rather than removed,
// since no single test owns it.
func Fabctl(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "fabctl-sshdtest")
		if build.err = os.MkdirAll(dir, 0o755); build.err != nil {
			return
		}
		tmp, err := os.MkdirTemp(dir, "build-")
		if err != nil {
			build.err = err
			return
		}
		defer os.RemoveAll(tmp)
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		out, err := exec.Command(goTool, "build", "-o", filepath.Join(tmp, "fabctl"), "github.com/fabctl/fabctl/cmd/fabctl").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build ./cmd/fabctl: %v\n%s", err, out)
			return
		}
		// Named by its build identity: test runs of other checkouts on
		// this machine (other builds) never replace the binary this run
		// ships and whose identity it cached; the same build shares one
		// file.
		id, err := agentproto.Identity(filepath.Join(tmp, "fabctl"))
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "fabctl-"+id)
		build.err = os.Rename(filepath.Join(tmp, "fabctl"), build.path)
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}
