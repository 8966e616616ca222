package traffic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

// Outcome is one pair's run of one test.
type Outcome struct {
	Test   *Test
	Round  int // 1-based
	Pair   PairRef
	Status Status
	// Reason: why it did not run, or the failure (error or failed checks).
	Reason   string
	Result   *verbs.Result
	Checks   []Check
	Counters map[string]Counters // deltas per endpoint
	Elapsed  time.Duration
}

// Report is a traffic stage's result.
type Report struct {
	Tests    []*Test
	Outcomes []*Outcome
	// Unavailable is set when no test could run at all, and why.
	Unavailable string
}

// Counts totals the outcomes.
func (r *Report) Counts() (pass, fail, notRun int) {
	for _, o := range r.Outcomes {
		switch o.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			notRun++
		}
	}
	return pass, fail, notRun
}

// PairFunc runs one pair of a test and returns the client's result and
// the evidence around it. An error wrapping verbs.ErrUnavailable means
// the pair could not run (NotRun), any other error that it failed.
type PairFunc func(ctx context.Context, t *Test, p PairRef) (*verbs.Result, Evidence, error)

// Runner runs tests round by round.
type Runner struct {
	// Backend: "fabctl" (the built-in engine, default) or "perftest".
	Backend string
	// Setup bounds each setup step of a pair (default 30s).
	Setup time.Duration
	// Logf receives progress lines (nil: none).
	Logf func(format string, args ...any)
	// Pair runs one pair (nil: Runner.pair, in this process or through
	// Remote).
	Pair PairFunc
	// Version is this fabctl's version (sent in the verbs hello).
	Version string
	// Remote runs the sides on hosts reached over SSH (nil: pairs with
	// such a host are not run, and say so).
	Remote Remote
	grace  time.Duration // serverGrace (tests shorten it)
}

// defaultSetup bounds each setup step of a pair when Runner.Setup is 0.
const defaultSetup = 30 * time.Second

func (r *Runner) setup() time.Duration {
	if r.Setup > 0 {
		return r.Setup
	}
	return defaultSetup
}

// viaRemote reports whether a pair runs a side through Remote.
func (r *Runner) viaRemote(p PairRef) bool {
	return r.Remote != nil && (overSSH(p.Client) || overSSH(p.Server))
}

// anyRemote reports whether a scheduled pair runs a side through Remote.
func (r *Runner) anyRemote(tests []*Test) bool {
	for _, t := range tests {
		for _, round := range t.Rounds {
			for _, p := range round {
				if r.viaRemote(p) {
					return true
				}
			}
		}
	}
	return false
}

// pair runs one pair: both sides in this process (localPair), or with a
// side on a host reached over SSH (remotePair).
func (r *Runner) pair(ctx context.Context, t *Test, p PairRef) (*verbs.Result, Evidence, error) {
	for _, ep := range []Endpoint{p.Client, p.Server} {
		if err := r.reach(ep); err != nil {
			return nil, Evidence{}, err
		}
	}
	if r.viaRemote(p) {
		return r.remotePair(ctx, t, p)
	}
	return r.localPair(ctx, t, p)
}

func (r *Runner) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

// Run runs every test: the pairs of a round at the same time, the rounds
// one after another.
func (r *Runner) Run(ctx context.Context, tests []*Test) *Report {
	rep := &Report{Tests: tests}
	pairFn := r.Pair
	if pairFn == nil {
		pairFn = r.pair
		var avail error
		if r.Backend == "perftest" {
			avail = nil // checked per test binary
		} else {
			avail = verbs.Available()
		}
		if avail != nil {
			// This machine cannot run a side; pairs between hosts reached
			// over SSH still can (a mixed pair's local side says why not).
			if !r.anyRemote(tests) {
				rep.Unavailable = avail.Error()
			}
			pairFn = func(ctx context.Context, t *Test, p PairRef) (*verbs.Result, Evidence, error) {
				if r.viaRemote(p) {
					return r.pair(ctx, t, p)
				}
				return nil, Evidence{}, avail
			}
		}
	}
	for _, t := range tests {
		if t.Skip != "" {
			rep.Outcomes = append(rep.Outcomes, &Outcome{Test: t, Status: NotRun, Reason: t.Skip})
			continue
		}
		for ri, round := range t.Rounds {
			outs := make([]*Outcome, len(round))
			var wg sync.WaitGroup
			for i, p := range round {
				wg.Add(1)
				go func(i int, p PairRef) {
					defer wg.Done()
					outs[i] = r.runPair(ctx, pairFn, t, ri+1, p)
				}(i, p)
			}
			wg.Wait()
			rep.Outcomes = append(rep.Outcomes, outs...)
			if ctx.Err() != nil {
				return rep
			}
		}
	}
	return rep
}

func (r *Runner) runPair(ctx context.Context, fn PairFunc, t *Test, round int, p PairRef) *Outcome {
	o := &Outcome{Test: t, Round: round, Pair: p}
	start := time.Now()
	r.logf("traffic: %s round %d: %s -> %s", t.Label(), round, p.Client, p.Server)
	var res *verbs.Result
	var ev Evidence
	var err error
	if t.Criteria.Bidirectional {
		res, ev, err = bidirectional(ctx, fn, t, p)
	} else {
		res, ev, err = fn(ctx, t, p)
	}
	o.Elapsed = time.Since(start)
	o.Result, o.Counters = res, ev.Deltas
	switch {
	case errors.Is(err, verbs.ErrUnavailable):
		o.Status, o.Reason = NotRun, err.Error()
	case err != nil:
		o.Status, o.Reason = Fail, err.Error()
	default:
		o.Checks = Evaluate(t.Criteria, p, res, ev)
		o.Status, o.Reason = Verdict(o.Checks)
	}
	return o
}

// bidirectional runs a pair both ways at once (perftest -b sends both
// ways on the same QPs; here each direction has its own connection): the
// bandwidth is the sum, the evidence both runs' (each direction's wire
// observers count only their own QPs), the counters the larger of the two
// overlapping readings.
func bidirectional(ctx context.Context, fn PairFunc, t *Test, p PairRef) (*verbs.Result, Evidence, error) {
	type out struct {
		res *verbs.Result
		ev  Evidence
		err error
	}
	back := make(chan out, 1)
	go func() {
		res, ev, err := fn(ctx, t, PairRef{Client: p.Server, Server: p.Client})
		back <- out{res, ev, err}
	}()
	res, ev, err := fn(ctx, t, p)
	b := <-back
	if err == nil && b.err != nil {
		err = fmt.Errorf("reverse direction %s -> %s: %w", p.Server, p.Client, b.err)
	}
	if err != nil {
		return nil, ev, err
	}
	sum := *res
	sum.Gbps += b.res.Gbps
	sum.MsgRate += b.res.MsgRate
	sum.Messages += b.res.Messages
	sum.Bytes += b.res.Bytes
	sum.Notes = append(append([]string{fmt.Sprintf("bidirectional: %.3f Gb/s %s -> %s and %.3f Gb/s back, at the same time", res.Gbps, p.Client, p.Server, b.res.Gbps)}, res.Notes...), b.res.Notes...)
	ev.Wire.All += b.ev.Wire.All
	ev.Wire.Match += b.ev.Wire.Match
	ev.Wire.Observed = ev.Wire.Observed && b.ev.Wire.Observed
	for k, d := range b.ev.Deltas {
		if cur, ok := ev.Deltas[k]; ok {
			for n, v := range d {
				cur[n] = max(cur[n], v)
			}
		}
	}
	return &sum, ev, nil
}

// reach says whether a side can run on the endpoint's host: in this
// process, or through the agent for hosts reached over SSH.
func (r *Runner) reach(ep Endpoint) error {
	switch {
	case ep.Host.Connect.Kind == "local", ep.Host.Connect.Kind == "netns":
		return nil
	case overSSH(ep) && r.Remote != nil:
		return nil
	}
	return fmt.Errorf("%w: host %s is reached over %s, and this run has no way to start a test side there "+
		"(fabctl validate runs sides on local, netns and SSH hosts)", verbs.ErrUnavailable, ep.Host.Name, ep.Host.Connect)
}

// inNetns runs fn with the calling thread in the host's network
// namespace (sockets it creates stay there).
func inNetns(ep Endpoint, fn func() error) error {
	if ep.Host.Connect.Kind != "netns" {
		return fn()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	target, err := netns.GetFromName(ep.Host.Connect.Netns)
	if err != nil {
		return fmt.Errorf("host %s: network namespace %q: %w", ep.Host.Name, ep.Host.Connect.Netns, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return err
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		// The thread is stuck in the other namespace: keep it locked so
		// the runtime retires it with the goroutine.
		runtime.LockOSThread()
	}
	return ferr
}

// device is the endpoint's RDMA device: declared, or found from the netdev.
func device(ep Endpoint) string {
	if ep.NIC.Device != "" {
		return ep.NIC.Device
	}
	d, _ := verbs.Sysfs{Root: verbs.SysRoot}.DeviceForNetdev(ep.NIC.Name)
	return d
}

// localSide is the side of an endpoint on this machine, its device
// found from the netdev when the spec names none.
func localSide(ep Endpoint) verbs.Local {
	l := sideLocal(ep)
	l.Device = device(ep)
	return l
}

// snapshot reads an endpoint's counters: RDMA hw_counters and port
// counters (sysfs), ethtool statistics and DCB PFC statistics (in the
// host's namespace). Sources a NIC lacks are left out.
func snapshot(ep Endpoint) Counters { return Snapshot(verbs.SysRoot, ep) }

// Snapshot is snapshot with sysfs read at sysRoot: what fabctl validate
// reads around a test pair, and what the telemetry exporter reads at
// every scrape (tests point sysRoot at a fixture).
func Snapshot(sysRoot string, ep Endpoint) Counters { return SnapshotOnly(sysRoot, ep, nil) }

// SnapshotOnly is Snapshot reading only the sysfs RDMA counters keep
// accepts (ReadRDMAOnly; nil: all). ethtool and DCB statistics come in one
// call each and are kept whole.
func SnapshotOnly(sysRoot string, ep Endpoint, keep func(name string) bool) Counters {
	c := Counters{}
	dev := ep.NIC.Device
	if dev == "" {
		dev, _ = verbs.Sysfs{Root: sysRoot}.DeviceForNetdev(ep.NIC.Name)
	}
	if rd, err := ReadRDMAOnly(sysRoot, dev, 1, keep); err == nil {
		c.Merge(rd, "")
	}
	_ = inNetns(ep, func() error {
		if e, err := ethtool.NewEthtool(); err == nil {
			if st, err := e.Stats(ep.NIC.Name); err == nil {
				c.Merge(st, "eth:")
			}
			e.Close()
		}
		// The netdev's own drop and error counts (rtnetlink link stats):
		// what the NIC and the kernel dropped, whatever the RDMA device
		// reports about its sequence numbers.
		if l, err := netlink.LinkByName(ep.NIC.Name); err == nil && l.Attrs().Statistics != nil {
			st := l.Attrs().Statistics
			c["net:rx_dropped"], c["net:tx_dropped"] = st.RxDropped, st.TxDropped
			c["net:rx_errors"], c["net:tx_errors"] = st.RxErrors, st.TxErrors
			c["net:rx_missed_errors"], c["net:rx_fifo_errors"] = st.RxMissedErrors, st.RxFifoErrors
		}
		// The queueing disciplines' drops (tc -s qdisc): the root qdisc
		// (its statistics include its children's) and the ingress/clsact
		// hook (a filter's drop action). In the VM testbed the "fabric" is
		// a veth pair, and these are what it dropped.
		if l, err := netlink.LinkByName(ep.NIC.Name); err == nil {
			if qs, err := netlink.QdiscList(l); err == nil {
				var drops uint64
				seen := false
				for _, q := range qs {
					a := q.Attrs()
					if a.Statistics == nil || a.Statistics.Queue == nil {
						continue
					}
					if a.Parent == netlink.HANDLE_ROOT || a.Parent == netlink.HANDLE_INGRESS || a.Parent == netlink.HANDLE_CLSACT {
						drops += uint64(a.Statistics.Queue.Drops)
						seen = true
					}
				}
				if seen {
					c["tc:drops"] = drops
				}
			}
		}
		if d, err := dcbnl.Dial(0); err == nil {
			if ieee, err := d.IEEE(ep.NIC.Name); err == nil && ieee.PFC != nil {
				for p := 0; p < 8; p++ {
					c["pfc:req:"+strconv.Itoa(p)] = ieee.PFC.Requests[p]
					c["pfc:ind:"+strconv.Itoa(p)] = ieee.PFC.Indications[p]
				}
			}
			d.Close()
		}
		return nil
	})
	return c
}

// TrainedRate reads the rate a port trained at from sysfs
// (/sys/class/infiniband/DEV/ports/N/rate, "100 Gb/sec (4X EDR)"; for a
// RoCE device the kernel derives it from the netdev's link speed,
// ib_get_eth_speed).
func TrainedRate(sysRoot, dev string, port int) (spec.BitRate, bool) {
	if dev == "" {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(sysRoot, "class/infiniband", dev, "ports", strconv.Itoa(port), "rate"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 || f[1] != "Gb/sec" {
		return 0, false
	}
	g, err := strconv.ParseFloat(f[0], 64)
	if err != nil || g <= 0 {
		return 0, false
	}
	return spec.BitRate(g * 1e9), true
}

// softwareDevice reports whether the RDMA device is a software one (rxe,
// siw: no parent bus device), whose packets the kernel stack sees.
func softwareDevice(dev string) bool {
	if dev == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(verbs.SysRoot, "class/infiniband", dev, "device"))
	return errors.Is(err, os.ErrNotExist)
}

// wireSet is the wire observers of a pair (both receive sides).
type wireSet struct {
	mu   sync.Mutex
	obs  []*WireObserver
	hs   []*netlink.Handle
	wire Wire
	err  error
}

// wireSide is one end of a pair to observe: its NIC and the QPs that
// receive there (none: count every RoCEv2 packet on the netdev).
type wireSide struct {
	ep   Endpoint
	qpns []uint32
}

func qpnsOf(e *verbs.Endpoint) []uint32 {
	if e == nil {
		return nil
	}
	var out []uint32
	for _, q := range e.QPs {
		out = append(out, q.QPN)
	}
	return out
}

// start installs the observers. The class's DSCP is expected on the wire
// whoever marked the traffic: the test itself (marking "self") or the
// host's defaults (rdma_cm's default ToS, the default marking).
func (w *wireSet) start(t *Test, sides ...wireSide) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.Criteria.DSCP < 0 || t.Criteria.NoWire != "" {
		return
	}
	var eps []Endpoint
	for _, sd := range sides {
		eps = append(eps, sd.ep)
	}
	for _, ep := range eps {
		if !softwareDevice(device(ep)) || !ep.Addr.Is4() {
			return // a hardware NIC's RoCE bypasses the kernel: nothing to see
		}
	}
	for _, sd := range sides {
		ep := sd.ep
		var h *netlink.Handle
		err := inNetns(ep, func() error {
			var err error
			h, err = netlink.NewHandle()
			return err
		})
		if err != nil {
			w.err = err
			return
		}
		w.hs = append(w.hs, h)
		o, err := ObserveWire(h, ep.Host.Connect.String()+"/"+ep.NIC.Name, ep.NIC.Name, t.Criteria.DSCP, sd.qpns...)
		if err != nil {
			w.err = err
			return
		}
		w.obs = append(w.obs, o)
	}
}

func (w *wireSet) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.obs) > 0 && w.err == nil {
		w.wire.Observed = true
		for _, o := range w.obs {
			all, match, err := o.Read()
			if err != nil {
				w.err, w.wire.Observed = err, false
				break
			}
			w.wire.All += all
			w.wire.Match += match
		}
	}
	for _, o := range w.obs {
		_ = o.Close()
	}
	for _, h := range w.hs {
		h.Close()
	}
	w.obs, w.hs = nil, nil
}

// localPair runs both sides of a pair in this process: the server on a
// control listener at the server NIC's address, the client dialing it.
func (r *Runner) localPair(ctx context.Context, t *Test, p PairRef) (*verbs.Result, Evidence, error) {
	if r.Backend == "perftest" {
		if err := verbs.PerftestAvailable(t.Verbs); err != nil {
			return nil, Evidence{}, err
		}
	}
	setup := r.setup()
	ev := Evidence{Before: map[string]Counters{}, Deltas: map[string]Counters{},
		Software: softwareDevice(device(p.Client)) && softwareDevice(device(p.Server))}
	ev.Trained = map[string]spec.BitRate{}
	for _, ep := range []Endpoint{p.Client, p.Server} {
		ev.Before[ep.String()] = snapshot(ep)
		if rate, ok := TrainedRate(verbs.SysRoot, device(ep), 1); ok {
			ev.Trained[ep.String()] = rate
		}
	}
	wires := &wireSet{}
	defer wires.stop()
	tv, note := pairTest(t.Verbs, p)
	var res *verbs.Result
	var err error
	if r.Backend == "perftest" {
		res, err = r.perftestPair(ctx, t, tv, p, wires)
	} else {
		res, err = r.enginePair(ctx, t, tv, p, setup, wires)
	}
	if err == nil && note != "" {
		res.Notes = append(res.Notes, note)
	}
	wires.stop()
	ev.Wire = wires.wire
	for _, ep := range []Endpoint{p.Client, p.Server} {
		d, _ := Diff(ev.Before[ep.String()], snapshot(ep))
		ev.Deltas[ep.String()] = d
	}
	if err == nil && wires.err != nil {
		res.Notes = append(res.Notes, "wire counters unavailable: "+wires.err.Error())
	}
	return res, ev, err
}

// softwareAckTimeout is the QP ACK timeout exponent between two software
// RDMA devices: 4.096us x 2^20 = 4.3 s instead of perftest's 67 ms. Their
// ACKs come from kernel threads that a busy (or emulated) CPU deschedules
// for longer than 67 ms, and each spurious retransmission is then counted
// as if the wire had lost a packet (rxe in Linux 6.1 even fails retried
// multi-packet writes with "remote invalid request", perftest included).
const softwareAckTimeout = 20

const softwareAckNote = "software RDMA devices: QP ACK timeout 4.3 s (exponent 20), so kernel-thread scheduling delays are not retransmitted"

// pairTest adapts a test to a pair's devices.
func pairTest(t verbs.Test, p PairRef) (verbs.Test, string) {
	if t.Timeout < softwareAckTimeout && softwareDevice(device(p.Client)) && softwareDevice(device(p.Server)) {
		t.Timeout = softwareAckTimeout
		return t, softwareAckNote
	}
	return t, ""
}

func (r *Runner) enginePair(ctx context.Context, t *Test, tv verbs.Test, p PairRef, setup time.Duration, wires *wireSet) (*verbs.Result, error) {
	ln, err := listenAt(p.Server)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", p.Server, err)
	}
	defer ln.Close()
	o := verbs.Options{Setup: setup, Fabctl: r.Version, Logf: r.Logf,
		OnReady: func(local, peer *verbs.Endpoint) {
			// Packets arrive at the client for its own QPs, at the server for the server's.
			wires.start(t, wireSide{p.Client, qpnsOf(local)}, wireSide{p.Server, qpnsOf(peer)})
		},
		OnRunEnd: wires.stop}
	srv := make(chan error, 1)
	go func() {
		_, err := serveOne(ctx, ln, localSide(p.Server), verbs.Options{Setup: setup, Fabctl: r.Version})
		srv <- err
	}()
	ctl, err := dialFrom(ctx, p.Client, ln.Addr().String(), setup)
	if err != nil {
		ln.Close() // the server would wait for nobody
		<-srv
		return nil, err
	}
	res, cerr := verbs.RunClient(ctx, ctl, localSide(p.Client), tv, o)
	ctl.Close()
	return res, pairError(p, cerr, <-srv)
}

// listenAt opens a side's control listener at the endpoint's address
// (port chosen by the kernel), in the endpoint's namespace.
func listenAt(ep Endpoint) (net.Listener, error) {
	var ln net.Listener
	err := inNetns(ep, func() error {
		var err error
		ln, err = verbs.Listen(net.JoinHostPort(ep.Addr.String(), "0"))
		return err
	})
	return ln, err
}

// serveOne accepts one client on ln and serves its test.
func serveOne(ctx context.Context, ln net.Listener, l verbs.Local, o verbs.Options) (*verbs.Result, error) {
	ctl, err := verbs.Accept(ctx, ln, o.Setup)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	return verbs.Serve(ctx, ctl, l, o)
}

// dialFrom connects the control channel to the server's address from
// the endpoint's namespace.
func dialFrom(ctx context.Context, ep Endpoint, addr string, setup time.Duration) (*verbs.Control, error) {
	var ctl *verbs.Control
	err := inNetns(ep, func() error {
		var err error
		ctl, err = verbs.Dial(ctx, addr, setup)
		return err
	})
	return ctl, err
}

// pairError prefers the side that found the problem: a client that only
// heard "peer: ..." reports the server's own error.
func pairError(p PairRef, cerr, serr error) error {
	var pe *verbs.PeerError
	switch {
	case cerr == nil && serr == nil:
		return nil
	case cerr == nil:
		return fmt.Errorf("server %s: %w", p.Server, serr)
	case serr != nil && errors.As(cerr, &pe):
		return fmt.Errorf("server %s: %w", p.Server, serr)
	}
	return fmt.Errorf("client %s: %w", p.Client, cerr)
}

func (r *Runner) perftestPair(ctx context.Context, t *Test, tv verbs.Test, p PairRef, wires *wireSet) (*verbs.Result, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	sl, cl := perftestSide(p.Server, t), perftestSide(p.Client, t)
	wires.start(t, wireSide{ep: p.Client}, wireSide{ep: p.Server}) // perftest does not say its QP numbers beforehand
	srv := make(chan error, 1)
	go func() {
		_, err := verbs.RunPerftest(ctx, tv, sl, port, "", nil)
		srv <- err
	}()
	time.Sleep(2 * time.Second) // perftest's server must be listening; it has no readiness signal
	res, cerr := verbs.RunPerftest(ctx, tv, cl, port, p.Server.Addr.String(), nil)
	serr := <-srv
	return res, pairError(p, cerr, serr)
}

// perftestSide pins the GID perftest uses to the one fabctl's engine
// would choose for the endpoint's address.
func perftestSide(ep Endpoint, t *Test) verbs.Local {
	return perftestLocal(localSide(ep), t.Verbs)
}

// perftestLocal is perftestSide for a side described by its Local.
func perftestLocal(l verbs.Local, t verbs.Test) verbs.Local {
	if t.Conn == verbs.ConnVerbs && l.Device != "" {
		sys := verbs.Sysfs{Root: verbs.SysRoot}
		if table, err := sys.GIDTable(l.Device, 1); err == nil {
			if e, err := verbs.SelectGID(l.Device, 1, table, verbs.GIDChoice{Index: -1, Addr: l.Addr, Netdev: l.GIDNetdevName()}); err == nil {
				l.GIDIndex = e.Index
			}
		}
	}
	return l
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
