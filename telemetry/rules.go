package telemetry

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fabctl/fabctl/spec"
)

// RuleOptions tune the alerting rules.
type RuleOptions struct {
	// PauseRate is the PFC pause frames per second on a lossless priority
	// that make a pause storm (default 1000).
	PauseRate float64
	// For is how long a condition holds before it fires (default 1m;
	// the e2e test uses 0).
	For time.Duration
	// Window is the rate window (default 1m).
	Window time.Duration
}

// Rule is one Prometheus alerting rule.
type Rule struct {
	Alert       string            `yaml:"alert" json:"alert"`
	Expr        string            `yaml:"expr" json:"expr"`
	For         string            `yaml:"for,omitempty" json:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// RuleGroup is a group of rules.
type RuleGroup struct {
	Name  string `yaml:"name" json:"name"`
	Rules []Rule `yaml:"rules" json:"rules"`
}

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups" json:"groups"`
}

// YAML is the rule file Prometheus loads (rule_files).
func (f *RuleFile) YAML() ([]byte, error) { return yaml.Marshal(f) }

func promDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Second)) + "s"
}

func prioRegex(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, "|")
}

// lossOnly are the lossless priorities the spec does not ECN-mark: a
// lossless class without an ECN profile, or every lossless class under
// congestion_control "pfc-only".
func lossOnly(s *spec.Spec) []int {
	var out []int
	for _, c := range s.Classes {
		if c.Lossless && (c.ECN == nil || s.Fabric.CongestionControl == spec.CCPFCOnly) {
			out = append(out, c.Priority)
		}
	}
	sort.Ints(out)
	return out
}

const portBy = "fabric, host, nic, rail, leaf, port"

// Rules are the alerting rules the spec implies, for fabric s.
func Rules(s *spec.Spec, o RuleOptions) *RuleFile {
	if o.PauseRate <= 0 {
		o.PauseRate = 1000
	}
	if o.For == 0 {
		o.For = time.Minute
	} else if o.For < 0 {
		o.For = 0
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	f := s.Fabric.Name
	sel := fmt.Sprintf(`fabric=%q`, f)
	w := promDuration(o.Window)
	forS := promDuration(o.For)
	lab := func(sev string) map[string]string { return map[string]string{"severity": sev, "fabric": f} }
	g := RuleGroup{Name: "fabctl-" + f}
	if ll := LosslessPriorities(s); len(ll) > 0 {
		ps := fmt.Sprintf(`%s,priority=~%q`, sel, prioRegex(ll))
		g.Rules = append(g.Rules, Rule{Alert: "FabricPFCPauseStorm",
			Expr: fmt.Sprintf(`sum by (%s, priority, direction) (rate(fabctl_switch_pfc_pause_frames_total{%s}[%s])) > %g
or
sum by (%s, priority, direction) (rate(fabctl_nic_pfc_pause_frames_total{%s}[%s])) > %g`,
				portBy, ps, w, o.PauseRate, portBy, ps, w, o.PauseRate),
			For: forS, Labels: lab("critical"),
			Annotations: map[string]string{
				"summary":     "PFC pause storm on lossless priority {{ $labels.priority }} at {{ $labels.leaf }}:{{ $labels.port }} / {{ $labels.host }}:{{ $labels.nic }}",
				"description": fmt.Sprintf("More than %g PFC pause frames/s (%s) on a lossless priority of the spec (%s): a stuck receiver or a pause loop halts the class.", o.PauseRate, "{{ $labels.direction }}", prioRegex(ll)),
			}})
	}
	if s.Fabric.PFCWatchdog.Enabled {
		g.Rules = append(g.Rules, Rule{Alert: "FabricPFCWatchdogFired",
			Expr:   fmt.Sprintf(`increase(fabctl_switch_pfc_watchdog_events_total{%s}[5m]) > 0`, sel),
			Labels: lab("critical"),
			Annotations: map[string]string{
				"summary":     "PFC watchdog fired on {{ $labels.leaf }}:{{ $labels.port }} priority {{ $labels.priority }}",
				"description": fmt.Sprintf("The PFC watchdog (detect %s, action %s in the spec) broke a pause deadlock: lossless traffic was dropped.", s.Fabric.PFCWatchdog.Detect, s.Fabric.PFCWatchdog.Action),
			}})
	}
	if lo := lossOnly(s); len(lo) > 0 {
		g.Rules = append(g.Rules, Rule{Alert: "FabricECNOnLosslessOnlyClass",
			Expr:   fmt.Sprintf(`increase(fabctl_switch_ecn_marked_packets_total{%s,priority=~%q}[5m]) > 0`, sel, prioRegex(lo)),
			Labels: lab("warning"),
			Annotations: map[string]string{
				"summary":     "ECN marks on priority {{ $labels.priority }} at {{ $labels.leaf }}:{{ $labels.port }}, a lossless-only class in the spec",
				"description": "The spec gives this lossless class no ECN profile: a switch marks it anyway (a WRED/ECN profile left on the queue).",
			}})
	}
	g.Rules = append(g.Rules, Rule{Alert: "FabricCNPWithoutECNMarks",
		Expr: fmt.Sprintf(`sum by (%s) (rate(fabctl_nic_cnp_handled_total{%s}[%s])) > 0
unless on (fabric)
(sum by (fabric) (rate(fabctl_nic_ecn_marked_packets_total{%s}[%s])) > 0 or sum by (fabric) (rate(fabctl_switch_ecn_marked_packets_total{%s}[%s])) > 0)`,
			portBy, sel, w, sel, w, sel, w),
		For: forS, Labels: lab("warning"),
		Annotations: map[string]string{
			"summary":     "{{ $labels.host }}:{{ $labels.nic }} handles CNPs while nothing in the fabric is ECN-marked",
			"description": "Reaction points cut their rate on CNPs no marking explains: a marking mismatch (DSCP of CNPs or of RoCE, ECN on the wrong class, a NIC generating CNPs on its own).",
		}})
	g.Rules = append(g.Rules, Rule{Alert: "FabricPortBelowSpecSpeed",
		Expr: fmt.Sprintf(`fabctl_nic_link_speed_bits{%s} < on (%s) fabctl_nic_spec_speed_bits{%s}
or
fabctl_switch_port_speed_bits{%s} < on (%s) fabctl_switch_spec_speed_bits{%s}`, sel, portBy, sel, sel, portBy, sel),
		For: forS, Labels: lab("warning"),
		Annotations: map[string]string{
			"summary":     "{{ $labels.leaf }}:{{ $labels.port }} / {{ $labels.host }}:{{ $labels.nic }} trained at {{ $value | humanize }}b/s, below its spec speed",
			"description": "The port links up below the speed in the spec (a bad cable or optic, a lane down, autonegotiation).",
		}})
	g.Rules = append(g.Rules, Rule{Alert: "FabricDCBDrift",
		Expr: fmt.Sprintf(`fabctl_nic_dcb_drift{%s} == 1`, sel),
		For:  forS, Labels: lab("critical"),
		Annotations: map[string]string{
			"summary":     "DCB drift on {{ $labels.host }}:{{ $labels.nic }}",
			"description": "The NIC's DCB (PFC, ETS, trust, DSCP map) changed since fabctl applied it (lldpad, DCBX from the switch, mlnx_qos): run fabctl plan; fabctl agent --reapply restores it.",
		}})
	for i := range g.Rules {
		if g.Rules[i].For == "0s" {
			g.Rules[i].For = ""
		}
	}
	return &RuleFile{Groups: []RuleGroup{g}}
}
