package local_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/testbed/local"
	"github.com/fabctl/fabctl/yangval"
)

type gnmiCreds struct{ user, pass string }

func (c gnmiCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": c.user, "password": c.pass}, nil
}
func (gnmiCreds) RequireTransportSecurity() bool { return true }

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestServeGNMI: the serve process runs gNMI targets for openconfig and
// srlinux switches over TLS (CA in <dir>/gnmi-ca.pem) with the record's
// credentials, validating against the models of ../shared/yang when the
// record names it, and removes its PKI when it stops. No root needed.
func TestServeGNMI(t *testing.T) {
	yd := filepath.Dir(testutil.Shared(t, "yang", "openconfig"))
	dir := t.TempDir()
	t.Setenv("FABCTL_SERVE_GNMI_PW", "pw-for-serve")
	oc, srl := freeAddr(t), freeAddr(t)
	rec := local.Record{Dir: dir, YANGDir: yd, Emulators: []local.Emulator{
		{Name: "leaf6", Platform: "openconfig", Address: oc, Username: "admin", PasswordKind: "env", PasswordName: "FABCTL_SERVE_GNMI_PW", Ports: 4},
		{Name: "leaf5", Platform: "srlinux", Address: srl, Username: "admin", PasswordKind: "env", PasswordName: "FABCTL_SERVE_GNMI_PW", Ports: 4},
	}}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, local.RecordFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log strings.Builder
	go func() { done <- local.Serve(ctx, dir, &log) }()
	ca := filepath.Join(dir, local.GNMICAFile)
	kh := filepath.Join(dir, local.KnownHostsFile)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(kh); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not come up: %v\n%s", <-done, log.String())
		}
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	for _, tc := range []struct{ addr, path, val, bad string }{
		{oc, "/interfaces/interface[name=Ethernet3]/config/mtu", "9114", "70000"},
		{srl, "/interface[name=ethernet-1/4]/mtu", "9232", "99999"},
	} {
		conn, err := grpc.NewClient(tc.addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})),
			grpc.WithPerRPCCredentials(gnmiCreds{"admin", "pw-for-serve"}))
		if err != nil {
			t.Fatal(err)
		}
		c := gpb.NewGNMIClient(conn)
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		set := func(v string) error {
			pe, err := yangval.ParsePath(tc.path)
			if err != nil {
				return err
			}
			var elems []*gpb.PathElem
			for _, e := range pe {
				elems = append(elems, &gpb.PathElem{Name: e.Name, Key: e.Keys})
			}
			_, err = c.Set(rctx, &gpb.SetRequest{Update: []*gpb.Update{{Path: &gpb.Path{Elem: elems},
				Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(v)}}}}})
			return err
		}
		if err := set(tc.val); err != nil {
			t.Errorf("%s: %v", tc.addr, err)
		}
		if err := set(tc.bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: out-of-range MTU: want InvalidArgument from the models, got %v", tc.addr, err)
		}
		rcancel()
		conn.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ca); !os.IsNotExist(err) {
		t.Errorf("CA file left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gnmi-pki")); !os.IsNotExist(err) {
		t.Errorf("PKI left behind: %v", err)
	}
	if !strings.Contains(log.String(), "validate every Set against the YANG models") {
		t.Errorf("log:\n%s", log.String())
	}
}
