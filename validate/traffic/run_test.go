package traffic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

func fourHosts(t *testing.T) *spec.Spec {
	src := `fabric "f" {
  transport = "rocev2"
  mtu       = 9000
}
`
	for i := 1; i <= 4; i++ {
		src += fmt.Sprintf(`host "h%d" {
  connect = "local"
  nic "eth1" {
    device    = "rxe_h%d"
    addresses = ["10.0.0.%d/24"]
    speed     = "10G"
  }
}
`, i, i, i)
	}
	return testutil.LoadSrc(t, src+`validate "all" {
  pattern       = "all-pairs"
  op            = "write"
  iterations    = 10
  min_bandwidth = "1G"
}
`)
}

// The runner runs a round's pairs together and the rounds in order, and
// keeps "could not run" apart from "failed".
func TestRunnerRounds(t *testing.T) {
	s := fourHosts(t)
	tests := Plan(s)
	var mu sync.Mutex
	active, maxActive := 0, 0
	var order []string
	r := &Runner{Pair: func(ctx context.Context, tt *Test, p PairRef) (*verbs.Result, Evidence, error) {
		mu.Lock()
		active++
		maxActive = max(maxActive, active)
		order = append(order, p.Client.Host.Name+">"+p.Server.Host.Name)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		active--
		mu.Unlock()
		switch p.Client.Host.Name + p.Server.Host.Name {
		case "h1h2", "h2h1":
			return nil, Evidence{}, fmt.Errorf("%w: host h2 is reached over ssh", verbs.ErrUnavailable)
		case "h3h4", "h4h3":
			return nil, Evidence{}, errors.New("RTR timeout")
		}
		return &verbs.Result{Gbps: 5}, Evidence{}, nil
	}}
	rep := r.Run(context.Background(), tests)
	if len(rep.Outcomes) != 6 || maxActive != 2 {
		t.Fatalf("%d outcomes, %d at once (want 6, 2): %v", len(rep.Outcomes), maxActive, order)
	}
	pass, fail, notRun := rep.Counts()
	if pass != 4 || fail != 1 || notRun != 1 {
		t.Errorf("pass %d fail %d not run %d", pass, fail, notRun)
	}
	for _, o := range rep.Outcomes {
		if o.Status == Pass && (len(o.Checks) == 0 || o.Checks[0].Name != "bandwidth") {
			t.Errorf("a pass without its checks: %+v", o)
		}
		if o.Status == NotRun && !strings.Contains(o.Reason, "reached over ssh") {
			t.Errorf("not-run reason %q", o.Reason)
		}
	}
}

func TestRunnerUnavailable(t *testing.T) {
	if verbs.Built {
		t.Skip("built with -tags verbs")
	}
	rep := (&Runner{}).Run(context.Background(), Plan(fourHosts(t)))
	pass, fail, notRun := rep.Counts()
	if pass+fail != 0 || notRun != 6 || !strings.Contains(rep.Unavailable, "built without verbs support") {
		t.Errorf("%d %d %d %q", pass, fail, notRun, rep.Unavailable)
	}
}

func TestReachAndErrors(t *testing.T) {
	ep := func(kind string) Endpoint {
		return Endpoint{Host: &spec.Host{Name: "h", Connect: spec.Connect{Kind: kind}}, NIC: &spec.NIC{Name: "eth1"}}
	}
	r := &Runner{}
	if r.reach(ep("local")) != nil || r.reach(ep("netns")) != nil {
		t.Error("local hosts refused")
	}
	sshNetns := ep("ssh")
	sshNetns.Host.Connect.Netns = "ns1"
	for _, e := range []Endpoint{ep("ssh"), sshNetns} {
		if err := r.reach(e); !errors.Is(err, verbs.ErrUnavailable) || !strings.Contains(err.Error(), "reached over "+e.Host.Connect.String()) {
			t.Errorf("%s without Remote: %v", e.Host.Connect, err)
		}
	}
	r.Remote = func(context.Context, *spec.Host, *SideRequest, func(string)) (*SideResult, error) { return nil, nil }
	if r.reach(ep("ssh")) != nil || r.reach(sshNetns) != nil {
		t.Error("ssh hosts refused with a Remote")
	}
	p := PairRef{Client: ep("local"), Server: ep("local")}
	p.Server.Host = &spec.Host{Name: "srv"}
	peer := &verbs.PeerError{Text: "MTU mismatch"}
	if err := pairError(p, peer, errors.New("MTU mismatch: rxe_a")); err == nil || !strings.HasPrefix(err.Error(), "server srv:eth1: MTU mismatch: rxe_a") {
		t.Errorf("server's own error preferred: %v", err)
	}
	if err := pairError(p, errors.New("GID type mismatch"), nil); err == nil || !strings.HasPrefix(err.Error(), "client h:eth1") {
		t.Errorf("client error: %v", err)
	}
	if pairError(p, nil, nil) != nil {
		t.Error("no error")
	}
}

// bidirectional = true: each bandwidth pair runs both ways at the same
// time and is judged on the sum against twice the rate.
func TestRunnerBidirectional(t *testing.T) {
	s := testutil.LoadSrc(t, twoHosts+`validate "bi" {
  pattern       = "pairs"
  op            = "write"
  bidirectional = true
  min_bandwidth = "60%"
}
`)
	tests := Plan(s)
	if len(tests) != 1 || !tests[0].Criteria.Bidirectional {
		t.Fatalf("plan: %+v", tests[0].Criteria)
	}
	var mu sync.Mutex
	var dirs []string
	running := 0
	both := false
	r := &Runner{Pair: func(ctx context.Context, tt *Test, p PairRef) (*verbs.Result, Evidence, error) {
		mu.Lock()
		dirs = append(dirs, p.Client.Host.Name+">"+p.Server.Host.Name)
		running++
		both = both || running == 2
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return &verbs.Result{Gbps: 4}, Evidence{}, nil
	}}
	rep := r.Run(context.Background(), tests)
	if len(dirs) != 2 || dirs[0] == dirs[1] || !both {
		t.Fatalf("directions %v, at the same time: %v", dirs, both)
	}
	o := rep.Outcomes[0]
	// 4 + 4 Gb/s of twice the slower NIC's 10G: 40% < 60%.
	if o.Result.Gbps != 8 || o.Status != Fail || !strings.Contains(o.Reason, "8.000 Gb/s = 40.0% of the 20G two-way line rate < 60%") {
		t.Errorf("outcome %s %q %+v", o.Status, o.Reason, o.Result)
	}
}
