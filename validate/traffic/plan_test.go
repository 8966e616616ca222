package traffic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

func load(t *testing.T, src string) *spec.Spec {
	t.Helper()
	s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return s
}

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
	s := load(t, twoHosts+`
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
	// The default RoCEv2 class: DSCP 26 with ECN, so the ToS is 26<<2|ECT(0) = 106;
	// the path MTU is the spec's rdma_mtu (4096 by default).
	if bw.Verbs.TClass != 106 || bw.Verbs.MTU != 4096 || bw.Verbs.Size != 65536 || bw.Verbs.Iterations != 2000 || bw.Verbs.Conn != verbs.ConnVerbs {
		t.Errorf("bw test %+v", bw.Verbs)
	}
	if !bw.Criteria.Lossless || bw.Criteria.Priority != 3 || bw.Criteria.DSCP != 26 || bw.Criteria.Percent != 50 {
		t.Errorf("bw criteria %+v", bw.Criteria)
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
	iwarp := load(t, strings.Replace(twoHosts, `"rocev2"`, `"iwarp"`, 1)+`validate "x" { op = "write" }`)
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
	if rocev2 := Plan(load(t, twoHosts+`validate "x" { op = "write" }`))[0]; rocev2.Criteria.NoWire != "" {
		t.Errorf("RoCEv2 lost its wire view: %+v", rocev2.Criteria)
	}
	ib := load(t, `
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
	if tt.Verbs.SL != 5 || tt.Verbs.TClass != -1 || tt.Criteria.DSCP != -1 {
		t.Errorf("InfiniBand: %+v %+v", tt.Verbs, tt.Criteria)
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
