package sshemu

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// modeShell is a two-mode test shell: "enable" switches to "#".
type modeShell struct{ priv bool }

func (m *modeShell) Prompt() string {
	if m.priv {
		return "sw1#"
	}
	return "sw1>"
}

func (m *modeShell) Handle(line string) (string, bool) {
	switch strings.TrimSpace(line) {
	case "":
		return "", false
	case "enable":
		m.priv = true
		return "", false
	case "exit":
		return "", true
	case "show version":
		return "Emulated 1.0\n", false
	}
	return "% Invalid input detected at '^' marker.\n", false
}

type client struct {
	t    *testing.T
	sess *gossh.Session
	in   io.WriteCloser
	out  chan []byte
	buf  bytes.Buffer
}

func dial(t *testing.T, s *Server, pw string) (*client, error) {
	t.Helper()
	cfg := &gossh.ClientConfig{User: "admin", Auth: []gossh.AuthMethod{gossh.Password(pw)},
		HostKeyCallback: gossh.FixedHostKey(s.HostKey()), Timeout: 5 * time.Second}
	c, err := gossh.Dial("tcp", s.Addr(), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		return nil, err
	}
	if err := sess.RequestPty("xterm", 24, 200, gossh.TerminalModes{}); err != nil {
		return nil, err
	}
	in, _ := sess.StdinPipe()
	outR, _ := sess.StdoutPipe()
	if err := sess.Shell(); err != nil {
		return nil, err
	}
	cl := &client{t: t, sess: sess, in: in, out: make(chan []byte, 64)}
	go func() {
		defer close(cl.out)
		b := make([]byte, 4096)
		for {
			n, err := outR.Read(b)
			if n > 0 {
				cl.out <- append([]byte(nil), b[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return cl, nil
}

// until reads until the output ends with suffix; ok false on EOF/timeout.
func (c *client) until(suffix string, d time.Duration) (string, bool) {
	deadline := time.After(d)
	for {
		if strings.HasSuffix(c.buf.String(), suffix) {
			s := c.buf.String()
			c.buf.Reset()
			return s, true
		}
		select {
		case b, ok := <-c.out:
			if !ok {
				return c.buf.String(), false
			}
			c.buf.Write(b)
		case <-deadline:
			return c.buf.String(), false
		}
	}
}

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Users == nil {
		cfg.Users = map[string]string{"admin": "pw"}
	}
	cfg.NewShell = func(string) Shell { return &modeShell{} }
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPromptEchoModes(t *testing.T) {
	s := start(t, Config{Banner: "Welcome\n"})
	c, err := dial(t, s, "pw")
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := c.until("sw1>", 2*time.Second); !ok || !strings.HasPrefix(out, "Welcome\r\n") {
		t.Fatalf("banner/prompt: %q", out)
	}
	io.WriteString(c.in, "enable\n")
	if out, ok := c.until("sw1#", 2*time.Second); !ok || out != "enable\r\nsw1#" {
		t.Fatalf("enable: %q", out)
	}
	io.WriteString(c.in, "show version\r\n")
	if out, ok := c.until("sw1#", 2*time.Second); !ok || out != "show version\r\nEmulated 1.0\r\nsw1#" {
		t.Fatalf("show: %q", out)
	}
	io.WriteString(c.in, "bogus\n")
	if out, _ := c.until("sw1#", 2*time.Second); !strings.Contains(out, "% Invalid input") {
		t.Fatalf("invalid: %q", out)
	}
	if got := s.Commands(); len(got) != 3 || got[1] != "show version" {
		t.Fatalf("commands %q", got)
	}
}

func TestFaults(t *testing.T) {
	s := start(t, Config{CommandLatency: func(l string) time.Duration {
		if l == "show version" {
			return 150 * time.Millisecond
		}
		return 0
	}})
	c, err := dial(t, s, "pw")
	if err != nil {
		t.Fatal(err)
	}
	c.until("sw1>", 2*time.Second)

	t0 := time.Now()
	io.WriteString(c.in, "show version\n")
	c.until("sw1>", 2*time.Second)
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Fatalf("latency not applied: %v", d)
	}

	s.Inject(Fault{Match: regexp.MustCompile(`^show`), Kind: Reject, Output: "% Error: busy\n", Times: 1})
	io.WriteString(c.in, "show version\n")
	if out, _ := c.until("sw1>", 2*time.Second); !strings.Contains(out, "% Error: busy") {
		t.Fatalf("reject: %q", out)
	}
	io.WriteString(c.in, "show version\n") // spent: runs normally
	if out, _ := c.until("sw1>", 2*time.Second); !strings.Contains(out, "Emulated") {
		t.Fatalf("after reject: %q", out)
	}

	s.Inject(Fault{Match: regexp.MustCompile(`^show`), Kind: Hang})
	io.WriteString(c.in, "show version\n")
	if _, ok := c.until("sw1>", 300*time.Millisecond); ok {
		t.Fatal("hang answered")
	}
	s.ClearFaults()

	c2, err := dial(t, s, "pw")
	if err != nil {
		t.Fatal(err)
	}
	c2.until("sw1>", 2*time.Second)
	s.Inject(Fault{Kind: DropBefore})
	io.WriteString(c2.in, "show version\n")
	if out, ok := c2.until("sw1>", 2*time.Second); ok || strings.Contains(out, "Emulated") {
		t.Fatalf("drop: %q", out)
	}
}

func TestAuthFailure(t *testing.T) {
	s := start(t, Config{})
	if _, err := dial(t, s, "wrong"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("want auth failure, got %v", err)
	}
	if s.AuthFailures() == 0 {
		t.Fatal("auth failure not counted")
	}
	if !strings.Contains(s.KnownHostsLine(), "ssh-ed25519") {
		t.Fatal(s.KnownHostsLine())
	}
}

// TestCloseRightAfterStart: Close must return even when Serve has not
// started yet (it once waited forever).
func TestCloseRightAfterStart(t *testing.T) {
	for i := 0; i < 200; i++ {
		s, err := Start(Config{Users: map[string]string{"admin": "pw"}, NewShell: func(string) Shell { return &modeShell{} }})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Close hung on iteration %d", i)
		}
	}
}
