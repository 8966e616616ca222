// Package sshemu is a small framework for stateful SSH CLI emulators: a
// real SSH server (gliderlabs/ssh) on a loopback port that behaves like a
// network OS's interactive shell on a pty: it prints a banner and a
// prompt, echoes what is typed, runs each line through a platform Shell
// (which owns the modes, prompts and parsed configuration), and can add
// latency and inject faults (reject a command, drop the connection
// before or after a command runs, hang).
//
// Platform emulators (testbed/sonicemu, ...) implement Shell and start a
// Server in-process for tests or from a testbed command for demos.
package sshemu

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gliderlabs/ssh"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Shell is one interactive session's command interpreter.
type Shell interface {
	// Prompt is printed before each line is read ("admin@sonic:~$ ",
	// "leaf1(config)#", or "> " inside a heredoc).
	Prompt() string
	// Handle runs one line (without its line ending) and returns the
	// output to print ("\n" line endings; the server writes "\r\n") and
	// whether the session ends.
	Handle(line string) (output string, exit bool)
}

// Echoer is implemented by shells that can turn echo off, as a device
// does at a password prompt; a Shell without it always echoes.
type Echoer interface {
	Echo() bool
}

// FaultKind is what an injected fault does.
type FaultKind int

// Faults.
const (
	// Reject prints Fault.Output instead of running the command.
	Reject FaultKind = iota + 1
	// DropBefore closes the connection before the command runs.
	DropBefore
	// DropAfter runs the command, then closes the connection before its
	// output is written: the client cannot know whether it took effect.
	DropAfter
	// Hang never answers the command (until the connection is closed).
	Hang
)

// Fault is one injected fault: it fires on lines matching Match.
type Fault struct {
	Match  *regexp.Regexp
	Kind   FaultKind
	Output string // Reject: what the device prints
	// Times is how often it fires before it is spent (0: every time).
	Times int
}

// Config configures a Server.
type Config struct {
	// Addr to listen on; "" is 127.0.0.1:0.
	Addr string
	// Users maps user name to password.
	Users map[string]string
	// AuthorizedKeys are accepted for any user in Users.
	AuthorizedKeys []gossh.PublicKey
	// HostKey is the server's host key; nil generates an ed25519 key.
	HostKey gossh.Signer
	// Banner is printed once after login, before the first prompt.
	Banner string
	// NewShell starts the interpreter of one session.
	NewShell func(user string) Shell
	// Latency delays every command's output; CommandLatency, when set,
	// adds a per-command delay (e.g. 200 ms for commits).
	Latency        time.Duration
	CommandLatency func(line string) time.Duration
	// KeyExchanges the server offers; nil is DefaultKeyExchanges.
	KeyExchanges []string
}

// DefaultKeyExchanges are the key exchanges the emulated NOSes' SSH
// servers offer that x/crypto/ssh implements: EOS 4.3x, SONiC 202x
// (Debian bookworm) and Cumulus Linux 5 run OpenSSH 8.x-9.2, NX-OS 10.x
// its own server; none offers the ML-KEM hybrid (mlkem768x25519-sha256,
// OpenSSH 9.9) that x/crypto/ssh clients prefer, so a session with an
// emulator negotiates curve25519-sha256 as it would with the real
// switch, and the emulator does not spend CPU on ML-KEM a switch never
// runs.
var DefaultKeyExchanges = []string{
	"curve25519-sha256", "curve25519-sha256@libssh.org",
	"ecdh-sha2-nistp256", "ecdh-sha2-nistp384", "ecdh-sha2-nistp521",
	"diffie-hellman-group14-sha256",
}

// Server is a running emulator.
type Server struct {
	cfg    Config
	srv    *ssh.Server
	ln     net.Listener
	signer gossh.Signer

	mu       sync.Mutex
	faults   []*Fault
	commands []string
	logins   int
	authFail int
	closed   chan struct{}
}

// Start listens and serves in the background.
func Start(cfg Config) (*Server, error) {
	if cfg.NewShell == nil {
		return nil, errors.New("sshemu: Config.NewShell is required")
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s := &Server{cfg: cfg, signer: cfg.HostKey, closed: make(chan struct{})}
	if s.signer == nil {
		var err error
		if s.signer, err = NewHostKey(); err != nil {
			return nil, err
		}
	}
	s.srv = &ssh.Server{
		Handler: s.session,
		PasswordHandler: func(ctx ssh.Context, pw string) bool {
			want, ok := cfg.Users[ctx.User()]
			if ok && want == pw {
				return true
			}
			s.mu.Lock()
			s.authFail++
			s.mu.Unlock()
			return false
		},
		PtyCallback: func(ssh.Context, ssh.Pty) bool { return true },
	}
	kex := cfg.KeyExchanges
	if kex == nil {
		kex = DefaultKeyExchanges
	}
	s.srv.ServerConfigCallback = func(ssh.Context) *gossh.ServerConfig {
		return &gossh.ServerConfig{Config: gossh.Config{KeyExchanges: kex}}
	}
	if len(cfg.AuthorizedKeys) > 0 {
		s.srv.PublicKeyHandler = func(ctx ssh.Context, key ssh.PublicKey) bool {
			if _, ok := cfg.Users[ctx.User()]; !ok {
				return false
			}
			for _, k := range cfg.AuthorizedKeys {
				if ssh.KeysEqual(k, key) {
					return true
				}
			}
			return false
		}
	}
	s.srv.AddHostKey(s.signer)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sshemu: listen %s: %w", cfg.Addr, err)
	}
	s.ln = ln
	go func() {
		_ = s.srv.Serve(ln)
		close(s.closed)
	}()
	return s, nil
}

// NewHostKey generates an ed25519 host key.
func NewHostKey() (gossh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return gossh.NewSignerFromKey(priv)
}

// Addr is the listening address ("127.0.0.1:40123").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// HostKey is the server's public host key.
func (s *Server) HostKey() gossh.PublicKey { return s.signer.PublicKey() }

// KnownHostsLine is the known_hosts line for this server.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr())}, s.HostKey())
}

// WriteKnownHosts writes a known_hosts file holding this server's key.
func (s *Server) WriteKnownHosts(path string) error {
	return os.WriteFile(path, []byte(s.KnownHostsLine()+"\n"), 0o600)
}

// Close stops the server and its connections.
func (s *Server) Close() error {
	err := s.srv.Close()
	// Serve may not have started yet (Close right after Start): the
	// server does not know the listener then, so close it here too, or
	// Serve would start later on an open listener and never return.
	_ = s.ln.Close()
	<-s.closed
	return err
}

// Inject adds a fault.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ff := f
	s.faults = append(s.faults, &ff)
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Commands returns every line received, in order, across sessions.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// Logins counts sessions opened; AuthFailures counts rejected passwords.
func (s *Server) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// AuthFailures counts rejected password attempts.
func (s *Server) AuthFailures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authFail
}

func (s *Server) fault(line string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = append(s.commands, line)
	for i, f := range s.faults {
		if f.Match != nil && !f.Match.MatchString(line) {
			continue
		}
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return f
	}
	return nil
}

// crlf converts "\n" to "\r\n" the way a pty's output processing does.
func crlf(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}

func (s *Server) session(sess ssh.Session) {
	s.mu.Lock()
	s.logins++
	s.mu.Unlock()
	sh := s.cfg.NewShell(sess.User())
	if cmd := sess.RawCommand(); cmd != "" {
		// ssh host 'command': no pty, no prompt, no echo.
		out, _ := sh.Handle(cmd)
		_, _ = io.WriteString(sess, out)
		_ = sess.Exit(0)
		return
	}
	// Banner and first prompt in one write (one SSH packet).
	_, _ = io.WriteString(sess, crlf(s.cfg.Banner)+sh.Prompt())
	echoOn := func() bool { return true }
	if e, ok := sh.(Echoer); ok {
		echoOn = e.Echo
	}
	var line []byte
	buf := make([]byte, 4096)
	lastCR := false
	for {
		n, err := sess.Read(buf)
		if err != nil {
			return
		}
		// Echo printable input in one write per read, as a pty does, not
		// one SSH packet per character.
		var echo []byte
		flush := func() {
			if len(echo) > 0 {
				_, _ = sess.Write(echo)
				echo = echo[:0]
			}
		}
		for _, c := range buf[:n] {
			if !(c >= 0x20 && c != 0x7f || c == '\t' || c == '\r' || c == '\n') {
				flush()
			}
			switch {
			case c == '\n' && lastCR:
				lastCR = false
				continue
			case c == '\r' || c == '\n':
				lastCR = c == '\r'
				// The pending echo and the newline go out with the
				// command's output when it has no latency: one SSH packet
				// (and one syscall on each side) instead of three, as a
				// pty hands over whatever is buffered.
				pre := string(echo) + "\r\n"
				echo = echo[:0]
				if !s.run(sess, sh, string(line), pre) {
					return
				}
				line = line[:0]
				continue
			case c == 0x7f || c == 0x08:
				if len(line) > 0 {
					line = line[:len(line)-1]
					_, _ = io.WriteString(sess, "\b \b")
				}
			case c == 0x03: // ^C
				_, _ = io.WriteString(sess, "^C\r\n"+sh.Prompt())
				line = line[:0]
			case c == 0x04 && len(line) == 0: // ^D
				_, _ = io.WriteString(sess, "logout\r\n")
				return
			case c >= 0x20 || c == '\t':
				line = append(line, c)
				if echoOn() {
					echo = append(echo, c)
				}
			}
			lastCR = false
		}
		flush()
	}
}

// run handles one line; false ends the session. pre (the echo of the
// line's end and the newline) is written before the command runs when
// the command has latency, else with its output.
func (s *Server) run(sess ssh.Session, sh Shell, line, pre string) bool {
	d := s.latency(line)
	if d > 0 {
		_, _ = io.WriteString(sess, pre)
		pre = ""
	}
	f := s.fault(line)
	if f != nil {
		switch f.Kind {
		case DropBefore:
			_ = sess.Close()
			return false
		case Hang:
			_, _ = io.WriteString(sess, pre)
			<-sess.Context().Done()
			return false
		case Reject:
			time.Sleep(d)
			_, _ = io.WriteString(sess, pre+crlf(f.Output)+sh.Prompt())
			return true
		}
	}
	out, exit := sh.Handle(line)
	time.Sleep(d)
	if f != nil && f.Kind == DropAfter {
		_ = sess.Close()
		return false
	}
	if exit {
		_, _ = io.WriteString(sess, pre+crlf(out))
		_ = sess.Exit(0)
		return false
	}
	_, _ = io.WriteString(sess, pre+crlf(out)+sh.Prompt())
	return true
}

// latency is the delay of a command's output.
func (s *Server) latency(line string) time.Duration {
	d := s.cfg.Latency
	if s.cfg.CommandLatency != nil {
		d += s.cfg.CommandLatency(line)
	}
	return d
}
