package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

// sshHosts is a spec of two hosts reached over SSH (one behind a
// namespace), a ring test between them.
func sshHosts(t *testing.T) *spec.Spec { return testutil.LoadSrc(t, sshHostsSrc) }

const sshHostsSrc = `fabric "f" {
  transport = "rocev2"
  mtu       = 9000
}
host "ha" {
  address = "192.0.2.1"
  connect = "ssh"
  nic "fa" {
    device    = "rxe_fa"
    addresses = ["198.18.0.1/24"]
    speed     = "10G"
  }
}
host "hb" {
  address = "192.0.2.2"
  connect = "ssh+netns:blue"
  nic "fb" {
    addresses = ["198.18.0.2/24"]
    speed     = "10G"
  }
}
validate "ring" {
  pattern       = "ring"
  op            = "write"
  iterations    = 10
  min_bandwidth = "1G"
}
`

// fakeAgents plays the agents of SSH hosts: each request and result
// crosses JSON as it does over SSH, a server announces its address and
// waits for its client, counters grow by a fixed step per read.
type fakeAgents struct {
	mu       sync.Mutex
	reqs     map[string][]SideRequest // host -> requests
	reads    map[string]uint64
	waiting  map[string]chan struct{} // server address -> client came
	serveErr map[string]error         // host -> its server side's error
	cliErr   map[string]error         // host -> its client side's error
	down     map[string]bool          // host -> unreachable
}

func newFakeAgents() *fakeAgents {
	return &fakeAgents{reqs: map[string][]SideRequest{}, reads: map[string]uint64{}, waiting: map[string]chan struct{}{},
		serveErr: map[string]error{}, cliErr: map[string]error{}, down: map[string]bool{}}
}

func (f *fakeAgents) remote(ctx context.Context, h *spec.Host, req *SideRequest, ready func(string)) (*SideResult, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	got, err := DecodeSideRequest(b)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.reqs[h.Name] = append(f.reqs[h.Name], *got)
	down := f.down[h.Name]
	f.mu.Unlock()
	if down {
		return nil, fmt.Errorf("ssh %s: connection refused", h.Address)
	}
	res := &SideResult{Device: "rxe_" + got.Local.Netdev, Software: true}
	switch got.Role {
	case RoleCounters:
		f.mu.Lock()
		f.reads[h.Name] += 100
		n := f.reads[h.Name]
		f.mu.Unlock()
		res.Counters = Counters{"rdma:sent_pkts": n, "rdma:rcvd_pkts": n}
	case RoleServer:
		if err := f.serveErr[h.Name]; err != nil {
			res.setErr(err)
			break
		}
		addr := got.Local.Addr.String() + ":40001"
		came := make(chan struct{})
		f.mu.Lock()
		f.waiting[addr] = came
		f.mu.Unlock()
		ready(addr)
		select {
		case <-came:
			res.Result = &verbs.Result{Role: "server"}
		case <-ctx.Done():
			res.setErr(fmt.Errorf("no client came: %w", ctx.Err()))
		}
	case RoleClient:
		f.mu.Lock()
		came := f.waiting[got.Peer]
		f.mu.Unlock()
		if came == nil {
			res.setErr(fmt.Errorf("no server at %s", got.Peer))
			break
		}
		close(came)
		if err := f.cliErr[h.Name]; err != nil {
			res.setErr(err)
			break
		}
		res.Result = &verbs.Result{Role: "client", Gbps: 5, Test: got.Test}
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var back SideResult
	return &back, json.Unmarshal(out, &back)
}

// TestRemotePairs: pairs between SSH hosts run their sides through
// Remote, also when this machine cannot run a side itself; the client
// gets the address the server announced, the software-device ACK timeout
// reaches both sides, counters are diffed per endpoint, and failures keep
// their kind (not run vs failed) and name the side and host.
func TestRemotePairs(t *testing.T) {
	tests := Plan(sshHosts(t))
	f := newFakeAgents()
	r := &Runner{Remote: f.remote, Version: "test"}
	rep := r.Run(context.Background(), tests)
	if rep.Unavailable != "" {
		t.Errorf("SSH pairs do not need this machine's verbs: %q", rep.Unavailable)
	}
	pass, fail, notRun := rep.Counts()
	if pass != 2 || fail+notRun != 0 {
		for _, o := range rep.Outcomes {
			t.Logf("%s -> %s: %s %s", o.Pair.Client, o.Pair.Server, o.Status, o.Reason)
		}
		t.Fatalf("pass %d fail %d not run %d, want 2 passes", pass, fail, notRun)
	}
	for _, o := range rep.Outcomes {
		c := o.Counters[o.Pair.Client.String()]
		// A ring's pairs run at once, so a host's reads interleave: the
		// delta spans one or more steps.
		if d := c["rdma:sent_pkts"]; d == 0 || d%100 != 0 {
			t.Errorf("%s: counter delta %v, want steps of 100 (reads before and after)", o.Pair.Client, c)
		}
		if o.Result.Test.Timeout != softwareAckTimeout {
			t.Errorf("the client ran with ACK timeout %d, want %d between software devices", o.Result.Test.Timeout, softwareAckTimeout)
		}
		if c := o.Checks[len(o.Checks)-1]; c.Status != Skipped || !strings.Contains(c.Detail, "this pair runs over SSH") {
			t.Errorf("the priority check does not say why the wire was not watched: %+v", c)
		}
	}
	for host, reqs := range f.reqs {
		for _, q := range reqs {
			switch {
			case q.Version != "test" || q.Setup != r.setup():
				t.Errorf("%s: request %+v lost the version or setup bound", host, q)
			case q.Role == RoleClient && !strings.HasPrefix(q.Peer, "198.18.0.") || q.Role == RoleClient && !strings.HasSuffix(q.Peer, ":40001"):
				t.Errorf("%s: client peer %q is not the announced address", host, q.Peer)
			case host == "ha" && q.Local.Device != "rxe_fa", host == "hb" && q.Local.Device != "":
				t.Errorf("%s: device %q: want the declared one, or none for the host to find", host, q.Local.Device)
			}
		}
	}

	for _, c := range []struct {
		name   string
		setup  func(*fakeAgents)
		status Status
		reason []string
		server string // only the pairs with this server host ("": all); the others pass
	}{
		{"server unavailable", func(f *fakeAgents) {
			f.serveErr["hb"] = fmt.Errorf("%w: this host has no RDMA devices", verbs.ErrUnavailable)
		}, NotRun, []string{"server hb:fb: traffic test unavailable: this host has no RDMA devices"}, "hb"},
		{"server's own error preferred to the client's peer report", func(f *fakeAgents) {
			f.cliErr["ha"] = &verbs.PeerError{Text: "MTU mismatch"}
			f.cliErr["hb"] = &verbs.PeerError{Text: "MTU mismatch"}
		}, Fail, []string{"client ha:fa: peer: MTU mismatch", "client hb:fb: peer: MTU mismatch"}, ""},
		{"client's own failure", func(f *fakeAgents) { f.cliErr["ha"] = errors.New("RTR timeout") },
			Fail, []string{"client ha:fa: RTR timeout"}, "hb"},
		{"unreachable host", func(f *fakeAgents) { f.down["hb"] = true }, Fail, []string{"hb:fb: ssh 192.0.2.2: connection refused"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeAgents()
			c.setup(f)
			rep := (&Runner{Remote: f.remote}).Run(context.Background(), Plan(sshHosts(t)))
			for _, o := range rep.Outcomes {
				if c.server != "" && o.Pair.Server.Host.Name != c.server {
					if o.Status != Pass {
						t.Errorf("%s -> %s: %s (%s), want pass", o.Pair.Client, o.Pair.Server, o.Status, o.Reason)
					}
					continue
				}
				if o.Status != c.status {
					t.Errorf("%s -> %s: %s (%s), want %s", o.Pair.Client, o.Pair.Server, o.Status, o.Reason, c.status)
				}
				found := false
				for _, w := range c.reason {
					found = found || strings.Contains(o.Reason, w)
				}
				if !found {
					t.Errorf("reason %q, want one of %q", o.Reason, c.reason)
				}
			}
		})
	}
}

// A pair of a local host and an SSH host runs the local side in this
// process: in a build without verbs (or a machine without RDMA devices)
// that side says why it cannot run, named, whichever role it has; the
// SSH host's server, left waiting for a client that never came, is
// stopped.
func TestMixedPair(t *testing.T) {
	s := testutil.LoadSrc(t, strings.Replace(sshHostsSrc, `connect = "ssh"`, `connect = "local"`, 1))
	if verbs.Available() == nil {
		t.Skip("this machine can run a verbs side")
	}
	f := newFakeAgents()
	rep := (&Runner{Remote: f.remote, grace: 50 * time.Millisecond}).Run(context.Background(), Plan(s))
	if len(rep.Outcomes) != 2 || rep.Unavailable != "" {
		t.Fatalf("%d outcomes, unavailable %q", len(rep.Outcomes), rep.Unavailable)
	}
	for _, o := range rep.Outcomes {
		role := "server"
		if o.Pair.Client.Host.Name == "ha" {
			role = "client"
		}
		if o.Status != NotRun || !strings.HasPrefix(o.Reason, role+" ha:fa: traffic test unavailable") {
			t.Errorf("%s -> %s: %s %q, want not run, by the local %s", o.Pair.Client, o.Pair.Server, o.Status, o.Reason, role)
		}
	}
	for _, q := range f.reqs["ha"] {
		t.Errorf("the local host's step %q went through Remote", q.Role)
	}
}

// The side's errors keep their kind across JSON.
func TestSideResultErr(t *testing.T) {
	for _, c := range []struct {
		err         error
		unavailable bool
		peer        bool
	}{
		{fmt.Errorf("%w: perftest is not installed", verbs.ErrUnavailable), true, false},
		{&verbs.PeerError{Text: "GID type mismatch"}, false, true},
		{errors.New("RTR timeout"), false, false},
	} {
		var r SideResult
		r.setErr(c.err)
		b, _ := json.Marshal(&r)
		var back SideResult
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got := back.Err()
		var pe *verbs.PeerError
		if got.Error() != c.err.Error() || errors.Is(got, verbs.ErrUnavailable) != c.unavailable || errors.As(got, &pe) != c.peer {
			t.Errorf("%v came back as %v (unavailable %v, peer %v)", c.err, got, errors.Is(got, verbs.ErrUnavailable), errors.As(got, &pe))
		}
	}
	if (&SideResult{}).Err() != nil {
		t.Error("no error")
	}
}

func TestSideRequestAndReady(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"role":"server"}`, ""},
		{`{"role":"counters","local":{"Netdev":"fa"}}`, ""},
		{`{"role":"client"}`, "needs the server's address"},
		{`{"role":"dance"}`, `unknown traffic role "dance"`},
		{`{"role":"server","backend":"qperf"}`, `unknown traffic backend "qperf"`},
		{`{"role":"server","colour":"blue"}`, `unknown field "colour"`},
		{`{"role":`, "not valid JSON"},
		{`{"role":"counters"} {"role":"server"}`, "trailing data"},
	} {
		_, err := DecodeSideRequest([]byte(c.in))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	if a, ok := ParseReady(ReadyLine("198.18.0.1:4242") + "\r"); !ok || a != "198.18.0.1:4242" {
		t.Errorf("ready line: %q %v", a, ok)
	}
	if _, ok := ParseReady("note: copying the agent"); ok {
		t.Error("another stderr line taken for ready")
	}
	for _, c := range []struct{ in, want string }{
		{":5000", "198.18.0.9:5000"},
		{"0.0.0.0:5000", "198.18.0.9:5000"},
		{"198.18.0.1:5000", "198.18.0.1:5000"},
	} {
		if got := peerAddress(c.in, mustAddr("198.18.0.9")); got != c.want {
			t.Errorf("peerAddress(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// A traffic request comes from the controller over SSH: whatever it
// holds, decoding answers with a request that names a known role and
// backend (a client with its peer), or an error; never a panic.
func FuzzDecodeSideRequest(f *testing.F) {
	f.Add([]byte(`{"role":"server","local":{"Device":"rxe_fa","Netdev":"fa","Port":1,"GIDIndex":-1,"Addr":"198.18.0.1"},"test":{"op":"write","mode":"bw","size":65536,"qps":1},"setup":30000000000}`))
	f.Add([]byte(`{"role":"client","peer":"198.18.0.1:41234","backend":"perftest","test":{"op":"send","mode":"lat","size":2}}`))
	f.Add([]byte(`{"role":"counters","local":{"Netdev":"eth1","Addr":"fe80::1","NUMANode":1,"CPUs":[0,2]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeSideRequest(b)
		if err != nil {
			return
		}
		switch {
		case req.Role != RoleServer && req.Role != RoleClient && req.Role != RoleCounters:
			t.Fatalf("role %q accepted", req.Role)
		case req.Role == RoleClient && req.Peer == "":
			t.Fatal("a client without its peer accepted")
		case req.Backend != "" && req.Backend != "fabctl" && req.Backend != "perftest":
			t.Fatalf("backend %q accepted", req.Backend)
		}
	})
}
