package sshtransport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/drivers"
)

// ExecOptions tune an exec connection. Zero values take the defaults.
type ExecOptions struct {
	// ConnectTimeout bounds TCP connect + SSH handshake (default
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// KnownHosts is the known_hosts file when the credentials name none
	// ("" = ~/.ssh/known_hosts).
	KnownHosts string
	// Getenv resolves env() secrets (nil: os.Getenv).
	Getenv func(string) string
}

// ExecConn is an SSH connection to a Linux host that runs commands, each
// in a session of its own, for drivers that manage a host by commands and
// files rather than through a CLI prompt: the host driver's agent
// transport and the opensm subnet-manager driver. It shares the CLI
// session's credentials, known_hosts verification and secret-free error
// kinds (one implementation for every SSH user in fabctl).
type ExecConn struct {
	cl      *ssh.Client
	host    string // device name, for errors
	user    string
	secrets []string
}

// DialExec connects and authenticates to the target's address
// (t.Device.Address) with its credentials; errors are *Error naming the
// device (t.Device.Name).
func DialExec(ctx context.Context, t drivers.Target, o ExecOptions) (*ExecConn, error) {
	if o.ConnectTimeout <= 0 && t.Credentials != nil {
		o.ConnectTimeout = t.Credentials.ConnectTimeout // the spec's connect_timeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	c := &ExecConn{host: t.Device.Name}
	fail := func(k Kind, d string) error {
		c.Close()
		return c.Fail("connect", k, d)
	}
	host, port, err := SplitAddress(t.Device.Address)
	if err != nil {
		return nil, fail(KindConfig, err.Error())
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	cr := t.Credentials
	if cr == nil {
		return nil, fail(KindConfig, "no credentials for this host (credentials = \"NAME\" naming a credentials block with a username)")
	}
	if cr.Username == "" {
		return nil, fail(KindConfig, fmt.Sprintf("credentials %q have no username", cr.Name))
	}
	c.user = cr.Username
	// Credentials and known_hosts: the CLI session's implementation.
	auth, err := NewClientAuth(cr, addr, t.Insecure, Options{ConnectTimeout: o.ConnectTimeout, KnownHosts: o.KnownHosts, Getenv: o.Getenv})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, fail(e.Kind, e.Detail)
		}
		return nil, fail(KindConfig, err.Error())
	}
	defer auth.Close() // the ssh-agent connection is needed for the handshake only
	c.secrets = auth.Secrets
	cfg, khFile, tried := auth.Config, auth.KnownHosts, auth.Tried
	d := net.Dialer{Timeout: o.ConnectTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fail(classifyDial(err, addr, o.ConnectTimeout))
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(o.ConnectTimeout))
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	stop()
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, fail(KindTimeout, "cancelled or timed out during the SSH handshake with "+addr)
		}
		k, detail := classifyHandshake(err, addr, o.ConnectTimeout, khFile, cr.Username, tried)
		return nil, fail(k, detail)
	}
	_ = conn.SetDeadline(time.Time{})
	c.cl = ssh.NewClient(cc, chans, reqs)
	return c, nil
}

func classifyDial(err error, addr string, timeout time.Duration) (Kind, string) {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return KindTimeout, fmt.Sprintf("no TCP connection to %s within the connect timeout (%s)", addr, timeout.Round(time.Millisecond))
	case errors.Is(err, context.Canceled):
		return KindTimeout, "cancelled while connecting to " + addr
	}
	return KindUnreachable, err.Error()
}

func classifyHandshake(err error, addr string, timeout time.Duration, khFile, user string, tried []string) (Kind, string) {
	msg := err.Error()
	var ne net.Error
	switch {
	case knownhosts.IsHostKeyChanged(err):
		return KindHostKey, fmt.Sprintf("the host key of %s does not match its entry in %s: refusing to connect (possible man-in-the-middle, or the host was reinstalled; check the key, then ssh-keygen -R '%s' -f %s)",
			addr, khFile, knownhosts.Normalize(addr), khFile)
	case knownhosts.IsHostUnknown(err):
		return KindHostKey, fmt.Sprintf("%s is not in %s: add its host key after checking the fingerprint (ssh-keyscan), or skip verification explicitly with --insecure", addr, khFile)
	case strings.Contains(msg, "unable to authenticate"):
		return KindAuth, fmt.Sprintf("%s rejected user %q (tried %s)", addr, user, strings.Join(tried, ", "))
	case errors.As(err, &ne) && ne.Timeout():
		return KindTimeout, fmt.Sprintf("no SSH handshake with %s within the connect timeout (%s)", addr, timeout.Round(time.Millisecond))
	case strings.Contains(msg, "EOF"), strings.Contains(msg, "connection reset"):
		return KindClosed, addr + " closed the connection during the SSH handshake (MaxStartups, or not an SSH server?)"
	}
	return KindUnreachable, msg
}

// Run runs a shell command line with stdin (nil: none). A non-zero exit
// is not an error: code says it; stderr keeps its last 8 KiB.
func (c *ExecConn) Run(ctx context.Context, cmd string, stdin []byte) (stdout, stderr []byte, code int, err error) {
	return c.RunLines(ctx, cmd, stdin, nil)
}

// RunLines is Run with onLine (nil: none) receiving each line of the
// command's stderr as it arrives (progress announcements). When ctx ends
// first the connection is closed (which ends the session) and the error
// is ctx's.
func (c *ExecConn) RunLines(ctx context.Context, cmd string, stdin []byte, onLine func(string)) (stdout, stderr []byte, code int, err error) {
	s, err := c.cl.NewSession()
	if err != nil {
		return nil, nil, -1, err
	}
	defer s.Close()
	var so, se bytes.Buffer
	out := &capped{b: &so, max: MaxStdout}
	s.Stdout, s.Stderr = out, &tail{max: 8 << 10, b: &se, onLine: onLine}
	if stdin != nil {
		s.Stdin = bytes.NewReader(stdin)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// Closing the connection ends the session; an agent mid-apply
		// finishes its transaction (restoring on failure) on its own.
		c.cl.Close()
		<-done
		return so.Bytes(), se.Bytes(), -1, ctx.Err()
	}
	if out.over {
		// Nothing past the cap was kept: the answer is not read at all.
		return nil, se.Bytes(), -1, c.Fail("run", KindCommand, fmt.Sprintf("the command printed more than %d MiB on stdout; refused unread (a broken or hostile program on the host)", MaxStdout>>20))
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		return so.Bytes(), se.Bytes(), ee.ExitStatus(), nil
	}
	if err != nil {
		return so.Bytes(), se.Bytes(), -1, err
	}
	return so.Bytes(), se.Bytes(), 0, nil
}

// MaxStdout bounds what a command run over SSH may print on stdout: an
// agent's largest answer (a plan of a host with every NIC, a link report
// of at most 1 MiB) is far below it, and a host printing without end
// must not fill the controller's memory.
const MaxStdout = 64 << 20

// capped keeps what is written up to max bytes and then refuses: the
// write error ends the session's copy of the remote stdout.
type capped struct {
	b    *bytes.Buffer
	max  int
	over bool
}

func (w *capped) Write(p []byte) (int, error) {
	if w.over || w.b.Len()+len(p) > w.max {
		w.over = true
		return 0, errStdoutCap
	}
	return w.b.Write(p)
}

var errStdoutCap = errors.New("stdout over its cap")

// tail keeps the last max bytes written (stderr of a chatty command).
// With onLine set it also hands over each complete line as it arrives.
type tail struct {
	max    int
	b      *bytes.Buffer
	onLine func(string)
	line   []byte // the incomplete last line (onLine only)
	skip   bool   // dropping a line longer than max, up to its newline
}

func (t *tail) Write(p []byte) (int, error) {
	if t.onLine != nil {
		t.line = append(t.line, p...)
		for {
			i := bytes.IndexByte(t.line, '\n')
			if i < 0 {
				break
			}
			if !t.skip {
				t.onLine(string(t.line[:i]))
			}
			t.line, t.skip = t.line[i+1:], false
		}
		if len(t.line) > t.max { // no newline in sight: not a line anyone reads
			t.line, t.skip = t.line[:0], true
		}
	}
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

// Fail builds the connection's error for a step, secrets redacted.
func (c *ExecConn) Fail(op string, k Kind, detail string) error {
	return &Error{Device: c.host, Op: op, Kind: k, Detail: redact(detail, c.secrets)}
}

// SudoRefused reports whether a command's stderr is sudo refusing to run
// it (a password needed, no sudoers rule, no sudo at all).
func (c *ExecConn) SudoRefused(stderr string) bool { return SudoRefusalOf(stderr) != SudoOK }

// Alive checks that the connection still answers (an idle one may have
// died): one keepalive request, the cheapest there is.
func (c *ExecConn) Alive() bool {
	_, _, err := c.cl.SendRequest("keepalive@openssh.com", true, nil)
	return err == nil
}

// SSHClient is the underlying x/crypto client, for subsystems such as
// SFTP.
func (c *ExecConn) SSHClient() *ssh.Client { return c.cl }

// Device is the device name errors carry.
func (c *ExecConn) Device() string { return c.host }

// User is the login name.
func (c *ExecConn) User() string { return c.user }

// Close ends the connection.
func (c *ExecConn) Close() {
	if c.cl != nil {
		c.cl.Close()
	}
}

// SudoRefusal is why sudo refused to run a command, as its stderr says.
type SudoRefusal int

// Sudo's refusals.
const (
	SudoOK            SudoRefusal = iota // not a refusal by sudo
	SudoNeedsPassword                    // a password (or a terminal to read one) is required
	SudoNotAllowed                       // no sudoers rule lets the login run the command
	SudoMissing                          // sudo is not installed
)

// SudoRefusalOf recognises sudo's own refusals on a command's stderr.
func SudoRefusalOf(stderr string) SudoRefusal {
	switch {
	case strings.Contains(stderr, "a password is required"), strings.Contains(stderr, "a terminal is required"):
		return SudoNeedsPassword
	case strings.Contains(stderr, "not in the sudoers file"), strings.Contains(stderr, "is not allowed to execute"):
		return SudoNotAllowed
	case strings.Contains(stderr, "sudo: not found"), strings.Contains(stderr, "sudo: command not found"):
		return SudoMissing
	}
	return SudoOK
}
