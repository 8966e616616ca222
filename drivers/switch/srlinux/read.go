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
		// An entry maps the priority to its PFC queue (the 7220 IXR-D5
		// has no enable-pfc here: srl_nokia-features future-0-0); one
		// written with enable-pfc false (another platform) does not count.
		if on, set := q.Get("enable-pfc").Bool(); set && !on {
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
	d := &decoder{st: intent.State{}, sw: sw, qos: gc.N(data["/qos"]), ifs: gc.N(map[string]any{"interface": data["/interface"]})}
	d.readClassifiers()
	d.findPorts()
	schedules, tcs := d.readSchedules()
	base, hasBase := readProfile(d.qos, PFCProfile)
	d.readTCs(schedules, tcs, base)
	d.readWatchdog(base, hasBase)
	d.readHeadroom()
	for _, name := range d.ports {
		d.readPort(name)
	}
	return d.st
}

// decoder reads the /qos and /interface trees, section by section, into st.
type decoder struct {
	st       intent.State
	sw       *intent.Switch
	qos, ifs gc.Node
	trust    string // the switch-wide trust ("" when fabctl's classifier is not there)
	// ports are the intent's ports that exist on the switch; qosIf their
	// qos interface entries.
	ports []string
	qosIf map[string]gc.Node
	// qosSub are the ports' subinterface entries (the classifiers).
	qosSub map[string]gc.Node
	// portProfile is the PFC mapping profile of each port with PFC on.
	portProfile map[string]profile
}

// readClassifiers reads the trust and the DSCP classification.
func (d *decoder) readClassifiers() {
	if dp := d.qos.Get("classifiers").Entry("dscp-policy", "name", Policy); dp.Exists() && d.sw.Transport != spec.InfiniBand {
		d.trust = spec.TrustDSCP
		var t [64]int
		for i := range t {
			t[i] = -1 // not classified: never the desired value
		}
		for _, e := range dp.List("dscp") {
			dscp, ok := e.Get("value").Int()
			if !ok {
				name, _ := e.Get("value").Ident()
				n, known := phb[name]
				dscp, ok = int64(n), known
			}
			f, _ := e.Get("forwarding-class").String()
			tc, okTC := index(f, "fc")
			if !okTC {
				tc = -1
			}
			if ok && dscp >= 0 && dscp < 64 {
				t[dscp] = tc
			}
		}
		intent.PutDSCP(d.st, "", &t)
	} else if d.qos.Get("classifiers").Entry("dot1p-policy", "name", Policy).Exists() {
		d.trust = spec.TrustPCP
	}
	if d.trust != "" {
		d.st["trust"] = d.trust
	}
}

func (d *decoder) findPorts() {
	d.qosIf, d.qosSub = map[string]gc.Node{}, map[string]gc.Node{}
	for _, p := range d.sw.Ports {
		if d.ifs.Entry("interface", "name", p.Name).Exists() {
			d.ports = append(d.ports, p.Name)
			d.qosIf[p.Name] = d.qos.Get("interfaces").Entry("interface", "interface-id", p.Name)
			d.qosSub[p.Name] = d.qos.Get("interfaces").Entry("interface", "interface-id", subIfID(p.Name))
		}
	}
}

// policyOf is the scheduler policy a port uses.
func (d *decoder) policyOf(port string) string {
	s, _ := d.qosIf[port].At("output", "scheduler", "scheduler-policy").String()
	return s
}

// readSchedules reads the scheduling: from the policies the ports use,
// or fabctl's own. It returns each policy's queue schedules ("strict" or
// the weight) and the traffic classes they name.
func (d *decoder) readSchedules() (schedules map[string]map[int]string, tcs map[int]bool) {
	schedules, tcs = map[string]map[int]string{}, map[int]bool{}
	addPolicy := func(name string) {
		if _, done := schedules[name]; done {
			return
		}
		out := map[int]string{}
		pol := d.qos.Get("scheduler-policies").Entry("scheduler-policy", "name", name)
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
	for _, p := range d.ports {
		addPolicy(d.policyOf(p))
	}
	if len(d.ports) == 0 {
		addPolicy(Policy)
	}
	return schedules, tcs
}

// readTCs reads the traffic classes: scheduling, ECN, lossless.
func (d *decoder) readTCs(schedules map[string]map[int]string, tcs map[int]bool, base profile) {
	losslessTC := map[int]bool{}
	for _, tc := range base.tcs {
		losslessTC[tc] = true
	}
	want := map[int]*intent.ECN{}
	for _, tc := range d.sw.TCs {
		want[tc.TC] = tc.ECN
	}
	for tc := range tcs {
		pre := "tc/" + strconv.Itoa(tc) + "/"
		var sched, prof []string
		if len(d.ports) == 0 {
			sched = []string{schedules[Policy][tc]}
			prof = []string{ecnName(tc)}
		}
		for _, p := range d.ports {
			s := schedules[d.policyOf(p)][tc]
			if s == "" {
				s = "none"
			}
			sched = append(sched, s)
			pf, _ := d.qosIf[p].At("output", "queues").Entry("queue", "queue-name", queue(tc)).Get("queue-management-profile").String()
			if pf == "" {
				pf = "-"
			} else if !d.burstBound(p, tc) {
				pf = Inconsistent // a profile without the MBS SR Linux requires for it
			}
			prof = append(prof, pf)
		}
		d.readScheduler(pre, sched)
		d.readQueueECN(pre, prof, want[tc])
		d.st[pre+"lossless"] = strconv.FormatBool(losslessTC[tc])
	}
}

// burstBound: the port's output buffer-allocation-profile gives queue
// tc a non-zero maximum burst size, as a queue-management-profile needs.
func (d *decoder) burstBound(port string, tc int) bool {
	name, _ := d.qosIf[port].At("output", "buffer-allocation-profile").String()
	q := d.qos.Get("buffer-management").Entry("buffer-allocation-profile", "name", name).Get("queues").Entry("queue", "queue-name", queue(tc))
	v, ok := q.Get("maximum-burst-size").Int()
	return name != "" && ok && v > 0
}

// readScheduler reads a traffic class's schedule across the ports.
func (d *decoder) readScheduler(pre string, sched []string) {
	if s, ok := agree(sched); ok {
		switch s {
		case "strict", Inconsistent:
			d.st[pre+"sched"] = s
		case "none":
			d.st[pre+"sched"] = Inconsistent
		default:
			d.st[pre+"sched"] = "ets"
			d.st[pre+"bandwidth"] = s
		}
	}
}

// readQueueECN reads a traffic class's queue-management profile across
// the ports ("-": none).
func (d *decoder) readQueueECN(pre string, prof []string, want *intent.ECN) {
	if pf, ok := agree(prof); ok && pf != "-" {
		if pf == Inconsistent {
			d.st[pre+"ecn/min"] = Inconsistent
		} else if min, max, prob, ok := readECN(d.qos, pf); ok {
			d.st[pre+"ecn/min"] = min
			d.st[pre+"ecn/max"] = max
			d.st[pre+"ecn/probability"] = quantised(prob, want)
		}
	}
}

// readWatchdog reads the watchdog timers: the switch's profile and every
// profile a port uses, where deadlock detection is on. It records the
// ports' PFC profiles.
func (d *decoder) readWatchdog(base profile, hasBase bool) {
	var detect, recover []string
	if hasBase && base.wd {
		detect, recover = append(detect, base.detect), append(recover, base.recover)
	}
	d.portProfile = map[string]profile{}
	for _, p := range d.ports {
		pfc := d.qosIf[p].Get("pfc")
		if on, _ := pfc.Get("pfc-enable").Bool(); !on {
			continue
		}
		name, _ := pfc.Get("pfc-mapping-profile").String()
		pr, ok := readProfile(d.qos, name)
		if !ok {
			continue
		}
		d.portProfile[p] = pr
		if pr.wd {
			detect, recover = append(detect, pr.detect), append(recover, pr.recover)
		}
	}
	if v, ok := agree(detect); ok {
		d.st["pfcwd/detect"] = v
	}
	if v, ok := agree(recover); ok {
		d.st["pfcwd/restore"] = v
	}
}

// readHeadroom reads the buffer profile's PFC-reserved share, as bound
// on the PFC ports.
func (d *decoder) readHeadroom() {
	var share []string
	buf := d.qos.Get("buffer-management").Entry("buffer-allocation-profile", "name", BufferProfile)
	for _, q := range buf.Get("queues").List("pfc-queue") {
		v, _ := q.Get("maximum-pfc-reserved-share-bytes").String()
		share = append(share, v)
	}
	for p := range d.portProfile {
		if b, _ := d.qosIf[p].At("input", "pfc-buffer-allocation-profile").String(); b != BufferProfile {
			share = append(share, "unbound:"+p) // a PFC port without the profile: not the desired headroom
		}
	}
	sort.Strings(share)
	if v, ok := agree(share); ok && len(buf.Get("queues").List("pfc-queue")) > 0 {
		d.st["buffer/headroom"] = v
	}
}

// tags are the VLAN tags on the link of the intent's port name.
func (d *decoder) tags(name string) int {
	for _, p := range d.sw.Ports {
		if p.Name == name {
			return p.VLANTags
		}
	}
	return 0
}

// readPort reads one port: MTU, pause, PFC, watchdog, trust.
func (d *decoder) readPort(name string) {
	pre := "port/" + name + "/"
	entry := d.ifs.Entry("interface", "name", name)
	if mtu, ok := entry.Get("mtu").Int(); ok {
		d.st[pre+"mtu"] = strconv.FormatInt(mtu-int64(FrameMTU(intent.Port{VLANTags: d.tags(name)})), 10)
	}
	// The 7220 IXR-D5 has receive only (no tx-flow-control feature); a
	// platform with transmit too must agree with receive.
	fcRx, _ := entry.At("ethernet", "flow-control", "receive").Bool()
	fcTx, txSet := entry.At("ethernet", "flow-control", "transmit").Bool()
	switch {
	case d.pauseWanted(name):
		// not expressible on the D5 (Driver.Unexpressible): not read
	case !txSet || fcRx == fcTx:
		d.st[pre+"pause"] = strconv.FormatBool(fcRx)
	default:
		d.st[pre+"pause"] = Inconsistent // one direction only
	}
	pr, on := d.portProfile[name]
	d.st[pre+"pfc"] = ""
	d.st[pre+"pfcwd"] = "false"
	if on {
		d.st[pre+"pfc"] = setKey(pr.prios)
		d.st[pre+"pfcwd"] = strconv.FormatBool(pr.wd)
	}
	// classifiers are on the port's subinterface entry, which must
	// refer to that subinterface of the port
	sub := d.qosSub[name]
	cls := sub.At("input", "classifiers")
	if ref, _ := sub.At("interface-ref", "interface").String(); sub.Exists() && ref != name {
		cls = gc.N(nil)
	}
	pt := "none"
	dp, _ := cls.Get("dscp-policy").String()
	p1, _ := cls.Get("dot1p-policy").String()
	switch {
	case dp == Policy && p1 == "":
		pt = spec.TrustDSCP
	case p1 == Policy && dp == "":
		pt = spec.TrustPCP
	case dp != "" || p1 != "":
		pt = Inconsistent
	}
	// A device without fabctl's classifier has no switch-wide trust
	// to differ from: an unbound port is then just unconfigured.
	if pt != d.trust && (d.trust != "" || pt != "none") {
		d.st[pre+"trust"] = pt
	}
}

// pauseWanted: the intent wants 802.3x pause on the port, which the
// plan lists as not expressible; the port's flow-control is not fabctl's.
func (d *decoder) pauseWanted(port string) bool {
	for _, p := range d.sw.Ports {
		if p.Name == port {
			return p.Pause
		}
	}
	return false
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
