package gnmitransport

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

// Issue 21: a target that requires a client certificate (mTLS), dialled
// without one, was reported as "unreachable: broken pipe". The error says
// a client certificate is required and where to set it.
func TestMissingClientCertificate(t *testing.T) {
	pki, err := gnmitarget.NewTestPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tg, err := gnmitarget.Start(context.Background(), gnmitarget.Config{TLS: pki.TLS(true)})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for i := 0; i < 5; i++ { // the alert races the client's first write: try more than once
		target := drivers.Target{Device: intent.Device{Name: "sw1", Address: tg.Addr()},
			Credentials: &spec.Credentials{Name: "gnmi-lab", Username: "admin", CAFile: pki.CA}}
		_, _, err = Dial(context.Background(), target, Options{DialTimeout: 5 * time.Second})
		if err == nil {
			t.Fatal("dial without a client certificate succeeded")
		}
		msg := err.Error()
		if strings.Contains(msg, "unreachable") || strings.Contains(msg, "server certificate must chain") ||
			!strings.Contains(msg, "require") || !strings.Contains(msg, "a client certificate (mTLS)") || !strings.Contains(msg, `cert_file and key_file in credentials "gnmi-lab"`) {
			t.Fatalf("attempt %d: %v", i, err)
		}
		if i == 0 {
			t.Log(msg)
		}
	}
}

// The other form of the same failure: the server's close reaches the
// client as a write error (TLS 1.3 client finishes first).
func TestMissingClientCertificateBrokenPipe(t *testing.T) {
	c := &Client{device: "sw1", credName: "gnmi-lab"}
	err := status.Error(codes.Unavailable, `connection error: desc = "transport: failed to write client preface: write tcp 127.0.0.1:4242->127.0.0.1:57400: write: broken pipe"`)
	e := c.wrap("Capabilities", "", err)
	if !strings.Contains(e.Detail, "may require a client certificate") || !strings.Contains(e.Detail, `credentials "gnmi-lab"`) || strings.HasPrefix(e.Detail, "unreachable") {
		t.Errorf("broken pipe: %s", e.Detail)
	}
	c.clientCert = "/lab/client.pem"
	e = c.wrap("Capabilities", "", status.Error(codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: remote error: tls: unknown certificate authority"`))
	if e.Detail != `the server rejected the client certificate cert_file /lab/client.pem of credentials "gnmi-lab": tls: unknown certificate authority` {
		t.Errorf("rejected certificate: %s", e.Detail)
	}
}
