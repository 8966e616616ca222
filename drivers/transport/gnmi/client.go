// Package gnmitransport is fabctl's gNMI client: a connection on
// openconfig/gnmi v0.14.1 and grpc (TLS with CA verification by default,
// mTLS, username/password or a bearer token as gRPC metadata from the
// spec's secret references, dial and RPC timeouts, the credentials'
// connect_timeout, bounded retries of a dial or Get whose connection
// failed transiently, never of a Set), Capabilities, Get
// (one path, JSON_IETF, decoded) and Set (one SetRequest), with errors
// that name the device, the RPC and the path and never a secret. What a
// driver does with it (intent into SetRequests, rollback) is
// drivers/switch/gnmicore's.
//
// The directory is drivers/transport/gnmi; the package is gnmitransport
// so that importers keep the name gnmi free (the openconfig proto
// package is also called gnmi). It may import drivers, spec, yangval,
// internal/jsontree and drivers/transport/ssh (secret references and
// credential file paths), never a driver.
package gnmitransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// Defaults.
const (
	DefaultPort        = "57400" // the common gNMI port (SR Linux, Arista, Cisco examples)
	DefaultDialTimeout = 10 * time.Second
	DefaultRPCTimeout  = 60 * time.Second
	// DefaultDialAttempts is how often Dial tries a connection that fails
	// transiently (refused, reset, no answer in time): a device (or a
	// loaded VM running its emulator) that answers the second time is
	// not a failed plan.
	DefaultDialAttempts = 3
	// DefaultRetryBackoff is the pause before the second attempt; it
	// doubles before each further one.
	DefaultRetryBackoff = 500 * time.Millisecond
)

// Options tune a client.
type Options struct {
	// DialTimeout bounds one connection attempt: connecting, the TLS
	// handshake and the first RPC (Capabilities). 0: the credentials'
	// connect_timeout, else DefaultDialTimeout.
	DialTimeout time.Duration
	// DialAttempts bounds the attempts of Dial and of a Get whose
	// connection failed transiently (0: DefaultDialAttempts; 1: no
	// retry). A Set is never retried: it may have been applied.
	DialAttempts int
	// RetryBackoff is the pause before the second attempt, doubled
	// before each further one (0: DefaultRetryBackoff).
	RetryBackoff time.Duration
	// RPCTimeout bounds each RPC.
	RPCTimeout time.Duration
	// Getenv resolves env() secrets (nil: os.Getenv).
	Getenv func(string) string
}

// Error is a gNMI error on one device: the RPC, the path it was about
// (the first path of a request with several) and the cause, secret-free.
type Error struct {
	Device string
	RPC    string // "connect", "Capabilities", "Get", "Set"
	Path   string
	Code   codes.Code
	Detail string
}

func (e *Error) Error() string {
	s := e.Device + ": gNMI " + e.RPC
	if e.Path != "" {
		s += " " + e.Path
	}
	if e.Code != codes.OK && e.Code != codes.Unknown {
		s += ": " + e.Code.String()
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// ConnLost reports whether the error leaves it unknown if the RPC took
// effect (the connection dropped or the deadline passed mid-RPC).
func ConnLost(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == codes.Unavailable || e.Code == codes.DeadlineExceeded || e.Code == codes.Canceled)
}

// Client is a connection to one device.
type Client struct {
	conn    *grpc.ClientConn
	gnmi    gpb.GNMIClient
	device  string
	opts    Options
	secrets []string
	caFile  string
	// credName names the credentials block; clientCert is its cert_file
	// ("" when the client presents no certificate), for errors.
	credName, clientCert string
}

// auth sends username/password (or a bearer token) with every RPC. It
// requires transport security: secrets never cross a plaintext channel.
type auth struct{ md map[string]string }

func (a auth) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return a.md, nil
}
func (a auth) RequireTransportSecurity() bool { return true }

// CredentialPath resolves a file named in a credentials block (ca_file,
// cert_file, key_file) the way known_hosts is: relative to the directory
// of the spec file that declares the credentials.
func CredentialPath(c *spec.Credentials, p string) string {
	cc := *c
	cc.KnownHosts = p // one rule for every file a credentials block names
	return sshtransport.KnownHostsPath(&cc)
}

// Dial connects to the target's device over TLS and checks it answers
// Capabilities (which the drivers need anyway).
func Dial(ctx context.Context, t drivers.Target, o Options) (*Client, *gpb.CapabilityResponse, error) {
	name := t.Device.Name
	if name == "" {
		name = t.Device.Address
	}
	if o.DialTimeout <= 0 && t.Credentials != nil {
		o.DialTimeout = t.Credentials.ConnectTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.DialAttempts <= 0 {
		o.DialAttempts = DefaultDialAttempts
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.RPCTimeout <= 0 {
		o.RPCTimeout = DefaultRPCTimeout
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	fail := func(code codes.Code, format string, a ...any) error {
		return &Error{Device: name, RPC: "connect", Code: code, Detail: fmt.Sprintf(format, a...)}
	}
	addr := t.Device.Address
	if addr == "" {
		return nil, nil, fail(codes.InvalidArgument, "no management address")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = strings.Trim(addr, "[]"), DefaultPort
	}
	addr = net.JoinHostPort(host, port)
	c := t.Credentials
	if c == nil {
		return nil, nil, fail(codes.InvalidArgument, "no credentials block for this switch (gNMI needs at least a username and password or a client certificate)")
	}
	cl := &Client{device: name, opts: o, credName: c.Name}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if t.Insecure {
		tc.InsecureSkipVerify = true // explicit --insecure only
	} else if c.CAFile != "" {
		cl.caFile = CredentialPath(c, c.CAFile)
		pem, err := safefile.ReadFile(cl.caFile, safefile.TLS)
		if err != nil {
			return nil, nil, fail(codes.InvalidArgument, "credentials %q: ca_file %s: %s", c.Name, cl.caFile, safeCause(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fail(codes.InvalidArgument, "credentials %q: ca_file %s holds no PEM certificate", c.Name, cl.caFile)
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" || c.KeyFile != "" {
		if c.CertFile == "" || c.KeyFile == "" {
			return nil, nil, fail(codes.InvalidArgument, "credentials %q: mTLS needs both cert_file and key_file", c.Name)
		}
		cert, err := loadKeyPair(CredentialPath(c, c.CertFile), CredentialPath(c, c.KeyFile))
		if err != nil {
			// The key's content never appears: only the files and the cause.
			return nil, nil, fail(codes.InvalidArgument, "credentials %q: client certificate %s / key %s: %s", c.Name,
				CredentialPath(c, c.CertFile), CredentialPath(c, c.KeyFile), tlsCause(err))
		}
		tc.Certificates = []tls.Certificate{cert}
		cl.clientCert = CredentialPath(c, c.CertFile)
	}
	md := map[string]string{}
	if c.Username != "" {
		md["username"] = c.Username
	}
	if c.Password != nil {
		pw, err := c.Password.Resolve(o.Getenv)
		if err != nil {
			return nil, nil, fail(codes.InvalidArgument, "credentials %q: %v", c.Name, err)
		}
		md["password"] = pw
		cl.secrets = append(cl.secrets, pw)
	}
	if c.Token != nil {
		tok, err := c.Token.Resolve(o.Getenv)
		if err != nil {
			return nil, nil, fail(codes.InvalidArgument, "credentials %q: %v", c.Name, err)
		}
		md["authorization"] = "Bearer " + tok
		cl.secrets = append(cl.secrets, tok)
	}
	dopts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tc))}
	if len(md) > 0 {
		dopts = append(dopts, grpc.WithPerRPCCredentials(auth{md}))
	}
	var caps *gpb.CapabilityResponse
	err = retry(ctx, o, func() error {
		var err error
		caps, err = cl.connect(ctx, addr, dopts)
		return err
	})
	if err != nil {
		return nil, nil, cl.gaveUp(err, addr)
	}
	return cl, caps, nil
}

// connect makes one connection and asks for Capabilities within the dial
// timeout. A failed attempt closes its connection: the next one starts
// afresh instead of waiting out grpc's reconnect backoff.
func (c *Client) connect(ctx context.Context, addr string, dopts []grpc.DialOption) (*gpb.CapabilityResponse, error) {
	conn, err := grpc.NewClient(addr, dopts...)
	if err != nil {
		return nil, &Error{Device: c.device, RPC: "connect", Code: codes.InvalidArgument, Detail: c.redact(err.Error())}
	}
	dctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	// Not WaitForReady: a refused connection or a failed TLS handshake
	// fails now, with its cause, instead of being retried until the
	// deadline.
	caps, err := gpb.NewGNMIClient(conn).Capabilities(dctx, &gpb.CapabilityRequest{})
	if err != nil {
		conn.Close()
		e := c.wrap("Capabilities", "", err)
		if e.Code == codes.DeadlineExceeded && ctx.Err() == nil {
			e.Detail = fmt.Sprintf("no answer from %s within %s (is the gNMI server listening there? %s)", addr, c.opts.DialTimeout, e.Detail)
		}
		return nil, e
	}
	c.conn, c.gnmi = conn, gpb.NewGNMIClient(conn)
	return caps, nil
}

// transient says whether a failed attempt may succeed if tried again:
// the connection was refused or reset, or the device did not answer in
// time. Errors with a cause a retry cannot change (TLS verification, a
// client certificate the server wants or rejects, authentication, a
// model the device lacks) are not, nor is the caller's cancellation.
func transient(ctx context.Context, err error) bool {
	var e *Error
	if ctx.Err() != nil || !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case codes.DeadlineExceeded:
		return true
	case codes.Unavailable:
		// wrap rewrote TLS and mTLS causes; what is left is the transport
		// ("unreachable: ... connection refused", "connection reset").
		return strings.HasPrefix(e.Detail, "unreachable: ")
	}
	return false
}

// retry runs op up to o.DialAttempts times while it fails transiently,
// pausing o.RetryBackoff before the second attempt and twice as long
// before each further one. Only idempotent operations go through it (a
// dial, a Get): never a Set, which may have been applied when its
// answer was lost.
func retry(ctx context.Context, o Options, op func() error) error {
	attempts := o.DialAttempts
	if attempts <= 0 {
		attempts = 1
	}
	wait := o.RetryBackoff
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return &attemptsError{err: err, n: i}
			case <-time.After(wait):
			}
			wait *= 2
		}
		if err = op(); err == nil || !transient(ctx, err) {
			if err != nil && i > 0 {
				return &attemptsError{err: err, n: i + 1}
			}
			return err
		}
	}
	return &attemptsError{err: err, n: attempts}
}

// attemptsError is the last error of a retried operation and how many
// attempts were made.
type attemptsError struct {
	err error
	n   int
}

func (a *attemptsError) Error() string { return a.err.Error() }
func (a *attemptsError) Unwrap() error { return a.err }

// gaveUp names the device, the address and the attempts in the error of
// a failed dial.
func (c *Client) gaveUp(err error, addr string) error {
	var a *attemptsError
	if !errors.As(err, &a) {
		return err
	}
	var e *Error
	if !errors.As(a.err, &e) {
		return a.err
	}
	out := *e
	if a.n > 1 {
		out.Detail = fmt.Sprintf("%s (gave up after %d attempts to %s, %s each; raise connect_timeout in the credentials for a slow device)", e.Detail, a.n, addr, c.opts.DialTimeout)
	}
	return &out
}

// Device is the device name errors carry.
func (c *Client) Device() string { return c.device }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) redact(s string) string {
	return drivers.RedactSecrets(s, c.secrets, "[redacted]")
}

// wrap turns a gRPC error into an *Error with a cause a user can act on.
func (c *Client) wrap(rpc, path string, err error) *Error {
	st, _ := status.FromError(err)
	// The message is the device's: masked by keyword, not searched for
	// secret values (redaction by position, drivers/redact.go).
	e := &Error{Device: c.device, RPC: rpc, Path: path, Code: st.Code(), Detail: drivers.RedactSecretWords(st.Message(), "[redacted]")}
	msg := st.Message()
	switch {
	case st.Code() == codes.Unauthenticated:
		e.Detail = "authentication failed: check the credentials' username and password (" + e.Detail + ")"
	// The server's TLS alerts about the client (RFC 8446 6.2:
	// certificate_required, bad_certificate, unknown_ca, ...) arrive as
	// "remote error: tls: ...": they are about fabctl's certificate, not
	// the server's.
	case c.clientCert == "" && strings.Contains(msg, "tls: certificate required"):
		e.Detail = fmt.Sprintf("the server requires a client certificate (mTLS): set cert_file and key_file in credentials %q (%s)", c.credName, tlsCause(errors.New(e.Detail)))
	case strings.Contains(msg, "remote error: tls:") && c.clientCert != "":
		e.Detail = fmt.Sprintf("the server rejected the client certificate cert_file %s of credentials %q: %s", c.clientCert, c.credName, tlsCause(errors.New(e.Detail)))
	case rpc == "Capabilities" && st.Code() == codes.Unavailable && c.clientCert == "" &&
		(strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset")):
		// TLS 1.3: the client finishes its handshake before the server
		// checks the client's certificate, so a server that requires one
		// may close the connection under the client's first write.
		e.Detail = fmt.Sprintf("the server closed the connection right after the TLS handshake (%s): it may require a client certificate (mTLS): set cert_file and key_file in credentials %q", lastCause(msg), c.credName)
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:") || strings.Contains(msg, "certificate"):
		where := "the system's CA pool (set ca_file in the credentials)"
		if c.caFile != "" {
			where = "ca_file " + c.caFile
		}
		e.Detail = "TLS verification failed: " + tlsCause(errors.New(e.Detail)) + "; the server certificate must chain to " + where + " (--insecure skips verification, labs only)"
	case st.Code() == codes.Unavailable:
		e.Detail = "unreachable: " + e.Detail
	}
	return e
}

// lastCause is the last ": "-separated part of an error message
// ("broken pipe").
func lastCause(s string) string {
	s = strings.TrimRight(s, `"`)
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// tlsCause shortens a TLS error to its last, most specific part.
func tlsCause(err error) string {
	s := strings.TrimRight(err.Error(), `"`) // gRPC quotes the transport's cause
	if i := strings.LastIndex(s, "tls: "); i >= 0 {
		return s[i:]
	}
	if i := strings.LastIndex(s, "x509: "); i >= 0 {
		return s[i:]
	}
	return s
}

func (c *Client) rpcCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.RPCTimeout)
}

// Get reads the configuration at one path as JSON_IETF and returns the
// node's decoded value; ok is false when the device has no data there
// (codes.NotFound, or an empty notification).
func (c *Client) Get(ctx context.Context, path string) (v any, ok bool, err error) {
	p, err := Path(path)
	if err != nil {
		return nil, false, &Error{Device: c.device, RPC: "Get", Path: path, Code: codes.InvalidArgument, Detail: err.Error()}
	}
	var resp *gpb.GetResponse
	// A Get changes nothing: one whose connection failed (Unavailable) is
	// tried again, bounded as a dial. Not one that ran into the RPC
	// deadline: that already waited RPCTimeout.
	err = retry(ctx, c.opts, func() error {
		rctx, cancel := c.rpcCtx(ctx)
		defer cancel()
		var err error
		resp, err = c.gnmi.Get(rctx, &gpb.GetRequest{Path: []*gpb.Path{p}, Type: gpb.GetRequest_CONFIG, Encoding: gpb.Encoding_JSON_IETF})
		if err == nil || status.Code(err) == codes.NotFound {
			return err
		}
		e := c.wrap("Get", path, err)
		if e.Code != codes.Unavailable {
			return &permanent{e}
		}
		return e
	})
	if status.Code(err) == codes.NotFound {
		return nil, false, nil
	}
	if err != nil {
		var pe *permanent
		if errors.As(err, &pe) {
			return nil, false, pe.e
		}
		var e *Error
		if errors.As(err, &e) {
			return nil, false, e
		}
		return nil, false, err
	}
	for _, n := range resp.GetNotification() {
		for _, u := range n.GetUpdate() {
			b := u.GetVal().GetJsonIetfVal()
			if b == nil {
				b = u.GetVal().GetJsonVal()
			}
			if b == nil {
				return nil, false, &Error{Device: c.device, RPC: "Get", Path: path, Detail: fmt.Sprintf("the device answered with a %T value, not JSON_IETF", u.GetVal().GetValue())}
			}
			val, err := Decode(b)
			if err != nil {
				return nil, false, &Error{Device: c.device, RPC: "Get", Path: path, Detail: "the device's JSON_IETF does not parse: " + err.Error()}
			}
			return unwrap(path, val), true, nil
		}
	}
	return nil, false, nil
}

// permanent hides an RPC error from retry (it tries again only what it
// sees as an *Error with a transient code).
type permanent struct{ e *Error }

func (p *permanent) Error() string { return p.e.Error() }

// Set sends one SetRequest, once: a Set whose answer was lost may have
// been applied, so it is never retried (ConnLost tells the caller). path
// names the request in errors.
func (c *Client) Set(ctx context.Context, req *gpb.SetRequest) error {
	ctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	_, err := c.gnmi.Set(ctx, req)
	if err != nil {
		return c.wrap("Set", requestPath(req), err)
	}
	return nil
}

// requestPath names a request in errors: its first replaced or updated
// path (the first deleted one when it only deletes), and how many more
// paths it holds.
func requestPath(req *gpb.SetRequest) string {
	var paths []string
	for _, u := range append(append([]*gpb.Update(nil), req.GetReplace()...), req.GetUpdate()...) {
		paths = append(paths, PathString(req.GetPrefix(), u.GetPath()))
	}
	for _, p := range req.GetDelete() {
		paths = append(paths, PathString(req.GetPrefix(), p))
	}
	switch len(paths) {
	case 0:
		return ""
	case 1:
		return paths[0]
	}
	return fmt.Sprintf("%s (+%d more paths)", paths[0], len(paths)-1)
}

// loadKeyPair is tls.LoadX509KeyPair through safefile: regular files of
// bounded size (the key is read once, never printed).
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := safefile.ReadFile(certFile, safefile.TLS)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := safefile.ReadFile(keyFile, safefile.TLS)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// safeCause is why a file named in a credentials block was refused: the
// problem safefile found, without repeating the path.
func safeCause(err error) string {
	var se *safefile.Error
	if errors.As(err, &se) {
		return se.Problem
	}
	return err.Error()
}
