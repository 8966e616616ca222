package sshtransport

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sonicemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const secret = "s3cr3t-Pa55"

// bashShell is the scrapligo platform of the SONiC emulator's login
// shell (testdata/bash-shell.yaml).
var bashShell = func() []byte {
	b, err := os.ReadFile("testdata/bash-shell.yaml")
	if err != nil {
		panic(err) // the package's own test data
	}
	return b
}()

func rig(t *testing.T) (*sonicemu.Switch, drivers.Target, Options) {
	t.Helper()
	sw, err := sonicemu.Start(sonicemu.Options{Password: secret, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := sw.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	tg := drivers.Target{
		Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf1", Platform: "sonic", Address: sw.Addr()},
		Credentials: &spec.Credentials{Name: "lab", Username: "admin",
			Password: &spec.SecretRef{Kind: "env", Name: "LAB_PW"}, KnownHosts: kh},
	}
	env := map[string]string{"LAB_PW": secret}
	return sw, tg, Options{Platform: bashShell, ConnectTimeout: 3 * time.Second, CommandTimeout: 2 * time.Second,
		Getenv: func(k string) string { return env[k] }}
}

func wantKind(t *testing.T, err error, k Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != k {
		t.Fatalf("want %q error, got %v", k, err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("secret in error: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "leaf1: ") {
		t.Fatalf("error does not name the device: %v", err)
	}
	return e
}

func TestSendAndWriteFile(t *testing.T) {
	sw, tg, o := rig(t)
	c, err := Dial(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Send("show runningconfiguration all")
	if err != nil || !strings.Contains(out, `"Ethernet12"`) {
		t.Fatalf("show: %v %q", err, out)
	}
	_, err = c.Send("frob")
	wantKind(t, err, KindCommand)
	content := "[\n{\"op\": \"add\", \"path\": \"/PORT/Ethernet0/mtu\", \"value\": \"9000\"}\n]\n"
	if err := c.WriteFile("/tmp/p.json", content); err != nil {
		t.Fatal(err)
	}
	if b, _ := sw.File("/tmp/p.json"); string(b) != content {
		t.Fatalf("file: %q", b)
	}
	if out, err := c.Send("sudo config apply-patch /tmp/p.json"); err != nil || !strings.Contains(out, "Patch applied successfully.") {
		t.Fatalf("apply: %v %q", err, out)
	}
}

func TestWrongPassword(t *testing.T) {
	_, tg, o := rig(t)
	o.Getenv = func(string) string { return "not-" + secret }
	_, err := Dial(context.Background(), tg, o)
	wantKind(t, err, KindAuth)
	if strings.Contains(err.Error(), "not-"+secret) {
		t.Fatal("password in error")
	}
}

func TestHostKeys(t *testing.T) {
	sw, tg, o := rig(t)
	// Another key for the same address: mismatch.
	other, _ := sshemu.NewHostKey()
	bad := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(sw.Addr())}, other.PublicKey())
	os.WriteFile(bad, []byte(line+"\n"), 0o600)
	tg.Credentials.KnownHosts = bad
	_, err := Dial(context.Background(), tg, o)
	if e := wantKind(t, err, KindHostKey); !strings.Contains(e.Detail, "does not match") {
		t.Fatalf("mismatch detail: %v", err)
	}
	// Unknown host.
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	tg.Credentials.KnownHosts = empty
	_, err = Dial(context.Background(), tg, o)
	wantKind(t, err, KindHostKey)
	// No file at all.
	tg.Credentials.KnownHosts = filepath.Join(t.TempDir(), "nope")
	_, err = Dial(context.Background(), tg, o)
	wantKind(t, err, KindHostKey)
	// Explicit insecure skips the check.
	tg.Insecure = true
	c, err := Dial(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestUnreachableAndTimeout(t *testing.T) {
	sw, tg, o := rig(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	t2 := tg
	t2.Device.Address = addr
	t2.Insecure = true
	_, err := Dial(context.Background(), t2, o)
	wantKind(t, err, KindUnreachable)

	c, err := Dial(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sw.Inject(sshemu.Fault{Match: regexp.MustCompile(`^show`), Kind: sshemu.Hang})
	start := time.Now()
	_, err = c.Send("show runningconfiguration all")
	wantKind(t, err, KindTimeout)
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("timeout took %v", d)
	}
}

// TestKnownHostsRelativeToSpec: a relative known_hosts is the spec file's
// directory's, whatever the working directory; absolute paths, "~/" and
// credentials without a source file are kept as they are.
func TestKnownHostsRelativeToSpec(t *testing.T) {
	home, _ := os.UserHomeDir()
	src := func(file string) spec.Source {
		var s spec.Source
		s.Block.Filename = file
		return s
	}
	tests := []struct {
		kh, file, want string
	}{
		{".fabctl/testbed/known_hosts", "examples/testbed/testbed.fab.hcl", "examples/testbed/.fabctl/testbed/known_hosts"},
		{"kh", "/etc/fab/spec.fab.hcl", "/etc/fab/kh"},
		{"/abs/kh", "examples/testbed/testbed.fab.hcl", "/abs/kh"},
		{"~/.ssh/lab_hosts", "x/y.fab.hcl", filepath.Join(home, ".ssh/lab_hosts")},
		{"kh", "", "kh"},
		{"", "x/y.fab.hcl", ""},
	}
	for _, tt := range tests {
		c := &spec.Credentials{KnownHosts: tt.kh, Src: src(tt.file)}
		if got := KnownHostsPath(c); got != tt.want {
			t.Errorf("KnownHostsPath(%q in %q) = %q, want %q", tt.kh, tt.file, got, tt.want)
		}
	}
}
