package eosemu

import (
	"regexp"
	"strconv"
	"strings"
)

// The configuration grammar. Every accepted form names the corpus file
// (testdata/vendor/eos/) that shows it; anything else is refused with
// "% Invalid input detected at '^' marker." at the first token that does
// not fit. Negations: EOS negates a command with `no` (or restores its
// default with `default`) followed by the command without its value
// (pyeapi-commands.txt:17-18); the forms the running-config itself prints
// for a cleared setting are in pyeapi-running-config-all.txt.

// errTok reports invalid input at token i.
func errTok(i int) (*frame, string, bool) { return nil, "tok:" + strconv.Itoa(i), false }

func ok() (*frame, string, bool) { return nil, "", true }

// apply runs one configuration command in a mode. It returns the mode
// the command enters (nil: none), its output, and false when the command
// is not valid in this mode (out then says where: "tok:N" or
// incomplete).
func apply(c *Config, m frame, t []string) (*frame, string, bool) {
	no := t[0] == "no" || t[0] == "default"
	a := t
	off := 0
	if no {
		a, off = t[1:], 1
		if len(a) == 0 {
			return nil, incomplete, false
		}
	}
	if len(a) >= 2 && a[0] == "qos" && (a[1] == "trust" || a[1] == "cos" || a[1] == "dscp") {
		var q *PortQoS
		switch {
		case m.kind == "if" && c.Interfaces[m.name] != nil:
			q = &c.Interfaces[m.name].PortQoS
		case m.kind == "qos-profile" && c.Profiles[m.name] != nil:
			q = &c.Profiles[m.name].PortQoS
		}
		if q != nil {
			kw := ""
			if no {
				kw = t[0]
			}
			return portQoS(q, a, kw, off)
		}
	}
	switch m.kind {
	case "config":
		return applyGlobal(c, a, no, off)
	case "if":
		return applyInterface(c.Interfaces[m.name], a, no, off)
	case "qos-profile":
		p := c.Profiles[m.name]
		if p == nil { // removed meanwhile by `no qos profile`
			return errTok(0)
		}
		return applyProfile(p, c.Queue, m.name, a, no, off)
	case "mgmt":
		// interface Management0 holds the address Render prints, nothing else.
		if !no && len(a) == 3 && a[0] == "ip" && a[1] == "address" && a[2] == mgmtAddress {
			return ok()
		}
		return errTok(off)
	case "txq":
		p := c.Profiles[m.name]
		if p == nil {
			return errTok(0)
		}
		q := p.TxQueues[m.q]
		if q == nil {
			q = &TxQueue{}
			p.TxQueues[m.q] = q
		}
		return applyTxQueue(q, a, no, off)
	}
	return errTok(0)
}

// Watchdog timer values: the patterns of AVD's schema
// (avd-pfc-schema.txt:17-20): timeout and recovery-time with up to two
// decimals, polling-interval with up to three.
var (
	seconds2 = regexp.MustCompile(`^\d+(\.\d{1,2})?$`)
	seconds3 = regexp.MustCompile(`^\d+(\.\d{1,3})?$`)
)

// baseLines are the lines of the emulator's running-config it models
// nothing of (Render prints them as a cEOS-lab configuration holds them):
// accepted as typed, so that a replace (rollback clean-config, then the
// recorded running-config) can type them again.
var baseLines = map[string]bool{"no aaa root": true, "transceiver qsfp default-mode 4x10G": true,
	"spanning-tree mode mstp": true, "ip routing": true}

func applyGlobal(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	full := strings.Join(a, " ")
	if no {
		full = "no " + full
	}
	switch {
	case baseLines[full]:
		return ok()
	case full == "interface Management0":
		return &frame{kind: "mgmt"}, "", true
	case len(a) == 2 && a[0] == "hostname" && !no:
		if !validName(a[1]) {
			return errTok(off + 1)
		}
		c.Hostname = a[1]
		return ok()
	}
	switch a[0] {
	case "interface":
		// interface <if>: avd-interfaces.cfg:11 (no interface <if>: not for physical ports)
		if len(a) < 2 {
			return nil, incomplete, false
		}
		name := canonIf(a[1])
		if _, ok := c.Interfaces[name]; !ok || len(a) > 2 || no {
			return errTok(off + 1)
		}
		return &frame{kind: "if", name: name}, "", true
	case "qos":
		if len(a) < 2 {
			return nil, incomplete, false
		}
		switch a[1] {
		case "map":
			return qosMap(c, a, no, off)
		case "profile":
			// qos profile <word>: avd-qos-profile.cfg:10. `no qos profile` has
			// no vendor source (pyeapi's generic `no <header>` rule only): refused
			// at `no`, as every removal form no source shows (fabctl removes a
			// profile by replacing the configuration, rollback clean-config).
			if no {
				return errTok(0)
			}
			if len(a) < 3 {
				return nil, incomplete, false
			}
			if len(a) > 3 || !validName(a[2]) {
				return errTok(off + 2)
			}
			if c.Profiles[a[2]] == nil {
				c.Profiles[a[2]] = NewProfile()
			}
			return &frame{kind: "qos-profile", name: a[2]}, "", true
		}
		return errTok(off + 1)
	case "priority-flow-control":
		if len(a) < 3 || a[1] != "pause" || a[2] != "watchdog" {
			if len(a) < 3 {
				return nil, incomplete, false
			}
			return errTok(off + 1)
		}
		if len(a) < 4 {
			return nil, incomplete, false
		}
		switch a[3] {
		case "default":
			// priority-flow-control pause watchdog default timeout <s>
			// priority-flow-control pause watchdog default recovery-time <s>
			// priority-flow-control pause watchdog default polling-interval <s>
			// one setting per line: avd-qos-profile.cfg:56-58, avd-pfc-schema.txt:10-12.
			// The one-line `default timeout T recovery-time R polling-interval P`
			// is refused at its fifth word (CONTRADICTED in shapes.txt).
			if len(a) < 5 {
				return nil, incomplete, false
			}
			var field *string
			pat := seconds2
			switch a[4] {
			case "timeout":
				field = &c.WDTimeout
			case "recovery-time":
				field = &c.WDRecovery
			case "polling-interval":
				field, pat = &c.WDPolling, seconds3
			default:
				return errTok(off + 4)
			}
			if no {
				// `no ... default <setting>` has no vendor source (pyeapi's
				// generic rule only): refused at `no`.
				return errTok(0)
			}
			if len(a) < 6 {
				return nil, incomplete, false
			}
			if !pat.MatchString(a[5]) {
				return errTok(off + 5)
			}
			if len(a) > 6 {
				return errTok(off + 6)
			}
			*field = a[5]
			return ok()
		case "action":
			// priority-flow-control pause watchdog action {drop|no-drop}:
			// avd-qos-profile.cfg:59, avd-pfc-schema.txt:13,16
			if no {
				return errTok(0) // no vendor source for the removal
			}
			if len(a) < 5 {
				return nil, incomplete, false
			}
			if len(a) != 5 || a[4] != "drop" && a[4] != "no-drop" {
				return errTok(off + 4)
			}
			c.WDAction = a[4]
			return ok()
		case "override":
			// priority-flow-control pause watchdog override action drop:
			// avd-pfc-schema.txt:14,21; its `no` form has no vendor source.
			if no {
				return errTok(0)
			}
			if len(a) != 6 || a[4] != "action" || a[5] != "drop" {
				if len(a) < 6 {
					return nil, incomplete, false
				}
				return errTok(off + 4)
			}
			c.WDOverrideDrop = true
			return ok()
		}
		return errTok(off + 3)
	}
	return errTok(off)
}

// qosMap: qos map dscp <ints> to traffic-class <0-7> (avd-qos-profile.cfg:51,53;
// pyeapi-running-config-all.txt:48). An entry equal to the platform's
// built-in map (Config.DSCPDefault) is not kept, so `show running-config`
// omits it and `show running-config all` prints it with the defaults; the
// negation (the whole line after `no`, pyeapi-commands.txt:17) returns a
// code point to the built-in map.
func qosMap(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	if len(a) < 3 {
		return nil, incomplete, false
	}
	// qos map cos <ints> to traffic-class <0-7>: avd-qos-profile.cfg:49;
	// pyeapi-running-config-all.txt:49 (vEOS's whole map in all).
	m, def, max := c.DSCP, c.DSCPDefault, 63
	switch a[2] {
	case "dscp":
	case "cos":
		m, def, max = c.CoS, c.CoSDefault, 7
	default:
		return errTok(off + 2)
	}
	if no {
		// `no qos map dscp|cos ...` has no vendor source (pyeapi's generic rule
		// only): refused at `no`; a code point goes back to its built-in
		// class by setting that class (below) or by a replace.
		return errTok(0)
	}
	var ds []int
	i := 3
	for ; i < len(a) && a[i] != "to"; i++ {
		d, err := strconv.Atoi(a[i])
		if err != nil || d < 0 || d > max {
			return errTok(off + i)
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 || i == len(a) || i+1 >= len(a) {
		return nil, incomplete, false
	}
	if a[i+1] != "traffic-class" {
		return errTok(off + i + 1)
	}
	if i+2 >= len(a) {
		return nil, incomplete, false
	}
	tc, err := strconv.Atoi(a[i+2])
	if err != nil || tc < 0 || tc > 7 {
		return errTok(off + i + 2)
	}
	if len(a) > i+3 {
		return errTok(off + i + 3)
	}
	for _, d := range ds {
		def, hasDef := def[d]
		switch {
		case hasDef && def == tc:
			delete(m, d)
		default:
			m[d] = tc
		}
	}
	return ok()
}

func applyInterface(i *Interface, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "mtu":
		// mtu <68-9214>: avd-interfaces.cfg:13,33 (1500 is the default:
		// pyeapi-running-config-all.txt:47); no mtu: arista-um-l3-mtu.txt:11 (the default, not printed)
		if no {
			if len(a) != 1 {
				return errTok(off + 1)
			}
			i.MTU = 0
			return ok()
		}
		if len(a) < 2 {
			return nil, incomplete, false
		}
		n, err := strconv.Atoi(a[1])
		if err != nil || n < 68 || n > 9214 || len(a) > 2 {
			return errTok(off + 1)
		}
		i.MTU = n
		if n == 1500 {
			i.MTU = 0
		}
		return ok()
	case "service-profile":
		// service-profile <word>: avd-interfaces.cfg:17. `no service-profile`
		// has no vendor source (pyeapi's generic rule only): refused at `no`.
		if no {
			return errTok(0)
		}
		if len(a) < 2 {
			return nil, incomplete, false
		}
		if len(a) != 2 || !validName(a[1]) {
			return errTok(off + 1)
		}
		i.ServiceProfile = a[1]
		return ok()
	case "flowcontrol":
		// flowcontrol {send|receive} {on|off}: pyeapi-commands.txt:19-21,
		// avd-interfaces.cfg:36; no flowcontrol {send|receive}:
		// pyeapi-running-config-all.txt:18-19
		if len(a) < 2 {
			return nil, incomplete, false
		}
		var p *bool
		switch a[1] {
		case "send":
			p = &i.FlowSend
		case "receive":
			p = &i.FlowReceive
		default:
			return errTok(off + 1)
		}
		if no {
			if len(a) != 2 {
				return errTok(off + 2)
			}
			*p = false
			return ok()
		}
		if len(a) < 3 {
			return nil, incomplete, false
		}
		if len(a) != 3 || (a[2] != "on" && a[2] != "off") {
			return errTok(off + 2)
		}
		*p = a[2] == "on"
		return ok()
	case "description":
		// description <text>: avd-interfaces.cfg:12; no description: pyeapi-running-config-all.txt:21
		if no {
			i.Description = ""
			return ok()
		}
		if len(a) < 2 {
			return nil, incomplete, false
		}
		i.Description = strings.Join(a[1:], " ")
		return ok()
	}
	return errTok(off)
}

// portQoS: the port classification lines of an interface or a qos
// profile (PortQoS; avd-qos-trust.txt):
//   - qos trust {dscp|cos}: avd-qos-profile.cfg:11, avd-intended-qos.cfg:55
//     (interface), cos: avd-qos-trust.txt (2);
//   - no qos trust: the trust "disabled", a state the running-config
//     prints (avd-qos-trust.txt (1), (2): AVD renders trust "disabled" as
//     this line in intended configurations); default qos trust: the
//     line's removal (pyeapi-commands.txt:17, the default form);
//   - qos cos <0-7>, qos dscp <0-63>: avd-qos-trust.txt (1)-(3),
//     avd-intended-qos.cfg:12,56 (a CoS is 3 bits, a DSCP 6); their no
//     and default forms remove the line (pyeapi-commands.txt:16-17).
//
// What a port default CoS or DSCP does to traffic is not modelled: the
// emulator forwards nothing, and no Arista text reached says which
// packets take it (AVD's schema: "COS value", "DSCP value").
func portQoS(q *PortQoS, a []string, kw string, off int) (*frame, string, bool) {
	no := kw != ""
	if len(a) < 2 {
		return nil, incomplete, false
	}
	switch a[1] {
	case "trust":
		if no {
			if len(a) != 2 {
				return errTok(off + 2)
			}
			q.Trust = "disabled"
			if kw == "default" {
				q.Trust = ""
			}
			return ok()
		}
		if len(a) < 3 {
			return nil, incomplete, false
		}
		if len(a) != 3 || (a[2] != "dscp" && a[2] != "cos") {
			return errTok(off + 2)
		}
		q.Trust = a[2]
		return ok()
	case "cos", "dscp":
		v, max := &q.CoS, 7
		if a[1] == "dscp" {
			v, max = &q.DSCP, 63
		}
		if no {
			if len(a) != 2 {
				return errTok(off + 2)
			}
			*v = -1
			return ok()
		}
		if len(a) < 3 {
			return nil, incomplete, false
		}
		n, err := strconv.Atoi(a[2])
		if err != nil || n < 0 || n > max || len(a) != 3 {
			return errTok(off + 2)
		}
		*v = n
		return ok()
	}
	return errTok(off + 1)
}

func applyProfile(p *Profile, queue, name string, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "tx-queue", "uc-tx-queue":
		// tx-queue <0-7>: avd-qos-profile.cfg:15; uc-tx-queue <0-7>:
		// avd-uc-tx-queue.txt. Only the switch's own family's keyword is a
		// command (family.go): the other is refused where the word stands,
		// as EOS refuses any word it does not know. `no tx-queue` has no
		// source: refused.
		if a[0] != queue || no {
			return errTok(0)
		}
		if len(a) < 2 {
			return nil, incomplete, false
		}
		q, err := strconv.Atoi(a[1])
		if err != nil || q < 0 || q > 7 || len(a) > 2 {
			return errTok(off + 1)
		}
		if p.TxQueues[q] == nil {
			p.TxQueues[q] = &TxQueue{}
		}
		return &frame{kind: "txq", name: name, q: q}, "", true
	case "priority-flow-control":
		if no && len(a) == 1 {
			// no priority-flow-control: avd-pfc-schema.txt:23, pyeapi-running-config-all.txt:24.
			// `no priority-flow-control on` is refused (CONTRADICTED in shapes.txt).
			p.PFCOn = false
			return ok()
		}
		if len(a) < 2 {
			return nil, incomplete, false
		}
		switch {
		case a[1] == "on" && !no:
			// priority-flow-control on: avd-qos-profile.cfg:41
			if len(a) != 2 {
				return errTok(off + 2)
			}
			p.PFCOn = true
		case a[1] == "priority":
			// priority-flow-control priority <0-7> {no-drop|drop}: avd-qos-profile.cfg:42-43;
			// no priority-flow-control priority <0-7>: pyeapi-running-config-all.txt:26-33
			if len(a) < 3 {
				return nil, incomplete, false
			}
			q, err := strconv.Atoi(a[2])
			if err != nil || q < 0 || q > 7 {
				return errTok(off + 2)
			}
			if no {
				if len(a) != 3 {
					return errTok(off + 3)
				}
				delete(p.NoDrop, q)
				return ok()
			}
			if len(a) == 3 {
				return nil, incomplete, false
			}
			if len(a) != 4 || a[3] != "no-drop" && a[3] != "drop" {
				return errTok(off + 3)
			}
			p.NoDrop[q] = a[3] == "no-drop"
		case a[1] == "pause" && len(a) >= 3 && a[2] == "watchdog":
			switch {
			case len(a) == 3 && no:
				// `no priority-flow-control pause watchdog` has no vendor
				// source (AVD expresses enabled false by the line's absence,
				// avd-pfc-schema.txt:28-32; pyeapi's generic rule only): refused.
				return errTok(0)
			case len(a) == 3:
				// priority-flow-control pause watchdog: avd-qos-profile.cfg:44; off
				// without the line (avd-pfc-schema.txt:28-32)
				p.Watchdog = true
			case len(a) == 6 && a[3] == "port" && a[4] == "action" && a[5] == "drop" && !no:
				// priority-flow-control pause watchdog port action drop: avd-qos-profile.cfg:45
				p.WDPortDrop = true
			case len(a) == 5 && a[3] == "port" && a[4] == "action" && no:
				// no priority-flow-control pause watchdog port action: pyeapi-running-config-all.txt:34
				p.WDPortDrop = false
			default:
				return errTok(off + 3)
			}
		default:
			return errTok(off + 1)
		}
		return ok()
	}
	return errTok(off)
}

// ecnUnits are the threshold units AVD's schema lists for random-detect ecn
// (audit E7: segments/bytes/kbytes/mbytes/milliseconds; avd-qos-profile.cfg:22,26).
var ecnUnits = map[string]bool{"bytes": true, "kbytes": true, "mbytes": true, "segments": true, "milliseconds": true}

func applyTxQueue(q *TxQueue, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "bandwidth":
		// bandwidth percent <1-100>: avd-qos-profile.cfg:17;
		// no bandwidth percent: pyeapi-running-config-all.txt:39
		if len(a) < 2 {
			return nil, incomplete, false
		}
		if a[1] != "percent" {
			return errTok(off + 1)
		}
		if no {
			if len(a) != 2 {
				return errTok(off + 2)
			}
			q.Bandwidth = 0
			return ok()
		}
		if len(a) != 3 {
			return nil, incomplete, false
		}
		n, err := strconv.Atoi(a[2])
		if err != nil || n < 1 || n > 100 {
			return errTok(off + 2)
		}
		q.Bandwidth = n
		return ok()
	case "priority":
		// no priority: avd-qos-profile.cfg:16; priority strict: avd-qos-profile.cfg:20,
		// the default (pyeapi-running-config-all.txt:38)
		if no {
			if len(a) != 1 {
				return errTok(off + 1)
			}
			q.RoundRobin = true
			return ok()
		}
		if len(a) != 2 || a[1] != "strict" {
			return errTok(off + 1)
		}
		q.RoundRobin = false
		return ok()
	case "random-detect":
		if len(a) < 2 || a[1] != "ecn" {
			if len(a) < 2 {
				return nil, incomplete, false
			}
			return errTok(off + 1)
		}
		if no {
			// no random-detect ecn minimum-threshold: pyeapi-running-config-all.txt:42
			// (`no random-detect ecn` alone has no source: refused)
			if len(a) != 3 || a[2] != "minimum-threshold" {
				return errTok(off + 2)
			}
			q.ECN = ""
			return ok()
		}
		// random-detect ecn minimum-threshold N U maximum-threshold N U
		// [max-mark-probability P] [weight W]: avd-qos-profile.cfg:22, 26
		if len(a) < 8 {
			return nil, incomplete, false
		}
		if a[2] != "minimum-threshold" {
			return errTok(off + 2)
		}
		mn, err := strconv.Atoi(a[3])
		if err != nil || mn < 1 {
			return errTok(off + 3)
		}
		if !ecnUnits[a[4]] {
			return errTok(off + 4)
		}
		if a[5] != "maximum-threshold" {
			return errTok(off + 5)
		}
		mx, err := strconv.Atoi(a[6])
		if err != nil || mx < 1 {
			return errTok(off + 6)
		}
		if a[7] != a[4] {
			return errTok(off + 7) // both thresholds take the same unit (as in every AVD example)
		}
		if mx < mn {
			return errTok(off + 6)
		}
		i := 8
		for i < len(a) {
			if i+1 >= len(a) {
				return nil, incomplete, false
			}
			n, err := strconv.Atoi(a[i+1])
			switch {
			case a[i] == "max-mark-probability" && err == nil && n >= 1 && n <= 100:
			case a[i] == "weight" && err == nil && n >= 0 && n <= 15:
			default:
				return errTok(off + i)
			}
			i += 2
		}
		q.ECN = strings.Join(a[2:], " ")
		return ok()
	}
	return errTok(off)
}

func validName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// canonIf expands EOS's accepted abbreviations: et1, Eth1/1 → Ethernet1/1.
func canonIf(n string) string {
	l := strings.ToLower(n)
	for _, p := range []string{"ethernet", "eth", "et"} {
		if strings.HasPrefix(l, p) && len(l) > len(p) && l[len(p)] >= '0' && l[len(p)] <= '9' {
			return "Ethernet" + n[len(p):]
		}
	}
	return n
}
