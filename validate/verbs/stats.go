package verbs

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Result is one side's outcome of a test.
type Result struct {
	Role    string    `json:"role"` // server | client
	Backend string    `json:"backend"`
	Test    Test      `json:"test"`
	Local   *Endpoint `json:"local,omitempty"`
	Peer    *Endpoint `json:"peer,omitempty"`
	// PathMTU is the MTU the QPs ran with.
	PathMTU int `json:"path_mtu,omitempty"`
	// Messages completed and their bytes (client side; the server of a
	// SEND test counts what it received).
	Messages uint64        `json:"messages"`
	Bytes    uint64        `json:"bytes"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Gbps is the average bandwidth in 10^9 bit/s (perftest --report_gbits).
	Gbps float64 `json:"gbps,omitempty"`
	// MsgRate is messages per second.
	MsgRate float64       `json:"msg_rate,omitempty"`
	Latency *LatencyStats `json:"latency,omitempty"`
	// Placement says how the test thread and buffers were placed (NUMA).
	Placement []string `json:"placement,omitempty"`
	// Route is the marking rdma_cm chose for the connection (nil: the
	// QPs were connected without rdma_cm, or iWARP, which has no path
	// record).
	Route *Route `json:"route,omitempty"`
	// Notes are facts worth showing (MTUs differ, inline not supported).
	Notes []string `json:"notes,omitempty"`
}

// Route is what rdma_cm resolved for a connection
// (drivers/infiniband/core/cma.c cma_resolve_iboe_route): TClass is the
// GRH traffic class, on RoCEv2 the IP ToS byte (the ToS the application
// set, else the port's configfs default_roce_tos); SL is the service
// level, on RoCE iboe_tos_to_sl(ndev, ToS): the VLAN netdev's egress map
// entry of rt_tos2priority(ToS) (or the parent's prio->tc map), which a
// RoCE NIC sends as the 802.1p PCP; on InfiniBand the subnet manager's
// path record.
type Route struct {
	TClass int `json:"tclass"`
	SL     int `json:"sl"`
}

// LatencyStats are one-way latencies (half a round trip for SEND and
// WRITE ping-pong, a whole READ), like perftest's report.
type LatencyStats struct {
	Samples int           `json:"samples"`
	Min     time.Duration `json:"min_ns"`
	Median  time.Duration `json:"median_ns"` // perftest's t_typical
	Avg     time.Duration `json:"avg_ns"`
	P99     time.Duration `json:"p99_ns"`
	P999    time.Duration `json:"p99_9_ns"`
	Max     time.Duration `json:"max_ns"`
	Stdev   time.Duration `json:"stdev_ns"`
}

func (l *LatencyStats) String() string {
	us := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e3) }
	return fmt.Sprintf("min %s median %s avg %s p99 %s p99.9 %s max %s us (%d samples)",
		us(l.Min), us(l.Median), us(l.Avg), us(l.P99), us(l.P999), us(l.Max), l.Samples)
}

// rttFactor is how many one-way trips one latency sample spans.
func rttFactor(op Op) int {
	if op == OpRead {
		return 1 // a READ's completion is one request/response
	}
	return 2 // ping-pong: my message and the peer's reply
}

// LatencyFromPosts turns post timestamps (ns, one per iteration) into
// statistics: a sample is the time between consecutive posts divided by
// the round-trip factor, as perftest's print_report_lat computes it.
// Percentiles are the ceil(n*p)-th smallest sample; the median is
// perftest's t_typical (the middle sample). Unlike perftest, no tail
// samples are dropped and the stdev is computed in floating point.
func LatencyFromPosts(posts []uint64, op Op) *LatencyStats {
	if len(posts) < 2 {
		return nil
	}
	f := uint64(rttFactor(op))
	d := make([]time.Duration, len(posts)-1)
	for i := range d {
		d[i] = time.Duration((posts[i+1] - posts[i]) / f)
	}
	return latencyStats(d)
}

func latencyStats(d []time.Duration) *LatencyStats {
	if len(d) == 0 {
		return nil
	}
	slices.Sort(d)
	n := len(d)
	var sum float64
	for _, v := range d {
		sum += float64(v)
	}
	avg := sum / float64(n)
	var sq float64
	for _, v := range d {
		sq += (float64(v) - avg) * (float64(v) - avg)
	}
	pct := func(p float64) time.Duration {
		i := int(math.Ceil(float64(n)*p)) - 1
		return d[max(0, min(n-1, i))]
	}
	return &LatencyStats{
		Samples: n, Min: d[0], Max: d[n-1], Median: d[n/2],
		Avg: time.Duration(avg), Stdev: time.Duration(math.Sqrt(sq / float64(n))),
		P99: pct(0.99), P999: pct(0.999),
	}
}

// bandwidth fills the bandwidth figures from a completed transfer.
func (r *Result) bandwidth(messages uint64, size int, elapsed time.Duration) {
	r.Messages = messages
	r.Bytes = messages * uint64(size)
	r.Elapsed = elapsed
	if elapsed > 0 {
		sec := elapsed.Seconds()
		r.Gbps = float64(r.Bytes) * 8 / sec / 1e9
		r.MsgRate = float64(messages) / sec
	}
}

// Summary is a one-line human form of the result.
func (r *Result) Summary() string {
	if r.Latency != nil {
		return fmt.Sprintf("%s: %s", r.Test, r.Latency)
	}
	return fmt.Sprintf("%s: %.3f Gb/s, %.0f msg/s (%d messages, %d bytes in %s)",
		r.Test, r.Gbps, r.MsgRate, r.Messages, r.Bytes, r.Elapsed.Round(time.Microsecond))
}
