package traffic

import (
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

func pairOf(speedA, speedB spec.BitRate) PairRef {
	return PairRef{
		Client: Endpoint{Host: &spec.Host{Name: "a"}, NIC: &spec.NIC{Name: "fa", Speed: speedA}},
		Server: Endpoint{Host: &spec.Host{Name: "b"}, NIC: &spec.NIC{Name: "fb", Speed: speedB}},
	}
}

func find(t *testing.T, checks []Check, name string) Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, checks)
	return Check{}
}

func TestBandwidthCriteria(t *testing.T) {
	r := &verbs.Result{Gbps: 92}
	for _, tc := range []struct {
		name   string
		c      Criteria
		p      PairRef
		status Status
		detail string
	}{
		{"percent ok", Criteria{Percent: 90, Priority: -1, DSCP: -1}, pairOf(100e9, 200e9), Pass, "92.0% of the 100G line rate >= 90%"},
		{"percent low", Criteria{Percent: 95, Priority: -1, DSCP: -1}, pairOf(100e9, 100e9), Fail, "92.0% of the 100G line rate < 95%"},
		{"absolute", Criteria{Rate: 100e9, Priority: -1, DSCP: -1}, pairOf(0, 0), Fail, "92.000 Gb/s < 100G"},
		{"no line rate", Criteria{Percent: 90, Priority: -1, DSCP: -1}, pairOf(0, 0), Fail, "needs the line rate"},
	} {
		c := find(t, Evaluate(tc.c, tc.p, r, Evidence{}), "bandwidth")
		if c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

func TestLatencyCriteria(t *testing.T) {
	r := &verbs.Result{Latency: &verbs.LatencyStats{Median: 20 * time.Microsecond, P99: 80 * time.Microsecond, Max: time.Millisecond}}
	c := find(t, Evaluate(Criteria{MaxP99: 50 * time.Microsecond, Priority: -1, DSCP: -1}, pairOf(0, 0), r, Evidence{}), "p99 latency")
	if c.Status != Fail || c.Detail != "p99 80.00us > 50µs (median 20.00us, max 1000.00us)" {
		t.Errorf("%+v", c)
	}
}

func TestLossAndPriority(t *testing.T) {
	c := Criteria{Lossless: true, Priority: 3, DSCP: 26}
	// mlx5-like counters: loss indicators and per-priority bytes exist.
	before := Counters{"rdma:out_of_sequence": 0, "rdma:duplicate_request": 5, "eth:tx_prio3_bytes": 100, "eth:tx_prio0_bytes": 10}
	clean := Counters{"rdma:duplicate_request": 2, "eth:tx_prio3_bytes": 980, "eth:tx_prio0_bytes": 20, "rdma:np_cnp_sent": 4, "pfc:ind:3": 9}
	ev := Evidence{Before: map[string]Counters{"a:fa": before}, Deltas: map[string]Counters{"a:fa": clean}}
	checks := Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev)
	if l := find(t, checks, "no loss (lossless class)"); l.Status != Pass || !strings.Contains(l.Detail, "retransmissions: duplicate_request=2; congestion signals: pfc:ind:3=9, np_cnp_sent=4") {
		t.Errorf("clean: %+v", l)
	}
	if p := find(t, checks, "traffic on the class's priority"); p.Status != Pass || p.Detail != "98% of the traffic on priority 3" {
		t.Errorf("priority: %+v", p)
	}
	lossy := Counters{"rdma:out_of_sequence": 7, "eth:tx_prio0_bytes": 1000}
	ev.Deltas["a:fa"] = lossy
	checks = Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev)
	if l := find(t, checks, "no loss (lossless class)"); l.Status != Fail || !strings.Contains(l.Detail, "out_of_sequence=7") {
		t.Errorf("lossy: %+v", l)
	}
	if p := find(t, checks, "traffic on the class's priority"); p.Status != Fail || !strings.Contains(p.Detail, "only 0% of the traffic went on priority 3") {
		t.Errorf("wrong priority: %+v", p)
	}
	if st, why := Verdict(checks); st != Fail || !strings.Contains(why, "no loss (lossless class): packets were lost") {
		t.Errorf("verdict %s %q", st, why)
	}
	// A NIC without such counters: not checked, never passed.
	ev = Evidence{Before: map[string]Counters{"a:fa": {"rdma:rdma_sends": 1}}, Deltas: map[string]Counters{"a:fa": {}}}
	checks = Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev)
	for _, ch := range checks {
		if ch.Status != Skipped {
			t.Errorf("without counters %q is %s", ch.Name, ch.Status)
		}
	}
	if st, _ := Verdict(checks); st != Pass {
		t.Errorf("skipped checks fail the test: %s", st)
	}
}

func TestWireCriteria(t *testing.T) {
	c := Criteria{Priority: 3, DSCP: 26}
	for _, tc := range []struct {
		w      Wire
		status Status
		detail string
	}{
		{Wire{All: 4000, Match: 4000, Observed: true}, Pass, "all 4000 RoCEv2 packets carried DSCP 26 (priority 3)"},
		{Wire{All: 4000, Match: 2000, Observed: true}, Fail, "2000 of 4000 RoCEv2 packets arrived with another DSCP than 26"},
		{Wire{Observed: true}, Fail, "did not cross the link"},
	} {
		ch := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, Evidence{Wire: tc.w}), "traffic on the class's priority")
		if ch.Status != tc.status || !strings.Contains(ch.Detail, tc.detail) {
			t.Errorf("%+v: %+v", tc.w, ch)
		}
	}
}

func TestCounters(t *testing.T) {
	sys := t.TempDir()
	writeFiles(t, sys, map[string]string{
		"class/infiniband/rxe_a/ports/1/hw_counters/sent_pkts":          "100\n",
		"class/infiniband/rxe_a/ports/1/hw_counters/out_of_seq_request": "0\n",
		"class/infiniband/rxe_a/ports/1/hw_counters/lifespan":           "garbage\n",
		"class/infiniband/rxe_a/ports/1/counters/port_xmit_data":        "7\n",
	})
	c, err := ReadRDMA(sys, "rxe_a", 1)
	if err != nil {
		t.Fatal(err)
	}
	if c["rdma:sent_pkts"] != 100 || c["rdma:port_xmit_data"] != 7 || len(c) != 3 || !c.Observable() {
		t.Errorf("%v", c)
	}
	if _, err := ReadRDMA(sys, "rxe_b", 1); err == nil {
		t.Error("missing device read")
	}
	d, reset := Diff(Counters{"a": 5, "b": 9, "c": 1}, Counters{"a": 8, "b": 2, "c": 1, "new": 4})
	if d.String() != "a=3" || len(reset) != 1 || reset[0] != "b" {
		t.Errorf("diff %v reset %v", d, reset)
	}
	req, ind := Counters{"pfc:req:3": 12, "pfc:ind:3": 4}.PFC()
	if req[3] != 12 || ind[3] != 4 {
		t.Errorf("pfc %v %v", req, ind)
	}
}

// Between two software RDMA devices (rxe), a sequence error with nothing
// dropped on the NICs is the device's own retransmission, reported as
// such, not fabric loss (the VM demo once failed on exactly this: one
// out_of_seq_request with every packet on the wire); a NIC drop is loss.
// Hardware NICs keep the strict reading of the same counters.
func TestSoftDeviceLossJudgement(t *testing.T) {
	c := Criteria{Lossless: true, Priority: -1, DSCP: -1}
	before := Counters{"rdma:out_of_seq_request": 0, "rdma:rcvd_seq_err": 0, "net:rx_dropped": 0, "net:tx_dropped": 0}
	own := Counters{"rdma:out_of_seq_request": 1, "rdma:completer_retry_err": 1, "rdma:duplicate_request": 8}
	ev := Evidence{Software: true, Before: map[string]Counters{"a:fa": before}, Deltas: map[string]Counters{"a:fa": own}}
	l := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev), "no loss (lossless class)")
	if l.Status != Pass || !strings.Contains(l.Detail, "no drops or errors on the NICs") || !strings.Contains(l.Detail, "own sequence errors and retransmissions (not fabric loss): ") || !strings.Contains(l.Detail, "out_of_seq_request=1") {
		t.Errorf("soft device's own retransmission: %+v", l)
	}
	ev.Deltas["a:fa"] = Counters{"rdma:out_of_seq_request": 1, "net:rx_dropped": 3}
	if l := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev), "no loss (lossless class)"); l.Status != Fail || !strings.Contains(l.Detail, "rx_dropped=3") {
		t.Errorf("a NIC drop between soft devices is loss: %+v", l)
	}
	// The tc counters of the veth ends (the testbed's fabric): a qdisc
	// drop is fabric loss, and the only tc counter this netdev has is
	// enough to judge.
	ev.Before["a:fa"] = Counters{"tc:drops": 0}
	ev.Deltas["a:fa"] = Counters{"rdma:out_of_seq_request": 1, "tc:drops": 2}
	if l := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev), "no loss (lossless class)"); l.Status != Fail || !strings.Contains(l.Detail, "tc:drops=2") {
		t.Errorf("a qdisc drop on the veth is fabric loss: %+v", l)
	}
	ev.Deltas["a:fa"] = Counters{"rdma:out_of_seq_request": 1, "tc:drops": 0}
	if l := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev), "no loss (lossless class)"); l.Status != Pass {
		t.Errorf("no qdisc drop, only the device's own: %+v", l)
	}
	ev.Before["a:fa"] = before
	ev.Software = false
	ev.Deltas["a:fa"] = own
	if l := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev), "no loss (lossless class)"); l.Status != Fail || !strings.Contains(l.Detail, "out_of_seq_request=1") {
		t.Errorf("hardware keeps today's strictness: %+v", l)
	}
	// Soft devices whose netdevs expose no statistics: not checked.
	ev = Evidence{Software: true, Before: map[string]Counters{"a:fa": {"rdma:rdma_sends": 1}}, Deltas: map[string]Counters{"a:fa": {"rdma:duplicate_request": 2}}}
	if l := find(t, Evaluate(c, pairOf(0, 0), &verbs.Result{}, ev), "no loss (lossless class)"); l.Status != Skipped {
		t.Errorf("no counters: %+v", l)
	}
}

// The host's marking, judged from the route rdma_cm resolved with no ToS
// or SL of the test's own.
func TestHostMarking(t *testing.T) {
	p := pairOf(0, 0)
	v2 := Criteria{Priority: 3, DSCP: 26, SL: -1, Transport: spec.RoCEv2}
	v1 := Criteria{Priority: 3, DSCP: -1, SL: 3, Transport: spec.RoCEv1}
	for _, tc := range []struct {
		name   string
		c      Criteria
		route  *verbs.Route
		status Status
		detail string
	}{
		{"RoCEv2 default ToS right", v2, &verbs.Route{TClass: 106}, Pass, "ToS 106 (DSCP 26) from the host's default"},
		// A host whose default_roce_tos was never set (0) or is wrong.
		{"RoCEv2 default ToS 0", v2, &verbs.Route{TClass: 0}, Fail, "ToS 0 (DSCP 0), not the class's DSCP 26"},
		{"RoCEv2 default ToS wrong", v2, &verbs.Route{TClass: 104 + 8}, Fail, "DSCP 28"},
		// examples/rocev1-storage: egress map 3:3, ToS 0: rt_tos2priority(0)
		// is 0, whose map entry is PCP 0.
		{"RoCEv1 map 3:3, ToS 0", v1, &verbs.Route{TClass: 0, SL: 0}, Fail, "rdma_cm chose PCP 0 for ToS 0, not the class's priority 3: it takes the RDMA VLAN interface's egress-qos-map entry of priority 0"},
		{"RoCEv1 map 0:3", v1, &verbs.Route{TClass: 0, SL: 3}, Pass, "PCP 3"},
		{"InfiniBand SL", Criteria{Priority: 1, DSCP: -1, SL: 5, Transport: spec.InfiniBand}, &verbs.Route{SL: 0}, Fail, "path has SL 0, not the class's SL 5"},
	} {
		checks := Evaluate(tc.c, p, &verbs.Result{Route: tc.route}, Evidence{})
		c := find(t, checks, "host marking (rdma_cm)")
		if c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	// Self-marked tests say nothing about the host's defaults; neither
	// does a connection without a path record (iWARP).
	for _, tc := range []struct {
		c Criteria
		r *verbs.Result
	}{
		{Criteria{Priority: 3, DSCP: 26, SL: -1, SelfMarked: true}, &verbs.Result{Route: &verbs.Route{TClass: 0}}},
		{v2, &verbs.Result{}},
	} {
		for _, c := range Evaluate(tc.c, p, tc.r, Evidence{}) {
			if c.Name == "host marking (rdma_cm)" {
				t.Errorf("unexpected %+v", c)
			}
		}
	}
}

// rt_tos2priority (net/ipv4/route.c ip_tos2prio) only yields 0, 2, 4, 6.
func TestTos2Priority(t *testing.T) {
	for tos, want := range map[int]int{0: 0, 2: 0, 104: 2, 106: 2, 0x10: 6, 0x08: 2, 0x18: 4, 0xb8: 4, 0x1e: 4} {
		if got := Tos2Priority(tos); got != want {
			t.Errorf("rt_tos2priority(%#x) = %d, want %d", tos, got, want)
		}
	}
}

// Bandwidth is judged against the rate the ports trained at; a port that
// trained below its declared speed is a finding of its own; ngc's figures.
func TestTrainedRateAndNGC(t *testing.T) {
	p := pairOf(100e9, 100e9)
	trained := Evidence{Trained: map[string]spec.BitRate{"a:fa": 100e9, "b:fb": 50e9}}
	checks := Evaluate(Criteria{Percent: 90, Priority: -1, DSCP: -1, SL: -1}, p, &verbs.Result{Gbps: 46}, trained)
	if c := find(t, checks, "bandwidth"); c.Status != Pass || !strings.Contains(c.Detail, "92.0% of the 50G trained rate") {
		t.Errorf("trained: %+v", c)
	}
	if c := find(t, checks, "link speed"); c.Status != Fail || !strings.Contains(c.Detail, "b:fb trained at 50G, below its declared speed 100G") {
		t.Errorf("link speed: %+v", c)
	}
	ngc := Criteria{NGC: true, Priority: -1, DSCP: -1, SL: -1}
	even := Evidence{Trained: map[string]spec.BitRate{"a:fa": 100e9, "b:fb": 100e9}}
	for _, tc := range []struct {
		name   string
		c      Criteria
		r      *verbs.Result
		check  string
		status Status
		detail string
	}{
		{"bw ok", ngc, &verbs.Result{Gbps: 91}, "ngc bandwidth", Pass, "91.000 Gb/s >= 90.000 Gb/s (0.9 x the 100G trained rate)"},
		{"bw low", ngc, &verbs.Result{Gbps: 89}, "ngc bandwidth", Fail, "< 90.000 Gb/s"},
		{"bidirectional", Criteria{NGC: true, Bidirectional: true, Priority: -1, DSCP: -1, SL: -1}, &verbs.Result{Gbps: 170}, "ngc bandwidth", Fail, "170.000 Gb/s < 180.000 Gb/s (0.9 x the 100G two-way trained rate)"},
		{"lat ok", ngc, &verbs.Result{Test: verbs.Test{Op: verbs.OpSend}, Latency: &verbs.LatencyStats{Avg: 2400 * time.Nanosecond}}, "ngc latency", Pass, "2.40us <= 2.50us"},
		{"lat high", ngc, &verbs.Result{Test: verbs.Test{Op: verbs.OpWrite}, Latency: &verbs.LatencyStats{Avg: 2600 * time.Nanosecond}}, "ngc latency", Fail, "2.60us > 2.50us"},
		{"read lat", ngc, &verbs.Result{Test: verbs.Test{Op: verbs.OpRead}, Latency: &verbs.LatencyStats{Avg: 4400 * time.Nanosecond}}, "ngc latency", Pass, "4.40us <= 4.50us"},
	} {
		c := find(t, Evaluate(tc.c, p, tc.r, even), tc.check)
		if c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

func TestTrainedRate(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"class/infiniband/mlx5_0/ports/1/rate": "100 Gb/sec (4X EDR)\n",
		"class/infiniband/rxe_fa/ports/1/rate": "10 Gb/sec (1X FDR10)\n",
		"class/infiniband/odd/ports/1/rate":    "garbage\n",
	})
	for dev, want := range map[string]spec.BitRate{"mlx5_0": 100e9, "rxe_fa": 10e9, "odd": 0, "none": 0} {
		got, ok := TrainedRate(root, dev, 1)
		if got != want || ok != (want > 0) {
			t.Errorf("%s: %v %v, want %v", dev, got, ok, want)
		}
	}
}
