//go:build !verbs

package verbs

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// Without the verbs tag every test is refused as unavailable, never run.
func TestUnavailableWithoutVerbs(t *testing.T) {
	if Built {
		t.Fatal("Built in a build without the verbs tag")
	}
	if err := Available(); !errors.Is(err, ErrUnavailable) || err.Error() != "traffic test unavailable: this fabctl was built without verbs support (build with -tags verbs and rdma-core)" {
		t.Fatalf("Available() = %v", err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	_, err := RunClient(context.Background(), NewControl(a), Local{GIDIndex: -1}, Test{}, Options{Setup: time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("RunClient = %v", err)
	}
	// A server without the engine reads the hello and tells the client why.
	go func() {
		_, err := Serve(context.Background(), NewControl(b), Local{GIDIndex: -1}, Options{Setup: time.Second})
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("Serve = %v", err)
		}
	}()
	ca := NewControl(a)
	test := Test{}
	test.Fill()
	if err := ca.Send(&Message{Type: MsgHello, Hello: &Hello{Test: test}}, time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = ca.Recv(MsgHelloAck, time.Second, "hello")
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Text != errNotBuilt.Error() {
		t.Fatalf("client saw %v", err)
	}
}
