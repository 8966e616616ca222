package verbs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by every error that means "the traffic test
// could not run here" (no verbs support in this build, no RDMA device),
// as opposed to "it ran and failed". Callers count such a test as not
// run, never as passed.
var ErrUnavailable = errors.New("traffic test unavailable")

// side is one side's RDMA resources (device context, PD, MR, CQs, QPs).
// The cgo engine implements it; session.go drives it. Every method runs
// on the goroutine that opened the side (locked to its OS thread, pinned
// near the NIC), except SetTarget and Abort.
type side interface {
	// Endpoint describes this side for the peer.
	Endpoint() *Endpoint
	// Connect records the peer's buffer and, in verbs mode (pathMTU > 0),
	// moves the QPs to RTR and RTS towards the peer; rdma_cm connected
	// them while opening.
	Connect(peer *Endpoint, av AddressVector, pathMTU int) error
	// PathMTU is the MTU the QPs run with once connected.
	PathMTU() int
	// RunClient runs the client's hot loop for the whole test, giving up
	// after limit.
	RunClient(t Test, limit time.Duration) (runOut, error)
	// RunServer runs the server's loop (SEND receives, ping-pong replies)
	// until the client's message count is reached.
	RunServer(t Test, limit time.Duration) (runOut, error)
	// SetTarget tells a running server loop how many messages to expect.
	SetTarget(n uint64)
	// Abort stops a running loop (the control channel failed).
	Abort()
	// Notes are facts about the setup worth reporting.
	Notes() []string
	// Route is the path rdma_cm resolved (nil: none).
	Route() *Route
	Close()
}

// runOut is what a hot loop produced.
type runOut struct {
	Messages uint64
	Elapsed  time.Duration
	Posts    []uint64 // latency: the post timestamps, ns
}

// engine opens sides. The cgo build has the real one; tests use fakes.
type engine interface {
	// Available says why tests cannot run here (nil: they can).
	Available() error
	// Open creates a side for verbs-mode connection (QPs in INIT; the
	// server's receives posted).
	Open(l Local, t Test, server bool) (side, error)
	// Listen starts an rdma_cm listener on the local address.
	Listen(l Local, t Test) (cmListener, error)
	// Dial connects through rdma_cm to a listener.
	Dial(l Local, server netip.AddrPort, t Test, timeout time.Duration) (side, error)
}

type cmListener interface {
	Port() int
	// Accept takes t.QPs connection requests and accepts them.
	Accept(t Test, timeout time.Duration) (side, error)
	Close()
}

// Options tune a session's timeouts.
type Options struct {
	// Setup bounds each setup step: hello, exchange, QP bring-up (default 30s).
	Setup time.Duration
	// Run bounds the test itself (default: duration + 2 min, or 30 min for
	// an iteration count).
	Run time.Duration
	// Fabctl is this fabctl's version, sent in the hello.
	Fabctl string
	// Logf receives progress lines (nil: none).
	Logf func(format string, args ...any)
	// OnReady and OnRunEnd (client side, optional) bracket the data
	// phase: both sides connected, and the client's loop done. Counters
	// read there see the test's traffic and none of the connection setup.
	// OnReady gets both sides' endpoints (their QP numbers: a wire
	// observer counts only the packets addressed to them).
	OnReady  func(local, peer *Endpoint)
	OnRunEnd func()
}

func (o Options) setup() time.Duration {
	if o.Setup > 0 {
		return o.Setup
	}
	return 30 * time.Second
}

func (o Options) run(t Test) time.Duration {
	switch {
	case o.Run > 0:
		return o.Run
	case t.Duration > 0:
		return t.Duration + 2*time.Minute
	}
	return 30 * time.Minute
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// serverLoop reports whether the server runs a loop of its own: SEND
// needs receives reposted, ping-pong needs replies. RDMA WRITE/READ
// bandwidth and READ latency leave the server passive.
func serverLoop(t Test) bool {
	if t.Mode == ModeLatency {
		return t.Op != OpRead
	}
	return t.Op == OpSend
}

// Serve runs the server side of one test on an accepted control channel.
func Serve(ctx context.Context, ctl *Control, l Local, o Options) (*Result, error) {
	return serve(ctx, defaultEngine, ctl, l, o)
}

// RunClient runs the client side of test t over a control channel to the
// server.
func RunClient(ctx context.Context, ctl *Control, l Local, t Test, o Options) (*Result, error) {
	return runClient(ctx, defaultEngine, ctl, l, t, o)
}

// lockThread keeps the session on one OS thread (verbs calls and the hot
// loop run there) and pins it near the NIC; it returns the placement
// notes and the unlock function.
func lockThread(l *Local) ([]string, func()) {
	runtime.LockOSThread()
	var orig unix.CPUSet
	origErr := unix.SchedGetaffinity(0, &orig)
	notes := place(l)
	return notes, func() {
		// Give the thread back to the scheduler as it was; a thread whose
		// affinity cannot be restored stays locked and dies with the goroutine.
		if origErr == nil && unix.SchedSetaffinity(0, &orig) == nil {
			runtime.UnlockOSThread()
		}
	}
}

// watch aborts the side when ctx ends, until stop is called.
func watch(ctx context.Context, ctl *Control, s func() side) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if sd := s(); sd != nil {
				sd.Abort()
			}
			ctl.Close()
		case <-done:
		}
	}()
	return func() { close(done) }
}

func serve(ctx context.Context, eng engine, ctl *Control, l Local, o Options) (res *Result, err error) {
	l.Fill()
	placement, unlock := lockThread(&l)
	defer unlock()
	var sd side
	stop := watch(ctx, ctl, func() side { return sd })
	defer stop()
	defer func() {
		if err != nil {
			ctl.SendError(err)
		}
		if sd != nil {
			sd.Close()
		}
	}()
	m, err := ctl.Recv(MsgHello, o.setup(), "hello")
	if err != nil {
		return nil, err
	}
	t := m.Hello.Test
	o.logf("server: %s from %s (fabctl %s)", t, ctl.Peer, m.Hello.Fabctl)
	if err := eng.Available(); err != nil {
		return nil, err
	}
	res = &Result{Role: "server", Backend: "fabctl", Test: t, Placement: placement}
	if t.Conn == ConnCM {
		ln, err := eng.Listen(l, t)
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		if err := ctl.Send(&Message{Type: MsgHelloAck, Ack: &Ack{CMPort: ln.Port()}}, o.setup()); err != nil {
			return nil, err
		}
		if sd, err = ln.Accept(t, o.setup()); err != nil {
			return nil, fmt.Errorf("rdma_cm accept: %w", err)
		}
	} else {
		if sd, err = eng.Open(l, t, true); err != nil {
			return nil, err
		}
		if err := ctl.Send(&Message{Type: MsgHelloAck, Ack: &Ack{}}, o.setup()); err != nil {
			return nil, err
		}
	}
	peer, err := exchange(ctl, sd, t, false, o)
	if err != nil {
		return nil, err
	}
	res.Local, res.Peer, res.PathMTU = sd.Endpoint(), peer, sd.PathMTU()
	if serverLoop(t) {
		// The client's done message (its message count) ends the loop; a
		// broken channel aborts it.
		errc := make(chan error, 1)
		go func() {
			dm, err := ctl.Recv(MsgDone, o.run(t), "test run")
			if err != nil {
				sd.Abort()
				errc <- err
				return
			}
			sd.SetTarget(dm.Done.Messages)
			errc <- nil
		}()
		out, runErr := sd.RunServer(t, o.run(t))
		if cerr := <-errc; cerr != nil {
			return nil, cerr
		}
		if runErr != nil {
			return nil, runErr
		}
		res.bandwidth(out.Messages, t.Size, out.Elapsed)
	} else if _, err := ctl.Recv(MsgDone, o.run(t), "test run"); err != nil {
		return nil, err
	}
	res.Notes, res.Route = sd.Notes(), sd.Route()
	if err := ctl.Send(&Message{Type: MsgResult, Result: &Done{Messages: res.Messages}}, o.setup()); err != nil {
		return nil, err
	}
	return res, nil
}

func runClient(ctx context.Context, eng engine, ctl *Control, l Local, t Test, o Options) (res *Result, err error) {
	l.Fill()
	t.Fill()
	if err := t.Check(); err != nil {
		return nil, err
	}
	if err := eng.Available(); err != nil {
		return nil, err
	}
	placement, unlock := lockThread(&l)
	defer unlock()
	var sd side
	stop := watch(ctx, ctl, func() side { return sd })
	defer stop()
	defer func() {
		if err != nil {
			ctl.SendError(err)
		}
		if sd != nil {
			sd.Close()
		}
	}()
	if err := ctl.Send(&Message{Type: MsgHello, Hello: &Hello{Fabctl: o.Fabctl, Test: t}}, o.setup()); err != nil {
		return nil, err
	}
	m, err := ctl.Recv(MsgHelloAck, o.setup(), "hello")
	if err != nil {
		return nil, err
	}
	res = &Result{Role: "client", Backend: "fabctl", Test: t, Placement: placement}
	if t.Conn == ConnCM {
		host, _, err := net.SplitHostPort(ctl.Peer)
		if err != nil {
			return nil, err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return nil, err
		}
		if sd, err = eng.Dial(l, netip.AddrPortFrom(ip.Unmap(), uint16(m.Ack.CMPort)), t, o.setup()); err != nil {
			return nil, err
		}
	} else if sd, err = eng.Open(l, t, false); err != nil {
		return nil, err
	}
	peer, err := exchange(ctl, sd, t, true, o)
	if err != nil {
		return nil, err
	}
	res.Local, res.Peer, res.PathMTU = sd.Endpoint(), peer, sd.PathMTU()
	o.logf("client: connected %s -> %s (path MTU %d); running %s", res.Local.Device, peer.Device, res.PathMTU, t)
	if o.OnReady != nil {
		o.OnReady(res.Local, peer)
	}
	out, err := sd.RunClient(t, o.run(t))
	if o.OnRunEnd != nil {
		o.OnRunEnd()
	}
	if err != nil {
		return nil, err
	}
	if err := ctl.Send(&Message{Type: MsgDone, Done: &Done{Messages: out.Messages}}, o.setup()); err != nil {
		return nil, err
	}
	rm, err := ctl.Recv(MsgResult, o.setup(), "result")
	if err != nil {
		return nil, err
	}
	if t.Mode == ModeLatency {
		res.Messages = out.Messages
		res.Elapsed = out.Elapsed
		res.Latency = LatencyFromPosts(out.Posts, t.Op)
		if res.Latency == nil {
			return nil, fmt.Errorf("latency test completed %d iterations: too few for a sample", out.Messages)
		}
	} else {
		res.bandwidth(out.Messages, t.Size, out.Elapsed)
		if t.Op == OpSend && rm.Result.Messages != out.Messages {
			return nil, fmt.Errorf("the server received %d of %d SEND messages", rm.Result.Messages, out.Messages)
		}
	}
	res.Notes, res.Route = sd.Notes(), sd.Route()
	return res, nil
}

// exchange swaps endpoints (client first), checks them, brings the QPs
// up (verbs mode), and meets the peer at the ready barrier.
func exchange(ctl *Control, sd side, t Test, client bool, o Options) (*Endpoint, error) {
	local := sd.Endpoint()
	var peer *Endpoint
	if client {
		if err := ctl.Send(&Message{Type: MsgEndpoint, Endpoint: local}, o.setup()); err != nil {
			return nil, err
		}
	}
	m, err := ctl.Recv(MsgEndpoint, o.setup(), "endpoint exchange")
	if err != nil {
		return nil, err
	}
	peer = m.Endpoint
	if !client {
		if err := ctl.Send(&Message{Type: MsgEndpoint, Endpoint: local}, o.setup()); err != nil {
			return nil, err
		}
	}
	if len(peer.QPs) != len(local.QPs) {
		return nil, fmt.Errorf("the peer has %d QPs, this side %d", len(peer.QPs), len(local.QPs))
	}
	if err := CheckPeer(local, peer, t.Conn); err != nil {
		return nil, err
	}
	var av AddressVector
	mtu := 0
	if t.Conn == ConnVerbs {
		if mtu, err = PathMTU(local.Device, local.MTU, peer.Device, peer.MTU, t.MTU); err != nil {
			return nil, err
		}
		if av, err = Vector(local, peer, t.TClass, t.SL); err != nil {
			return nil, err
		}
	} else if t.MTU != 0 && sd.PathMTU() < t.MTU {
		return nil, fmt.Errorf("MTU mismatch: the test requires a path MTU of %d but rdma_cm connected %s with %d", t.MTU, local.Device, sd.PathMTU())
	}
	// rdma_cm has connected the QPs already: mtu 0 only hands over the
	// peer's buffer (rkey, address).
	if err := sd.Connect(peer, av, mtu); err != nil {
		return nil, err
	}
	if err := ctl.Send(&Message{Type: MsgReady}, o.setup()); err != nil {
		return nil, err
	}
	if _, err := ctl.Recv(MsgReady, o.setup(), "QP bring-up"); err != nil {
		return nil, err
	}
	return peer, nil
}

// Listen opens the control channel's listening socket.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control channel: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Accept waits for one control connection within timeout.
func Accept(ctx context.Context, ln net.Listener, timeout time.Duration) (*Control, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("control channel: accept on %s: %w", ln.Addr(), r.err)
		}
		return NewControl(r.c), nil
	case <-tc:
		ln.Close()
		return nil, fmt.Errorf("control channel: no client connected to %s within %s", ln.Addr(), timeout)
	case <-ctx.Done():
		ln.Close()
		return nil, ctx.Err()
	}
}

// Dial connects the control channel to a server, retrying until timeout
// while the server is not listening yet.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Control, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		d := net.Dialer{Timeout: time.Until(deadline)}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return NewControl(c), nil
		}
		last = err
		if ctx.Err() != nil || time.Now().Add(200*time.Millisecond).After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("peer not reachable: cannot open the control channel to %s within %s: %v "+
		"(is `fabctl verbs server` running there, and is TCP to that address allowed?)", addr, timeout, last)
}
