package traffic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

// Pairs with a host fabctl reaches over SSH (connect = "ssh" or
// "ssh+netns:NAME") run their sides there, through the agent fabctl
// already ships to such hosts for plan and apply: the controller sends a
// SideRequest (agent op "traffic"), the agent runs it with ServeSide and
// answers with a SideResult. A server side announces its control address
// on stderr (ReadyLine) as soon as it listens; the controller then starts
// the client side with that address. Counters are read the same way
// before and after the test. The QP exchange itself goes over the verbs
// control channel between the two hosts, as between local hosts.

// Side roles.
const (
	RoleServer   = "server"
	RoleClient   = "client"
	RoleCounters = "counters"
)

// SideRequest is one step of a test pair on a host.
type SideRequest struct {
	Role    string `json:"role"`              // server, client or counters
	Backend string `json:"backend,omitempty"` // fabctl (default) or perftest
	// Local is the side's NIC; an empty Device is found from Netdev on
	// the host itself.
	Local verbs.Local `json:"local"`
	Test  verbs.Test  `json:"test"`
	// Peer is the server's control address (client; perftest: host:port).
	Peer    string        `json:"peer,omitempty"`
	Setup   time.Duration `json:"setup,omitempty"`
	Version string        `json:"version,omitempty"`
}

// SideResult is what a step found.
type SideResult struct {
	Result   *verbs.Result `json:"result,omitempty"`
	Counters Counters      `json:"counters,omitempty"`
	// Device is the RDMA device the side used; Software is set when it is
	// a software device (rxe, siw).
	Device   string `json:"device,omitempty"`
	Software bool   `json:"software,omitempty"`
	// Trained is the rate the device's port trained at (counters step;
	// 0: unknown).
	Trained spec.BitRate `json:"trained,omitempty"`
	// Error is the side's failure; Unavailable says the test could not
	// run there (no verbs support, no device, no perftest), Peer that
	// Error is what the other side reported.
	Error       string `json:"error,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
	Peer        bool   `json:"peer,omitempty"`
}

// Err rebuilds the side's error: verbs.ErrUnavailable and
// *verbs.PeerError survive the trip, so the verdict is the same as for a
// local pair.
func (r *SideResult) Err() error {
	switch {
	case r.Error == "":
		return nil
	case r.Unavailable:
		return fmt.Errorf("%w: %s", verbs.ErrUnavailable, strings.TrimPrefix(r.Error, verbs.ErrUnavailable.Error()+": "))
	case r.Peer:
		return &verbs.PeerError{Text: strings.TrimPrefix(r.Error, "peer: ")}
	}
	return errors.New(r.Error)
}

func (r *SideResult) setErr(err error) {
	if err == nil {
		return
	}
	var pe *verbs.PeerError
	r.Error, r.Unavailable, r.Peer = err.Error(), errors.Is(err, verbs.ErrUnavailable), errors.As(err, &pe)
}

// readyPrefix starts the line a server side writes on stderr once it
// listens.
const readyPrefix = "fabctl-traffic: ready "

// ReadyLine is the announcement of a server side listening on addr.
func ReadyLine(addr string) string { return readyPrefix + addr }

// ParseReady returns the address of a ReadyLine.
func ParseReady(line string) (string, bool) {
	a, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix)
	return a, ok && a != ""
}

// DecodeSideRequest reads a request with errors that say what is wrong.
func DecodeSideRequest(b []byte) (*SideRequest, error) {
	var req SideRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("the traffic request is not valid JSON for this fabctl: %v", err)
	}
	if dec.More() {
		return nil, errors.New("the traffic request has trailing data after the JSON object")
	}
	switch req.Role {
	case RoleServer, RoleCounters:
	case RoleClient:
		if req.Peer == "" {
			return nil, errors.New("a client side needs the server's address (peer)")
		}
	default:
		return nil, fmt.Errorf("unknown traffic role %q (want server, client or counters)", req.Role)
	}
	switch req.Backend {
	case "", "fabctl", "perftest":
	default:
		return nil, fmt.Errorf("unknown traffic backend %q (want fabctl or perftest)", req.Backend)
	}
	return &req, nil
}

// sideEndpoint is the endpoint a request describes, on this machine or
// in network namespace netns.
func sideEndpoint(req *SideRequest, netns string) Endpoint {
	h := &spec.Host{Name: "this host", Connect: spec.Connect{Kind: "local"}}
	if netns != "" {
		h.Connect = spec.Connect{Kind: "netns", Netns: netns}
	}
	ep := Endpoint{Host: h, NIC: &spec.NIC{Name: req.Local.Netdev, Device: req.Local.Device}, Addr: req.Local.Addr}
	if ep.NIC.Device == "" {
		ep.NIC.Device = device(ep)
	}
	return ep
}

// ServeSide runs one step on this machine (in network namespace netns
// when set): what the agent does for op "traffic". ready is called with
// the control address once a server side listens (perftest: its port).
func ServeSide(ctx context.Context, req *SideRequest, netns string, ready func(addr string)) *SideResult {
	ep := sideEndpoint(req, netns)
	l := req.Local
	l.Device = ep.NIC.Device
	res := &SideResult{Device: l.Device, Software: softwareDevice(l.Device)}
	setup := req.Setup
	if setup <= 0 {
		setup = defaultSetup
	}
	o := verbs.Options{Setup: setup, Fabctl: req.Version}
	var err error
	switch {
	case req.Role == RoleCounters:
		res.Counters = snapshot(ep)
		res.Trained, _ = TrainedRate(verbs.SysRoot, l.Device, 1)
		return res
	case req.Backend == "perftest":
		err = perftestStep(ctx, req, ep, ready, res)
	case req.Role == RoleServer:
		err = func() error {
			if err := verbs.Available(); err != nil {
				return err
			}
			ln, err := listenAt(ep)
			if err != nil {
				return err
			}
			defer ln.Close()
			ready(ln.Addr().String())
			res.Result, err = serveOne(ctx, ln, l, o)
			return err
		}()
	default:
		err = func() error {
			if err := verbs.Available(); err != nil {
				return err
			}
			ctl, err := dialFrom(ctx, ep, req.Peer, setup)
			if err != nil {
				return err
			}
			defer ctl.Close()
			res.Result, err = verbs.RunClient(ctx, ctl, l, req.Test, o)
			return err
		}()
	}
	res.setErr(err)
	return res
}

// perftestStep runs one perftest side: the server picks a free port
// and announces it, the client connects to the peer's.
func perftestStep(ctx context.Context, req *SideRequest, ep Endpoint, ready func(string), res *SideResult) error {
	if err := verbs.PerftestAvailable(req.Test); err != nil {
		return err
	}
	l := req.Local
	l.Device = ep.NIC.Device
	l = perftestLocal(l, req.Test)
	return inNetns(ep, func() error {
		if req.Role == RoleServer {
			port, err := freePort()
			if err != nil {
				return err
			}
			ready(":" + strconv.Itoa(port))
			res.Result, err = verbs.RunPerftest(ctx, req.Test, l, port, "", nil)
			return err
		}
		host, p, err := net.SplitHostPort(req.Peer)
		if err != nil {
			return fmt.Errorf("peer %q: %v", req.Peer, err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("peer %q: bad port", req.Peer)
		}
		res.Result, err = verbs.RunPerftest(ctx, req.Test, l, port, host, nil)
		return err
	})
}

// Remote runs a step on a host reached over SSH, through the agent
// there; ready receives the server's ReadyLine address. Errors are the
// transport's (the host could not be reached, the agent failed); the
// step's own failure is in the SideResult.
type Remote func(ctx context.Context, h *spec.Host, req *SideRequest, ready func(addr string)) (*SideResult, error)

// overSSH reports whether fabctl reaches the endpoint's host over SSH.
func overSSH(ep Endpoint) bool { return ep.Host.Connect.Kind == "ssh" }

// sideCall runs a step on an endpoint's host: in this process for local
// and namespace hosts, through Remote for SSH hosts.
func (r *Runner) sideCall(ctx context.Context, ep Endpoint, req SideRequest, ready func(string)) (*SideResult, error) {
	req.Backend, req.Version, req.Setup = r.Backend, r.Version, r.setup()
	if ready == nil {
		ready = func(string) {}
	}
	if overSSH(ep) {
		return r.Remote(ctx, ep.Host, &req, ready)
	}
	netns := ""
	if ep.Host.Connect.Kind == "netns" {
		netns = ep.Host.Connect.Netns
	}
	return ServeSide(ctx, &req, netns, ready), nil
}

// sideLocal is the side of an endpoint as sent to its host: the declared
// device only (the host finds it from the netdev otherwise).
func sideLocal(ep Endpoint) verbs.Local {
	l := verbs.Local{Device: ep.NIC.Device, Port: 1, Netdev: ep.NIC.Name, Addr: ep.Addr, GIDIndex: -1, GIDType: ep.GIDType, NUMANode: ep.NIC.NUMANode}
	if rd := ep.NIC.RDMANetdev(); rd != ep.NIC.Name {
		l.GIDNetdev = rd // the VLAN interface holds the address and its GID
	}
	if !ep.NIC.NUMA.Auto && len(ep.NIC.NUMA.CPUs) > 0 {
		l.CPUs = ep.NIC.NUMA.CPUs
	}
	return l
}

// remotePair runs a pair with at least one side on a host reached over
// SSH: counters before, the server side, the client side once the server
// listens, counters after. The wire view (tc counters on both receive
// sides) needs both NICs on this machine, so the priority is judged from
// the NICs' per-priority counters instead.
func (r *Runner) remotePair(ctx context.Context, t *Test, p PairRef) (*verbs.Result, Evidence, error) {
	ev := Evidence{Before: map[string]Counters{}, Deltas: map[string]Counters{},
		Wire: Wire{NotHere: "no wire view: it needs both NICs on this machine, and this pair runs over SSH"}}
	eps := []Endpoint{p.Client, p.Server}
	software := true
	for i, c := range r.readCounters(ctx, eps) {
		if c.err != nil {
			return nil, ev, fmt.Errorf("%s: %w", eps[i], c.err)
		}
		ev.Before[eps[i].String()] = c.res.Counters
		software = software && c.res.Software
		if c.res.Trained > 0 {
			if ev.Trained == nil {
				ev.Trained = map[string]spec.BitRate{}
			}
			ev.Trained[eps[i].String()] = c.res.Trained
		}
	}
	ev.Software = software
	tv := t.Verbs
	note := ""
	if software && tv.Timeout < softwareAckTimeout {
		tv.Timeout = softwareAckTimeout
		note = softwareAckNote
	}
	// The pair's sides are bounded by the test's own run time plus setup
	// steps; Remote's transport timeouts stay the floor.
	pctx, cancel := context.WithTimeout(ctx, pairLimit(tv, r.setup()))
	defer cancel()

	readyc := make(chan string, 1)
	srvc := make(chan sideOut, 1)
	go func() {
		res, err := r.sideCall(pctx, p.Server, SideRequest{Role: RoleServer, Local: sideLocal(p.Server), Test: tv}, func(a string) {
			select {
			case readyc <- a:
			default:
			}
		})
		srvc <- sideOut{res, err}
	}()
	listenWait := r.setup() + 30*time.Second // the setup bound plus an SSH login and agent check
	var peer string
	select {
	case a := <-readyc:
		peer = a
	case s := <-srvc:
		// The server ended before it listened: its error says why.
		return nil, ev, serverFailure(p, s.res, s.err)
	case <-time.After(listenWait):
		cancel()
		<-srvc
		return nil, ev, fmt.Errorf("server %s: did not start listening within %s", p.Server, listenWait)
	}
	peer = peerAddress(peer, p.Server.Addr)
	if r.Backend == "perftest" {
		time.Sleep(2 * time.Second) // perftest's server has no readiness signal of its own
	}
	cres, cerr := r.sideCall(pctx, p.Client, SideRequest{Role: RoleClient, Local: sideLocal(p.Client), Test: tv, Peer: peer}, nil)
	if cerr == nil {
		cerr = cres.Err()
	}
	var s sideOut
	if cerr == nil {
		s = <-srvc
	} else {
		// A client that never connected leaves the server waiting for
		// it: give the server a moment to report its own view (preferred
		// when the client only heard "peer: ..."), then stop it.
		select {
		case s = <-srvc:
		case <-time.After(r.serverGrace()):
			cancel()
			<-srvc
			s = sideOut{res: &SideResult{}}
		}
	}
	for i, c := range r.readCounters(ctx, eps) {
		if c.err == nil {
			d, _ := Diff(ev.Before[eps[i].String()], c.res.Counters)
			ev.Deltas[eps[i].String()] = d
		}
	}
	serr := s.err
	if serr == nil {
		serr = s.res.Err()
	}
	if err := pairError(p, cerr, serr); err != nil {
		return nil, ev, err
	}
	res := cres.Result
	if res == nil {
		return nil, ev, fmt.Errorf("client %s: the side reported no result", p.Client)
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	return res, ev, nil
}

// serverGrace is how long a pair whose client failed waits for the
// server's own account before stopping it.
func (r *Runner) serverGrace() time.Duration {
	if r.grace > 0 {
		return r.grace
	}
	return 5 * time.Second
}

type sideOut struct {
	res *SideResult
	err error
}

// readCounters reads the endpoints' counters at the same time (each read
// on an SSH host is an agent run).
func (r *Runner) readCounters(ctx context.Context, eps []Endpoint) []sideOut {
	outs := make([]sideOut, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.sideCall(ctx, ep, SideRequest{Role: RoleCounters, Local: sideLocal(ep)}, nil)
			outs[i] = sideOut{res, err}
		}()
	}
	wg.Wait()
	return outs
}

// serverFailure is the error of a server side that ended before it
// listened.
func serverFailure(p PairRef, res *SideResult, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("server %s: %w", p.Server, err)
	case res.Err() != nil:
		return fmt.Errorf("server %s: %w", p.Server, res.Err())
	}
	return fmt.Errorf("server %s: ended without listening", p.Server)
}

// peerAddress completes a ready address without a host (":port", or a
// wildcard listener) with the server NIC's address.
func peerAddress(ready string, addr netip.Addr) string {
	h, port, err := net.SplitHostPort(ready)
	if err != nil {
		return ready
	}
	if ip, err := netip.ParseAddr(h); h == "" || err == nil && ip.IsUnspecified() {
		return net.JoinHostPort(addr.String(), port)
	}
	return ready
}

// pairLimit bounds a pair's sides: setup steps plus the run (a
// count-bound test gets ten minutes).
func pairLimit(t verbs.Test, setup time.Duration) time.Duration {
	run := 10 * time.Minute
	if t.Duration > 0 {
		run = t.Duration + time.Minute
	}
	return 4*setup + run
}
