package traffic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/validate/verbs"
)

const twoHosts = `
fabric "vm" {
  transport = "rocev2"
  mtu       = 9000
}
host "a" {
  connect = "local"
  nic "fa" {
    device    = "rxe_fa"
    addresses = ["198.18.0.1/24"]
    speed     = "10G"
  }
}
host "b" {
  connect = "local"
  nic "fb" {
    device    = "rxe_fb"
    addresses = ["198.18.0.2/24"]
    speed     = "25G"
  }
}
`

func TestPlanFromSpec(t *testing.T) {
	s := testutil.LoadSrc(t, twoHosts+`
validate "bw" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 2000
  min_bandwidth = "50%"
}
validate "lat" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 1000
  max_p99      = "5ms"
  class        = "roce"
}
validate "both" {
  op            = "read"
  min_bandwidth = "1G"
  max_p99       = "1ms"
  hosts         = ["a", "b"]
}
validate "nobody" {
  hosts = ["gpu*"]
}
`)
	tests := Plan(s)
	var got []string
	for _, tt := range tests {
		got = append(got, tt.Label())
	}
	want := "bw [roce] write bw|lat [roce] send lat|both [roce] read bw|both [roce] read lat|nobody [roce] write bw"
	if strings.Join(got, "|") != want {
		t.Fatalf("tests:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	bw := tests[0]
	// By default the host marks the traffic: rdma_cm, no ToS or SL of the
	// test's own; the path MTU is the spec's rdma_mtu (4096 by default).
	if bw.Verbs.TClass != -1 || bw.Verbs.SL != 0 || bw.Verbs.MTU != 4096 || bw.Verbs.Size != 65536 || bw.Verbs.Iterations != 2000 || bw.Verbs.Conn != verbs.ConnCM {
		t.Errorf("bw test %+v", bw.Verbs)
	}
	if !bw.Criteria.Lossless || bw.Criteria.Priority != 3 || bw.Criteria.DSCP != 26 || bw.Criteria.Percent != 50 || bw.Criteria.SelfMarked {
		t.Errorf("bw criteria %+v", bw.Criteria)
	}
	// No message_size, iterations or duration: perftest's 2-byte latency
	// messages and 1000 SEND iterations.
	if lat := tests[3]; lat.Verbs.Size != 2 || lat.Verbs.Iterations != 1000 || lat.Verbs.Duration != 0 {
		t.Errorf("read lat defaults %+v", lat.Verbs)
	}
	if rd := tests[2]; rd.Verbs.Size != 65536 || rd.Verbs.Iterations != 1000 || rd.Verbs.Inline != -1 {
		t.Errorf("read bw defaults %+v", rd.Verbs)
	}
	if wr := tests[4]; wr.Verbs.Size != 65536 || wr.Verbs.Iterations != 5000 || wr.Verbs.Inline != -1 {
		t.Errorf("write bw defaults %+v", wr.Verbs)
	}
	// A ring of two: a -> b and b -> a in one round.
	if len(bw.Rounds) != 1 || len(bw.Rounds[0]) != 2 || bw.Rounds[0][0].Client.String() != "a:fa" || bw.Rounds[0][1].Client.String() != "b:fb" {
		t.Errorf("ring rounds %v", bw.Rounds)
	}
	lat := tests[1]
	if lat.Verbs.Mode != verbs.ModeLatency || lat.Verbs.QPs != 1 || lat.Criteria.MaxP99 != 5*time.Millisecond || lat.Pairs() != 1 {
		t.Errorf("lat %+v %+v", lat.Verbs, lat.Criteria)
	}
	if tests[4].Skip == "" || !strings.Contains(tests[4].Skip, "fewer than two hosts") {
		t.Errorf("no hosts match: skip %q", tests[4].Skip)
	}
	// Line rate: the slower NIC.
	if lr := LineRate(bw.Rounds[0][0]); lr != 10e9 {
		t.Errorf("line rate %v", lr)
	}
}

func TestPlanTransports(t *testing.T) {
	iwarp := testutil.LoadSrc(t, strings.Replace(twoHosts, `"rocev2"`, `"iwarp"`, 1)+`validate "x" { op = "write" }`)
	tt := Plan(iwarp)[0]
	if tt.Verbs.Conn != verbs.ConnCM || tt.Criteria.Lossless {
		t.Errorf("iWARP: %+v %+v", tt.Verbs, tt.Criteria)
	}
	// The wire check counts RoCEv2 packets: for iWARP the class check says
	// why it cannot look (and no observer is started: wireSet.start).
	if tt.Criteria.NoWire == "" {
		t.Errorf("iWARP: the criteria claim a wire view: %+v", tt.Criteria)
	}
	if c := priorityCheck(Criteria{Priority: 3, DSCP: 26, NoWire: tt.Criteria.NoWire}, Evidence{}); c.Status != Skipped || !strings.Contains(c.Detail, "iWARP runs over TCP") {
		t.Errorf("iWARP priority check: %+v", c)
	}
	if rocev2 := Plan(testutil.LoadSrc(t, twoHosts+`validate "x" { op = "write" }`))[0]; rocev2.Criteria.NoWire != "" {
		t.Errorf("RoCEv2 lost its wire view: %+v", rocev2.Criteria)
	}
	ib := testutil.LoadSrc(t, `
fabric "ib" {
  transport = "infiniband"
}
class "mpi" {
  role     = "rdma"
  priority = 1
  sl       = 5
}
host "a" {
  connect = "local"
  nic "ib0" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/24"]
  }
}
host "b" {
  connect = "local"
  nic "ib0" {
    device    = "mlx5_0"
    addresses = ["10.0.0.2/24"]
  }
}
validate "x" { class = "mpi" }
`)
	tt = Plan(ib)[0]
	if tt.Verbs.SL != 0 || tt.Verbs.TClass != -1 || tt.Verbs.Conn != verbs.ConnCM || tt.Criteria.DSCP != -1 || tt.Criteria.SL != 5 {
		t.Errorf("InfiniBand: %+v %+v", tt.Verbs, tt.Criteria)
	}
}

// marking = "self": the test marks its own packets with the class (the
// switch-isolation mode), as the traffic test did before rdma_cm.
func TestPlanSelfMarking(t *testing.T) {
	self := Plan(testutil.LoadSrc(t, twoHosts+`validate "x" {
  op      = "write"
  marking = "self"
}`))[0]
	if self.Verbs.TClass != 106 || self.Verbs.Conn != verbs.ConnVerbs || !self.Criteria.SelfMarked {
		t.Errorf("RoCEv2 self-marked: %+v %+v", self.Verbs, self.Criteria)
	}
	v1 := Plan(testutil.LoadSrc(t, strings.Replace(twoHosts, `"rocev2"`, `"rocev1"`, 1)+`validate "x" { op = "write" }`))[0]
	if v1.Verbs.Conn != verbs.ConnCM || v1.Verbs.SL != 0 || v1.Criteria.SL != 3 || v1.Criteria.DSCP != -1 {
		t.Errorf("RoCEv1 host-marked: %+v %+v", v1.Verbs, v1.Criteria)
	}
	v1s := Plan(testutil.LoadSrc(t, strings.Replace(twoHosts, `"rocev2"`, `"rocev1"`, 1)+`validate "x" {
  marking = "self"
}`))[0]
	if v1s.Verbs.Conn != verbs.ConnVerbs || v1s.Verbs.SL != 3 {
		t.Errorf("RoCEv1 self-marked: %+v", v1s.Verbs)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlanEndpointGID: a test side takes the address whose GID the host
// driver writes as NCCL_IB_GID_INDEX (rdmagid.Preferred: IPv4 first, then
// global IPv6, never link-local) and the fabric's RoCE GID type, so a
// raw-verbs side (marking = "self") uses the GID NCCL will use.
func TestPlanEndpointGID(t *testing.T) {
	src := strings.NewReplacer(`["198.18.0.1/24"]`, `["fe80::1/64", "fd00:1::1/64", "198.18.0.1/24"]`,
		`["198.18.0.2/24"]`, `["fe80::2/64", "fd00:1::2/64"]`).Replace(twoHosts)
	for _, c := range []struct{ transport, typ string }{{"rocev2", "v2"}, {"rocev1", "v1"}} {
		s := testutil.LoadSrc(t, strings.Replace(src, `"rocev2"`, `"`+c.transport+`"`, 1)+`
validate "bw" {
  marking = "self"
}
`)
		tests := Plan(s)
		if len(tests) == 0 || len(tests[0].Rounds) == 0 {
			t.Fatalf("%s: no pairs: %+v", c.transport, tests)
		}
		p := tests[0].Rounds[0][0]
		for _, ep := range []Endpoint{p.Client, p.Server} {
			want := map[string]string{"a": "198.18.0.1", "b": "fd00:1::2"}[ep.Host.Name]
			if ep.Addr.String() != want || ep.GIDType != c.typ {
				t.Errorf("%s %s: address %s type %q, want %s %s", c.transport, ep, ep.Addr, ep.GIDType, want, c.typ)
			}
			if l := sideLocal(ep); l.GIDType != c.typ || l.Addr != ep.Addr {
				t.Errorf("%s %s: side %+v", c.transport, ep, l)
			}
		}
	}
}

// TestPlanEndpointGIDNetdev: on a NIC with a VLAN the address, and so its
// GID, is on the VLAN interface: a raw-verbs side looks for its GID there
// (as the host driver resolves NCCL_IB_GID_INDEX on the RDMA netdev),
// while the device, NUMA and counters stay with the NIC.
func TestPlanEndpointGIDNetdev(t *testing.T) {
	src := strings.NewReplacer(`device    = "rxe_fa"`, "device    = \"rxe_fa\"\n    vlan      = 100",
		`device    = "rxe_fb"`, "device    = \"rxe_fb\"\n    vlan      = 100\n    vlan_interface = \"rdma0\"").Replace(twoHosts)
	s := testutil.LoadSrc(t, src+`
validate "bw" {
  marking = "self"
}
`)
	tests := Plan(s)
	if len(tests) == 0 || len(tests[0].Rounds) == 0 {
		t.Fatalf("no pairs: %+v", tests)
	}
	p := tests[0].Rounds[0][0]
	for _, ep := range []Endpoint{p.Client, p.Server} {
		want := map[string]string{"a": "fa.100", "b": "rdma0"}[ep.Host.Name]
		l := sideLocal(ep)
		if l.GIDNetdevName() != want || l.Netdev != ep.NIC.Name {
			t.Errorf("%s: GID netdev %q, netdev %q; want %q, %q", ep, l.GIDNetdevName(), l.Netdev, want, ep.NIC.Name)
		}
	}
	// Untagged: the NIC itself.
	u := testutil.LoadSrc(t, twoHosts+`
validate "bw" {
  marking = "self"
}
`)
	ep := Plan(u)[0].Rounds[0][0].Client
	if l := sideLocal(ep); l.GIDNetdev != "" || l.GIDNetdevName() != ep.NIC.Name {
		t.Errorf("untagged %s: %+v", ep, l)
	}
}
