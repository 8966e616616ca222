package sshtransport

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSessionLogRedacted logs into an EOS emulator whose `enable` asks
// for an enable password, with the session log on: the transcript has
// the commands and the switch's answers, and neither the login password
// (sent in the SSH handshake), the enable password (typed into the
// channel) nor a secret in an echoed `username ... secret` line.
func TestSessionLogRedacted(t *testing.T) {
	const enable = "En4ble-S3cret"
	const hashed = "$6$saltsalt$hashedhashedhashed"
	sw, err := eosemu.Start(eosemu.Options{Hostname: "leaf1", Password: secret, EnablePassword: enable, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := sw.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	tg := drivers.Target{
		Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf1", Platform: "eos", Address: sw.Addr()},
		Credentials: &spec.Credentials{Name: "lab", Username: "admin", KnownHosts: kh,
			Password:       &spec.SecretRef{Kind: "env", Name: "PW"},
			EnablePassword: &spec.SecretRef{Kind: "env", Name: "ENABLE"}},
	}
	env := map[string]string{"PW": secret, "ENABLE": enable}
	o := Options{Platform: "arista_eos", ConnectTimeout: 3 * time.Second, CommandTimeout: 3 * time.Second,
		Getenv: func(k string) string { return env[k] }}
	var log syncBuf
	c, err := Dial(drivers.WithSessionLog(context.Background(), &log), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := c.Send("show running-config"); err != nil || !strings.Contains(out, "interface Ethernet1") {
		t.Fatalf("show running-config after enable: %v %q", err, out)
	}
	// Echoed configuration lines carrying secrets (EOS rejects them in
	// privileged exec, but echoes them first).
	_, _ = c.Send("username admin secret 0 " + secret)
	_, _ = c.Send("username ops secret sha512 " + hashed)
	// The enable password anywhere in a line is masked too.
	_, _ = c.Send("show version detail " + enable)
	c.Close()

	got := log.String()
	for _, want := range []string{
		"leaf1 > show running-config",
		"leaf1 < interface Ethernet1",
		"leaf1 > enable",
		"leaf1 < leaf1#",
		"username ops secret sha512 <redacted>",
		"leaf1 - info: SendCommand requested, sending 'username admin secret 0 <redacted>'",
		"leaf1 > show version detail <redacted>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("session log lacks %q", want)
		}
	}
	for _, leak := range []string{secret, enable, hashed} {
		if strings.Contains(got, leak) {
			t.Errorf("session log holds a secret %q", leak)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("session log:\n%s", got)
	}
}

func TestRedact(t *testing.T) {
	s := newSessionLog(nil, "x", []string{`pa"ss\word`, "hunter22"})
	tests := []struct{ in, want string }{
		{`channel write "pa\"ss\\word"`, `channel write "<redacted>"`},
		{"login with hunter22 ok", "login with <redacted> ok"},
		{"username admin privilege 15 secret sha512 $6$x$y", "username admin privilege 15 secret sha512 <redacted>"},
		{"username admin password 5 $5$abc role network-admin", "username admin password 5 <redacted> role network-admin"},
		{"enable secret 0 plain", "enable secret 0 <redacted>"},
		{`tacacs-server host 10.0.0.1 key 7 "0832"`, `tacacs-server host 10.0.0.1 key 7 <redacted>`},
		{`  "password": "xyz",`, `  "password": "<redacted>",`},
		{"Password: ", "Password: "},
		{"priority-flow-control priority 3 no-drop", "priority-flow-control priority 3 no-drop"},
	}
	for _, tt := range tests {
		if got := s.redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
