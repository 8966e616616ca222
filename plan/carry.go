package plan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Whether a device carries the spec's intent. A setting its platform
// cannot express (Unexpressible) is either one that carries a lossless,
// RDMA or CNP class (its PFC, classification, scheduling, ECN marking,
// DCQCN, CNP or rdma_cm marking: without it the class is not what the
// spec says) or one that tunes how the device does it (MTU, link pause,
// watchdog timers, headroom and cable-length sizing, buffer sizes, IRQ
// affinity). A device with a setting of the first kind that the spec
// does not accept (accept_not_in_effect on the switch, host or NIC) cannot
// carry the intent: plan says so as an error, apply refuses, validate
// fails. An accepted setting is "accepted, not in effect", never valid.

// classIndex describes each priority by the classes on it that carry
// fabctl's promise: lossless, RDMA or CNP classes.
type classIndex struct {
	label [8]string // `class "roce" (lossless, RDMA)`; "" for other classes
	any   bool
}

func newClassIndex(s *spec.Spec) *classIndex {
	ci := &classIndex{}
	if s == nil {
		return ci
	}
	var names [8][]string
	var kinds [8]map[string]bool
	for _, c := range s.Classes {
		if c.Priority < 0 || c.Priority > 7 {
			continue
		}
		var k []string
		if c.Lossless {
			k = append(k, "lossless")
		}
		switch c.Role {
		case "rdma":
			k = append(k, "RDMA")
		case "cnp":
			k = append(k, "CNP")
		}
		if len(k) == 0 {
			continue
		}
		names[c.Priority] = append(names[c.Priority], strconv.Quote(c.Name))
		if kinds[c.Priority] == nil {
			kinds[c.Priority] = map[string]bool{}
		}
		for _, x := range k {
			kinds[c.Priority][x] = true
		}
	}
	for p := range names {
		if len(names[p]) == 0 {
			continue
		}
		var k []string
		for _, x := range []string{"lossless", "RDMA", "CNP"} {
			if kinds[p][x] {
				k = append(k, x)
			}
		}
		word := "class"
		if len(names[p]) > 1 {
			word = "classes"
		}
		ci.label[p] = fmt.Sprintf("%s %s (%s)", word, strings.Join(names[p], ", "), strings.Join(k, ", "))
		ci.any = true
	}
	return ci
}

func (ci *classIndex) prio(v string) string {
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 || p > 7 {
		return ""
	}
	return ci.label[p]
}

// carries says which class or class mechanism a setting carries ("" for a
// setting that only tunes the device). path is a device's state path,
// value its desired value.
func (ci *classIndex) carries(path, value string) string {
	if !ci.any {
		return ""
	}
	rel := path
	switch {
	case strings.HasPrefix(path, "nic/"):
		_, rest, ok := strings.Cut(path[len("nic/"):], "/")
		if !ok {
			return ""
		}
		rel = rest
	case strings.HasPrefix(path, "port/"):
		// Port names may hold '/': the setting is the last segment.
		rel = path[strings.LastIndexByte(path, '/')+1:]
	}
	head, tail, _ := strings.Cut(rel, "/")
	switch head {
	case "trust":
		return "the classification of the lossless, RDMA and CNP classes (trust)"
	case "dscp":
		// dscp/<n> = priority, dscp/default = the priority of every
		// other code point.
		if l := ci.prio(value); l != "" {
			return "the DSCP classification of " + l
		}
	case "tc":
		n, sub, _ := strings.Cut(tail, "/")
		if l := ci.prio(n); l != "" {
			return l + " " + tcWhat(sub)
		}
	case "pfc":
		if value != "" {
			return "PFC of the lossless priorities " + value
		}
	case "ecn":
		if value != "" && tail == "" {
			return "DCQCN (congestion control) on priorities " + value
		}
	case "cnp_dscp", "cnp_prio":
		return "the marking of the CNPs this NIC sends"
	case "roce_mode", "tos":
		return "the marking of RDMA connections (rdma_cm)"
	}
	return ""
}

func tcWhat(sub string) string {
	switch {
	case sub == "lossless":
		return "no-drop (PFC) queue"
	case sub == "sched" || sub == "bandwidth":
		return "scheduling"
	case strings.HasPrefix(sub, "ecn"):
		return "ECN marking"
	case sub == "max_rate":
		return "rate cap"
	}
	return sub
}

// classify marks each of a device plan's unexpressible settings with what
// it carries (Carries) and the spec's acceptance (Accepted).
func classify(s *spec.Spec, ci *classIndex, dp *DevicePlan) {
	if len(dp.Unexpressible) == 0 {
		return
	}
	accept := acceptorFor(s, dp)
	for i := range dp.Unexpressible {
		u := &dp.Unexpressible[i]
		u.Carries = ci.carries(u.Path, u.Value)
		if why, ok := accept(u.Path); ok {
			u.Accepted = why
		}
	}
}

// acceptorFor returns the spec's acceptances of a device's settings:
// a NIC's own first, then the host's or switch's.
func acceptorFor(s *spec.Spec, dp *DevicePlan) func(path string) (string, bool) {
	none := func(string) (string, bool) { return "", false }
	if s == nil {
		return none
	}
	switch dp.Kind {
	case "switch":
		sw := s.Switch(dp.Name)
		if sw == nil {
			return none
		}
		return sw.Accept.Match
	case "host":
		h := s.Host(dp.Name)
		if h == nil {
			return none
		}
		nic := func(name string) spec.Acceptances {
			if n := h.NIC(name); n != nil {
				return n.Accept
			}
			return nil
		}
		return func(path string) (string, bool) { return spec.MatchNICFirst(path, nic, h.Accept) }
	}
	return none
}

// NotCarried are the device's settings of a lossless, RDMA or CNP class
// that its platform cannot express and the spec does not accept: the
// device cannot carry the intent.
func (d *DevicePlan) NotCarried() []Unexpressible {
	var out []Unexpressible
	for _, u := range d.Unexpressible {
		if u.Carries != "" && u.Accepted == "" {
			out = append(out, u)
		}
	}
	return out
}

// Accepted are the device's unexpressible settings the spec accepts as
// not in effect.
func (d *DevicePlan) Accepted() []Unexpressible {
	var out []Unexpressible
	for _, u := range d.Unexpressible {
		if u.Accepted != "" {
			out = append(out, u)
		}
	}
	return out
}

// Unaccepted are the device's unexpressible settings the spec does not
// accept (those of a class and those that tune the device).
func (d *DevicePlan) Unaccepted() []Unexpressible {
	var out []Unexpressible
	for _, u := range d.Unexpressible {
		// A subnet manager's port tables are read from the ports by
		// validate's InfiniBand stage, not left unchecked.
		if u.Accepted == "" && !strings.HasPrefix(u.Path, intent.PathFabric) {
			out = append(out, u)
		}
	}
	return out
}

// NotCarried are the devices that cannot carry the intent (planned
// devices with NotCarried settings), in plan order.
func (p *Plan) NotCarried() []*DevicePlan {
	var out []*DevicePlan
	for _, d := range p.Devices {
		if d.Error == "" && len(d.NotCarried()) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// NotCarriedSummary is SummarizeUnexpressible of the device's NotCarried.
func NotCarriedSummary(d *DevicePlan, max int) []string {
	return SummarizeUnexpressible(d.NotCarried(), max)
}

// SummarizeUnexpressible is one line per reason: the settings (at most
// max paths, 0 all) and the reason, for errors and views.
func SummarizeUnexpressible(us []Unexpressible, max int) []string {
	by := map[string][]string{}
	var reasons []string
	for _, u := range us {
		if _, ok := by[u.Reason]; !ok {
			reasons = append(reasons, u.Reason)
		}
		by[u.Reason] = append(by[u.Reason], u.Path)
	}
	sort.Strings(reasons)
	out := make([]string, 0, len(reasons))
	for _, r := range reasons {
		ps := by[r]
		shown := ps
		more := ""
		if max > 0 && len(ps) > max {
			shown = ps[:max]
			more = fmt.Sprintf(" and %d more", len(ps)-max)
		}
		out = append(out, fmt.Sprintf("%s%s: %s", strings.Join(shown, ", "), more, r))
	}
	return out
}

// AcceptHint is what to do about a device that cannot carry the intent.
const AcceptHint = `fix the device (the reasons say what it lacks), or accept it explicitly on the switch, host or nic block: accept_not_in_effect = { "<setting>" = "<reason>" } ("*" for all; docs/spec.md#accept_not_in_effect)`
