package sshtransport

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
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

// Issue 37: the transcript masks what fabctl typed and the device's echo
// of it, by position; what the device printed elsewhere is masked by
// secret keyword only, never by searching for a secret's value.
func TestSessionLogMasksByPosition(t *testing.T) {
	var buf bytes.Buffer
	s := newSessionLog(&buf, "x", []string{`pa"ss\word`, "admin"})
	s.now = func() time.Time { return time.Time{} }
	write := func(in string) { s.logEntry("debug\x00channel write " + strconv.Quote(in)) }
	s.Write([]byte("Last login from admin-ws\r\nadmin@x:~$ "))
	write("show users admin\n")                                        // typed: the value fabctl sent is masked
	s.Write([]byte("show users admin\r\nadmin  pts/0\r\nadmin@x:~$ ")) // its echo too, not its output
	write("enable\n")
	s.Write([]byte("enable\r\nPassword: "))
	s.logEntry("debug\x00channel write \"redacted\"") // a password at a prompt
	s.Write([]byte("\r\nx# "))
	write("show running-config\n")
	s.Write([]byte("show running-config\r\nusername admin privilege 15 secret sha512 $6$x$y\r\n" +
		"username ops password 5 $5$abc role network-admin\r\nenable secret 0 plain\r\n" +
		"tacacs-server host 10.0.0.1 key 7 \"0832\"\r\n  \"password\": \"xyz\",\r\n" +
		"priority-flow-control priority 3 no-drop\r\n\x1b]0;owned\x07title\r\nx# "))
	s.logEntry("info\x00SendCommand requested, sending 'show pa\"ss\\word'")
	s.logEntry("info\x00found prompt admin@x")
	s.flush()
	got := buf.String()
	for _, want := range []string{
		"x < Last login from admin-ws\n",
		"x > show users <redacted>\n",
		"x < admin@x:~$ show users <redacted>\n",
		"x < admin  pts/0\n",
		"x > <redacted>\n",
		"x < Password: \n",
		"x < username admin privilege 15 secret sha512 <redacted>\n",
		"x < username ops password 5 <redacted> role network-admin\n",
		"x < enable secret 0 <redacted>\n",
		"x < tacacs-server host 10.0.0.1 key 7 <redacted>\n",
		`x <   "password": "<redacted>",` + "\n",
		"x < priority-flow-control priority 3 no-drop\n",
		`x < \x1b]0;owned\x07title` + "\n",
		"x - info: SendCommand requested, sending 'show <redacted>'\n",
		"x - info: found prompt admin@x\n",
		"x < x# \n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if strings.Contains(got, `pa"ss\word`) || strings.Contains(got, "\x1b") {
		t.Errorf("transcript holds a secret or a raw escape")
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", got)
	}
}

// Issue 37: the login password equals the user name, which EOS prints
// (startup-config "last modified ... by admin"): the transcript shows
// those words as the device printed them, so no mask marks where the
// password is; the password fabctl typed at the enable prompt stays
// masked.
func TestSessionLogPasswordEqualsUserName(t *testing.T) {
	const pw = "admin"
	sw, err := eosemu.Start(eosemu.Options{Hostname: "leaf1", Password: pw, EnablePassword: pw, Ports: 2})
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
			EnablePassword: &spec.SecretRef{Kind: "env", Name: "PW"}},
	}
	o := Options{Platform: "arista_eos", ConnectTimeout: 3 * time.Second, CommandTimeout: 3 * time.Second,
		Getenv: func(string) string { return pw }}
	var log syncBuf
	c, err := Dial(drivers.WithSessionLog(context.Background(), &log), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send("show startup-config"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	got := log.String()
	if !strings.Contains(got, "leaf1 > <redacted>") {
		t.Errorf("the enable password typed at the prompt is not masked")
	}
	if !strings.Contains(got, " by admin") {
		t.Errorf("the device's own \"by admin\" was changed")
	}
	if strings.Contains(got, "by <redacted>") {
		t.Errorf("a mask in the device's output gives the password away")
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("session log:\n%s", got)
	}
}

// Issue 37: the one send path refuses a line holding a line break or a
// control character, whatever built it: nothing of it reaches the
// device (a port label with a newline sent "hostname PWNED-EOS" as a
// command of its own).
func TestSendRefusesLineBreaks(t *testing.T) {
	sw, err := eosemu.Start(eosemu.Options{Hostname: "leaf1", Password: secret, Ports: 2})
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
			Password: &spec.SecretRef{Kind: "env", Name: "PW"}},
	}
	o := Options{Platform: "arista_eos", ConnectTimeout: 3 * time.Second, CommandTimeout: 3 * time.Second,
		Getenv: func(string) string { return secret }}
	c, err := Dial(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, line := range []string{
		"interface Ethernet1\nhostname PWNED-EOS",
		"interface Ethernet1\rhostname PWNED-EOS",
		"interface Ethernet1\x1b[A\x15hostname PWNED-EOS",
		"interface Ethernet1\u0085hostname PWNED-EOS",
		"interface Ethernet1\x00hostname PWNED-EOS",
	} {
		_, err := c.Send(line)
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindRefused || !strings.Contains(e.Error(), "nothing was sent") {
			t.Errorf("Send(%q) = %v, want a refusal", line, err)
		}
	}
	if err := c.WriteFile("/tmp/x", "ok\nhostname PWNED\x1b\n"); err == nil {
		t.Error("WriteFile sent a line with ESC")
	}
	if err := c.WriteFile("/tmp/x; reboot", "ok\n"); err == nil {
		t.Error("WriteFile typed a path holding ';'")
	}
	for _, cmd := range sw.Commands() {
		if strings.Contains(cmd, "PWNED") || strings.Contains(cmd, "reboot") {
			t.Errorf("the device received %q", cmd)
		}
	}
	if out, err := c.Send("show running-config"); err != nil || !strings.Contains(out, "hostname leaf1") {
		t.Errorf("the session is not usable after the refusals: %v", err)
	}
}
