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

// ReadConfigJSON turns `nv config show -o json` (the applied revision,
// NVUE object model) into normalised state for sw's traffic classes and
// ports. What `nv set qos roce` implies without writing it into the tree
// is filled in from the RoCE page's description of the lossless mode
// (trust both; DSCP 26 -> SP3, 48 -> SP6, the rest DSCP/8; SP3 -> TC3,
// SP6 -> TC6, others TC0; PFC on SP3; ECN on TC3 150000/1500000 B, 100 %;
// TC6 strict, TC3 and TC0 DWRR 50/50; watchdog polling 100 ms,
// robustness 3); explicit settings override it. Traffic classes and
// ports the intent does not name are not reported (fabctl leaves them
// alone).
func ReadConfigJSON(data []byte, sw *intent.Switch) (intent.State, error) {
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("nv config show -o json: %w", err)
	}
	if root == nil {
		return nil, errors.New("nv config show -o json: not a JSON object")
	}
	st := intent.State{}
	mode := str(get(root, "qos", "roce", "mode"))
	roce := str(get(root, "qos", "roce", "enable")) == "on"
	if roce && mode == "" {
		mode = "lossless"
	}
	roceLossless := roce && (mode == "lossless" || mode == "lossless-single-ipool")

	// Trust.
	trust := "l2"
	if roce {
		trust = "both"
	}
	if t := str(get(root, "qos", "mapping", Profile, "trust")); t != "" {
		trust = t
	}
	switch trust {
	case "l3":
		st["trust"] = "dscp"
	case "l2":
		st["trust"] = "pcp"
	default:
		st["trust"] = trust
	}

	// Switch priority -> traffic class.
	var spTC [8]int
	for sp := range spTC {
		spTC[sp] = sp
		if roce {
			spTC[sp] = 0
		}
	}
	if roce {
		spTC[3], spTC[6] = 3, 6
	}
	for k, v := range obj(get(root, "qos", "egress-queue-mapping", Profile, "switch-priority")) {
		sp, ok := index(k, 8)
		if tc, ok2 := num(get(obj(v), "traffic-class")); ok && ok2 && tc >= 0 && tc < 8 {
			spTC[sp] = tc
		}
	}
	// DSCP -> switch priority -> TC.
	if trust == "l3" || trust == "both" {
		var dscpSP [64]int
		for d := range dscpSP {
			dscpSP[d] = d / 8
		}
		if roce {
			dscpSP[26], dscpSP[48] = 3, 6
		}
		for k, v := range obj(get(root, "qos", "mapping", Profile, "dscp")) {
			d, ok := index(k, 64)
			if sp, ok2 := num(get(obj(v), "switch-priority")); ok && ok2 && sp >= 0 && sp < 8 {
				dscpSP[d] = sp
			}
		}
		var table [64]int
		for d, sp := range dscpSP {
			table[d] = spTC[sp]
		}
		intent.PutDSCP(st, "", &table)
	}

	// PFC priorities: default-global applies to every port that names no
	// profile of its own.
	pfc := map[int]bool{}
	if sps, ok := obj(get(root, "qos", "pfc", Profile))["switch-priority"]; ok {
		for k := range obj(sps) {
			if sp, ok := index(k, 8); ok {
				pfc[sp] = true
			}
		}
	} else if roceLossless {
		pfc[3] = true
	}
	var prios []int
	for sp := range pfc {
		prios = append(prios, sp)
	}
	sort.Ints(prios)
	// profilePFC is a named PFC profile's priorities: none when it sends
	// and honours no pause frames (tx and rx disabled).
	profilePFC := func(name string) string {
		pp := obj(get(root, "qos", "pfc", name))
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
	profileTrust := func(name string) string {
		mp := obj(get(root, "qos", "mapping", name))
		if mp == nil {
			return "(mapping profile " + name + " missing)"
		}
		t := str(mp["trust"])
		switch t {
		case "l3":
			var wrong []string
			for d, tc := range sw.DSCPToTC {
				sp, ok := num(get(obj(get(mp, "dscp", strconv.Itoa(d))), "switch-priority"))
				if !ok {
					sp = d / 8
				}
				if sp < 0 || sp > 7 || spTC[sp] != tc {
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

	// Traffic classes.
	for _, tc := range sw.TCs {
		p := "tc/" + strconv.Itoa(tc.TC) + "/"
		ll := false
		for sp := range pfc {
			if spTC[sp] == tc.TC {
				ll = true
			}
		}
		st[p+"lossless"] = strconv.FormatBool(ll)
		// Scheduler.
		sched := map[string]any{}
		if roce {
			switch tc.TC {
			case 0, 3:
				sched = map[string]any{"mode": "dwrr", "bw-percent": 50.0}
			case 6:
				sched = map[string]any{"mode": "strict"}
			}
		}
		for k, v := range obj(get(root, "qos", "egress-scheduler", Profile, "traffic-class", strconv.Itoa(tc.TC))) {
			sched[k] = v
		}
		switch str(sched["mode"]) {
		case "strict":
			st[p+"sched"] = "strict"
		case "dwrr":
			st[p+"sched"] = "ets"
			if bw, ok := num(sched["bw-percent"]); ok {
				st[p+"bandwidth"] = strconv.Itoa(bw)
			}
		}
		// ECN.
		cc := map[string]any{}
		if roce && tc.TC == 3 {
			cc = map[string]any{"min-threshold": 150000.0, "max-threshold": 1500000.0, "probability": 100.0}
		}
		for k, v := range obj(get(root, "qos", "congestion-control", Profile, "traffic-class", strconv.Itoa(tc.TC))) {
			cc[k] = v
		}
		if str(cc["ecn"]) != "disable" {
			lo, ok1 := num(cc["min-threshold"])
			hi, ok2 := num(cc["max-threshold"])
			if ok1 && ok2 {
				st[p+"ecn/min"] = strconv.Itoa(lo)
				st[p+"ecn/max"] = strconv.Itoa(hi)
				if pr, ok := num(cc["probability"]); ok {
					st[p+"ecn/probability"] = strconv.Itoa(pr)
				}
			}
		}
	}

	// Ports.
	ifs := obj(root["interface"])
	anyWD := false
	for _, port := range sw.Ports {
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
		st[p+"mtu"] = strconv.Itoa(mtu)
		st[p+"pfc"] = intsString(prios)
		if pn := str(get(pi, "qos", "pfc", "profile")); pn != "" && pn != Profile {
			st[p+"pfc"] = profilePFC(pn)
		}
		if mn := str(get(pi, "qos", "mapping", "profile")); mn != "" && mn != Profile {
			if t := profileTrust(mn); t != st["trust"] {
				st[p+"trust"] = t
			}
		}
		_, wd := obj(pi["qos"])["pfc-watchdog"]
		anyWD = anyWD || wd
		st[p+"pfcwd"] = strconv.FormatBool(wd)
		st[p+"pause"] = "false" // fabctl configures no link-pause profile
	}
	wdc := obj(get(root, "qos", "pfc-watchdog"))
	if anyWD || len(wdc) > 0 {
		poll, rob := 100, 3
		if v, ok := num(wdc["polling-interval"]); ok {
			poll = v
		}
		if v, ok := num(wdc["robustness"]); ok {
			rob = v
		}
		st["pfcwd/poll"] = strconv.Itoa(poll) + "ms"
		st["pfcwd/detect"] = strconv.Itoa(poll*rob) + "ms"
	}
	return st, nil
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
