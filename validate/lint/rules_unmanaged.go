package lint

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/spec"
)

// QOS-10: settings the spec leaves unmanaged (spec unmanaged) are not the
// spec's on that device; a class they carry is not proven there.

var ruleQOS10 = Rule{
	ID:    "QOS-10",
	Title: "A lossless, RDMA or CNP class is proven only where the settings that carry it are managed",
	Rationale: `The rules check the spec's values. A setting a switch, host or nic block leaves unmanaged
(unmanaged = { "<setting>" = "<reason>" }, docs/spec.md#unmanaged) is not the spec's on that device:
fabctl neither sets nor checks it, and the device keeps whatever it runs. What another rule proves with
the spec's value of such a setting (PFC on both ends of a link, one trust and DSCP map everywhere, the
classes' queues, ECN marking and scheduling, DCQCN and the CNPs on the NICs, rdma_cm's ToS) is
therefore not proven on that device. This rule names, per switch and per NIC, the unmanaged settings
that carry a lossless, RDMA or CNP class (its classification: trust and the class's DSCP entries; its
PFC; its queue: lossless, scheduling, ETS share, ECN thresholds; on a NIC also DCQCN, the CNP marking
and rdma_cm's ToS) and the classes they carry, as a warning: the class is not proven there. Settings
that only tune the device (MTU, pause, watchdog timers, headroom, buffers, IRQ placement) are not
reported. Manage the setting (a per-device or per-port override where the spec has one), or silence
the finding with the reason the class holds on that device anyway.`,
	Reference: "docs/spec.md#unmanaged; the class mechanisms as plan's not-carried check names them (plan/carry.go)",
	Check:     checkQOS10,
}

// carrier is the class settings of one scope (a switch, or one NIC
// relative to itself), each with the classes it carries.
type carrier map[string][]string

func (m carrier) add(path string, classes ...string) { m[path] = append(m[path], classes...) }

// classLabel names a class that carries fabctl's promise (`"roce"
// (lossless, RDMA)`), "" for other classes.
func classLabel(cl *spec.Class) string {
	var kinds []string
	if cl.Lossless {
		kinds = append(kinds, "lossless")
	}
	switch cl.Role {
	case spec.RoleRDMA:
		kinds = append(kinds, "RDMA")
	case spec.RoleCNP:
		kinds = append(kinds, "CNP")
	}
	if len(kinds) == 0 {
		return ""
	}
	return fmt.Sprintf("%q (%s)", cl.Name, strings.Join(kinds, ", "))
}

// classCarriers are the settings of a switch (nic false) or a NIC that
// carry the spec's lossless, RDMA and CNP classes.
func classCarriers(s *spec.Spec, nic bool) carrier {
	m := carrier{}
	var all, lossless []string
	for _, cl := range s.Classes {
		label := classLabel(cl)
		if label == "" {
			continue
		}
		all = append(all, label)
		if cl.Lossless {
			lossless = append(lossless, label)
		}
		for _, d := range cl.DSCP {
			m.add("dscp/"+strconv.Itoa(d), label)
		}
		tc := "tc/" + strconv.Itoa(cl.Priority) + "/"
		m.add(tc+"lossless", label)
		m.add(tc+"sched", label)
		m.add(tc+"bandwidth", label)
		if !nic && cl.ECN != nil {
			m.add(tc+"ecn/min", label)
			m.add(tc+"ecn/max", label)
			m.add(tc+"ecn/probability", label)
		}
		if nic && cl.Role == spec.RoleRDMA {
			m.add("ecn", label)
			m.add("roce_mode", label)
			m.add("tos", label)
		}
		if nic && cl.Role == spec.RoleCNP {
			m.add("cnp_dscp", label)
			m.add("cnp_prio", label)
		}
	}
	if len(all) == 0 {
		return m
	}
	m.add("trust", all...)
	if nic && len(lossless) > 0 {
		m.add("pfc", lossless...)
	}
	return m
}

func checkQOS10(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		return
	}
	if !anyUnmanaged(s) {
		c.NotApplicable("no switch, host or nic leaves settings unmanaged")
		return
	}
	swSet, nicSet := classCarriers(s, false), classCarriers(s, true)
	if len(swSet) == 0 {
		return
	}
	var lossless []string
	for _, cl := range s.Classes {
		if cl.Lossless {
			lossless = append(lossless, classLabel(cl))
		}
	}
	for _, sw := range s.Switches {
		if len(sw.Unmanaged) == 0 {
			continue
		}
		set := carrier{}
		for p, cls := range swSet {
			set[p] = cls
		}
		for _, p := range sw.Ports {
			set.add("port/"+p.Name+"/trust", swSet["trust"]...)
			if len(lossless) > 0 {
				set.add("port/"+p.Name+"/pfc", lossless...)
			}
		}
		if paths, classes := unmanagedCarriers(set, "", sw.Unmanaged.Match); len(paths) > 0 {
			reportQOS10(c, sw.Src.Attr("unmanaged"), switchAddress(sw), []spec.LintIgnores{sw.Ignore}, "switch "+sw.Name, paths, classes)
		}
	}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			if len(n.Unmanaged) == 0 && len(h.Unmanaged) == 0 {
				continue
			}
			own := 0
			match := func(rel string) (string, bool) {
				if why, ok := n.Unmanaged.Match(rel); ok {
					own++
					return why, true
				}
				return h.Unmanaged.Match("nic/" + n.Name + "/" + rel)
			}
			paths, classes := unmanagedCarriers(nicSet, "nic/"+n.Name+"/", match)
			if len(paths) == 0 {
				continue
			}
			at := h.Src.Attr("unmanaged")
			if own > 0 {
				at = n.Src.Attr("unmanaged")
			}
			reportQOS10(c, at, "host."+h.Name, []spec.LintIgnores{n.Ignore, h.Ignore}, "host "+h.Name+" nic "+n.Name, paths, classes)
		}
	}
}

// unmanagedCarriers are the class settings an unmanaged matcher covers
// (as plans print them: prefix + path) and the classes they carry.
func unmanagedCarriers(set carrier, prefix string, match func(string) (string, bool)) ([]string, []string) {
	var paths []string
	seen := map[string]bool{}
	var classes []string
	for p, cls := range set {
		if _, ok := match(p); !ok {
			continue
		}
		paths = append(paths, prefix+p)
		for _, cl := range cls {
			if !seen[cl] {
				seen[cl] = true
				classes = append(classes, cl)
			}
		}
	}
	sort.Strings(paths)
	sort.Strings(classes)
	return paths, classes
}

func reportQOS10(c *Context, at hcl.Range, addr string, scopes []spec.LintIgnores, what string, paths, classes []string) {
	shown := paths
	more := ""
	if len(paths) > 6 {
		shown, more = paths[:6], fmt.Sprintf(" and %d more", len(paths)-6)
	}
	word, verb := "class", "is"
	if len(classes) > 1 {
		word, verb = "classes", "are"
	}
	c.Reportf(Warning, at, addr, scopes, "Class not proven on a device with unmanaged settings",
		"%s: unmanaged leaves %s%s as the device runs it; that carries %s %s, which %s not proven there (fabctl neither sets nor checks it on this device).",
		what, strings.Join(shown, ", "), more, word, strings.Join(classes, ", "), verb)
}

func anyUnmanaged(s *spec.Spec) bool {
	for _, sw := range s.Switches {
		if len(sw.Unmanaged) > 0 {
			return true
		}
	}
	for _, h := range s.Hosts {
		if len(h.Unmanaged) > 0 {
			return true
		}
		for _, n := range h.NICs {
			if len(n.Unmanaged) > 0 {
				return true
			}
		}
	}
	return false
}
