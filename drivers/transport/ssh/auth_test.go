package sshtransport

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sonicemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// keyRig starts a SONiC emulator that accepts key (and no password)
// logins for pub, and returns a target with credentials c.
func keyRig(t *testing.T, pub ssh.PublicKey, c *spec.Credentials) drivers.Target {
	t.Helper()
	sw, err := sonicemu.Start(sonicemu.Options{Password: "unused-" + secret, Ports: 4, AuthorizedKeys: []ssh.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := sw.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	c.Name, c.Username, c.KnownHosts = "lab", "admin", kh
	return drivers.Target{Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf1", Platform: "sonic", Address: sw.Addr()}, Credentials: c}
}

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

func pubOf(t *testing.T, k ed25519.PrivateKey) ssh.PublicKey {
	t.Helper()
	p, err := ssh.NewPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serveAgent serves an ssh-agent keyring on a unix socket, as ssh-agent
// does, and returns the socket path.
func serveAgent(t *testing.T, keys ...ed25519.PrivateKey) string {
	t.Helper()
	kr := agent.NewKeyring()
	for _, k := range keys {
		if err := kr.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	// A short path: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = agent.ServeAgent(kr, c)
			}()
		}
	}()
	return sock
}

func agentOpts(sock string) Options {
	return Options{Platform: bashShell, ConnectTimeout: 3 * time.Second, CommandTimeout: 2 * time.Second,
		Getenv: func(k string) string {
			if k == "SSH_AUTH_SOCK" {
				return sock
			}
			return ""
		}}
}

func TestAgentAuth(t *testing.T) {
	key := newKey(t)
	tg := keyRig(t, pubOf(t, key), &spec.Credentials{SSHAgent: true})
	c, err := Dial(context.Background(), tg, agentOpts(serveAgent(t, key)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if out, err := c.Send("show runningconfiguration all"); err != nil || !strings.Contains(out, `"Ethernet0"`) {
		t.Fatalf("show over an agent-authenticated session: %v %q", err, out)
	}
}

func TestAgentErrors(t *testing.T) {
	key := newKey(t)
	tg := keyRig(t, pubOf(t, key), &spec.Credentials{SSHAgent: true})
	stale := filepath.Join(t.TempDir(), "gone.sock")
	tests := []struct {
		name, sock string
		kind       Kind
		want       string
	}{
		{"no SSH_AUTH_SOCK", "", KindConfig, "SSH_AUTH_SOCK is not set"},
		{"stale socket", stale, KindConfig, "no such socket"},
		{"empty agent", serveAgent(t), KindConfig, "holds no keys"},
		{"key not authorised", serveAgent(t, newKey(t)), KindAuth, "tried ssh-agent (1 key(s))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Dial(context.Background(), tg, agentOpts(tt.sock))
			e := wantKind(t, err, tt.kind)
			if !strings.Contains(e.Detail, tt.want) {
				t.Fatalf("want %q in %v", tt.want, err)
			}
		})
	}
}

func TestEncryptedKey(t *testing.T) {
	key := newKey(t)
	const pass = "key-Pa55phrase!"
	blk, err := ssh.MarshalPrivateKeyWithPassphrase(key, "", []byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(keyFile, pem.EncodeToMemory(blk), 0o600)
	tg := keyRig(t, pubOf(t, key), &spec.Credentials{
		PrivateKey: &spec.SecretRef{Kind: "file", Name: keyFile},
		Passphrase: &spec.SecretRef{Kind: "env", Name: "KEY_PASS"}})
	o := Options{Platform: bashShell, ConnectTimeout: 3 * time.Second, CommandTimeout: 2 * time.Second}
	env := map[string]string{"KEY_PASS": pass}
	o.Getenv = func(k string) string { return env[k] }
	c, err := Dial(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	env["KEY_PASS"] = "wrong-" + secret
	_, err = Dial(context.Background(), tg, o)
	if e := wantKind(t, err, KindConfig); !strings.Contains(e.Detail, "cannot decrypt") || strings.Contains(err.Error(), env["KEY_PASS"]) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	tg.Credentials.Passphrase = nil
	_, err = Dial(context.Background(), tg, o)
	if e := wantKind(t, err, KindConfig); !strings.Contains(e.Detail, "is encrypted: set passphrase") {
		t.Fatalf("missing passphrase: %v", err)
	}
}

func TestNoAuthMethod(t *testing.T) {
	_, tg, o := rig(t)
	tg.Credentials.Password = nil
	_, err := Dial(context.Background(), tg, o)
	if e := wantKind(t, err, KindConfig); !strings.Contains(e.Detail, "ssh_agent = true") {
		t.Fatalf("%v", err)
	}
}

// TestKnownHostsReread: the parsed known_hosts is cached per file
// version; a file rewritten in place (same size) is read again.
func TestKnownHostsReread(t *testing.T) {
	sw, tg, o := rig(t)
	other, _ := sshemu.NewHostKey()
	kh := tg.Credentials.KnownHosts
	good, _ := os.ReadFile(kh)
	bad := knownhosts.Line([]string{knownhosts.Normalize(sw.Addr())}, other.PublicKey()) + "\n"
	if len(bad) != len(good) {
		t.Fatalf("lines differ in size: %d %d", len(bad), len(good))
	}
	for i, content := range []string{bad, string(good), bad} {
		if err := os.WriteFile(kh, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Dial(context.Background(), tg, o)
		if (i%2 == 0) != (err != nil) {
			t.Fatalf("round %d: %v", i, err)
		}
		if err == nil {
			c.Close()
		}
	}
}

// Issue 37: a known_hosts file that is a FIFO, a link to /dev/zero, a
// dangling link or a directory is refused at once with its name (it
// blocked or ate memory); a known_hosts link to a good file works, and
// a parse error names the spec's file, not a private copy.
func TestKnownHostsPlanted(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	key, _ := sshemu.NewHostKey()
	if err := os.WriteFile(good, []byte(knownhosts.Line([]string{"192.0.2.1"}, key.PublicKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plants := map[string]func(string) error{
		"FIFO":                func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"device":              func(p string) error { return os.Symlink("/dev/zero", p) },
		"no known_hosts file": func(p string) error { return os.Symlink(filepath.Join(dir, "gone"), p) },
		"directory":           func(p string) error { return os.Mkdir(p, 0o700) },
		":1:":                 func(p string) error { return os.WriteFile(p, []byte("not a known_hosts line\n"), 0o600) },
	}
	for says, plant := range plants {
		p := filepath.Join(dir, strings.NewReplacer(" ", "-", ":", "").Replace(says)+"-x")
		if err := plant(p); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := hostKeyDB(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), says) {
				t.Errorf("%s: %v", says, err)
			}
			if err != nil && strings.Contains(err.Error(), "fabctl-known-hosts-") {
				t.Errorf("%s: the error names the private copy: %v", says, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("known_hosts %s blocked", says)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	db, err := hostKeyDB(link)
	if err != nil || len(db.HostKeys("192.0.2.1:22")) != 1 {
		t.Fatalf("known_hosts through a link: %v", err)
	}
}
