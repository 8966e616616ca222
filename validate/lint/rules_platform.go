package lint

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fabctl/fabctl/spec"
)

func platformRules() []Rule {
	return []Rule{{
		ID:    "PLAT-1",
		Title: "Every switch setting is one its platform's driver and YANG model accept",
		Rationale: `A spec the PR gate passed must not be refused later by plan's renderer or by the device's
model. Each switch platform's descriptor carries what its driver or model refuses as data (value ranges
and granularities taken from the vendors' models and documentation: port MTU, with the Ethernet header
and the link's VLAN tags where the model's mtu is the L2 MTU; scheduler weights; ECN marking
probability, a whole percent on SONiC, EOS, NX-OS and Cumulus, rounded on SR Linux and OpenConfig;
ECN thresholds; the PFC watchdog's poll interval, timer granularity, its actions, and SONiC's must that
detection and restoration are at least the poll interval; the trust modes a switch takes (NX-OS: no port trusting dscp on a switch that trusts pcp); NX-OS's
system-wide no-drop classes; SR Linux's headroom maximum; a switch model a platform's renderer has no
source for, where it renders by chip family: EOS's tx-queue or uc-tx-queue). This rule compares the spec with those limits
without rendering it, and each finding names the setting, the platform's limit and its source.
lint_ignore cannot silence it: the device refuses the value whatever the reason.`,
		Reference: "the platforms' descriptors (drivers/switch/*/limits.go, platform.go) and the models they cite: sonic-port.yang, " +
			"sonic-pfcwd.yang, sonic-scheduler.yang, sonic-wred-profile.yang, srl_nokia-interfaces.yang, srl_nokia-qos.yang, " +
			"openconfig-interfaces, openconfig-qos-mem-mgmt; EOS (AVD schema), NX-OS and NVUE references",
		Check:    checkPlatformLimits,
		NoIgnore: true,
	}}
}

// checkPlatformLimits compares every switch's settings with its
// platform's limits (spec.PlatformLimits). Settings shared by many
// switches (classes, the fabric watchdog) are reported once per platform.
func checkPlatformLimits(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	seen := map[string]bool{} // platform name: the shared settings checked
	lossless := losslessPriorities(s)
	for _, sw := range s.Switches {
		plat := s.PlatformOf(sw)
		l := plat.Limits
		title := plat.Title
		if title == "" {
			title = plat.Name
		}
		swAddr := switchAddress(sw)
		if len(l.SwitchTrust) > 0 {
			if t := s.PortTrust(sw, nil); !slices.Contains(l.SwitchTrust, t) {
				o := s.PortTrustOrigin(sw, nil)
				c.Reportf(Error, o.Range(), swAddr, nil, "Switch trust the platform cannot classify on",
					"Switch %s (%s) would classify on %s by default, but %s's switch-wide classification is %s: its renderer refuses the switch. Set trust = %q on the switch (ports may still trust another field).",
					sw.Name, title, t, title, strings.Join(l.SwitchTrust, " or "), l.SwitchTrust[0])
			}
		}
		if sw.Model != "" && !l.KnowsModel(sw.Model) {
			c.Reportf(Error, sw.Src.Attr("model"), swAddr, nil, "Switch model the platform cannot render for",
				"Switch %s (%s) is model %s, which %s's renderer has no source for (%s): it does not guess, so the classes' queue settings would not be expressible and plan would refuse the lossless classes. Name a model the table has, or leave model unset and plan reads the model from the switch.",
				sw.Name, title, sw.Model, title, l.ModelSource)
		}
		if l.Headroom.Bounded() && sw.Buffer != nil && sw.Buffer.Headroom > 0 && !l.Headroom.Contains(int64(sw.Buffer.Headroom)) {
			c.Reportf(Error, sw.Buffer.Src.Attr("headroom"), swAddr, nil, "Headroom beyond the platform's maximum",
				"Switch %s (%s) has headroom %d bytes, outside %s (%s).", sw.Name, title, int64(sw.Buffer.Headroom), l.Headroom.Setting, rangeText(l.Headroom.Min, l.Headroom.Max, l.Headroom.Source))
		}
		for _, p := range sw.Ports {
			if l.PortMTU.Bounded() {
				ip := s.PortMTU(sw, p)
				v := ip + l.PortMTUOverhead
				tags := 0
				if lk := p.Link(); lk != nil && l.PortMTUTags {
					tags = lk.VLANTags
				}
				v += 4 * tags
				if !l.PortMTU.Contains(v) {
					o := s.PortMTUOrigin(sw, p)
					what := fmt.Sprintf("IP MTU %d", ip)
					if v != ip {
						what = fmt.Sprintf("IP MTU %d (port mtu %d with %d bytes of Ethernet header and %d VLAN tags)", ip, v, l.PortMTUOverhead, tags)
					}
					c.Reportf(Error, o.Range(), switchPortAddress(sw, p), nil, "Port MTU outside what the platform takes",
						"Port %s:%s (%s) has %s, outside %s: %s. Its renderer or the device refuses it; set the port's mtu within the range.",
						sw.Name, p.Name, title, what, l.PortMTU.Setting, rangeText(l.PortMTU.Min, l.PortMTU.Max, l.PortMTU.Source))
				}
			}
			if len(l.PortTrust) > 0 && p.Trust != "" && !slices.Contains(l.PortTrust, p.Trust) {
				c.Reportf(Error, p.Src.Attr("trust"), switchPortAddress(sw, p), nil, "Port trust the platform cannot classify on",
					"Port %s:%s (%s) trusts %s; %s ports trust %s.", sw.Name, p.Name, title, p.Trust, title, strings.Join(l.PortTrust, " or "))
			}
			if l.DSCPPortNeedsDSCPSwitch != "" && s.PortTrust(sw, nil) == spec.TrustPCP && s.PortTrust(sw, p) == spec.TrustDSCP {
				o := s.PortTrustOrigin(sw, p)
				c.Reportf(Error, o.Range(), switchPortAddress(sw, p), nil, "Port trust the platform cannot classify on",
					"Port %s:%s (%s) trusts dscp on a switch that trusts pcp: %s. Set the switch's trust to dscp and the pcp ports' trust to pcp.", sw.Name, p.Name, title, l.DSCPPortNeedsDSCPSwitch)
			}
			if l.SystemPFC != "" {
				if pfc := s.PortPFC(sw, p); len(pfc) > 0 && !slices.Equal(sortedInts(pfc), lossless) {
					o := s.PortPFCOrigin(sw, p)
					c.Reportf(Error, o.Range(), switchPortAddress(sw, p), nil, "Port PFC priorities the platform cannot set per port",
						"Port %s:%s (%s) has PFC on %v but the lossless classes are on %v: %s.", sw.Name, p.Name, title, pfc, lossless, l.SystemPFC)
				}
			}
		}
		if seen[plat.Name] {
			continue
		}
		seen[plat.Name] = true
		on := fmt.Sprintf("%s switches such as %s", title, sw.Name)
		checkClassLimits(c, l, on)
		checkWatchdogLimits(c, plat, on)
	}
}

func checkClassLimits(c *Context, l spec.PlatformLimits, on string) {
	if l.Weight.Bounded() {
		// A priority's scheduler weight is the sum of its non-strict
		// classes' bandwidth (none when a class on it is strict).
		var sum [8]int
		var strict [8]bool
		var last [8]*spec.Class
		for _, cl := range c.Spec.Classes {
			if cl.Priority < 0 || cl.Priority > 7 {
				continue
			}
			if cl.Strict {
				strict[cl.Priority] = true
				continue
			}
			sum[cl.Priority] += cl.Bandwidth
			last[cl.Priority] = cl
		}
		for p, cl := range last {
			if cl == nil || strict[p] || l.Weight.Contains(sum[p]) {
				continue
			}
			what := fmt.Sprintf("Class %q has bandwidth %d", cl.Name, cl.Bandwidth)
			if sum[p] != cl.Bandwidth {
				what = fmt.Sprintf("The classes on priority %d have bandwidth %d together (the last is %q)", p, sum[p], cl.Name)
			}
			c.Reportf(Error, cl.Src.Attr("bandwidth"), trafficClassAddress(cl), nil, "Class bandwidth outside the platform's scheduler weights",
				"%s, which %s render as %s: %s.", what, on, l.Weight.Setting, rangeText(l.Weight.Min, l.Weight.Max, l.Weight.Source))
		}
	}
	for _, cl := range c.Spec.Classes {
		addr := trafficClassAddress(cl)
		e := cl.ECN
		if e == nil {
			continue
		}
		// A probability outside 0 < p <= 100 is ECN-1's.
		if pr := e.Probability; l.ECNProbability.Bounded() && pr > 0 && pr <= 100 {
			switch {
			case l.ECNWhole && pr != math.Trunc(pr):
				c.Reportf(Error, e.Src.Attr("probability"), addr, nil, "ECN probability the platform cannot express",
					"Class %q marks with probability %v %%, but %s take %s as a whole percent (%s): the renderer refuses it rather than change its meaning. Use a whole percent.",
					cl.Name, pr, on, l.ECNProbability.Setting, l.ECNProbability.Source)
			case l.ECNRounded && !l.ECNProbability.Contains(math.Round(pr)):
				c.Reportf(Error, e.Src.Attr("probability"), addr, nil, "ECN probability the platform cannot express",
					"Class %q marks with probability %v %%, which rounds to %v %% for %s (%s): %s.",
					cl.Name, pr, math.Round(pr), l.ECNProbability.Setting, on, rangeText(l.ECNProbability.Min, l.ECNProbability.Max, l.ECNProbability.Source))
			case !l.ECNRounded && !l.ECNProbability.Contains(pr):
				c.Reportf(Error, e.Src.Attr("probability"), addr, nil, "ECN probability the platform cannot express",
					"Class %q marks with probability %v %%, outside %s for %s: %s.",
					cl.Name, pr, l.ECNProbability.Setting, on, rangeText(l.ECNProbability.Min, l.ECNProbability.Max, l.ECNProbability.Source))
			}
		}
		if l.ECNThreshold.Bounded() {
			for _, v := range []struct {
				attr string
				b    int64
			}{{"min", int64(e.Min)}, {"max", int64(e.Max)}} {
				if !l.ECNThreshold.Contains(v.b) {
					c.Reportf(Error, e.Src.Attr(v.attr), addr, nil, "ECN threshold outside what the platform takes",
						"Class %q has ECN %s %d bytes, outside %s for %s: %s (no clamping: a clamped threshold marks at another depth).",
						cl.Name, v.attr, v.b, l.ECNThreshold.Setting, on, rangeText(l.ECNThreshold.Min, l.ECNThreshold.Max, l.ECNThreshold.Source))
				}
			}
		}
	}
}

func checkWatchdogLimits(c *Context, plat spec.PlatformInfo, on string) {
	l := plat.Limits
	wd := c.Spec.Fabric.PFCWatchdog
	if !wd.Enabled {
		return
	}
	if len(l.WatchdogActions) > 0 && !slices.Contains(l.WatchdogActions, wd.Action) {
		c.Reportf(Error, wd.Src.Attr("action"), fabricAddress, nil, "PFC watchdog action the platform does not have",
			"pfc_watchdog action %q: %s take %s only.", wd.Action, on, strings.Join(l.WatchdogActions, " or "))
	}
	for _, v := range []struct {
		attr string
		d    time.Duration
		step time.Duration
	}{{"detect", wd.Detect, l.WatchdogStep}, {"restore", wd.Restore, l.WatchdogStep}, {"poll", wd.Poll, l.WatchdogPollStep}} {
		if v.step > 0 && v.d%v.step != 0 {
			c.Reportf(Error, wd.Src.Attr(v.attr), fabricAddress, nil, "PFC watchdog time finer than the platform takes",
				"pfc_watchdog %s %v: %s take it in steps of %v.", v.attr, v.d, on, v.step)
		}
	}
	if !watchdogRuns(c.Spec, plat) {
		// SAFE-1 checks the platform's timer ranges where the watchdog
		// runs on a port; the renderer writes the timers even where none
		// does.
		for _, v := range []struct {
			attr string
			d    time.Duration
			r    spec.Range[time.Duration]
		}{{"detect", wd.Detect, l.WatchdogDetect}, {"restore", wd.Restore, l.WatchdogRestore}} {
			if v.r.Bounded() && !v.r.Contains(v.d) {
				c.Reportf(Error, wd.Src.Attr(v.attr), fabricAddress, nil, "PFC watchdog time outside the platform's range",
					"pfc_watchdog %s %v, outside %s for %s: %s.", v.attr, v.d, v.r.Setting, on, rangeText(v.r.Min, v.r.Max, v.r.Source))
			}
		}
	}
	if r := l.WatchdogPoll; r.Bounded() && !r.Contains(wd.Poll) {
		c.Reportf(Error, wd.Src.Attr("poll"), fabricAddress, nil, "PFC watchdog poll interval outside the platform's range",
			"pfc_watchdog poll %v, outside %s for %s: %s.", wd.Poll, r.Setting, on, rangeText(r.Min, r.Max, r.Source))
	}
	if l.WatchdogAtLeastPoll != "" {
		for _, v := range []struct {
			attr string
			d    time.Duration
		}{{"detect", wd.Detect}, {"restore", wd.Restore}} {
			if v.d < wd.Poll {
				c.Reportf(Error, wd.Src.Attr(v.attr), fabricAddress, nil, "PFC watchdog time below the poll interval",
					"pfc_watchdog %s %v is below poll %v, which %s refuse (%s).", v.attr, v.d, wd.Poll, on, l.WatchdogAtLeastPoll)
			}
		}
	}
}

// rangeText says a range's bounds and its source.
func rangeText[T int | int64 | float64 | time.Duration](lo, hi T, source string) string {
	var zero T
	switch {
	case lo != zero && hi != zero:
		return fmt.Sprintf("%v..%v (%s)", lo, hi, source)
	case hi != zero:
		return fmt.Sprintf("at most %v (%s)", hi, source)
	}
	return fmt.Sprintf("at least %v (%s)", lo, source)
}

// losslessPriorities are the priorities of the lossless classes, sorted.
func losslessPriorities(s *spec.Spec) []int {
	var out []int
	for _, cl := range s.Classes {
		if cl.Lossless && !slices.Contains(out, cl.Priority) {
			out = append(out, cl.Priority)
		}
	}
	sort.Ints(out)
	return out
}

func sortedInts(v []int) []int {
	out := slices.Clone(v)
	sort.Ints(out)
	return out
}

// watchdogRuns reports whether the PFC watchdog runs on a port (PFC on,
// pfc_watchdog not off) of a switch of platform plat: where SAFE-1
// checks the platform's timer ranges.
func watchdogRuns(s *spec.Spec, plat spec.PlatformInfo) bool {
	for _, sw := range s.Switches {
		if sw.Platform != plat.Name {
			continue
		}
		for _, p := range sw.Ports {
			if len(s.PortPFC(sw, p)) > 0 && s.PortWatchdog(p) {
				return true
			}
		}
	}
	return false
}
