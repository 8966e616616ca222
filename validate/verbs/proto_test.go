package verbs

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func sampleEndpoint() *Endpoint {
	g, _ := ParseGID(gidV4a)
	return &Endpoint{Device: "rxe_a", Port: 1, LinkLayer: LinkEthernet, Transport: "ib", GID: g, GIDIndex: 1,
		GIDType: GIDTypeRoCEv2, MTU: 1024, QPs: []QPInfo{{QPN: 0x11, PSN: 0xabcdef}}, RKey: 0x1234, Addr: 0x7f0000001000, BufSize: 131072, MaxRdAtomic: 16}
}

func TestCodecRoundTrip(t *testing.T) {
	test := Test{Op: OpSend, Mode: ModeLatency}
	test.Fill()
	for _, m := range []*Message{
		{Type: MsgHello, Hello: &Hello{Fabctl: "v1.2.3", Test: test}},
		{Type: MsgHelloAck, Ack: &Ack{CMPort: 4791}},
		{Type: MsgEndpoint, Endpoint: sampleEndpoint()},
		{Type: MsgReady},
		{Type: MsgDone, Done: &Done{Messages: 5000}},
		{Type: MsgResult, Result: &Done{Messages: 4999}},
		{Type: MsgError, Error: "MTU mismatch"},
	} {
		var b bytes.Buffer
		if err := Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(b.Bytes(), []byte("\n")) || bytes.Count(b.Bytes(), []byte("\n")) != 1 {
			t.Fatalf("%s: not one line: %q", m.Type, b.String())
		}
		got, err := Decode(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		if err != nil {
			t.Fatalf("%s: %v (%s)", m.Type, err, b.String())
		}
		var again bytes.Buffer
		_ = Encode(&again, got)
		if again.String() != b.String() {
			t.Errorf("%s does not round-trip:\n%s\n%s", m.Type, b.String(), again.String())
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`not json`, "malformed"},
		{`{"v":2,"type":"ready"}`, "the peer speaks control protocol v2, this fabctl v1"},
		{`{"type":"ready"}`, "protocol v0"},
		{`{"v":1,"type":"launch"}`, "unknown message type"},
		{`{"v":1,"type":"hello"}`, "wrong payload"},
		{`{"v":1,"type":"ready","done":{"messages":1}}`, "wrong payload"},
		{`{"v":1,"type":"ready","extra":1}`, "unknown field"},
		{`{"v":1,"type":"endpoint","endpoint":{"device":"x","port":1,"qps":[]}}`, "0 QPs"},
		{`{"v":1,"type":"endpoint","endpoint":{"device":"x","port":1,"qps":[{"qpn":16777216,"psn":1}]}}`, "24-bit"},
		{`{"v":1,"type":"endpoint","endpoint":{"device":"x","port":1,"mtu":1500,"qps":[{"qpn":1,"psn":1}]}}`, "not an RDMA MTU"},
		{`{"v":1,"type":"endpoint","endpoint":{"device":"x","port":1,"gid":"fe80::1","qps":[{"qpn":1,"psn":1}]}}`, "invalid GID"},
		{`{"v":1,"type":"hello","hello":{"test":{"op":"write","mode":"bw","conn":"verbs","size":0,"qps":1}}}`, "message size 0"},
		{`{"v":1,"type":"hello_ack","ack":{"cm_port":70000}}`, "port out of range"},
	} {
		_, err := Decode([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzDecode: any input either decodes into a message that re-encodes
// and decodes to the same thing, or fails with an error; never a panic.
func FuzzDecode(f *testing.F) {
	test := Test{}
	test.Fill()
	for _, m := range []*Message{
		{Type: MsgHello, Hello: &Hello{Fabctl: "dev", Test: test}},
		{Type: MsgEndpoint, Endpoint: sampleEndpoint()},
		{Type: MsgReady}, {Type: MsgDone, Done: &Done{Messages: 7}}, {Type: MsgError, Error: "x"},
	} {
		var b bytes.Buffer
		_ = Encode(&b, m)
		f.Add(bytes.TrimSpace(b.Bytes()))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Decode(in)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := Encode(&b, m); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, err := Decode(bytes.TrimSpace(b.Bytes()))
		if err != nil {
			t.Fatalf("re-decode of %q: %v", b.String(), err)
		}
		var b2 bytes.Buffer
		_ = Encode(&b2, m2)
		if b.String() != b2.String() {
			t.Fatalf("unstable: %q vs %q", b.String(), b2.String())
		}
	})
}

func TestControlChannel(t *testing.T) {
	a, b := net.Pipe()
	ca, cb := NewControl(a), NewControl(b)
	defer ca.Close()
	defer cb.Close()
	go func() {
		_ = ca.Send(&Message{Type: MsgReady}, time.Second)
		ca.SendError(errors.New("rxe_a port 1 is DOWN"))
	}()
	if _, err := cb.Recv(MsgReady, time.Second, "test"); err != nil {
		t.Fatal(err)
	}
	_, err := cb.Recv(MsgDone, time.Second, "test")
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Text != "rxe_a port 1 is DOWN" {
		t.Fatalf("peer error: %v", err)
	}
	// A silent peer times out with the stage and the message awaited.
	_, err = cb.Recv(MsgDone, 50*time.Millisecond, "QP bring-up")
	if err == nil || !strings.Contains(err.Error(), "QP bring-up: no done from") {
		t.Fatalf("timeout: %v", err)
	}
	// A closed channel says the peer went away.
	ca.Close()
	_, err = cb.Recv(MsgDone, time.Second, "test run")
	if err == nil || !strings.Contains(err.Error(), "closed the control channel before sending done") {
		t.Fatalf("closed: %v", err)
	}
}
