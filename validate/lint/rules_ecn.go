package lint

import (
	"github.com/fabctl/fabctl/spec"
)

const dcqcnReference = "Zhu et al., \"Congestion Control for Large-Scale RDMA Deployments\" (DCQCN), SIGCOMM 2015"

func ecnRules() []Rule {
	return []Rule{
		{
			ID:    "ECN-1",
			Title: "ECN marking profiles are well formed: min < max, 0 < probability <= 100%, max within the queue limit",
			Rationale: `Switches mark ECN on a RED-style ramp: no marking below min, a probability rising to
probability at max, and every packet above max. DCQCN's stability analysis assumes that ramp. A min at or
above max leaves no ramp (NOSes reject it or mark everything at once), a probability of 0 never marks and
one above 100% is not a probability. A max above the switch's per-queue limit (buffer.queue_limit) can
never be reached: the queue tail-drops or pauses first, so marking stays on the low part of the ramp and
DCQCN reacts late. ECN on a lossy or strict-priority class is fine (TCP uses it).`,
			Reference: dcqcnReference + " (RED-style marking, fluid-model tuning); NVIDIA Onyx default ECN min 150 KB / max 1500 KB " +
				"(https://docs.nvidia.com/networking/display/onyxv3103004/roce+commands)",
			Check: checkECNProfiles,
		},
		{
			ID:    "ECN-2",
			Title: "ECN marking starts below the PFC XOFF threshold",
			Rationale: `ECN (and DCQCN rate reduction) must act before PFC: if a lossless queue reaches the
PAUSE threshold before packets are marked, PFC fires first and congestion spreads hop by hop (head-of-line
blocking, victim flows, pause storms) while the senders never slow down. For switches that declare
buffer { xoff = ... } (the priority-group occupancy at which PAUSE is sent), an ECN min at or above xoff
is an error, and an ECN max above xoff is a warning: part of the marking ramp lies beyond the pause point
and never takes effect.`,
			Reference: dcqcnReference + " (ECN threshold below the PFC threshold); Intel E810 DCQCN " +
				"(https://edc.intel.com/content/www/jp/ja/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/dcqcn); " +
				"https://losslessnetwork.com/learn/roce-v2/pfc-ecn-dcqcn",
			Check: checkECNBelowXoff,
		},
		{
			ID:    "ECN-3",
			Title: "The congestion control scheme matches the classes: DCQCN has ECN on every lossless RDMA class, pfc-only carries no useless ECN",
			Rationale: `DCQCN needs three parts: switches that mark ECN on the RDMA queue (congestion
point), NICs that turn marks into CNPs (notification point) and NICs that slow down on CNPs (reaction
point). With congestion_control = "dcqcn" (the RoCE default), a lossless RDMA class without an ecn block
means the switches never mark, so DCQCN never acts and PFC alone handles congestion; if that is intended,
say congestion_control = "pfc-only" (Meta runs its 400G training fabric that way, with receiver-driven
admission in the collective library). Conversely, with "pfc-only" or "none" on RoCE, ECN profiles on RDMA
classes mark packets no NIC reacts to. The NIC side (roce_np/roce_rp per NIC) is HOST-3's check.`,
			Reference: "NVIDIA DCQCN parameters (https://networking-docs.nvidia.com/doca/archive/3-4-0/dcqcn-cc-parameters); " +
				"Meta, \"RDMA over Ethernet for Distributed AI Training at Meta Scale\", SIGCOMM 2024 " +
				"(summary: https://sysdesign-wiki.pages.dev/sources/2024-08-05-meta-a-roce-network-for-distributed-ai-training-at-scale/); " + dcqcnReference,
			Check: checkCongestionControl,
		},
		ruleECN4,
	}
}

func checkECNProfiles(c *Context) {
	s := c.Spec
	for _, cl := range s.Classes {
		e := cl.ECN
		if e == nil {
			continue
		}
		scopes := []spec.LintIgnores{cl.Ignore}
		if e.Min >= e.Max {
			c.Reportf(Error, e.Src.Attr("min"), trafficClassAddress(cl), scopes, "ECN min not below max",
				"Class %s marks ECN from min = %s to max = %s: min must be below max, or there is no marking ramp "+
					"(NOSes reject the WRED profile or mark every packet at once, and DCQCN oscillates). "+
					"The usual RoCE profile is min 150KB, max 1.5MB, probability 100%%.",
				cl.Name, e.Min, e.Max)
		}
		if e.Probability <= 0 || e.Probability > 100 {
			c.Reportf(Error, e.Src.Attr("probability"), trafficClassAddress(cl), scopes, "ECN probability out of range",
				"Class %s: ECN probability %v%% must be above 0%% (0 never marks) and at most 100%% (the marking probability at max).",
				cl.Name, e.Probability)
		}
		for _, sw := range s.Switches {
			if sw.Buffer == nil || sw.Buffer.QueueLimit <= 0 || e.Max <= sw.Buffer.QueueLimit {
				continue
			}
			c.Reportf(Error, e.Src.Attr("max"), switchAddress(sw), []spec.LintIgnores{cl.Ignore, sw.Ignore}, "ECN max above the queue limit",
				"Class %s marks ECN up to max = %s, but switch %s limits a queue to %s (buffer.queue_limit at %s). "+
					"The queue can never reach max: it drops or pauses first, %.0f%% of the way up the %s..%s ramp, so marking never reaches "+
					"its full probability (%v%%) and DCQCN reacts late. Lower the class's ecn max to at most %s.",
				cl.Name, e.Max, sw.Name, sw.Buffer.QueueLimit, sw.Buffer.Src.Attr("queue_limit"),
				rampShare(e, sw.Buffer.QueueLimit), e.Min, e.Max, e.Probability, sw.Buffer.QueueLimit)
		}
	}
}

// rampShare is how far up an ECN profile's min..max ramp a queue depth is,
// in percent; the marking probability there is that share of the
// profile's probability.
func rampShare(e *spec.ECNProfile, depth spec.Bytes) float64 {
	switch {
	case depth <= e.Min:
		return 0
	case depth >= e.Max || e.Max <= e.Min:
		return 100
	}
	return 100 * float64(depth-e.Min) / float64(e.Max-e.Min)
}

func checkECNBelowXoff(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	var classes []*spec.Class
	for _, cl := range s.Lossless() {
		if cl.ECN != nil {
			classes = append(classes, cl)
		}
	}
	if len(classes) == 0 {
		return
	}
	for _, sw := range s.Switches {
		if sw.Buffer == nil || sw.Buffer.XOff <= 0 {
			continue
		}
		xoff := sw.Buffer.XOff
		pfc := s.PortPFC(sw, nil)
		for _, cl := range classes {
			if !containsInt(pfc, cl.Priority) {
				continue // PFC is off for this priority on the switch: no pause point
			}
			e := cl.ECN
			scopes := []spec.LintIgnores{cl.Ignore, sw.Ignore}
			switch {
			case e.Min >= xoff:
				c.Reportf(Error, e.Src.Attr("min"), switchAddress(sw), scopes, "ECN starts above the PFC pause point",
					"Class %s (lossless priority %d) starts marking ECN at min = %s, but switch %s sends PAUSE when the priority group holds "+
						"buffer.xoff = %s. PFC fires before a single packet is marked: congestion spreads upstream as pauses and DCQCN never "+
						"slows the senders. Lower ecn min well below %s (and max to at most %s).",
					cl.Name, cl.Priority, e.Min, sw.Name, xoff, xoff, xoff)
			case e.Max > xoff:
				c.Reportf(Warning, e.Src.Attr("max"), switchAddress(sw), scopes, "ECN ramp extends past the PFC pause point",
					"Class %s (lossless priority %d) marks ECN from %s to %s, but switch %s sends PAUSE at buffer.xoff = %s: PFC fires when "+
						"the marking probability has only reached %.0f%% (of %v%% at max), and the part of the ramp above %s never takes effect. "+
						"Lower ecn max to at most %s.",
					cl.Name, cl.Priority, e.Min, e.Max, sw.Name, xoff, rampShare(e, xoff)*e.Probability/100, e.Probability, xoff, xoff)
			}
		}
	}
}

func checkCongestionControl(c *Context) {
	s := c.Spec
	f := s.Fabric
	if !f.Transport.IsRoCE() {
		return
	}
	switch f.CongestionControl {
	case spec.CCDCQCN:
		for _, cl := range s.Classes {
			if cl.Role != spec.RoleRDMA || !cl.Lossless || cl.ECN != nil {
				continue
			}
			how := "set explicitly"
			if !f.Src.Has("congestion_control") {
				how = "the RoCE default"
			}
			c.Reportf(Warning, cl.Src.Block, trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "DCQCN without ECN marking",
				"congestion_control is \"dcqcn\" (%s), but lossless RDMA class %s has no ecn block: switches never mark its packets, "+
					"NICs never send CNPs and DCQCN never slows a sender, so PFC alone absorbs congestion (pause storms, victim flows). "+
					"Add ecn { min = \"150KB\" max = \"1.5MB\" probability = 100 } to the class, or state congestion_control = \"pfc-only\" "+
					"on the fabric if PFC alone is the design.",
				how, cl.Name)
		}
	case spec.CCPFCOnly, spec.CCNone:
		// Marking is useful only if some NIC still runs DCQCN NP/RP.
		for _, h := range s.Hosts {
			for _, n := range h.NICs {
				if s.NICECN(n) {
					return
				}
			}
		}
		for _, cl := range s.Classes {
			if cl.Role != spec.RoleRDMA || cl.ECN == nil {
				continue
			}
			rng, where := cl.ECN.Src.Block, "Remove the class's ecn block"
			if isDefaultClass(s, cl) {
				rng, where = f.Src.Attr("congestion_control"), "Declare the classes explicitly, with no ecn block on the RDMA class"
			}
			c.Reportf(Warning, rng, trafficClassAddress(cl), []spec.LintIgnores{cl.Ignore}, "ECN marking without DCQCN",
				"congestion_control is %q, so no NIC runs DCQCN (no notification point turns CE marks into CNPs, no reaction point slows down), "+
					"but RDMA class %s carries an ECN profile (%s). On RoCE the marks do nothing. %s, or use congestion_control = \"dcqcn\".",
				f.CongestionControl, cl.Name, ecnString(cl.ECN), where)
		}
	}
}
