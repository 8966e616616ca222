package cumulus

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
)

// configTree returns the configuration tree of `nv config show -o json`:
// NVUE prints a LIST, [{"header": {...}}, {"set": {<tree>}}]
// (testdata/vendor/cumulus/nvue-config-show-json.txt:44-46; the YAML form
// has the same two parts, nvue-cli-514.txt:32-38), and the tree is the
// "set" entry. A list without one is an empty configuration; anything
// but a list is not NVUE's output.
func configTree(data []byte) (map[string]any, error) {
	var doc []map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("nv config show -o json: not the documented [{\"header\": ...}, {\"set\": ...}] list: %w", err)
	}
	if doc == nil {
		return nil, errors.New("nv config show -o json: not a JSON list")
	}
	for _, e := range doc {
		if v, ok := e["set"]; ok {
			t, ok := v.(map[string]any)
			if !ok && v != nil {
				return nil, fmt.Errorf("nv config show -o json: \"set\" is a %T, not an object", v)
			}
			if t == nil {
				t = map[string]any{}
			}
			return t, nil
		}
	}
	return map[string]any{}, nil
}

// ReadConfigJSON turns `nv config show -o json` (the applied revision,
// NVUE object model) into normalised state for sw's traffic classes and
// ports. What `nv set qos roce` implies without writing it into the tree
// is filled in from the RoCE page's description of the lossless mode
// (trust both; DSCP 26 -> SP3, 48 -> SP6, the rest DSCP/8; SP3 -> TC3,
// SP6 -> TC6, others TC0; PFC on SP3; ECN on TC0 and TC3 150000/1500000 B, 100 %;
// TC6 strict, TC3 and TC0 DWRR 50/50; watchdog polling 100 ms,
// robustness 3); explicit settings override it. Traffic classes and
// ports the intent does not name are not reported (fabctl leaves them
// alone).
func ReadConfigJSON(data []byte, sw *intent.Switch) (intent.State, error) {
	root, err := configTree(data)
	if err != nil {
		return nil, err
	}
	return readTree(root, sw), nil
}

// roceEnabled reports whether the tree turns RoCE mode on (qos roce
// enable on).
func roceEnabled(root map[string]any) bool {
	return str(get(root, "qos", "roce", "enable")) == "on"
}

// readTree reads the configuration tree (the "set" entry).
func readTree(root map[string]any, sw *intent.Switch) intent.State {
	r := &configReader{root: root, sw: sw, st: intent.State{}}
	mode := str(get(root, "qos", "roce", "mode"))
	r.roce = roceEnabled(root)
	if r.roce && mode == "" {
		mode = "lossless"
	}
	roceLossless := r.roce && (mode == "lossless" || mode == "lossless-single-ipool")

	trust := r.readTrust()
	r.readSwitchPriorities()
	if trust == "l3" || trust == "both" {
		r.readDSCP()
	}
	prios := r.readPFC(roceLossless)
	for _, tc := range r.sw.TCs {
		r.readTC(tc.TC)
	}
	anyWD := r.readPorts(prios)
	r.readWatchdog(anyWD)
	return r.st
}

// configReader reads one `nv config show -o json` document, section by
// section, into st.
type configReader struct {
	root map[string]any
	sw   *intent.Switch
	st   intent.State
	roce bool // RoCE mode on: its defaults apply
	// spTC maps switch priority to traffic class.
	spTC [8]int
	// pfc holds the PFC priorities of default-global.
	pfc map[int]bool
}

// readTrust reads the mapping profile's trust and returns it as Cumulus
// names it (l2, l3, both).
func (r *configReader) readTrust() string {
	trust := "l2"
	if r.roce {
		trust = "both"
	}
	if t := str(get(r.root, "qos", "mapping", Profile, "trust")); t != "" {
		trust = t
	}
	switch trust {
	case "l3":
		r.st["trust"] = "dscp"
	case "l2":
		r.st["trust"] = "pcp"
	default:
		r.st["trust"] = trust
	}
	return trust
}

// readSwitchPriorities reads switch priority -> traffic class.
func (r *configReader) readSwitchPriorities() {
	for sp := range r.spTC {
		r.spTC[sp] = sp
		if r.roce {
			r.spTC[sp] = 0
		}
	}
	if r.roce {
		r.spTC[3], r.spTC[6] = 3, 6
	}
	for k, v := range obj(get(r.root, "qos", "egress-queue-mapping", Profile, "switch-priority")) {
		sp, ok := index(k, 8)
		if tc, ok2 := num(get(obj(v), "traffic-class")); ok && ok2 && tc >= 0 && tc < 8 {
			r.spTC[sp] = tc
		}
	}
}

// readDSCP reads DSCP -> switch priority -> TC.
func (r *configReader) readDSCP() {
	var dscpSP [64]int
	for d := range dscpSP {
		dscpSP[d] = d / 8
	}
	if r.roce {
		dscpSP[26], dscpSP[48] = 3, 6
	}
	for k, v := range obj(get(r.root, "qos", "mapping", Profile, "dscp")) {
		d, ok := index(k, 64)
		if sp, ok2 := num(get(obj(v), "switch-priority")); ok && ok2 && sp >= 0 && sp < 8 {
			dscpSP[d] = sp
		}
	}
	var table [64]int
	for d, sp := range dscpSP {
		table[d] = r.spTC[sp]
	}
	intent.PutDSCP(r.st, "", &table)
}

// readPFC reads the PFC priorities: default-global applies to every port
// that names no profile of its own. It returns them sorted.
func (r *configReader) readPFC(roceLossless bool) []int {
	r.pfc = map[int]bool{}
	if sps, ok := obj(get(r.root, "qos", "pfc", Profile))["switch-priority"]; ok {
		for k := range obj(sps) {
			if sp, ok := index(k, 8); ok {
				r.pfc[sp] = true
			}
		}
	} else if roceLossless {
		r.pfc[3] = true
	}
	var prios []int
	for sp := range r.pfc {
		prios = append(prios, sp)
	}
	sort.Ints(prios)
	return prios
}

// profilePFC is a named PFC profile's priorities: none when it sends
// and honours no pause frames (tx and rx disabled).
func (r *configReader) profilePFC(name string) string {
	pp := obj(get(r.root, "qos", "pfc", name))
	if pp == nil {
		return "(pfc profile " + name + " missing)"
	}
	if str(pp["tx"]) == "disable" && str(pp["rx"]) == "disable" {
		return ""
	}
	var ps []int
	for k := range obj(pp["switch-priority"]) {
		if sp, ok := index(k, 8); ok {
			ps = append(ps, sp)
		}
	}
	sort.Ints(ps)
	return intsString(ps)
}

// profileTrust is a named mapping profile's trust, with a note when
// a DSCP-trusting profile maps a code point otherwise than the intent.
func (r *configReader) profileTrust(name string) string {
	mp := obj(get(r.root, "qos", "mapping", name))
	if mp == nil {
		return "(mapping profile " + name + " missing)"
	}
	t := str(mp["trust"])
	switch t {
	case "l3":
		var wrong []string
		for d, tc := range r.sw.DSCPToTC {
			sp, ok := num(get(obj(get(mp, "dscp", strconv.Itoa(d))), "switch-priority"))
			if !ok {
				sp = d / 8
			}
			if sp < 0 || sp > 7 || r.spTC[sp] != tc {
				wrong = append(wrong, strconv.Itoa(d))
			}
		}
		if len(wrong) > 0 {
			return "dscp (mapping profile " + name + " differs for dscp " + strings.Join(wrong, ",") + ")"
		}
		return "dscp"
	case "l2", "":
		return "pcp"
	}
	return t
}

// readTC reads one traffic class: lossless, scheduler, ECN.
func (r *configReader) readTC(tc int) {
	p := "tc/" + strconv.Itoa(tc) + "/"
	ll := false
	for sp := range r.pfc {
		if r.spTC[sp] == tc {
			ll = true
		}
	}
	r.st[p+"lossless"] = strconv.FormatBool(ll)
	r.readScheduler(p, tc)
	r.readECN(p, tc)
}

// readScheduler reads a traffic class's egress scheduler.
func (r *configReader) readScheduler(p string, tc int) {
	sched := map[string]any{}
	if r.roce {
		switch tc {
		case 0, 3:
			sched = map[string]any{"mode": "dwrr", "bw-percent": 50.0}
		case 6:
			sched = map[string]any{"mode": "strict"}
		}
	}
	for k, v := range obj(get(r.root, "qos", "egress-scheduler", Profile, "traffic-class", strconv.Itoa(tc))) {
		sched[k] = v
	}
	switch str(sched["mode"]) {
	case "strict":
		r.st[p+"sched"] = "strict"
	case "dwrr":
		r.st[p+"sched"] = "ets"
		if bw, ok := num(sched["bw-percent"]); ok {
			r.st[p+"bandwidth"] = strconv.Itoa(bw)
		}
	}
}

// readECN reads a traffic class's congestion control.
func (r *configReader) readECN(p string, tc int) {
	cc := map[string]any{}
	if r.roce && (tc == 0 || tc == 3) {
		// RoCE mode marks TC0 and TC3 (roce-514.txt, `nv show qos roce`:
		// congestion-control enabled-tc 0,3).
		cc = map[string]any{"min-threshold": 150000.0, "max-threshold": 1500000.0, "probability": 100.0}
	}
	for k, v := range obj(get(r.root, "qos", "congestion-control", Profile, "traffic-class", strconv.Itoa(tc))) {
		cc[k] = v
	}
	if str(cc["ecn"]) == "disable" {
		return
	}
	lo, ok1 := num(cc["min-threshold"])
	hi, ok2 := num(cc["max-threshold"])
	if ok1 && ok2 {
		r.st[p+"ecn/min"] = strconv.Itoa(lo)
		r.st[p+"ecn/max"] = strconv.Itoa(hi)
		if pr, ok := num(cc["probability"]); ok {
			r.st[p+"ecn/probability"] = strconv.Itoa(pr)
		}
	}
}

// readPorts reads the intent's ports; it reports whether any has the
// PFC watchdog.
func (r *configReader) readPorts(prios []int) (anyWD bool) {
	ifs := obj(r.root["interface"])
	for _, port := range r.sw.Ports {
		v, ok := ifs[port.Name]
		if !ok {
			continue // not on this switch: every setting is a create
		}
		pi := obj(v)
		p := "port/" + port.Name + "/"
		mtu := 9216 // Cumulus Linux 5.x default swp MTU
		if m, ok := num(get(pi, "link", "mtu")); ok {
			mtu = m
		}
		r.st[p+"mtu"] = strconv.Itoa(mtu)
		r.st[p+"pfc"] = intsString(prios)
		if pn := str(get(pi, "qos", "pfc", "profile")); pn != "" && pn != Profile {
			r.st[p+"pfc"] = r.profilePFC(pn)
		}
		if mn := str(get(pi, "qos", "mapping", "profile")); mn != "" && mn != Profile {
			if t := r.profileTrust(mn); t != r.st["trust"] {
				r.st[p+"trust"] = t
			}
		}
		// CL 5.14: `nv set interface <if> qos pfc-watchdog` (present) and
		// `... qos pfc-watchdog state disable` (qos-guide-514.txt:33,37).
		wdv, wd := obj(pi["qos"])["pfc-watchdog"]
		if str(get(wdv, "state")) == "disable" {
			wd = false
		}
		anyWD = anyWD || wd
		r.st[p+"pfcwd"] = strconv.FormatBool(wd)
		r.st[p+"pause"] = "false" // fabctl configures no link-pause profile
		// The cable length of the port's PFC profile (one per profile,
		// qos-guide-514.txt:20), reported for ports the intent gives one.
		if port.CableLength > 0 {
			pn := str(get(pi, "qos", "pfc", "profile"))
			if pn == "" {
				pn = Profile
			}
			if m, ok := num(get(r.root, "qos", "pfc", pn, "cable-length")); ok {
				r.st[p+"cable"] = strconv.Itoa(m) + "m"
			}
		}
	}
	return anyWD
}

// readWatchdog reads the global PFC watchdog settings (defaults: polling
// 100 ms, robustness 3), reported when a port has the watchdog or the
// settings are set.
func (r *configReader) readWatchdog(anyWD bool) {
	wdc := obj(get(r.root, "qos", "pfc-watchdog"))
	if anyWD || len(wdc) > 0 {
		poll, rob := 100, 3
		if v, ok := num(wdc["polling-interval"]); ok {
			poll = v
		}
		if v, ok := num(wdc["robustness"]); ok {
			rob = v
		}
		r.st["pfcwd/poll"] = strconv.Itoa(poll) + "ms"
		r.st["pfcwd/detect"] = strconv.Itoa(poll*rob) + "ms"
	}
}

func intsString(v []int) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(x)
	}
	return s
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a JSON number (or a numeric string) as an int.
func num(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x != x || x > 1e15 || x < -1e15 {
			return 0, false
		}
		return int(x), true
	case string:
		n, err := strconv.Atoi(x)
		return n, err == nil
	}
	return 0, false
}

func index(k string, n int) (int, bool) {
	i, err := strconv.Atoi(k)
	return i, err == nil && i >= 0 && i < n
}
