// Package sshtransport is fabctl's SSH transport, shared by every driver
// that reaches a device over SSH: the switch drivers' CLI session
// (Dial, Conn: scrapligo v1.4.x over an x/crypto/ssh transport of its
// own, transport.go says why not scrapligo's "standard" one, with a
// platform definition per NOS, built-in scrapligo ones or YAML bytes for
// NOSes scrapligo v1.4 lacks such as SONiC, prepared once per process),
// and the exec connection the host driver's agent transport and the
// opensm driver run commands on (DialExec, ExecConn, Pool). Both verify
// host keys against a known_hosts file by default, resolve private key
// (with passphrase), ssh-agent and password auth from the spec's
// credentials at connect time (plus an enable password for privileged
// exec), bound connects and commands, return errors that name the device
// and the cause without any secret, and the CLI session writes a
// redacted transcript when the context asks for one
// (drivers.WithSessionLog, `--debug`).
//
// The directory is drivers/transport/ssh; the package is sshtransport
// because its users also import golang.org/x/crypto/ssh. It may import
// drivers, spec and third-party SSH/scrapligo packages, never a driver
// (what the CLI drivers share above the session is
// drivers/switch/clicore).
package sshtransport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scrapli/scrapligo/channel"
	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/util"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/ident"
	"github.com/fabctl/fabctl/spec"
)

// Defaults.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultCommandTimeout = 60 * time.Second
	DefaultPort           = 22
)

// Kind classifies a connection error.
type Kind string

// Error kinds.
const (
	KindAuth        Kind = "authentication failed"
	KindUnreachable Kind = "unreachable"
	KindTimeout     Kind = "timed out"
	KindHostKey     Kind = "host key verification failed"
	KindConfig      Kind = "bad connection settings"
	KindClosed      Kind = "connection lost"
	KindCommand     Kind = "command failed"
	// KindRefused: fabctl refused to type a line (a line break or a
	// control character in it); nothing was sent.
	KindRefused Kind = "line refused"
)

// Error is a connection or command error on one device.
type Error struct {
	Device string // device name (or address)
	Op     string // "connect", or the command
	Kind   Kind
	Detail string // cause, secret-free
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s: %s", e.Device, e.Op, e.Kind)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Options tune a connection.
type Options struct {
	// Platform is a scrapligo platform: a built-in name ("arista_eos") or
	// a YAML definition ([]byte).
	Platform any
	// ConnectTimeout bounds TCP connect + SSH handshake + first prompt.
	ConnectTimeout time.Duration
	// CommandTimeout bounds each command.
	CommandTimeout time.Duration
	// KnownHosts is the known_hosts file used when the credentials do not
	// name one; "" is ~/.ssh/known_hosts.
	KnownHosts string
	// Getenv resolves env() secrets (nil: os.Getenv).
	Getenv func(string) string
}

// Conn is an open CLI session.
type Conn struct {
	d       *network.Driver
	device  string
	timeout time.Duration
	secrets []string
	log     *sessionLog // nil unless the context asks for a session log
}

// SplitAddress returns host and port from "host", "host:port" or "[v6]:port".
func SplitAddress(addr string) (string, int, error) {
	if h, p, err := net.SplitHostPort(addr); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, fmt.Errorf("bad port in %q", addr)
		}
		return h, n, nil
	}
	if addr == "" {
		return "", 0, errors.New("no management address")
	}
	return strings.Trim(addr, "[]"), DefaultPort, nil
}

// KnownHostsPath is the credentials' known_hosts file, a relative path
// resolved against the directory of the spec file that declares the
// credentials (so `known_hosts = ".fabctl/testbed/known_hosts"` means the
// same file wherever fabctl runs); "" when the credentials name none.
func KnownHostsPath(c *spec.Credentials) string {
	return spec.ResolvePath(c.KnownHosts, c.Src.Block.Filename)
}

// KnownHostsFile is the known_hosts file that verifies a device's host
// key: the credentials' known_hosts (KnownHostsPath), else fallback, else
// ~/.ssh/known_hosts. It fails, saying what to do, when the file does not
// exist. The switch drivers and the host driver's SSH transport share it.
func KnownHostsFile(c *spec.Credentials, fallback string) (string, error) {
	kh := ""
	if c != nil {
		kh = KnownHostsPath(c)
	}
	if kh == "" {
		kh = fallback
	}
	if kh == "" {
		home, _ := os.UserHomeDir()
		kh = filepath.Join(home, ".ssh", "known_hosts")
	}
	if _, err := os.Stat(kh); err != nil {
		return "", fmt.Errorf("no known_hosts file %s (add the device's key there, or skip verification explicitly with --insecure)", kh)
	}
	return kh, nil
}

// Dial connects to a target's device and reaches its default privilege
// level.
func Dial(ctx context.Context, t drivers.Target, o Options) (*Conn, error) {
	name := t.Device.Name
	if name == "" {
		name = t.Device.Address
	}
	fail := func(k Kind, d string) error { return &Error{Device: name, Op: "connect", Kind: k, Detail: d} }
	host, port, err := SplitAddress(t.Device.Address)
	if err != nil {
		return nil, fail(KindConfig, err.Error())
	}
	if o.ConnectTimeout <= 0 && t.Credentials != nil {
		o.ConnectTimeout = t.Credentials.ConnectTimeout // the spec's connect_timeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			// Not "no answer within the connect timeout (-8ms)": the
			// device was never tried.
			return nil, fail(KindTimeout, fmt.Sprintf("not connecting to %s: the operation's deadline had already passed", t.Device.Address))
		}
		if left < o.ConnectTimeout {
			o.ConnectTimeout = left
		}
	}
	c := t.Credentials
	if c == nil {
		return nil, fail(KindConfig, "no credentials block for this switch")
	}
	if c.Username == "" {
		return nil, fail(KindConfig, fmt.Sprintf("credentials %q have no username", c.Name))
	}
	kh := ""
	if !t.Insecure {
		if kh, err = KnownHostsFile(c, o.KnownHosts); err != nil {
			return nil, fail(KindHostKey, err.Error())
		}
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	auth, err := authConfig(c, addr, kh, t.Insecure, o)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, fail(e.Kind, e.Detail)
		}
		return nil, fail(KindConfig, err.Error())
	}
	defer auth.close() // the agent connection is needed for the handshake only
	secrets := auth.secrets
	tmpl, err := templateFor(o.Platform)
	if err != nil {
		return nil, fail(KindConfig, "platform definition: "+err.Error())
	}
	opts := []util.Option{
		options.WithCustomTransport(&sshTransport{ctx: ctx, addr: addr, cfg: auth.cfg}),
		options.WithPort(port),
		options.WithTimeoutSocket(o.ConnectTimeout),
		options.WithTimeoutOps(o.CommandTimeout),
		options.WithTermWidth(4096),
	}
	if auth.enable != "" {
		opts = append(opts, options.WithAuthSecondary(auth.enable))
	}
	var slog *sessionLog
	if w := drivers.SessionLog(ctx); w != nil {
		slog = newSessionLog(w, name, secrets)
		lo, err := slog.options()
		if err != nil {
			return nil, fail(KindConfig, err.Error())
		}
		opts = append(opts, lo...)
	}
	d, err := tmpl.driver(host, o.CommandTimeout, opts...)
	if err != nil {
		return nil, fail(KindConfig, redact(err.Error(), secrets))
	}
	done := make(chan error, 1)
	go func() { done <- d.Open() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				_ = d.Close()
			}
		}()
		return nil, fail(KindTimeout, fmt.Sprintf("connecting to %s: %v", addr, ctx.Err()))
	}
	if err != nil {
		if slog != nil {
			slog.flush()
		}
		k, detail := classify(err, addr, o.ConnectTimeout)
		if k == KindAuth && len(auth.tried) > 0 {
			detail += " (tried " + strings.Join(auth.tried, ", ") + ")"
		}
		return nil, fail(k, redact(detail, secrets))
	}
	return &Conn{d: d, device: name, timeout: o.CommandTimeout, secrets: secrets, log: slog}, nil
}

// classify maps a connect error to a kind and a short cause; a timeout
// names the address and the connect timeout.
func classify(err error, addr string, timeout time.Duration) (Kind, string) {
	msg := err.Error()
	var ke *knownhosts.KeyError
	switch {
	case errors.As(err, &ke) && len(ke.Want) > 0, strings.Contains(msg, "key mismatch"):
		return KindHostKey, "the host key does not match the known_hosts entry (possible man-in-the-middle, or the switch was reinstalled)"
	case errors.As(err, &ke), strings.Contains(msg, "key is unknown"):
		return KindHostKey, "the host is not in the known_hosts file"
	case strings.Contains(msg, "unable to authenticate"), errors.Is(err, util.ErrAuthError):
		return KindAuth, "the switch rejected the credentials"
	case strings.Contains(msg, "i/o timeout"), errors.Is(err, util.ErrTimeoutError), errors.Is(err, context.DeadlineExceeded):
		return KindTimeout, fmt.Sprintf("no answer from %s within the connect timeout (%s)", addr, timeout.Round(time.Millisecond))
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "no route to host"),
		strings.Contains(msg, "no such host"), strings.Contains(msg, "network is unreachable"):
		return KindUnreachable, msg
	case strings.Contains(msg, "EOF"), strings.Contains(msg, "connection reset"):
		return KindClosed, "the switch closed the connection"
	}
	return KindUnreachable, msg
}

// redact masks secrets as whole tokens (drivers.RedactSecrets).
func redact(s string, secrets []string) string {
	return drivers.RedactSecrets(s, secrets, "<redacted>")
}

func (c *Conn) cmdErr(op string, err error) error {
	msg := err.Error()
	k := KindClosed
	detail := "the connection dropped before the command finished"
	switch {
	case errors.Is(err, util.ErrTimeoutError), errors.Is(err, context.DeadlineExceeded):
		k, detail = KindTimeout, fmt.Sprintf("no prompt within %s", c.timeout)
	case strings.Contains(msg, "EOF"), strings.Contains(msg, "closed"), strings.Contains(msg, "reset"):
	default:
		detail = msg
	}
	if len(op) > 80 {
		op = op[:77] + "..."
	}
	return &Error{Device: c.device, Op: op, Kind: k, Detail: redact(detail, c.secrets)}
}

// Device is the device name errors carry.
func (c *Conn) Device() string { return c.device }

// Send runs one command and returns its output (without echo and prompt).
// A response matching the platform's failed-when-contains strings is a
// KindCommand error carrying the output.
func (c *Conn) Send(cmd string) (string, error) {
	out, failed, err := command(c.d, cmd, c.timeout)
	var le *LineError
	if errors.As(err, &le) {
		return "", &Error{Device: c.device, Op: redact(strconv.Quote(cmd), c.secrets), Kind: KindRefused, Detail: redact(le.Err.Error()+": nothing was sent", c.secrets)}
	}
	if err != nil {
		return "", c.cmdErr(redact(cmd, c.secrets), err)
	}
	if failed != "" {
		// The output is the device's: masked by keyword, not searched
		// for secret values (redaction by position, drivers/redact.go).
		return out, &Error{Device: c.device, Op: redact(cmd, c.secrets), Kind: KindCommand, Detail: cause(drivers.RedactSecretWords(out, "<redacted>"))}
	}
	return out, nil
}

// heredocPrompt is bash's PS2.
var heredocPrompt = `(?m)^>\s?$`

// WriteFile writes content to a file on the device with a quoted heredoc
// (cat > PATH <<'FABCTL_EOF'), one line per round trip so no line
// exceeds the tty's line limit. Content must not contain the delimiter
// line.
func (c *Conn) WriteFile(path, content string) error {
	const delim = "FABCTL_EOF"
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	// Every line typed goes through the same check as a command: the
	// path (typed into the shell) and each line of the here-document.
	for _, l := range append([]string{path}, lines...) {
		if err := ident.Line(l); err != nil {
			return &Error{Device: c.device, Op: "cat > " + strconv.Quote(path), Kind: KindRefused, Detail: err.Error() + ": nothing was sent"}
		}
	}
	if strings.ContainsAny(path, " \t'\"\\$`;&|<>(){}*?[]~#!") {
		return &Error{Device: c.device, Op: "cat > " + strconv.Quote(path), Kind: KindRefused, Detail: "the path holds a shell metacharacter: nothing was sent"}
	}
	ev := make([]*channel.SendInteractiveEvent, 0, len(lines)+2)
	ev = append(ev, &channel.SendInteractiveEvent{ChannelInput: "cat > " + path + " <<'" + delim + "'", ChannelResponse: heredocPrompt})
	for _, l := range lines {
		if l == delim {
			return fmt.Errorf("content holds the heredoc delimiter line")
		}
		if len(l) > 4000 {
			return fmt.Errorf("line of %d characters exceeds the tty line limit", len(l))
		}
		ev = append(ev, &channel.SendInteractiveEvent{ChannelInput: l, ChannelResponse: heredocPrompt})
	}
	ev = append(ev, &channel.SendInteractiveEvent{ChannelInput: delim})
	if _, err := c.d.SendInteractive(ev); err != nil {
		return c.cmdErr("cat > "+path, err)
	}
	return nil
}

// Close ends the session.
func (c *Conn) Close() error {
	if c == nil || c.d == nil {
		return nil
	}
	err := c.d.Close()
	if c.log != nil {
		c.log.flush()
	}
	return err
}

// cause picks the line of a failed command's output that says why: the
// first "Failed to ..." or "Error: ..." line, else the last line.
func cause(s string) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r", "")), "\n")
	for _, pre := range []string{"Failed to ", "Error: ", "-bash: "} {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), pre) {
				return strings.TrimSpace(l)
			}
		}
	}
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 300 {
		l = l[:300] + "..."
	}
	return l
}
