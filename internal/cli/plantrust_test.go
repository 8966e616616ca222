package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// sending is a driver that behaves as a transport does when it logs in:
// it resolves the target's password and sends it to the target's
// address, for addresses on the loopback (the test's listener); other
// addresses are the memory driver's. It records what it resolved.
type sending struct {
	drivers.Driver
	getenv func(string) string
	mu     *sync.Mutex
	sent   *[]string // "address password"
}

func (s sending) login(t drivers.Target) {
	if !strings.HasPrefix(t.Device.Address, "127.0.0.1:") || t.Credentials == nil || t.Credentials.Password == nil {
		return
	}
	pw, err := t.Credentials.Password.Resolve(s.getenv)
	if err != nil {
		return
	}
	s.mu.Lock()
	*s.sent = append(*s.sent, t.Device.Address+" "+pw)
	s.mu.Unlock()
	if c, err := net.DialTimeout("tcp", t.Device.Address, 2*time.Second); err == nil {
		c.Write([]byte(pw))
		c.Close()
	}
}

func (s sending) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	s.login(t)
	return s.Driver.Read(ctx, t)
}

func (s sending) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	s.login(t)
	return s.Driver.Apply(ctx, t, ch, o)
}

// attacker is a TCP listener that counts connections and keeps what it
// receives.
type attacker struct {
	ln    net.Listener
	mu    sync.Mutex
	conns int
	got   []byte
}

func newAttacker(t *testing.T) *attacker {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &attacker{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(io.LimitReader(c, 1<<16))
			c.Close()
			a.mu.Lock()
			a.conns++
			a.got = append(a.got, b...)
			a.mu.Unlock()
		}
	}()
	return a
}

func (a *attacker) seen() (int, string) {
	time.Sleep(50 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conns, string(a.got)
}

// forgeSpec points leaf1 at addr and its credentials' password at
// file(secret), with the attacker's known_hosts, in a plan's embedded
// spec.
func forgeSpec(t *testing.T, sp *plan.SavedPlan, addr, secret string) {
	t.Helper()
	src := string(sp.Sources[0].Data)
	forged := strings.Replace(src, `address     = "192.0.2.1"`, `address     = "`+addr+`"`, 1)
	forged = strings.Replace(forged, `password = env("FAB_TEST_PASSWORD")`, `password = file("`+secret+`")
  known_hosts = "attacker_known_hosts"`, 1)
	if forged == src || !strings.Contains(forged, addr) || !strings.Contains(forged, secret) {
		t.Fatal("the spec was not forged")
	}
	sp.Sources[0].Data = []byte(forged)
}

// Issue 37: a saved plan forged to point a switch at another host with
// password = file(<any file>) and the attacker's known_hosts, then sealed
// again, sends nothing anywhere and says why: the embedded sources no
// longer hash to the plan's spec hash; with the hash recomputed too, the
// plan is not signed with the verification key the pipeline configured;
// signed with another key, the signature does not verify. show prints
// where a consistent forgery would connect.
func TestApplyForgedPlanSendsNothing(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	keyDir := t.TempDir()
	writeKey := func(name, typ string, der []byte) string {
		p := filepath.Join(keyDir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d1, _ := x509.MarshalPKCS8PrivateKey(priv)
	d2, _ := x509.MarshalPKCS8PrivateKey(otherPriv)
	d3, _ := x509.MarshalPKIXPublicKey(pub)
	signKey, otherKey, verifyKey := writeKey("plan.key", "PRIVATE KEY", d1), writeKey("other.key", "PRIVATE KEY", d2), writeKey("plan.pub", "PUBLIC KEY", d3)

	for _, c := range []struct {
		name  string
		env   []string // apply's environment besides the test password
		flags []string // apply's flags
		forge func(t *testing.T, sp *plan.SavedPlan) []byte
		says  string
	}{
		{name: "sources replaced, spec hash kept",
			forge: func(t *testing.T, sp *plan.SavedPlan) []byte { b, _ := sp.Encode(); return b },
			says:  "hash to"},
		{name: "spec hash recomputed, HMAC key configured", env: []string{plan.KeyEnv + "=pipeline-secret"},
			forge: func(t *testing.T, sp *plan.SavedPlan) []byte {
				sp.Plan.SpecHash = plan.SourceHash(sp.Sources)
				sp.Signature = "" // stripped: a signature the forger cannot make
				b, _ := sp.Encode()
				return b
			},
			says: "no signature"},
		{name: "spec hash recomputed, ed25519 key configured", flags: []string{"--verify-key", verifyKey},
			forge: func(t *testing.T, sp *plan.SavedPlan) []byte {
				sp.Plan.SpecHash = plan.SourceHash(sp.Sources)
				sp.Signature = "" // stripped: a signature the forger cannot make
				b, _ := sp.Encode()
				return b
			},
			says: "no signature"},
		{name: "re-signed with another key", env: []string{plan.VerifyKeyEnv + "=" + verifyKey},
			forge: func(t *testing.T, sp *plan.SavedPlan) []byte {
				sp.Plan.SpecHash = plan.SourceHash(sp.Sources)
				keys, err := plan.LoadKeys(nil, otherKey, "")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := sp.EncodeSigned(keys)
				return b
			},
			says: "does not verify"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newApplyEnv(t)
			e.converge()
			var mu sync.Mutex
			var sent []string
			f, _, _, _ := e.factory()
			e.wrap = func(d drivers.Driver) drivers.Driver {
				return sending{Driver: d, getenv: f.Getenv, mu: &mu, sent: &sent}
			}
			planFile := filepath.Join(e.dir, "plan.fab")
			// The genuine plan, signed when the pipeline verifies.
			f, _, stdout, stderr := e.factory()
			env := append([]string{"FAB_TEST_PASSWORD=" + testPassword}, c.env...)
			if len(c.env) > 0 || len(c.flags) > 0 {
				f, _, stdout, stderr = testFactory(env...)
				f.Drivers, f.Now = e.registry, func() time.Time { return testNow }
			}
			args := []string{"plan", "-out", planFile, e.spec}
			if len(c.flags) > 0 || strings.Contains(strings.Join(c.env, " "), plan.VerifyKeyEnv) {
				args = append(args, "--signing-key", signKey)
			}
			if code := runCLI(f, args...); code != ExitOK {
				t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
			}
			// The attacker edits the artifact.
			a := newAttacker(t)
			secret := filepath.Join(e.dir, "cloud-credentials")
			writeFile(t, secret, "TOPSECRET-cloud-key\n")
			raw, err := os.ReadFile(planFile)
			if err != nil {
				t.Fatal(err)
			}
			var sp plan.SavedPlan
			if err := json.Unmarshal(raw, &sp); err != nil {
				t.Fatal(err)
			}
			forgeSpec(t, &sp, a.ln.Addr().String(), secret)
			if err := os.WriteFile(planFile, c.forge(t, &sp), 0o600); err != nil {
				t.Fatal(err)
			}

			f, _, stdout, stderr = testFactory(env...)
			f.Drivers, f.Now = e.registry, func() time.Time { return testNow }
			code := runCLI(f, append(append([]string{"apply"}, c.flags...), planFile)...)
			conns, got := a.seen()
			if conns != 0 || strings.Contains(got, "TOPSECRET") || len(sent) != 0 {
				t.Fatalf("the forged plan reached %s (%d connections, %q; sent %q)", a.ln.Addr(), conns, got, sent)
			}
			if code != ExitError {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr.String(), c.says) || !strings.Contains(stderr.String(), "nothing was applied") {
				t.Errorf("stderr does not say why (%q):\n%s", c.says, stderr)
			}
			if strings.Contains(stdout.String()+stderr.String(), "TOPSECRET") {
				t.Error("the secret file's content was printed")
			}
			if len(e.store.Applied) != 0 {
				t.Errorf("devices changed: %v", e.store.Applied)
			}
		})
	}
}

// Issue 37: show prints what apply will connect to, derived from the
// embedded spec: a consistent forgery (no verification key configured)
// shows the attacker's address, the secret file it would read and the
// known_hosts it would trust, as plainly as the genuine plan shows its own.
func TestShowPrintsEndpoints(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, _, _ := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	sp := e.savePlan(f, planFile)
	for _, forged := range []bool{false, true} {
		if forged {
			forgeSpec(t, sp, "127.0.0.1:2222", filepath.Join(e.dir, "cloud-credentials"))
			sp.Plan.SpecHash = plan.SourceHash(sp.Sources)
			if err := sp.Write(planFile); err != nil {
				t.Fatal(err)
			}
		}
		f, _, stdout, stderr := e.factory()
		if code := runCLI(f, "show", planFile); code != ExitOK {
			t.Fatalf("show: exit %d\n%s", code, stderr)
		}
		out := stdout.String()
		want := []string{"fabctl apply connects to (unsigned)", "switch.leaf1", `admin@192.0.2.1, password=env("FAB_TEST_PASSWORD"), known_hosts ~/.ssh/known_hosts`, e.stateDir()}
		if forged {
			want = []string{"admin@127.0.0.1:2222", `password=file("` + filepath.Join(e.dir, "cloud-credentials") + `")`, "known_hosts " + filepath.Join(e.spec, "attacker_known_hosts")}
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("forged %v: show does not print %q:\n%s", forged, w, out)
			}
		}
		f, _, stdout, _ = e.factory()
		if code := runCLI(f, "show", "--json", planFile); code != ExitOK {
			t.Fatal("show --json")
		}
		var doc struct {
			SavedPlan struct {
				Endpoints []plan.Endpoint `json:"endpoints"`
			} `json:"saved_plan"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.SavedPlan.Endpoints) != len(sp.Plan.Devices) {
			t.Errorf("show --json endpoints: %v, %d for %d devices", err, len(doc.SavedPlan.Endpoints), len(sp.Plan.Devices))
		}
	}
}

// Issue 37: relative paths in a saved plan's spec (file() secrets,
// known_hosts) resolve against the recorded spec directory, never against
// apply's working directory, even where the working directory holds a
// file of the same relative name.
func TestApplySavedPlanPathsFromSpecDir(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	src, _ := os.ReadFile(filepath.Join(e.spec, "ten.fab.hcl"))
	writeFile(t, filepath.Join(e.spec, "ten.fab.hcl"), strings.Replace(strings.Replace(string(src),
		`password = env("FAB_TEST_PASSWORD")`, `password = file("pw.txt")`, 1),
		`address     = "192.0.2.1"`, `address     = "127.0.0.1:9"`, 1))
	writeFile(t, filepath.Join(e.spec, "pw.txt"), "the-spec-dirs-password\n")
	var mu sync.Mutex
	var sent []string
	f, _, stdout, stderr := e.factory()
	e.wrap = func(d drivers.Driver) drivers.Driver {
		return sending{Driver: d, getenv: f.Getenv, mu: &mu, sent: &sent}
	}
	// Planned with a relative spec path, so the plan names its files
	// relative to the directory plan ran in.
	t.Chdir(e.dir)
	planFile := filepath.Join(e.dir, "plan.fab")
	if code := runCLI(f, "plan", "-out", planFile, "fabric"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	// Another directory with a fabric/pw.txt of its own.
	other := filepath.Join(e.dir, "elsewhere")
	writeFile(t, filepath.Join(other, "fabric", "pw.txt"), "the-working-dirs-file\n")
	t.Chdir(other)
	mu.Lock()
	sent = nil
	mu.Unlock()
	f, _, stdout, stderr = e.factory()
	runCLI(f, "apply", planFile)
	mu.Lock()
	defer mu.Unlock()
	if len(sent) == 0 {
		t.Fatalf("nothing resolved\n%s%s", stdout, stderr)
	}
	for _, s := range sent {
		if !strings.HasSuffix(s, " the-spec-dirs-password") {
			t.Errorf("a relative file() resolved against the working directory: sent %q", s)
		}
	}
}

// Issue 37: a forged per-device driver, kind or platform is refused
// before any device is contacted; a re-sealed state directory needs the
// operator's --state-dir, and a --state-dir naming another directory is
// refused: neither can take a lock elsewhere beside a running apply.
func TestApplySavedPlanDerivedFields(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, _, _ := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	genuine := e.savePlan(f, planFile)
	raw, _ := os.ReadFile(planFile)

	reads := 0
	var mu sync.Mutex
	e.wrap = func(d drivers.Driver) drivers.Driver { return counting{Driver: d, mu: &mu, n: &reads} }
	for name, edit := range map[string]func(sp *plan.SavedPlan){
		"driver":   func(sp *plan.SavedPlan) { sp.Plan.Device("leaf1").Driver = "eos" },
		"platform": func(sp *plan.SavedPlan) { sp.Plan.Device("leaf1").Platform = "eos" },
		"kind":     func(sp *plan.SavedPlan) { sp.Plan.Device("h1").Kind = "switch" },
	} {
		var sp plan.SavedPlan
		json.Unmarshal(raw, &sp)
		edit(&sp)
		if err := sp.Write(planFile); err != nil {
			t.Fatal(err)
		}
		f, _, stdout, stderr := e.factory()
		code := runCLI(f, "apply", planFile)
		if code != ExitError || !strings.Contains(stderr.String(), "does not follow from its spec") || !strings.Contains(stderr.String(), name) {
			t.Errorf("forged %s: exit %d\n%s%s", name, code, stdout, stderr)
		}
		if reads != 0 || len(e.store.Applied) != 0 {
			t.Errorf("forged %s: %d devices contacted, applied %v", name, reads, e.store.Applied)
		}
	}

	// The lock of a running apply, in the fabric's state directory.
	held, err := acquireForTest(e.stateDir())
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	elsewhere := filepath.Join(e.dir, "elsewhere-state")
	if err := os.MkdirAll(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	resealed := *genuine
	resealed.StateDir = elsewhere
	if err := resealed.Write(planFile); err != nil {
		t.Fatal(err)
	}
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "apply", planFile); code != ExitError || !strings.Contains(stderr.String(), "pass --state-dir "+elsewhere) {
		t.Errorf("re-sealed state_dir: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := genuine.Write(planFile); err != nil {
		t.Fatal(err)
	}
	f, _, stdout, stderr = e.factory()
	if code := runCLI(f, "apply", "--state-dir", elsewhere, planFile); code != ExitError || !strings.Contains(stderr.String(), "is not the state directory this plan was made for") {
		t.Errorf("--state-dir elsewhere: exit %d\n%s%s", code, stdout, stderr)
	}
	f, _, stdout, stderr = e.factory()
	if code := runCLI(f, "apply", "--state-dir", e.stateDir(), planFile); code != ExitLocked {
		t.Errorf("--state-dir naming the plan's own: exit %d, want 4 (locked)\n%s%s", code, stdout, stderr)
	}
	if reads != 0 || len(e.store.Applied) != 0 {
		t.Errorf("%d devices contacted, applied %v", reads, e.store.Applied)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "t.lock")); err == nil {
		t.Error("a lock was taken in another state directory")
	}
}

type counting struct {
	drivers.Driver
	mu *sync.Mutex
	n  *int
}

func (c counting) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	c.mu.Lock()
	*c.n++
	c.mu.Unlock()
	return c.Driver.Read(ctx, t)
}

func acquireForTest(dir string) (func(), error) {
	l, err := apply.Acquire(context.Background(), dir, "t", apply.LockOptions{Operation: "apply"})
	if err != nil {
		return nil, err
	}
	return func() { l.Release() }, nil
}
