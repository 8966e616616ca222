package srlinux

import (
	"math"
	"sort"
	"strconv"
	"strings"

	gc "github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Inconsistent is the value Read reports for a setting held in several
// places that disagree (two ports' scheduler policies, flow-control
// receive vs transmit): it never equals a desired value, so the plan
// re-applies the setting.
const Inconsistent = "inconsistent"

// phb is srl_nokia-common's dscp-name enumeration: a dscp-policy entry's
// value may be written as a PHB name instead of a number.
var phb = map[string]int{"CS0": 0, "LE": 1, "CS1": 8, "AF11": 10, "AF12": 12, "AF13": 14, "CS2": 16,
	"AF21": 18, "AF22": 20, "AF23": 22, "CS3": 24, "AF31": 26, "AF32": 28, "AF33": 30, "CS4": 32,
	"AF41": 34, "AF42": 36, "AF43": 38, "CS5": 40, "EF": 46, "CS6": 48, "CS7": 56}

// ReadJSON normalises the JSON_IETF a device returned for /qos and
// /interface (either may be nil: no data) into the switch's live state.
// Arbitrary input gives a State, never a panic.
func ReadJSON(qos, interfaces []byte, sw *intent.Switch) (intent.State, error) {
	data := map[string]any{}
	for path, b := range map[string][]byte{"/qos": qos, "/interface": interfaces} {
		if b == nil {
			continue
		}
		v, err := gc.Decode(b)
		if err != nil {
			return nil, err
		}
		data[path] = v
	}
	return Platform{}.Decode(data, sw), nil
}

// index parses a system name with a numeric suffix: "fc3" -> 3,
// "queue-3" -> 3.
func index(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0 && n < 64
}

func agree(vals []string) (string, bool) {
	out, seen := "", false
	for _, v := range vals {
		if v == "" {
			continue
		}
		if seen && v != out {
			return Inconsistent, true
		}
		out, seen = v, true
	}
	return out, seen
}

// profile is a pfc-mapping-profile as read: its PFC priorities, the
// traffic classes they map, and the deadlock (watchdog) settings.
type profile struct {
	prios, tcs      []int
	wd              bool
	detect, recover string
}

func readProfile(qos gc.Node, name string) (profile, bool) {
	p := qos.Entry("pfc-mapping-profile", "name", name)
	if !p.Exists() {
		return profile{}, false
	}
	var out profile
	for _, q := range p.At("received-traffic", "unicast-mapping").List("pfc-queue") {
		if on, _ := q.Get("enable-pfc").Bool(); !on {
			continue
		}
		prio, ok := q.Get("pfc-pause-frame-priority").Int()
		if !ok {
			if d := q.Get("dot1p").Ints(); len(d) == 1 {
				prio, ok = d[0], true
			}
		}
		if ok && prio >= 0 && prio < 8 {
			out.prios = append(out.prios, int(prio))
		}
		for _, f := range q.Get("forwarding-class").Strings() {
			if tc, ok := index(f, "fc"); ok {
				out.tcs = append(out.tcs, tc)
			}
		}
	}
	sort.Ints(out.prios)
	dl := p.At("received-pfc-pause-frames", "deadlock")
	out.wd, _ = dl.Get("enable").Bool()
	if out.wd {
		// YANG defaults: 750 ms each.
		out.detect, out.recover = "750ms", "750ms"
		if v, ok := dl.Get("detection-timer").Int(); ok {
			out.detect = strconv.FormatInt(v, 10) + "ms"
		}
		if v, ok := dl.Get("recovery-timer").Int(); ok {
			out.recover = strconv.FormatInt(v, 10) + "ms"
		}
	}
	return out, true
}

// Decode normalises the Get results into fabctl's state paths for what
// the switch intent manages.
func (Platform) Decode(data map[string]any, sw *intent.Switch) intent.State {
	st := intent.State{}
	qos := gc.N(data["/qos"])
	ifs := gc.N(map[string]any{"interface": data["/interface"]})

	trust := ""
	if dp := qos.Get("classifiers").Entry("dscp-policy", "name", Policy); dp.Exists() && sw.Transport != spec.InfiniBand {
		trust = spec.TrustDSCP
		var t [64]int
		for i := range t {
			t[i] = -1 // not classified: never the desired value
		}
		for _, e := range dp.List("dscp") {
			d, ok := e.Get("value").Int()
			if !ok {
				name, _ := e.Get("value").Ident()
				n, known := phb[name]
				d, ok = int64(n), known
			}
			f, _ := e.Get("forwarding-class").String()
			tc, okTC := index(f, "fc")
			if !okTC {
				tc = -1
			}
			if ok && d >= 0 && d < 64 {
				t[d] = tc
			}
		}
		intent.PutDSCP(st, "", &t)
	} else if qos.Get("classifiers").Entry("dot1p-policy", "name", Policy).Exists() {
		trust = spec.TrustPCP
	}
	if trust != "" {
		st["trust"] = trust
	}

	var ports []string
	qosIf := map[string]gc.Node{}
	for _, p := range sw.Ports {
		if ifs.Entry("interface", "name", p.Name).Exists() {
			ports = append(ports, p.Name)
			qosIf[p.Name] = qos.Get("interfaces").Entry("interface", "interface-id", p.Name)
		}
	}

	// Scheduling: from the policies the ports use, or fabctl's own.
	schedules := map[string]map[int]string{}
	policyOf := func(port string) string {
		s, _ := qosIf[port].At("output", "scheduler", "scheduler-policy").String()
		return s
	}
	tcs := map[int]bool{}
	addPolicy := func(name string) {
		if _, done := schedules[name]; done {
			return
		}
		out := map[int]string{}
		pol := qos.Get("scheduler-policies").Entry("scheduler-policy", "name", name)
		for _, s := range pol.List("scheduler") {
			prio, _ := s.Get("priority").Ident()
			for _, in := range s.List("input") {
				q, _ := in.Get("queue-name").String()
				tc, ok := index(q, "queue-")
				if !ok {
					continue
				}
				tcs[tc] = true
				if prio == "strict" {
					out[tc] = "strict"
				} else {
					out[tc], _ = in.Get("weight").String()
				}
			}
		}
		schedules[name] = out
	}
	for _, p := range ports {
		addPolicy(policyOf(p))
	}
	if len(ports) == 0 {
		addPolicy(Policy)
	}

	base, hasBase := readProfile(qos, PFCProfile)
	losslessTC := map[int]bool{}
	for _, tc := range base.tcs {
		losslessTC[tc] = true
	}
	want := map[int]*intent.ECN{}
	for _, tc := range sw.TCs {
		want[tc.TC] = tc.ECN
	}
	for tc := range tcs {
		pre := "tc/" + strconv.Itoa(tc) + "/"
		var sched, prof []string
		if len(ports) == 0 {
			sched = []string{schedules[Policy][tc]}
			prof = []string{ecnName(tc)}
		}
		for _, p := range ports {
			s := schedules[policyOf(p)][tc]
			if s == "" {
				s = "none"
			}
			sched = append(sched, s)
			pf, _ := qosIf[p].At("output", "queues").Entry("queue", "queue-name", queue(tc)).Get("queue-management-profile").String()
			if pf == "" {
				pf = "-"
			}
			prof = append(prof, pf)
		}
		if s, ok := agree(sched); ok {
			switch s {
			case "strict", Inconsistent:
				st[pre+"sched"] = s
			case "none":
				st[pre+"sched"] = Inconsistent
			default:
				st[pre+"sched"] = "ets"
				st[pre+"bandwidth"] = s
			}
		}
		if pf, ok := agree(prof); ok && pf != "-" {
			if pf == Inconsistent {
				st[pre+"ecn/min"] = Inconsistent
			} else if min, max, prob, ok := readECN(qos, pf); ok {
				st[pre+"ecn/min"] = min
				st[pre+"ecn/max"] = max
				st[pre+"ecn/probability"] = quantised(prob, want[tc])
			}
		}
		st[pre+"lossless"] = strconv.FormatBool(losslessTC[tc])
	}

	// Watchdog timers: the switch's profile and every profile a port
	// uses, where deadlock detection is on.
	var detect, recover []string
	if hasBase && base.wd {
		detect, recover = append(detect, base.detect), append(recover, base.recover)
	}
	portProfile := map[string]profile{}
	for _, p := range ports {
		pfc := qosIf[p].Get("pfc")
		if on, _ := pfc.Get("pfc-enable").Bool(); !on {
			continue
		}
		name, _ := pfc.Get("pfc-mapping-profile").String()
		pr, ok := readProfile(qos, name)
		if !ok {
			continue
		}
		portProfile[p] = pr
		if pr.wd {
			detect, recover = append(detect, pr.detect), append(recover, pr.recover)
		}
	}
	if v, ok := agree(detect); ok {
		st["pfcwd/detect"] = v
	}
	if v, ok := agree(recover); ok {
		st["pfcwd/restore"] = v
	}

	// Headroom: the buffer profile's PFC-reserved share, as bound on the
	// PFC ports.
	var share []string
	buf := qos.Get("buffer-management").Entry("buffer-allocation-profile", "name", BufferProfile)
	for _, q := range buf.Get("queues").List("pfc-queue") {
		v, _ := q.Get("maximum-pfc-reserved-share-bytes").String()
		share = append(share, v)
	}
	for p := range portProfile {
		if b, _ := qosIf[p].At("input", "pfc-buffer-allocation-profile").String(); b != BufferProfile {
			share = append(share, "unbound:"+p) // a PFC port without the profile: not the desired headroom
		}
	}
	sort.Strings(share)
	if v, ok := agree(share); ok && buf.Exists() {
		st["buffer/headroom"] = v
	}

	for _, name := range ports {
		pre := "port/" + name + "/"
		entry := ifs.Entry("interface", "name", name)
		if mtu, ok := entry.Get("mtu").Int(); ok {
			st[pre+"mtu"] = strconv.FormatInt(mtu-L2Overhead, 10)
		}
		fcRx, _ := entry.At("ethernet", "flow-control", "receive").Bool()
		fcTx, _ := entry.At("ethernet", "flow-control", "transmit").Bool()
		switch {
		case fcRx == fcTx:
			st[pre+"pause"] = strconv.FormatBool(fcRx)
		default:
			st[pre+"pause"] = Inconsistent // one direction only: fabctl sets both
		}
		pr, on := portProfile[name]
		st[pre+"pfc"] = ""
		st[pre+"pfcwd"] = "false"
		if on {
			st[pre+"pfc"] = setKey(pr.prios)
			st[pre+"pfcwd"] = strconv.FormatBool(pr.wd)
		}
		cls := qosIf[name].At("input", "classifiers")
		pt := "none"
		d, _ := cls.Get("dscp-policy").String()
		p1, _ := cls.Get("dot1p-policy").String()
		switch {
		case d == Policy && p1 == "":
			pt = spec.TrustDSCP
		case p1 == Policy && d == "":
			pt = spec.TrustPCP
		case d != "" || p1 != "":
			pt = Inconsistent
		}
		// A device without fabctl's classifier has no switch-wide trust
		// to differ from: an unbound port is then just unconfigured.
		if pt != trust && (trust != "" || pt != "none") {
			st[pre+"trust"] = pt
		}
	}
	return st
}

// readECN reads an ECN (mark-only WRED) queue-management profile.
func readECN(qos gc.Node, name string) (min, max, prob string, ok bool) {
	p := qos.Get("buffer-management").Entry("queue-management-profile", "name", name)
	for _, s := range p.Get("wred").List("wred-slope") {
		if on, _ := s.Get("enable-ecn").Bool(); !on {
			continue
		}
		min, _ = s.Get("min-threshold").String()
		max, _ = s.Get("max-threshold").String()
		prob, _ = s.Get("max-drop-probability-percent").String()
		return min, max, prob, true
	}
	return "", "", "", false
}

// quantised reads a whole-percent probability as the desired value it was
// rendered from (see openconfig's equivalent).
func quantised(live string, want *intent.ECN) string {
	n, err := strconv.ParseFloat(live, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return live
	}
	if want != nil && float64(probability(want.Probability)) == n {
		return strconv.FormatFloat(want.Probability, 'f', -1, 64)
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}
