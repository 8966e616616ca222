package gnmitarget

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/yangval"
)

var (
	schemaMu sync.Mutex
	schemas  = map[string]*yangval.Schema{}
)

// schema loads a model set once per test binary.
func schema(t testing.TB, set string) *yangval.Schema {
	t.Helper()
	dir := testutil.Shared(t, "yang", set)
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s := schemas[set]; s != nil {
		return s
	}
	s, err := yangval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	schemas[set] = s
	return s
}

var (
	pkiOnce sync.Once
	pkiDir  string
	testPKI *PKI
	pkiErr  error
)

func pki(t testing.TB) *PKI {
	t.Helper()
	pkiOnce.Do(func() {
		pkiDir, pkiErr = os.MkdirTemp("", "gnmitarget-pki")
		if pkiErr == nil {
			testPKI, pkiErr = NewTestPKI(pkiDir)
		}
	})
	if pkiErr != nil {
		t.Fatal(pkiErr)
	}
	return testPKI
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pkiDir != "" {
		os.RemoveAll(pkiDir)
	}
	os.Exit(code)
}

const (
	testUser = "admin"
	testPass = "s3cret-pw"
)

// creds is per-RPC username/password metadata.
type creds struct{ user, pass string }

func (c creds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": c.user, "password": c.pass}, nil
}
func (creds) RequireTransportSecurity() bool { return false }

// clientTLS trusts caFile, optionally presenting the PKI's client
// certificate.
func clientTLS(t testing.TB, caFile string, p *PKI, withCert bool) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withCert {
		c, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc
}

func dial(t testing.TB, addr string, tc *tls.Config, c creds) gpb.GNMIClient {
	t.Helper()
	tcreds := insecure.NewCredentials()
	if tc != nil {
		tcreds = credentials.NewTLS(tc)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(tcreds), grpc.WithPerRPCCredentials(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gpb.NewGNMIClient(conn)
}

// start runs a target over TLS with auth and returns an authenticated
// client.
// profile is the libyang profile of the platform a flavor plays (its
// descriptor's), as the testbed gives it.
func profile(flavor string) *yangval.Profile {
	if flavor == "" {
		flavor = FlavorOpenConfig
	}
	d, ok := builtin.Platform(flavor)
	if !ok {
		return nil
	}
	return &d.YANG.Profile
}

func start(t testing.TB, cfg Config) (*Target, gpb.GNMIClient) {
	t.Helper()
	if cfg.Profile == nil {
		cfg.Profile = profile(cfg.Flavor)
	}
	p := pki(t)
	cfg.TLS = p.TLS(false)
	cfg.Username, cfg.Password = testUser, testPass
	tg, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg, dial(t, tg.Addr(), clientTLS(t, p.CA, p, false), creds{testUser, testPass})
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// p parses a gNMI path string for requests.
func p(t testing.TB, s string) *gpb.Path {
	t.Helper()
	elems, err := yangval.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return toPath(elems)
}

func jv(s string) *gpb.TypedValue {
	return &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(s)}}
}

func upd(t testing.TB, path, val string) *gpb.Update {
	return &gpb.Update{Path: p(t, path), Val: jv(val)}
}

// get returns the JSON of the single value at path.
func get(t testing.TB, c gpb.GNMIClient, typ gpb.GetRequest_DataType, path string) string {
	t.Helper()
	r, err := c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, path)}, Encoding: gpb.Encoding_JSON_IETF, Type: typ})
	if err != nil {
		t.Fatalf("Get %s: %v", path, err)
	}
	if len(r.Notification) != 1 || len(r.Notification[0].Update) != 1 {
		t.Fatalf("Get %s: want one update, got %v", path, r)
	}
	return string(r.Notification[0].Update[0].Val.GetJsonIetfVal())
}

func wantCode(t testing.TB, err error, code codes.Code, substr ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	for _, s := range substr {
		if !strings.Contains(status.Convert(err).Message(), s) {
			t.Errorf("error %q lacks %q", status.Convert(err).Message(), s)
		}
	}
}

func config(t testing.TB, tg *Target) string {
	t.Helper()
	b, err := tg.Config()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compactJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func commitExtension(id string, action any) []*gnmi_ext.Extension {
	c := &gnmi_ext.Commit{Id: id}
	switch a := action.(type) {
	case time.Duration:
		c.Action = &gnmi_ext.Commit_Commit{Commit: &gnmi_ext.CommitRequest{RollbackDuration: durationpb.New(a)}}
	case string:
		switch a {
		case "confirm":
			c.Action = &gnmi_ext.Commit_Confirm{Confirm: &gnmi_ext.CommitConfirm{}}
		case "cancel":
			c.Action = &gnmi_ext.Commit_Cancel{Cancel: &gnmi_ext.CommitCancel{}}
		}
	}
	return []*gnmi_ext.Extension{{Ext: &gnmi_ext.Extension_Commit{Commit: c}}}
}
