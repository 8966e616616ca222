package sshtransport

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// silentServer accepts TCP connections and never speaks SSH.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Issue 21: a connect timeout names the address and the timeout, for the
// CLI sessions (switches) and the exec connections (hosts).
func TestConnectTimeoutNamesAddress(t *testing.T) {
	addr := silentServer(t)
	_, tg, o := rig(t)
	tg.Device.Address = addr
	tg.Insecure = true
	o.ConnectTimeout = 300 * time.Millisecond
	_, err := Dial(context.Background(), tg, o)
	e := wantKind(t, err, KindTimeout)
	if !strings.Contains(e.Detail, addr) || !strings.Contains(e.Detail, "300ms") {
		t.Errorf("switch: %v: want the address %s and the timeout 300ms", err, addr)
	}
	_, err = DialExec(context.Background(), tg, ExecOptions{ConnectTimeout: 300 * time.Millisecond, Getenv: o.Getenv})
	e = wantKind(t, err, KindTimeout)
	if !strings.Contains(e.Detail, addr) || !strings.Contains(e.Detail, "300ms") {
		t.Errorf("host: %v: want the address %s and the timeout 300ms", err, addr)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Err: timeoutErr{}}, "no TCP connection to 192.0.2.1:22 within the connect timeout (10s)"},
		{context.Canceled, "cancelled while connecting to 192.0.2.1:22"},
	} {
		if _, d := classifyDial(c.err, "192.0.2.1:22", 10*time.Second); d != c.want {
			t.Errorf("classifyDial(%v) = %q, want %q", c.err, d, c.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
