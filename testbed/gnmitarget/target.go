package gnmitarget

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// Flavors: the model family the target impersonates.
const (
	FlavorOpenConfig = "openconfig" // OpenConfig models (e.g. Arista, Cisco, SONiC mgmt-framework)
	FlavorSRLinux    = "srlinux"    // Nokia SR Linux native models
)

// Config describes one target.
type Config struct {
	// Addr is the TCP listen address; "" is 127.0.0.1:0 (a free port).
	Addr string
	// Name names the target in errors and logs ("" is "gnmitarget").
	Name string
	// Flavor is FlavorOpenConfig ("" too) or FlavorSRLinux.
	Flavor string

	// YANGDir is a directory of .yang files (e.g. ../shared/yang/openconfig)
	// loaded at Start: every Set is validated against them and
	// Capabilities lists them. Schema, when set, is used instead (models
	// parsed once and shared by many targets). With neither, the target
	// accepts any well-formed JSON_IETF and matches list entries by
	// guessing their keys (see keyCandidates).
	YANGDir string
	Schema  *yangval.Schema
	// LibYANG validates the whole resulting configuration of every Set
	// (and Initial) with libyang: must, when, if-feature, leafref,
	// mandatory, range and pattern, with the platform's features. nil
	// loads Profile from the models of YANGDir or Schema when this build
	// has libyang, unless NoLibYANG; without libyang or a profile, goyang
	// alone validates (see libyang.go).
	LibYANG   *libyang.Context
	NoLibYANG bool
	// Profile is how libyang loads the models: the features and
	// rewrites of the platform the target plays (its descriptor's
	// YANG models, e.g. srlinux.Descriptor.YANG.Profile).
	Profile *yangval.Profile

	// TLS is the server certificate (required unless Insecure) and,
	// with ClientCAFile, mandatory client certificates (mTLS).
	TLS TLS
	// Insecure serves plaintext gRPC. It must be asked for explicitly.
	Insecure bool

	// Username and Password, when Username is set, must arrive with every
	// RPC as gRPC metadata "username" and "password" (compared in
	// constant time); otherwise codes.Unauthenticated.
	Username, Password string

	// Initial is the starting configuration: a JSON_IETF object whose
	// members are module-qualified top-level nodes
	// ({"openconfig-interfaces:interfaces": {...}}). With models it must
	// validate.
	Initial []byte
	// Interfaces are created in the starting configuration in the
	// flavor's shape (OpenConfig: interface[name]/config/{name,type,
	// enabled}; SR Linux: interface[name]/admin-state), in addition to
	// Initial. They are the ports that "exist" on the device.
	Interfaces []string

	// Links is the switch's cabling (testbed/portlink): each configured
	// interface's oper state, speed, FEC, error counters and LLDP
	// neighbours in the flavor's state paths (links.go). nil: every port
	// is down with no neighbour.
	Links portlink.Source

	// SetLatency delays every Set (before it is applied), to measure
	// parallel apply.
	SetLatency time.Duration
	// CommitConfirm advertises and implements the gNMI commit-confirmed
	// extension.
	CommitConfirm bool
	// DefaultRollback is the rollback duration of a commit request that
	// gives none (0: 10 minutes, as the extension's specification says).
	DefaultRollback time.Duration
}

// TLS names PEM files.
type TLS struct {
	CertFile, KeyFile string // server certificate chain and key
	// ClientCAFile, when set, makes client certificates mandatory and
	// verified against this CA (mTLS).
	ClientCAFile string
}

// FaultKind is what an injected fault does.
type FaultKind int

const (
	// FaultReject fails the RPC with Fault.Code (default Unavailable) and
	// Fault.Message; a Set is not applied.
	FaultReject FaultKind = iota + 1
	// FaultDrop closes the client's TCP connection in the middle of the
	// RPC, so the client sees a transport error (Unavailable). With
	// Fault.Applied a Set is committed before the connection drops: the
	// client cannot know whether its change landed.
	FaultDrop
	// FaultHang blocks the RPC until the client cancels it (deadline) or
	// the target closes; a Set is not applied.
	FaultHang
)

// Fault is a failure injected into the next RPCs of one kind.
type Fault struct {
	RPC     string // "Set" ("" too), "Get", "Capabilities", "Subscribe", or "Save" (SR Linux's tools save, a Set)
	Kind    FaultKind
	Code    codes.Code // FaultReject; 0 (OK) means Unavailable
	Message string     // FaultReject; "" means "injected fault"
	Applied bool       // FaultDrop on Set: apply the Set before dropping
	Count   int        // RPCs it hits; 0 means 1
}

// Stats counts RPCs served (including failed ones).
type Stats struct {
	Capabilities, Get, Set, Subscribe int
	// SetRejected counts Sets answered with an error (validation, fault,
	// precondition); RolledBack counts confirmed commits reverted by
	// timeout or cancel.
	SetRejected, RolledBack int
	// Saves counts saves of the running configuration as startup (SR
	// Linux's tools save), Reloads the reloads (startup.go).
	Saves, Reloads int
}

// Target is a running gNMI target.
type Target struct {
	gpb.UnimplementedGNMIServer

	cfg    Config
	name   string
	schema *yangval.Schema
	ly     *libyang.Context
	srv    *grpc.Server
	lis    *trackingListener
	done   chan struct{}
	once   sync.Once

	mu        sync.Mutex
	tree      map[string]any  // configuration, RFC 7951
	startup   map[string]any  // startup configuration: Start's, then each save's (startup.go)
	overrides []stateOverride // SetState, applied in order over the generated state
	reads     uint64          // state reads: counters grow with it
	faults    []Fault
	stats     Stats
	pending   *commit // commit-confirmed in progress
}

// Start listens on cfg.Addr and serves until Close (or ctx is done).
func Start(ctx context.Context, cfg Config) (*Target, error) {
	t := &Target{cfg: cfg, name: cfg.Name, done: make(chan struct{})}
	if t.name == "" {
		t.name = "gnmitarget"
	}
	switch cfg.Flavor {
	case "":
		t.cfg.Flavor = FlavorOpenConfig
	case FlavorOpenConfig, FlavorSRLinux:
	default:
		return nil, fmt.Errorf("%s: unknown flavor %q (want %q or %q)", t.name, cfg.Flavor, FlavorOpenConfig, FlavorSRLinux)
	}
	if t.cfg.DefaultRollback <= 0 {
		t.cfg.DefaultRollback = 10 * time.Minute
	}
	t.schema = cfg.Schema
	if t.schema == nil && cfg.YANGDir != "" {
		s, err := yangval.Load(cfg.YANGDir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		t.schema = s
	}
	dir := cfg.YANGDir
	if dir == "" && t.schema != nil {
		dir = t.schema.Dir()
	}
	ly, err := libyangFor(t.cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	t.ly = ly
	tree, err := t.initialTree()
	if err != nil {
		return nil, fmt.Errorf("%s: initial configuration: %w", t.name, err)
	}
	t.tree = tree
	t.startup = jsontree.DeepCopy(tree).(map[string]any)

	var opts []grpc.ServerOption
	switch {
	case cfg.Insecure:
	case cfg.TLS.CertFile == "" || cfg.TLS.KeyFile == "":
		return nil, fmt.Errorf("%s: TLS certificate and key are required (or set Insecure explicitly)", t.name)
	default:
		tc, err := serverTLS(cfg.TLS)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	opts = append(opts, grpc.UnaryInterceptor(t.unaryAuth), grpc.StreamInterceptor(t.streamAuth))

	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen: %w", t.name, err)
	}
	t.lis = &trackingListener{Listener: l, conns: map[string]net.Conn{}}
	t.srv = grpc.NewServer(opts...)
	gpb.RegisterGNMIServer(t.srv, t)
	go func() { _ = t.srv.Serve(t.lis) }()
	go func() {
		select {
		case <-ctx.Done():
			t.Close()
		case <-t.done:
		}
	}()
	return t, nil
}

func serverTLS(c TLS) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS server certificate: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS client CA %s: no PEM certificate", c.ClientCAFile)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// Addr is the address the target listens on (host:port).
func (t *Target) Addr() string { return t.lis.Addr().String() }

// Close stops the server, ending open RPCs, and a pending commit's timer.
func (t *Target) Close() error {
	t.once.Do(func() {
		close(t.done)
		t.mu.Lock()
		if t.pending != nil {
			t.pending.timer.Stop()
		}
		t.mu.Unlock()
		t.srv.Stop()
	})
	return nil
}

// Config returns the current configuration as indented JSON_IETF with
// sorted members: equal configurations give equal bytes.
func (t *Target) Config() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return marshalTree(t.tree)
}

// Inject queues a fault for the next matching RPCs.
func (t *Target) Inject(f Fault) {
	if f.RPC == "" {
		f.RPC = "Set"
	}
	if f.Count <= 0 {
		f.Count = 1
	}
	t.mu.Lock()
	t.faults = append(t.faults, f)
	t.mu.Unlock()
}

// Stats returns the RPC counters.
func (t *Target) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// Pending returns the id of the confirmed commit awaiting confirmation.
func (t *Target) Pending() (id string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		return "", false
	}
	return t.pending.id, true
}

// Schema returns the models the target validates against (nil without).
func (t *Target) Schema() *yangval.Schema { return t.schema }

func (t *Target) authorize(ctx context.Context) error {
	if t.cfg.Username == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	user, pass := first(md, "username"), first(md, "password")
	okU := subtle.ConstantTimeCompare([]byte(user), []byte(t.cfg.Username))
	okP := subtle.ConstantTimeCompare([]byte(pass), []byte(t.cfg.Password))
	if okU&okP != 1 {
		return status.Error(codes.Unauthenticated, "authentication failed: wrong or missing username/password metadata")
	}
	return nil
}

func first(md metadata.MD, k string) string {
	if v := md.Get(k); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (t *Target) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := t.authorize(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (t *Target) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := t.authorize(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// trackingListener remembers accepted connections by remote address, so a
// fault can close the one carrying an RPC.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[string]net.Conn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.conns[c.RemoteAddr().String()] = c
	l.mu.Unlock()
	return &trackedConn{Conn: c, l: l}, nil
}

func (l *trackingListener) drop(remote string) error {
	l.mu.Lock()
	c := l.conns[remote]
	l.mu.Unlock()
	if c == nil {
		return errors.New("connection not found")
	}
	return c.Close()
}

type trackedConn struct {
	net.Conn
	l *trackingListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c.Conn.RemoteAddr().String())
	c.l.mu.Unlock()
	return c.Conn.Close()
}
