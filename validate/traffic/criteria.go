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

// Evaluate applies the criteria to a completed run.
func Evaluate(c Criteria, p PairRef, r *verbs.Result, ev Evidence) []Check {
	var checks []Check
	add := func(name string, st Status, format string, args ...any) {
		checks = append(checks, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
	}
	// Bandwidth.
	if c.Percent > 0 || c.Rate > 0 {
		got := r.Gbps * 1e9
		lr := LineRate(p)
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
			add("bandwidth", st, "%.3f Gb/s = %.1f%% of the %s line rate %s %g%%", r.Gbps, pct, lr, op, c.Percent)
		}
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
