package verbs

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSide is an in-memory side for the protocol tests: no RDMA, only
// the orchestration (hello, exchange, checks, barrier, done/result).
type fakeSide struct {
	ep        Endpoint
	connected *AddressVector
	mtu       int
	msgs      uint64
	target    chan uint64
	runErr    error
	route     *Route
}

func (f *fakeSide) Endpoint() *Endpoint { e := f.ep; return &e }
func (f *fakeSide) Connect(p *Endpoint, av AddressVector, mtu int) error {
	f.connected, f.mtu = &av, mtu
	return nil
}
func (f *fakeSide) PathMTU() int { return f.mtu }
func (f *fakeSide) RunClient(t Test, _ time.Duration) (runOut, error) {
	if t.Mode == ModeLatency {
		posts := []uint64{0, 2000, 4000, 6000}
		return runOut{Messages: 3, Posts: posts}, f.runErr
	}
	return runOut{Messages: f.msgs, Elapsed: time.Second}, f.runErr
}
func (f *fakeSide) RunServer(t Test, _ time.Duration) (runOut, error) {
	n := <-f.target
	return runOut{Messages: n, Elapsed: time.Second}, nil
}
func (f *fakeSide) SetTarget(n uint64) { f.target <- n }
func (f *fakeSide) Abort()             { close(f.target) }
func (f *fakeSide) Notes() []string    { return nil }
func (f *fakeSide) Route() *Route      { return f.route }
func (f *fakeSide) Close()             {}

type fakeEngine struct {
	ep      Endpoint
	openErr error
	side    *fakeSide
}

func (e *fakeEngine) Open(l Local, t Test, server bool) (side, error) {
	if e.openErr != nil {
		return nil, e.openErr
	}
	ep := e.ep
	ep.QPs = make([]QPInfo, t.QPs)
	for i := range ep.QPs {
		ep.QPs[i] = QPInfo{QPN: uint32(0x100 + i), PSN: 7}
	}
	e.side = &fakeSide{ep: ep, msgs: 5000, target: make(chan uint64, 1)}
	return e.side, nil
}
func (e *fakeEngine) Available() error { return nil }
func (e *fakeEngine) Listen(Local, Test) (cmListener, error) {
	return nil, errors.New("no rdma_cm in fakes")
}
func (e *fakeEngine) Dial(Local, netip.AddrPort, Test, time.Duration) (side, error) {
	return nil, errors.New("no rdma_cm in fakes")
}

func endpointFor(t *testing.T, dev, gid string, mtu int, typ string) Endpoint {
	return Endpoint{Device: dev, Port: 1, LinkLayer: LinkEthernet, Transport: "ib", GID: mustGID(t, gid), GIDIndex: 1, GIDType: typ, MTU: mtu, MaxRdAtomic: 16}
}

type sideResult struct {
	res *Result
	err error
}

// pair runs server and client over a real TCP control channel.
func pair(t *testing.T, srv, cli *fakeEngine, test Test) (server, client sideResult) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o := Options{Setup: 5 * time.Second, Run: 5 * time.Second}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctl, err := Accept(context.Background(), ln, 5*time.Second)
		if err != nil {
			server.err = err
			return
		}
		defer ctl.Close()
		server.res, server.err = serve(context.Background(), srv, ctl, Local{GIDIndex: -1}, o)
	}()
	ctl, err := Dial(context.Background(), ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	client.res, client.err = runClient(context.Background(), cli, ctl, Local{GIDIndex: -1}, test, o)
	ctl.Close()
	wg.Wait()
	return server, client
}

func TestSessionWriteBandwidth(t *testing.T) {
	srv := &fakeEngine{ep: endpointFor(t, "rxe_a", gidV4a, 1024, GIDTypeRoCEv2)}
	cli := &fakeEngine{ep: endpointFor(t, "rxe_b", gidV4b, 4096, GIDTypeRoCEv2)}
	test := Test{Op: OpWrite, TClass: 106, QPs: 2}
	s, c := pair(t, srv, cli, test)
	if s.err != nil || c.err != nil {
		t.Fatalf("server %v, client %v", s.err, c.err)
	}
	// path MTU = the smaller active MTU; the vector carries the class.
	if cli.side.mtu != 1024 || srv.side.mtu != 1024 || cli.side.connected.TClass != 106 || cli.side.connected.DGID != srv.ep.GID {
		t.Errorf("connect: mtu %d/%d av %+v", cli.side.mtu, srv.side.mtu, cli.side.connected)
	}
	if c.res.Messages != 5000 || c.res.Bytes != 5000*65536 || c.res.Gbps <= 0 || c.res.Peer.Device != "rxe_a" || len(c.res.Peer.QPs) != 2 {
		t.Errorf("client result %+v", c.res)
	}
	if s.res.Role != "server" || s.res.Test.TClass != 106 || s.res.Test.QPs != 2 {
		t.Errorf("the server did not adopt the client's test: %+v", s.res.Test)
	}
}

func TestSessionSendCountsReceives(t *testing.T) {
	srv := &fakeEngine{ep: endpointFor(t, "rxe_a", gidV4a, 1024, GIDTypeRoCEv2)}
	cli := &fakeEngine{ep: endpointFor(t, "rxe_b", gidV4b, 1024, GIDTypeRoCEv2)}
	s, c := pair(t, srv, cli, Test{Op: OpSend})
	if s.err != nil || c.err != nil {
		t.Fatalf("server %v, client %v", s.err, c.err)
	}
	if s.res.Messages != 5000 {
		t.Errorf("server counted %d receives, want the client's 5000", s.res.Messages)
	}
}

func TestSessionLatency(t *testing.T) {
	srv := &fakeEngine{ep: endpointFor(t, "rxe_a", gidV4a, 1024, GIDTypeRoCEv2)}
	cli := &fakeEngine{ep: endpointFor(t, "rxe_b", gidV4b, 1024, GIDTypeRoCEv2)}
	s, c := pair(t, srv, cli, Test{Op: OpSend, Mode: ModeLatency})
	if s.err != nil || c.err != nil {
		t.Fatalf("server %v, client %v", s.err, c.err)
	}
	if c.res.Latency == nil || c.res.Latency.Median != time.Microsecond || c.res.Latency.Samples != 3 {
		t.Errorf("latency %+v", c.res.Latency)
	}
}

func TestSessionFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name       string
		srv, cli   *fakeEngine
		test       Test
		wantClient string
		wantServer string
	}{
		{
			name:       "GID type mismatch",
			srv:        &fakeEngine{ep: endpointFor(t, "rxe_a", gidV4a, 1024, GIDTypeRoCEv1)},
			cli:        &fakeEngine{ep: endpointFor(t, "rxe_b", gidV4b, 1024, GIDTypeRoCEv2)},
			wantClient: "GID type mismatch: rxe_b uses GID index 1 (RoCE v2) but the peer rxe_a uses GID index 1 (IB/RoCE v1)",
			wantServer: "GID type mismatch",
		},
		{
			name:       "MTU below the requirement",
			srv:        &fakeEngine{ep: endpointFor(t, "rxe_a", gidV4a, 1024, GIDTypeRoCEv2)},
			cli:        &fakeEngine{ep: endpointFor(t, "rxe_b", gidV4b, 4096, GIDTypeRoCEv2)},
			test:       Test{MTU: 4096},
			wantClient: "MTU mismatch: the test requires a path MTU of 4096 but rxe_a's active MTU is 1024",
			wantServer: "MTU mismatch",
		},
		{
			name:       "server device down",
			srv:        &fakeEngine{openErr: errors.New("rxe_a port 1 is DOWN, not ACTIVE")},
			cli:        &fakeEngine{ep: endpointFor(t, "rxe_b", gidV4b, 1024, GIDTypeRoCEv2)},
			wantClient: "peer: rxe_a port 1 is DOWN",
			wantServer: "is DOWN",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := pair(t, tc.srv, tc.cli, tc.test)
			if c.err == nil || !strings.Contains(c.err.Error(), tc.wantClient) {
				t.Errorf("client: %v, want %q", c.err, tc.wantClient)
			}
			if s.err == nil || !strings.Contains(s.err.Error(), tc.wantServer) {
				t.Errorf("server: %v, want %q", s.err, tc.wantServer)
			}
		})
	}
}

func TestDialUnreachable(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := Dial(context.Background(), addr, 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "peer not reachable: cannot open the control channel to "+addr) {
		t.Fatalf("%v", err)
	}
}
