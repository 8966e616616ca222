package traffic

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

// Status of a check or a test.
type Status string

// Statuses. A check that could not be made is Skipped, never Passed; a
// test that could not run is NotRun, never Passed.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Skipped Status = "skipped"
	NotRun  Status = "not-run"
)

// Check is one pass criterion applied to one test run.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Wire is what the wire observer counted during the data phase, summed
// over both ends' receive side.
type Wire struct {
	All, Match uint64
	Observed   bool
	// NotHere says why the wire could not be watched for this pair ("":
	// it could, or the criteria say why not).
	NotHere string
}

// Evidence is what a test run left behind besides its result.
type Evidence struct {
	// Deltas per endpoint ("h1:fa"), and the counters before (to know
	// which counters a NIC has at all).
	Deltas map[string]Counters
	Before map[string]Counters
	Wire   Wire
	// Software: both ends are software RDMA devices (rxe, siw). Their
	// sequence errors and retransmissions can come from the device's own
	// kernel threads being descheduled, not from the fabric: loss is then
	// judged from what the NICs dropped (netdev drops and errors,
	// discards), and the device's own counts are reported as such.
	Software bool
	// Trained is the rate each endpoint's port trained at (sysfs
	// ports/N/rate), where it could be read.
	Trained map[string]spec.BitRate `json:",omitempty"`
}

// LineRate is the slower of the two NICs' speeds (0: unknown).
func LineRate(p PairRef) spec.BitRate {
	a, b := p.Client.NIC.Speed, p.Server.NIC.Speed
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// PortRate is the rate the pair can run at: the slower of the rates its
// ports trained at when both are known, else the declared LineRate; and
// where it comes from.
func PortRate(p PairRef, ev Evidence) (spec.BitRate, string) {
	a, aok := ev.Trained[p.Client.String()]
	b, bok := ev.Trained[p.Server.String()]
	if aok && bok && a > 0 && b > 0 {
		return min(a, b), "trained"
	}
	return LineRate(p), "line"
}

// NGC's acceptance figures (NVIDIA's cluster validation as the issue
// states them): bandwidth at least 90 % of the trained port rate (twice
// the rate bidirectionally), average latency at most 2.5 us, 4.5 us for
// RDMA READ.
const (
	ngcBandwidthShare = 0.9
	ngcLatency        = 2500 * time.Nanosecond
	ngcLatencyRead    = 4500 * time.Nanosecond
)

// Evaluate applies the criteria to a completed run.
func Evaluate(c Criteria, p PairRef, r *verbs.Result, ev Evidence) []Check {
	var checks []Check
	add := func(name string, st Status, format string, args ...any) {
		checks = append(checks, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
	}
	// A port that trained below its declared speed is a finding of its
	// own, whatever the bandwidth.
	for _, ep := range []Endpoint{p.Client, p.Server} {
		if tr, ok := ev.Trained[ep.String()]; ok && tr > 0 && ep.NIC.Speed > 0 && tr < ep.NIC.Speed {
			add("link speed", Fail, "%s trained at %s, below its declared speed %s (cable, optics, auto-negotiation or a port speed setting)", ep, tr, ep.NIC.Speed)
		}
	}
	rate, rateKind := PortRate(p, ev)
	dir := 1.0
	if c.Bidirectional {
		dir = 2
	}
	// NVIDIA's ngc figures, besides the spec's own.
	if c.NGC {
		switch {
		case r.Latency != nil:
			bound := ngcLatency
			if r.Test.Op == verbs.OpRead {
				bound = ngcLatencyRead
			}
			st, op := Pass, "<="
			if r.Latency.Avg > bound {
				st, op = Fail, ">"
			}
			add("ngc latency", st, "average %s %s %s", us(r.Latency.Avg), op, us(bound))
		case rate == 0:
			add("ngc bandwidth", Fail, "%.3f Gb/s, but ngc's bandwidth bound needs the port rate: neither port's trained rate nor a declared speed is known", r.Gbps)
		default:
			want := ngcBandwidthShare * dir * float64(rate)
			st, op := Pass, ">="
			if r.Gbps*1e9 < want {
				st, op = Fail, "<"
			}
			add("ngc bandwidth", st, "%.3f Gb/s %s %.3f Gb/s (0.9 x the %s %s%s rate)", r.Gbps, op, want/1e9, rate, bidirWord(c.Bidirectional), rateKind)
		}
	}
	// Bandwidth.
	if c.Percent > 0 || c.Rate > 0 {
		got := r.Gbps * 1e9
		lr := spec.BitRate(dir * float64(rate))
		switch {
		case c.Rate > 0 && got >= float64(c.Rate):
			add("bandwidth", Pass, "%.3f Gb/s >= %s", r.Gbps, c.Rate)
		case c.Rate > 0:
			add("bandwidth", Fail, "%.3f Gb/s < %s", r.Gbps, c.Rate)
		case lr == 0:
			add("bandwidth", Fail, "%.3f Gb/s, but min_bandwidth %g%% needs the line rate: declare speed on %s or %s (or their links)", r.Gbps, c.Percent, p.Client, p.Server)
		default:
			pct := got / float64(lr) * 100
			st := Pass
			op := ">="
			if pct < c.Percent {
				st, op = Fail, "<"
			}
			add("bandwidth", st, "%.3f Gb/s = %.1f%% of the %s %s%s rate %s %g%%", r.Gbps, pct, lr, bidirWord(c.Bidirectional), rateKind, op, c.Percent)
		}
	}
	// The host's marking: what rdma_cm chose from the host's defaults.
	if ck, ok := routeCheck(c, r); ok {
		checks = append(checks, ck)
	}
	// Latency.
	if c.MaxP99 > 0 {
		switch {
		case r.Latency == nil:
			add("p99 latency", Fail, "no latency samples")
		case r.Latency.P99 <= c.MaxP99:
			add("p99 latency", Pass, "p99 %s <= %s (median %s)", us(r.Latency.P99), c.MaxP99, us(r.Latency.Median))
		default:
			add("p99 latency", Fail, "p99 %s > %s (median %s, max %s)", us(r.Latency.P99), c.MaxP99, us(r.Latency.Median), us(r.Latency.Max))
		}
	}
	// Loss on a lossless class.
	if c.Lossless {
		loss, retries, cong, own := Counters{}, Counters{}, Counters{}, Counters{}
		observable := false
		for _, ep := range sortedKeys(ev.Deltas) {
			d := ev.Deltas[ep]
			for k, v := range d.Loss() {
				if ev.Software && softSeqCounters[k] {
					own[k] += v
					continue
				}
				loss[k] += v
			}
			if ev.Software {
				for k, v := range d.pick(netDropCounters) {
					loss[k] += v
				}
			}
			for k, v := range d.Retries() {
				retries[k] += v
			}
			for k, v := range d.Congestion() {
				cong[k] += v
			}
			if ev.Before[ep].Observable() || ev.Software && ev.Before[ep].hasAny(netDropCounters) {
				observable = true
			}
		}
		retry := ""
		if ev.Software && len(own)+len(retries) > 0 {
			for k, v := range own {
				retries[k] += v
			}
			retry = "; the software RDMA devices' own sequence errors and retransmissions (not fabric loss): " + retries.String()
		} else if len(retries) > 0 {
			retry = "; retransmissions: " + retries.String()
		}
		if len(cong) > 0 {
			retry += "; congestion signals: " + cong.String()
		}
		switch {
		case len(loss) > 0:
			add("no loss (lossless class)", Fail, "packets were lost on a lossless class: %s%s (check PFC on every hop for priority %d)", loss, retry, c.Priority)
		case !observable:
			add("no loss (lossless class)", Skipped, "these NICs expose no loss counters%s", retry)
		case ev.Software:
			add("no loss (lossless class)", Pass, "no drops or errors on the NICs%s", retry)
		default:
			add("no loss (lossless class)", Pass, "no sequence errors or discards%s", retry)
		}
	}
	// The intended priority.
	if c.Priority >= 0 || c.DSCP >= 0 {
		checks = append(checks, priorityCheck(c, ev))
	}
	return checks
}

// priorityCheck proves the traffic went on the class's priority: from
// the wire (software RDMA: every RoCEv2 packet must carry the class's
// DSCP), else from per-priority NIC counters (most of the traffic on the
// class's priority).
func priorityCheck(c Criteria, ev Evidence) Check {
	name := "traffic on the class's priority"
	if ev.Wire.Observed && c.DSCP >= 0 {
		w := ev.Wire
		switch {
		case w.All == 0:
			return Check{name, Fail, "no RoCEv2 packet arrived on the NICs' wire: the traffic did not cross the link (a local route? loopback?)"}
		case w.Match < w.All:
			return Check{name, Fail, fmt.Sprintf("%d of %d RoCEv2 packets arrived with another DSCP than %d: remarked on the way, or sent with another traffic class", w.All-w.Match, w.All, c.DSCP)}
		}
		return Check{name, Pass, fmt.Sprintf("all %d RoCEv2 packets carried DSCP %d (priority %d)", w.All, c.DSCP, c.Priority)}
	}
	if c.Priority >= 0 {
		var on, total uint64
		found := false
		for _, ep := range sortedKeys(ev.Deltas) {
			o, t, ok := ev.Deltas[ep].PrioShare(ev.Before[ep], c.Priority)
			if ok {
				found = true
				on += o
				total += t
			}
		}
		if found {
			switch {
			case total == 0:
				return Check{name, Fail, "the per-priority counters saw no traffic"}
			case float64(on) < 0.9*float64(total):
				return Check{name, Fail, fmt.Sprintf("only %.0f%% of the traffic went on priority %d (the NIC or switch maps the class elsewhere)", 100*float64(on)/float64(total), c.Priority)}
			}
			return Check{name, Pass, fmt.Sprintf("%.0f%% of the traffic on priority %d", 100*float64(on)/float64(total), c.Priority)}
		}
	}
	if why := cmp.Or(c.NoWire, ev.Wire.NotHere); why != "" {
		return Check{name, Skipped, why + ", and these NICs have no per-priority counters"}
	}
	return Check{name, Skipped, "neither a wire view (software RDMA over IPv4) nor per-priority counters on these NICs"}
}

func bidirWord(b bool) string {
	if b {
		return "two-way "
	}
	return ""
}

// routeCheck judges the marking rdma_cm chose for the connection from the
// host's defaults (no ToS, SL or PCP set by the test): on RoCEv2 the ToS
// (the port's configfs default_roce_tos) must carry the class's DSCP; on
// RoCEv1 and InfiniBand the path's SL must be the class's (on RoCE,
// iboe_tos_to_sl: the VLAN egress map entry of rt_tos2priority(ToS), the
// PCP a RoCE NIC sends; the NIC's prio->TC map instead where its driver
// set a TC count on the netdev, as ice and bnxt do).
func routeCheck(c Criteria, r *verbs.Result) (Check, bool) {
	name := "host marking (rdma_cm)"
	if c.SelfMarked || r == nil || r.Route == nil {
		return Check{}, false
	}
	rt := r.Route
	var fails, oks []string
	if c.DSCP >= 0 {
		if rt.TClass>>2 != c.DSCP {
			fails = append(fails, fmt.Sprintf("rdma_cm sent the connection with ToS %d (DSCP %d), not the class's DSCP %d: "+
				"the host's default ToS (rdma_cm configfs ports/N/default_roce_tos of the RDMA device; fabctl apply sets it from rdma_tos) "+
				"puts applications' RDMA traffic in another class", rt.TClass, rt.TClass>>2, c.DSCP))
		} else {
			oks = append(oks, fmt.Sprintf("ToS %d (DSCP %d) from the host's default", rt.TClass, c.DSCP))
		}
	}
	if c.SL >= 0 {
		switch {
		case rt.SL == c.SL:
			oks = append(oks, fmt.Sprintf("%s %d", slWord(c.Transport), rt.SL))
		case c.Transport == spec.InfiniBand:
			fails = append(fails, fmt.Sprintf("the subnet manager's path has SL %d, not the class's SL %d", rt.SL, c.SL))
		default:
			prio := Tos2Priority(rt.TClass)
			fails = append(fails, fmt.Sprintf("rdma_cm chose PCP %d for ToS %d, not the class's priority %d: it takes the RDMA VLAN interface's "+
				"egress-qos-map entry of priority %d (rt_tos2priority(%d); it only yields 0, 2, 4 or 6), so map priority %d to PCP %d there, or give the host a ToS whose priority is mapped; "+
				"on a NIC whose driver sets a TC count on the netdev (Intel E810/ice, Broadcom/bnxt) it takes the TC priority %d maps to in the NIC's prio->TC map instead (cma.c get_vlan_ndev_tc; lint HOST-7)",
				rt.SL, rt.TClass, c.SL, prio, rt.TClass, prio, c.SL, prio))
		}
	}
	switch {
	case len(fails) > 0:
		return Check{name, Fail, strings.Join(fails, "; ")}, true
	case len(oks) > 0:
		return Check{name, Pass, "rdma_cm chose " + strings.Join(oks, ", ")}, true
	}
	return Check{}, false
}

func slWord(t spec.Transport) string {
	if t == spec.InfiniBand {
		return "SL"
	}
	return "PCP"
}

// Tos2Priority is the kernel's rt_tos2priority (include/net/route.h):
// ip_tos2prio[IPTOS_TOS(tos) >> 1] (net/ipv4/route.c), whose entries are
// TC_PRIO_BESTEFFORT (0), TC_PRIO_BULK (2), TC_PRIO_INTERACTIVE (6) and
// TC_PRIO_INTERACTIVE_BULK (4); ECN_OR_COST(x) is x.
func Tos2Priority(tos int) int {
	return [16]int{0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4}[(tos&0x1e)>>1]
}

func us(d time.Duration) string { return fmt.Sprintf("%.2fus", float64(d)/1e3) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Verdict folds the checks: any fail fails; otherwise pass.
func Verdict(checks []Check) (Status, string) {
	var fails []string
	for _, c := range checks {
		if c.Status == Fail {
			fails = append(fails, c.Name+": "+c.Detail)
		}
	}
	if len(fails) > 0 {
		return Fail, strings.Join(fails, "; ")
	}
	return Pass, ""
}
