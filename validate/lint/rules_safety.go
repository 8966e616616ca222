package lint

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabctl/fabctl/spec"
)

const sigcomm16 = "Guo et al., \"RDMA over Commodity Ethernet at Scale\", SIGCOMM 2016"

func safetyRules() []Rule {
	return []Rule{
		{
			ID:    "SAFE-1",
			Title: "The PFC watchdog runs on every lossless port, with timers in the range switches accept",
			Rationale: `A NIC or switch that keeps sending PAUSE (a stuck receive pipeline, a firmware bug) or a
PFC deadlock stops a lossless priority across the fabric; Microsoft describes NIC pause-frame storms
spreading through its RDMA clusters. The PFC watchdog detects a queue that stays paused for the detection time, then drops (or
forwards) its traffic until the storm has been gone for the restoration time. fabctl requires it on every
switch port with PFC enabled: a fabric pfc_watchdog { enabled = false } or a port pfc_watchdog = false on
a lossless port is an error. Detection must be 100 to 5000 ms and restoration 100 to 60000 ms (the ranges
SONiC's "config pfcwd start" accepts), and at most 1500 ms each when the watchdog runs on SR Linux switches
(deadlock detection-timer 10..1500 ms, recovery-timer 100..1500 ms). The polling interval should be at most
half of the detection and restoration times, or a storm can last a whole extra poll before it is noticed
(EOS enforces polling <= min(timeout, recovery)/2).`,
			Reference: sigcomm16 + " (NIC pause-frame storms, watchdogs); sonic-net/sonic-utilities pfcwd/main.py and config/main.py " +
				"(detection 100-5000 ms, restoration 100-60000 ms, default 200 ms, action drop); Cisco Nexus 9000 QoS guide (PFC watchdog); " +
				"Nokia SR Linux PFC deadlock timers (https://documentation.nokia.com/srlinux/25-10/books/qos/priority-based-flow-control-pfc.html); " +
				"NVIDIA Onyx/Cumulus PFC watchdog; Arista EOS priority-flow-control pause watchdog",
			Check: checkWatchdog,
		},
		{
			ID:    "SAFE-2",
			Title: "Lossless traffic has no cyclic buffer dependency (PFC deadlock freedom)",
			Rationale: `With PFC a packet holds its ingress buffer while it waits for room downstream. If the
buffers that lossless packets can wait on form a cycle, every buffer on it can fill at once; each waits
for the next, pauses circle the loop and never clear, and the priority stops until the watchdog drops
traffic. fabctl builds the buffer dependency graph of each lossless priority from the links that have PFC
on that priority at both ends and a routing model: routed switches forward valley-free (up-down by Clos
tier, hosts at tier 0: after going down a packet never goes up again, and never leaves on the link it
came in on), bridged switches forward any to any (L2 paths and flooding), and hosts forward only with
forwarding = true. Any cycle is an error, naming its links in order and pinned to the likeliest culprit:
a lateral (leaf-leaf, spine-spine) link, which lets a packet that came down climb again after a failure
or on a peer-link route; a forwarding host (host transit); or an L2 loop of bridged switches. The check
is linear in the number of links (hub nodes per device, iterative Tarjan), so it runs on every plan.`,
			Reference: "Hu et al., \"Deadlocks in Datacenter Networks: Why Do They Form, and How to Avoid Them\", HotNets 2016; " +
				"Tagger, CoNEXT 2017 (https://microsoft.com/en-us/research/publication/tagger-practical-pfc-deadlock-prevention-in-data-center-networks); " +
				sigcomm16,
			Check: checkDeadlocks,
		},
		{
			ID:    "SAFE-3",
			Title: "Bridged switches carrying lossless classes do not flood unknown unicast",
			Rationale: `A switch floods a packet whose destination MAC it has not learned (or whose ARP/ND
entry on the router expired) to every port of the VLAN. Flooded lossless packets travel paths no routing
model predicts, including back toward other switches, and Microsoft traced a fabric-wide PFC deadlock to
exactly that. On a bridged switch that carries lossless priorities, unknown_unicast = "flood" is an
error; leaving it unset is a warning, because switch ASICs flood by default. Set unknown_unicast = "drop"
(RDMA connection setup recovers through ARP), or route hosts on /31 point-to-point links.`,
			Reference: sigcomm16 + " (deadlock triggered by flooding lossless packets); Hu et al., HotNets 2016",
			Check:     checkFlooding,
		},
	}
}

// Watchdog timer ranges of SONiC's "config pfcwd start".
const (
	wdDetectMin  = 100 * time.Millisecond
	wdDetectMax  = 5000 * time.Millisecond
	wdRestoreMin = 100 * time.Millisecond
	wdRestoreMax = 60000 * time.Millisecond
)

// wdLimited are the platforms whose watchdog timer limits
// (spec.PlatformLimits) apply: those of switches the watchdog runs on,
// each with its switches, in spec order.
type wdLimited struct {
	plat     spec.PlatformInfo
	switches []string
}

func checkWatchdog(c *Context) {
	s := c.Spec
	f := s.Fabric
	if !f.Transport.IsEthernet() {
		return // InfiniBand has no PFC
	}
	wd := f.PFCWatchdog
	runs := false
	var unguarded []string
	var limited []*wdLimited
	switches := map[string]bool{}
	for _, sw := range s.Switches {
		runsHere := false
		for _, p := range sw.Ports {
			pfc := s.PortPFC(sw, p)
			if len(pfc) == 0 {
				continue
			}
			if s.PortWatchdog(p) {
				runsHere = true
				continue
			}
			if o := s.PortWatchdogOrigin(p); o.Level == spec.FromObject {
				c.Reportf(Error, o.Range(), switchPortAddress(sw, p), []spec.LintIgnores{p.Ignore, sw.Ignore}, "PFC watchdog off on a lossless port",
					"Port %s:%s has PFC on %s but pfc_watchdog = false. A pause storm from the attached device (or a PFC deadlock) would stop "+
						"the lossless class here and spread upstream with nothing to break it. Remove pfc_watchdog = false, or turn PFC off "+
						"on the port (pfc = []) if it carries no lossless traffic.",
					sw.Name, p.Name, prioNoun(pfc))
				continue
			}
			if c.silencedFor(p.Ignore, sw.Ignore) {
				continue
			}
			unguarded = append(unguarded, sw.Name+":"+p.Name)
			switches[sw.Name] = true
		}
		runs = runs || runsHere
		if plat := s.PlatformOf(sw); runsHere && (plat.Limits.WatchdogDetect.Bounded() || plat.Limits.WatchdogRestore.Bounded()) && !c.silencedFor(sw.Ignore) {
			i := slices.IndexFunc(limited, func(l *wdLimited) bool { return l.plat.Name == plat.Name })
			if i < 0 {
				limited = append(limited, &wdLimited{plat: plat})
				i = len(limited) - 1
			}
			limited[i].switches = append(limited[i].switches, sw.Name)
		}
	}
	if len(unguarded) > 0 {
		c.Reportf(Error, wd.Src.Attr("enabled"), fabricAddress, nil, "PFC watchdog disabled on lossless ports",
			"pfc_watchdog is disabled for the fabric, which leaves %s on %s with PFC and no watchdog: %s. "+
				"A NIC pause storm or a PFC deadlock would stop the lossless class until someone intervenes (%s). "+
				"Set enabled = true (fabctl's defaults: detect 200ms, restore 400ms, action drop), or enable it per port with pfc_watchdog = true.",
			plural(len(unguarded), "port"), plural(len(switches), "switch"), capList(unguarded, 8), sigcomm16)
	}
	if !runs {
		return
	}
	// outside is the first platform limit v breaks: the setting, the
	// range's bound and the platform's switches ("" none).
	outside := func(v time.Duration, r func(spec.PlatformLimits) spec.Range[time.Duration]) (setting, bound, on string) {
		for _, l := range limited {
			rg := r(l.plat.Limits)
			if !rg.Bounded() || rg.Contains(v) {
				continue
			}
			bound = "above " + rg.Max.String() + ", the largest"
			if rg.Min != 0 && v < rg.Min {
				bound = "below " + rg.Min.String() + ", the smallest"
			}
			return rg.Setting, bound, fmt.Sprintf("%s switch(es) %s", l.plat.Title, capList(l.switches, 8))
		}
		return "", "", ""
	}
	note := func(v time.Duration, r func(spec.PlatformLimits) spec.Range[time.Duration]) string {
		setting, bound, on := outside(v, r)
		if setting == "" {
			return ""
		}
		return fmt.Sprintf(" It is also %s value %s accepts, and the watchdog runs on %s.", bound, setting, on)
	}
	detect := func(l spec.PlatformLimits) spec.Range[time.Duration] { return l.WatchdogDetect }
	restore := func(l spec.PlatformLimits) spec.Range[time.Duration] { return l.WatchdogRestore }
	switch {
	case wd.Detect < wdDetectMin || wd.Detect > wdDetectMax:
		c.Reportf(Error, wd.Src.Attr("detect"), fabricAddress, nil, "PFC watchdog detection time out of range",
			"pfc_watchdog detect = %s is outside 100ms..5s, the range SONiC's \"config pfcwd start\" accepts. Shorter times trip on "+
				"ordinary congestion, longer ones leave a storm running. fabctl's default is 200ms.%s",
			wd.Detect, note(wd.Detect, detect))
	case note(wd.Detect, detect) != "":
		setting, bound, on := outside(wd.Detect, detect)
		c.Reportf(Error, wd.Src.Attr("detect"), fabricAddress, nil, "PFC watchdog detection time out of range",
			"pfc_watchdog detect = %s is %s value %s accepts, and the watchdog runs on %s. fabctl's default is 200ms.",
			wd.Detect, bound, setting, on)
	}
	switch {
	case wd.Restore < wdRestoreMin || wd.Restore > wdRestoreMax:
		c.Reportf(Error, wd.Src.Attr("restore"), fabricAddress, nil, "PFC watchdog restoration time out of range",
			"pfc_watchdog restore = %s is outside 100ms..60s, the range SONiC's \"config pfcwd start\" accepts. fabctl's default is 400ms.%s",
			wd.Restore, note(wd.Restore, restore))
	case note(wd.Restore, restore) != "":
		setting, bound, on := outside(wd.Restore, restore)
		c.Reportf(Error, wd.Src.Attr("restore"), fabricAddress, nil, "PFC watchdog restoration time out of range",
			"pfc_watchdog restore = %s is %s value %s accepts, and the watchdog runs on %s. fabctl's default is 400ms.",
			wd.Restore, bound, setting, on)
	}
	if limit := min(wd.Detect, wd.Restore) / 2; wd.Poll <= 0 || wd.Poll > limit {
		c.Reportf(Warning, wd.Src.Attr("poll"), fabricAddress, nil, "PFC watchdog polls too slowly",
			"pfc_watchdog poll = %s, but the queues must be polled at least twice per detection/restoration time (detect %s, restore %s): "+
				"poll at most %s. Otherwise a storm can run a whole extra poll interval before it is noticed, and EOS rejects the setting "+
				"(polling-interval must be <= min(timeout, recovery)/2).",
			wd.Poll, wd.Detect, wd.Restore, limit)
	}
}

// maxDeadlockReports bounds the cycles SAFE-2 reports in one run.
const maxDeadlockReports = 20

func checkDeadlocks(c *Context) {
	s := c.Spec
	res := findDeadlocks(s, maxDeadlockReports)
	for _, dc := range res.Cycles {
		l := dc.Culprit
		c.Report(Finding{
			Severity: Error,
			Subject:  l.Src.Attr("endpoints"),
			Address:  l.Address(),
			Scopes:   linkScopes(s, l),
			Summary:  "Cyclic buffer dependency: PFC deadlock possible",
			Detail:   deadlockDetail(s, dc),
		})
	}
	for _, r := range res.Unreported {
		l := r.Next
		c.Reportf(Error, l.Src.Attr("endpoints"), l.Address(), linkScopes(s, l), "More cyclic buffer dependencies",
			"SAFE-2 stopped after reporting %d dependency cycles. For lossless %s, %s are still in cycles, among them the one through %s. "+
				"Fix the reported links and run fabctl validate --static again.",
			maxDeadlockReports, prioNoun(r.Prios), plural(r.Channels, "link direction"), l.Address())
	}
}

// linkScopes are the lint_ignore maps a link finding consults: the link,
// its two ports/NICs, then their devices.
func linkScopes(s *spec.Spec, l *spec.Link) []spec.LintIgnores {
	a, b := Ends(s, l)
	sa, sb := a.Scopes(l), b.Scopes(l) // port/NIC, device, link
	return []spec.LintIgnores{l.Ignore, sa[0], sb[0], sa[1], sb[1]}
}

// maxCycleHops bounds the hops a cycle listing shows.
const maxCycleHops = 24

func deadlockDetail(s *spec.Spec, dc deadlockCycle) string {
	var b strings.Builder
	hops := make([]string, 0, len(dc.Hops))
	for i, h := range dc.Hops {
		if i == maxCycleHops-1 && len(dc.Hops) > maxCycleHops {
			hops = append(hops, fmt.Sprintf("... %d more ...", len(dc.Hops)-maxCycleHops))
			hops = append(hops, dc.Hops[len(dc.Hops)-1].String())
			break
		}
		hops = append(hops, h.String())
	}
	fmt.Fprintf(&b, "Lossless %s can deadlock: its buffers depend on each other around a cycle of %s: %s (back to the start). ",
		prioNoun(dc.Prios), plural(len(dc.Hops), "link"), strings.Join(hops, ", "))
	b.WriteString("Each hop's ingress buffer waits for the next to drain; once all fill, the PFC pauses circle the loop and never clear, " +
		"and the priority stops fabric-wide until the watchdog drops traffic. ")
	l := dc.Culprit
	a, z := l.A.Node, l.B.Node
	switch dc.Kind {
	case kindLateral:
		sw := s.Switch(a)
		fmt.Fprintf(&b, "%s joins %s and %s, both routed tier-%d switches (a lateral link). Valley-free routing still lets a packet that "+
			"came down to one of them cross it and climb again from the other (a peer-link route, or rerouting after a link failure), "+
			"which closes the loop through the tier above. Take the link out of the lossless domain (pfc = [] on both ports), remove it, "+
			"or, if no lossless route can ever use it, silence SAFE-2 on the link with the reason.",
			l.Address(), a, z, sw.Tier)
	case kindHostTransit:
		h, other := a, z
		if hh := s.Host(z); hh != nil && hh.Forwarding {
			h, other = z, a
		}
		fmt.Fprintf(&b, "Host %s forwards between its NICs (forwarding = true), so lossless traffic that reaches it from %s can be sent "+
			"on through another NIC and come back (host transit). Set forwarding = false on %s, or disable PFC on this NIC (pfc = []).",
			h, other, h)
	case kindBridged:
		fmt.Fprintf(&b, "%s is on a bridged segment: L2 forwarding (learning, flooding, spanning-tree changes) can use any path of the segment, "+
			"and these lossless links form a loop. Route the switches (forwarding = \"routed\", hosts on /31s), break the loop, or disable PFC "+
			"on one of its links (any link of the loop breaks this cycle).", l.Address())
	default:
		fmt.Fprintf(&b, "No lateral link, bridged switch or forwarding host explains this loop; check the tiers of the switches on it "+
			"(a wrong tier turns a down hop into an up hop).")
	}
	b.WriteString(" Cycles that do not use this link are reported separately.")
	return b.String()
}

func checkFlooding(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	for _, sw := range s.Switches {
		if sw.Forwarding != spec.Bridged {
			continue
		}
		var prios []int
		for _, p := range sw.Ports {
			if pfc := s.PortPFC(sw, p); len(pfc) > 0 {
				prios = pfc
				break
			}
		}
		if len(sw.Ports) == 0 {
			prios = s.PortPFC(sw, nil)
		}
		if len(prios) == 0 {
			continue
		}
		scopes := []spec.LintIgnores{sw.Ignore}
		switch sw.UnknownUnicast {
		case "flood":
			c.Reportf(Error, sw.Src.Attr("unknown_unicast"), switchAddress(sw), scopes, "Lossless traffic is flooded",
				"Switch %s bridges lossless %s and floods unknown unicast. A lossless packet to a MAC the switch has not learned (or after "+
					"an ARP/ND entry expires) is copied to every port of the VLAN, including toward other switches, on paths no routing "+
					"model covers; Microsoft traced a fabric-wide PFC deadlock to exactly this. Set unknown_unicast = \"drop\", or route the "+
					"hosts on /31 links (forwarding = \"routed\").",
				sw.Name, prioNoun(prios))
		case "":
			c.Reportf(Warning, sw.Src.Attr("unknown_unicast"), switchAddress(sw), scopes, "Lossless traffic may be flooded",
				"Switch %s bridges lossless %s and does not say what it does with unknown unicast; switch ASICs flood by default, and "+
					"flooded lossless packets can deadlock the fabric (%s). Set unknown_unicast = \"drop\", or route the hosts on /31 links.",
				sw.Name, prioNoun(prios), sigcomm16)
		}
	}
}
