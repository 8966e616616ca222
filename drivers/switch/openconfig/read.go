package openconfig

import (
	"math"
	"sort"
	"strconv"

	gc "github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Inconsistent is the value Read reports for a setting the device holds
// in more than one place that disagree (the IPv4 and IPv6 classifiers,
// two ports' scheduler bindings): it never equals a desired value, so
// the plan re-applies the setting.
const Inconsistent = "inconsistent"

// ReadJSON normalises the JSON_IETF a device returned for /qos and
// /interfaces (either may be nil: no data) into the switch's live state.
// Arbitrary input gives a State, never a panic.
func ReadJSON(qos, interfaces []byte, sw *intent.Switch) (intent.State, error) {
	data := map[string]any{}
	for path, b := range map[string][]byte{QoSRoot: qos, InterfacesRoot: interfaces} {
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

// view indexes an OpenConfig QoS tree.
type view struct {
	qos     gc.Node
	queueID map[string]int // queue name -> queue-id
	queueOf map[int]string // queue-id -> queue name (the first, by name)
	fgTC    map[string]int // forwarding group -> traffic class (queue-id)
}

func newView(qos gc.Node) *view {
	v := &view{qos: qos, queueID: map[string]int{}, queueOf: map[int]string{}, fgTC: map[string]int{}}
	queues := qos.Get("queues").List("queue")
	sort.Slice(queues, func(i, j int) bool {
		a, _ := queues[i].Get("name").String()
		b, _ := queues[j].Get("name").String()
		return a < b
	})
	for _, q := range queues {
		name, _ := q.Get("name").String()
		id, ok := q.At("config", "queue-id").Int()
		if !ok || id < 0 || id > 255 {
			continue
		}
		v.queueID[name] = int(id)
		if _, dup := v.queueOf[int(id)]; !dup {
			v.queueOf[int(id)] = name
		}
	}
	for _, fg := range qos.Get("forwarding-groups").List("forwarding-group") {
		name, _ := fg.Get("name").String()
		q, _ := fg.At("config", "output-queue").String()
		if id, ok := v.queueID[q]; ok {
			v.fgTC[name] = id
		}
	}
	return v
}

// table is the DSCP -> TC map of a classifier (-1: not classified), or
// nil when the classifier does not exist.
func (v *view) table(name, cond string) *[64]int {
	c := v.qos.Get("classifiers").Entry("classifier", "name", name)
	if !c.Exists() {
		return nil
	}
	var t [64]int
	for i := range t {
		t[i] = -1
	}
	for _, term := range c.Get("terms").List("term") {
		fg, _ := term.At("actions", "config", "target-group").String()
		tc, ok := v.fgTC[fg]
		if !ok {
			tc = -1
		}
		cfg := term.At("conditions", cond, "config")
		for _, d := range append(cfg.Get("dscp-set").Ints(), cfg.Get("dscp").Ints()...) {
			if d >= 0 && d < 64 {
				t[d] = tc
			}
		}
	}
	return &t
}

// schedule is a scheduler policy's classes: TC -> "strict" or the weight.
func (v *view) schedule(policy string) map[int]string {
	p := v.qos.Get("scheduler-policies").Entry("scheduler-policy", "name", policy)
	if !p.Exists() {
		return nil
	}
	out := map[int]string{}
	for _, s := range p.Get("schedulers").List("scheduler") {
		prio, _ := s.At("config", "priority").Ident()
		for _, in := range s.Get("inputs").List("input") {
			q, _ := in.At("config", "queue").String()
			tc, ok := v.queueID[q]
			if !ok {
				continue
			}
			if prio == "STRICT" {
				out[tc] = "strict"
			} else {
				w, _ := in.At("config", "weight").String()
				out[tc] = w
			}
		}
	}
	return out
}

// ecn is an ECN (mark-only WRED) profile's thresholds, ok=false when the
// profile does not exist or does not mark.
func (v *view) ecn(profile string) (min, max, prob string, ok bool) {
	p := v.qos.Get("queue-management-profiles").Entry("queue-management-profile", "name", profile)
	cfg := p.At("wred", "uniform", "config")
	if on, _ := cfg.Get("enable-ecn").Bool(); !on {
		return "", "", "", false
	}
	min, _ = cfg.Get("min-threshold").String()
	max, _ = cfg.Get("max-threshold").String()
	prob, _ = cfg.Get("max-drop-probability-percent").String()
	return min, max, prob, true
}

// agree returns the common value of per-port values, Inconsistent when
// they differ, ok=false when none has one.
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

// Decode normalises the Get results into fabctl's state paths for what
// the switch intent manages.
func (Platform) Decode(data map[string]any, sw *intent.Switch) intent.State {
	qos, ifs := gc.N(data[QoSRoot]), gc.N(data[InterfacesRoot])
	d := &decoder{st: intent.State{}, sw: sw, qos: qos, ifs: ifs, v: newView(qos)}
	d.readClassifiers()
	d.findPorts()
	policies, tcs := d.readPolicies()
	want := map[int]*intent.ECN{}
	for _, tc := range sw.TCs {
		want[tc.TC] = tc.ECN
	}
	for tc := range tcs {
		d.readTC(policies, tc, want[tc])
	}
	for _, name := range d.ports {
		d.readPort(name)
	}
	return d.st
}

// decoder reads the qos and interfaces trees, section by section, into st.
type decoder struct {
	st       intent.State
	sw       *intent.Switch
	qos, ifs gc.Node
	v        *view
	trust    string // the switch-wide trust ("" when fabctl's classifiers are not there)
	// ports are the intent's ports that exist on the device; qosIf their
	// qos interface entries.
	ports []string
	qosIf map[string]gc.Node
}

// readClassifiers reads the trust and the DSCP classification.
func (d *decoder) readClassifiers() {
	if t4 := d.v.table(ClassifierIPv4, "ipv4"); t4 != nil && d.sw.Transport != spec.InfiniBand {
		d.trust = spec.TrustDSCP
		d.st["trust"] = d.trust
		intent.PutDSCP(d.st, "", t4)
		if t6 := d.v.table(ClassifierIPv6, "ipv6"); t6 == nil || *t6 != *t4 {
			d.st["dscp/default"] = Inconsistent // the IPv6 classifier is missing or differs
		}
	}
}

// findPorts finds the ports the intent manages that exist on the device.
func (d *decoder) findPorts() {
	d.qosIf = map[string]gc.Node{}
	for _, p := range d.sw.Ports {
		if d.ifs.Entry("interface", "name", p.Name).Exists() {
			d.ports = append(d.ports, p.Name)
			d.qosIf[p.Name] = d.qos.Get("interfaces").Entry("interface", "interface-id", p.Name)
		}
	}
}

// policyOf is the scheduler policy a port uses.
func (d *decoder) policyOf(port string) string {
	s, _ := d.qosIf[port].At("output", "scheduler-policy", "config", "name").String()
	return s
}

// readPolicies reads the traffic classes: from the scheduler policies the
// ports use, or fabctl's own policy when no managed port exists.
func (d *decoder) readPolicies() (policies map[string]map[int]string, tcs map[int]bool) {
	policies, tcs = map[string]map[int]string{}, map[int]bool{}
	addPolicy := func(name string) {
		if _, done := policies[name]; !done {
			policies[name] = d.v.schedule(name)
			for tc := range policies[name] {
				tcs[tc] = true
			}
		}
	}
	for _, p := range d.ports {
		addPolicy(d.policyOf(p))
	}
	if len(d.ports) == 0 {
		addPolicy(SchedulerPolicy)
	}
	return policies, tcs
}

// readTC reads one traffic class's schedule and ECN across the ports.
func (d *decoder) readTC(policies map[string]map[int]string, tc int, want *intent.ECN) {
	pre := "tc/" + strconv.Itoa(tc) + "/"
	var sched, prof []string
	if len(d.ports) == 0 {
		sched = []string{policies[SchedulerPolicy][tc]}
		prof = []string{ecnName(tc)}
	}
	q := d.v.queueOf[tc]
	for _, p := range d.ports {
		s := policies[d.policyOf(p)][tc]
		if s == "" {
			s = "none" // this port's policy does not schedule the class
		}
		sched = append(sched, s)
		b := d.qosIf[p].Get("output").Get("queues").Entry("queue", "name", q)
		pf, _ := b.At("config", "queue-management-profile").String()
		if pf == "" {
			pf = "-" // no profile: differs from a port that has one
		}
		prof = append(prof, pf)
	}
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
	if pf, ok := agree(prof); ok && pf != "-" {
		if pf == Inconsistent {
			d.st[pre+"ecn/min"] = Inconsistent
		} else if min, max, prob, ok := d.v.ecn(pf); ok {
			d.st[pre+"ecn/min"] = min
			d.st[pre+"ecn/max"] = max
			d.st[pre+"ecn/probability"] = quantised(prob, want)
		}
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

// readPort reads one port: MTU, pause, trust.
func (d *decoder) readPort(name string) {
	pre := "port/" + name + "/"
	entry := d.ifs.Entry("interface", "name", name)
	if mtu, ok := entry.At("config", "mtu").Int(); ok {
		d.st[pre+"mtu"] = strconv.FormatInt(mtu-int64(FrameMTU(intent.Port{VLANTags: d.tags(name)})), 10)
	}
	pause, _ := entry.At("ethernet", "config", "enable-flow-control").Bool() // YANG default false
	d.st[pre+"pause"] = strconv.FormatBool(pause)
	in := d.qosIf[name].At("input", "classifiers")
	c4, _ := in.Entry("classifier", "type", "IPV4").At("config", "name").String()
	c6, _ := in.Entry("classifier", "type", "IPV6").At("config", "name").String()
	pt := "none"
	switch {
	case c4 == ClassifierIPv4 && c6 == ClassifierIPv6:
		pt = spec.TrustDSCP
	case c4 != "" || c6 != "":
		pt = Inconsistent // bound to another classifier, or to one family only
	}
	// A device without fabctl's classifier has no switch-wide trust
	// to differ from: an unbound port is then just unconfigured.
	if pt != d.trust && (d.trust != "" || pt != "none") {
		d.st[pre+"trust"] = pt
	}
}

// quantised reads a whole-percent probability: OpenConfig holds a
// percentage (0..100 integer), so a desired 7.5 % is rendered 8 and a
// live 8 reads as the desired 7.5 (quantisation, not drift).
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
