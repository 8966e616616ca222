package nxos

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// Layer-2 ports and their MTU. Cisco TechNote 118994 "Configure and
// Verify Maximum Transmission Unit on Nexus Platforms"
// (cisco.com/c/en/us/support/docs/switches/nexus-9000-series-switches/
// 118994-config-nexus-00.html): a layer-3 port takes its MTU per port
// (`no switchport`, `mtu 9216`); on the Nexus 9000 (per-port MTU), a
// layer-2 port takes only the default, 1500, or the system jumbo MTU,
// 9216 by default ("mtu 9000" -> "ERROR: MTU can only be default or
// system jumbo MTU"). A port is layer 2 when its section says
// `switchport`, layer 3 when it says `no switchport`, and otherwise
// follows `system default switchport` (cisco.nxos @154aa540:
// rm_templates/interfaces.py l.154-157; nxos.py l.995-998;
// config/interfaces/interfaces.py l.92-98 reads the default with
// showDefaultSwitchport and l.205-211 parses it).

const (
	// FactSwitchport lists the managed ports in layer-2 mode,
	// comma-separated ("" none), when Read could tell every port's mode.
	FactSwitchport = drivers.PathFacts + "switchport"
	// JumboMTU is `system jumbomtu`'s default (TechNote 118994).
	JumboMTU              = 9216
	showDefaultSwitchport = "show running-config all | incl 'system default switchport'"
)

var defaultSwitchportRE = regexp.MustCompile(`(?m)^(no )?system default switchport\s*$`)

// readSwitchport adds FactSwitchport to st: each managed port's own
// mode line, else the system default (from the running-config, or from
// showDefaultSwitchport when a port has no line of its own and the
// running-config none either). Nothing is added when the mode stays
// unknown.
func readSwitchport(s *clicore.Session, text string, sw *intent.Switch, st intent.State) error {
	r := parseRunning(ParseConfig(text))
	var l2, undecided []string
	for _, p := range sw.Ports {
		n, ok := r.interfaces[p.Name]
		if !ok {
			continue
		}
		mode := ""
		for _, c := range n.Children {
			if l := strings.TrimSpace(c.Line); l == "switchport" || l == "no switchport" {
				mode = l
			}
		}
		switch mode {
		case "switchport":
			l2 = append(l2, p.Name)
		case "":
			undecided = append(undecided, p.Name)
		}
	}
	if len(undecided) > 0 {
		m := defaultSwitchportRE.FindStringSubmatch(text)
		if m == nil {
			out, err := s.Send(showDefaultSwitchport)
			if err != nil {
				return err
			}
			m = defaultSwitchportRE.FindStringSubmatch(out)
		}
		if m == nil {
			return nil // mode unknown: rendered as before (routed)
		}
		if m[1] == "" {
			l2 = append(l2, undecided...)
		}
	}
	sort.Strings(l2)
	st[FactSwitchport] = strings.Join(l2, ",")
	return nil
}

// l2Ports is the set FactSwitchport names (nil when unknown).
func l2Ports(live intent.State) map[string]bool {
	v, ok := live[FactSwitchport]
	if !ok {
		return nil
	}
	out := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		if p != "" {
			out[p] = true
		}
	}
	return out
}

// l2MTU is the MTU fabctl sets on a layer-2 port for an intent MTU: the
// default when the intent asks no more, else the system jumbo MTU.
func l2MTU(mtu int) int {
	if mtu <= DefaultMTU {
		return DefaultMTU
	}
	return JumboMTU
}

// l2Unexpressible lists the layer-2 ports whose desired MTU NX-OS cannot
// hold, saying what fabctl sets instead.
func l2Unexpressible(live, desired intent.State) map[string]string {
	out := map[string]string{}
	for p := range l2Ports(live) {
		k := "port/" + p + "/mtu"
		v, ok := desired[k]
		if !ok {
			continue
		}
		n, floor := strings.CutPrefix(v, ">=") // a floor (the hosts' MTU) is met by more
		m, err := strconv.Atoi(n)
		if err != nil || m == DefaultMTU || m == JumboMTU || floor && m <= JumboMTU {
			continue
		}
		out[k] = fmt.Sprintf("NX-OS takes only the default (%d) or the system jumbo MTU (%d) on a layer-2 port (Cisco TechNote 118994, per-port MTU: \"ERROR: MTU can only be default or system jumbo MTU\"); fabctl sets mtu %d on %s, which carries %d-byte packets; make the port routed (no switchport) for an exact MTU",
			DefaultMTU, JumboMTU, l2MTU(m), p, m)
	}
	return out
}
