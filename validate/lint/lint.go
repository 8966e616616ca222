// Package lint holds fabctl's static cross-layer rules for lossless RDMA
// fabrics. Each rule inspects the typed spec model and reports findings as
// ordinary HCL diagnostics attached to the spec attribute that causes them,
// carrying the rule id, the object's address and the rule's source
// (spec.DiagInfo). Rules are listed explicitly in Rules(); there is no
// registration by side effect. Effective values (port and NIC MTU, PFC set,
// trust, PFC watchdog, ToS) and where each was set come from spec
// (spec/effective.go): lint keeps no precedence of its own.
package lint

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fabctl/fabctl/spec"
	"github.com/hashicorp/hcl/v2"
)

// Severity of a rule's findings.
type Severity = hcl.DiagnosticSeverity

// Severities, re-exported for rule tables.
const (
	Error   = hcl.DiagError
	Warning = hcl.DiagWarning
)

// Rule is one lint rule.
type Rule struct {
	ID        string // e.g. "QOS-1"
	Title     string // one line: what must hold
	Rationale string // why, for docs/rules.md
	Reference string // where the rule comes from
	Check     func(*Context)
	// NoIgnore: lint_ignore cannot silence the rule's findings (the
	// device or its driver refuses the value whatever the reason).
	NoIgnore bool
}

// Context is what a rule sees: the spec, a prepared topology, and Report.
type Context struct {
	Spec *spec.Spec
	Topo *Topology

	rule       *Rule
	diags      hcl.Diagnostics
	suppressed int
	notApplies string // NotApplicable's reason

	shared *shared // what the rules of one run compute once (see lossless)
}

// shared holds what the rules of one run share; rules on other goroutines
// reach it through their own Context.
type shared struct {
	once          sync.Once
	losslessPorts [][]lossPort // see lossless()
}

// Finding is one problem a rule reports.
type Finding struct {
	Severity Severity
	Subject  hcl.Range // the attribute (or block) that causes it
	Address  string    // e.g. "switch.leaf1", "link.leaf1:Ethernet0--gpu01:ens1f0"
	Summary  string
	Detail   string
	// Scopes are the lint_ignore maps that can silence this finding, from
	// the innermost block outwards (port, switch, fabric). The fabric's is
	// always consulted.
	Scopes []spec.LintIgnores
}

// Report adds a finding for the running rule unless a lint_ignore silences it.
func (c *Context) Report(f Finding) {
	scopes := append(f.Scopes, c.Spec.Fabric.Ignore)
	if c.rule.NoIgnore {
		scopes = nil
	}
	for _, sc := range scopes {
		if _, ok := sc[c.rule.ID]; ok {
			c.suppressed++
			return
		}
	}
	subj := f.Subject
	c.diags = append(c.diags, &hcl.Diagnostic{
		Severity: f.Severity,
		Summary:  f.Summary,
		Detail:   f.Detail,
		Subject:  &subj,
		Extra:    &spec.DiagInfo{Rule: c.rule.ID, Address: f.Address, Reference: c.rule.Reference, NoIgnore: c.rule.NoIgnore},
	})
}

// Reportf is Report with a formatted detail.
func (c *Context) Reportf(sev Severity, subject hcl.Range, address string, scopes []spec.LintIgnores, summary, format string, args ...any) {
	c.Report(Finding{Severity: sev, Subject: subject, Address: address, Scopes: scopes, Summary: summary, Detail: fmt.Sprintf(format, args...)})
}

// Result is the outcome of a lint run.
type Result struct {
	Diagnostics hcl.Diagnostics // sorted by file and position
	Suppressed  int             // findings silenced by lint_ignore
	// NotApplicable maps the rules that found nothing to check in this
	// spec (an InfiniBand rule on an Ethernet fabric, a buffer rule without
	// buffer facts) to the reason: reports show them as skipped, not passed.
	NotApplicable map[string]string
}

// NotApplicable records that the running rule has nothing to check in this
// spec, and why. A rule that reports findings anyway is not skipped.
func (c *Context) NotApplicable(reason string) {
	c.notApplies = reason
}

// Run runs every rule over a loaded spec (which must have no load errors).
func Run(s *spec.Spec) Result {
	return RunRules(s, Rules())
}

// RunRules runs the given rules. They only read the spec, so they run on
// as many goroutines as GOMAXPROCS, each rule with a Context of its own;
// the findings are joined in rule order, as one goroutine would report
// them, before sorting.
func RunRules(s *spec.Spec, rules []Rule) Result {
	topo, sh := NewTopology(s), &shared{}
	ctxs := make([]Context, len(rules))
	for i := range rules {
		ctxs[i] = Context{Spec: s, Topo: topo, rule: &rules[i], shared: sh}
	}
	order := make([]int, len(rules))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return slowFirst(rules[order[a]].ID) < slowFirst(rules[order[b]].ID) })
	var next atomic.Int64
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(rules) {
				return
			}
			i := order[k]
			rules[i].Check(&ctxs[i])
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(runtime.GOMAXPROCS(0), len(rules)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	var res Result
	n := 0
	for i := range ctxs {
		n += len(ctxs[i].diags)
	}
	res.Diagnostics = make(hcl.Diagnostics, 0, n)
	for i := range ctxs {
		res.Diagnostics = append(res.Diagnostics, ctxs[i].diags...)
		res.Suppressed += ctxs[i].suppressed
		if r := ctxs[i].notApplies; r != "" && len(ctxs[i].diags) == 0 {
			if res.NotApplicable == nil {
				res.NotApplicable = map[string]string{}
			}
			res.NotApplicable[rules[i].ID] = r
		}
	}
	res.Diagnostics = append(res.Diagnostics, checkIgnores(s, rules)...)
	spec.SortDiagnostics(res.Diagnostics)
	if len(res.Diagnostics) == 0 {
		res.Diagnostics = nil
	}
	return res
}

// slowFirst ranks the rules that take longest on a large fabric (measured
// at 16,384 hosts: BUF-1, SAFE-2, MTU-4, BUF-2, QOS-2 in that order) before
// the others, so that the goroutines start on them and none is left with
// one of them alone at the end. The order the rules run in does not show
// in the result.
func slowFirst(id string) int {
	switch id {
	case "BUF-1":
		return 0
	case "SAFE-2":
		return 1
	case "MTU-4":
		return 2
	case "BUF-2":
		return 3
	case "QOS-2":
		return 4
	}
	return 5
}

// checkIgnores warns about lint_ignore entries naming rules that do not exist.
func checkIgnores(s *spec.Spec, rules []Rule) hcl.Diagnostics {
	ids := make([]string, len(rules))
	known := map[string]bool{}
	for i, r := range rules {
		ids[i] = r.ID
		known[r.ID] = true
	}
	var diags hcl.Diagnostics
	check := func(ig spec.LintIgnores, src spec.Source) {
		if len(ig) == 0 {
			return // most objects: no lint_ignore
		}
		keys := make([]string, 0, len(ig))
		for k := range ig {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if known[k] {
				continue
			}
			detail := fmt.Sprintf("lint_ignore names rule %q, which does not exist. Rules: %s.", k, strings.Join(ids, ", "))
			if sug := spec.Suggest(k, ids); sug != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sug)
			}
			rng := src.Attr("lint_ignore")
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unknown lint rule", Detail: detail, Subject: &rng})
		}
	}
	check(s.Fabric.Ignore, s.Fabric.Src)
	for _, c := range s.Classes {
		check(c.Ignore, c.Src)
	}
	for _, sw := range s.Switches {
		check(sw.Ignore, sw.Src)
		for _, p := range sw.Ports {
			check(p.Ignore, p.Src)
		}
	}
	for _, h := range s.Hosts {
		check(h.Ignore, h.Src)
		for _, n := range h.NICs {
			check(n.Ignore, n.Src)
		}
	}
	for _, l := range s.Links {
		check(l.Ignore, l.Src)
	}
	return diags
}

// Topology is the spec's link graph for the rules. Links the loader
// resolved carry their ends (spec.Link.EndA, Port.Link, NIC.Link); the
// name index is built on first use only, for links built by hand: at
// 16,384 hosts it held 490k "node:port" strings nothing else needed.
type Topology struct {
	spec     *spec.Spec
	once     sync.Once
	portLink map[string]*spec.Link
}

// NewTopology prepares the spec's link graph.
func NewTopology(s *spec.Spec) *Topology { return &Topology{spec: s} }

// PortLink is the link on "switch:port" or "host:nic", or nil.
func (t *Topology) PortLink(node, port string) *spec.Link {
	t.once.Do(func() {
		t.portLink = make(map[string]*spec.Link, 2*len(t.spec.Links))
		for _, l := range t.spec.Links {
			t.portLink[l.A.String()] = l
			t.portLink[l.B.String()] = l
		}
	})
	return t.portLink[node+":"+port]
}

// End is one end of a link resolved to its model objects.
type End struct {
	EP     spec.Endpoint
	Switch *spec.Switch // set for switch ends
	Port   *spec.Port
	Host   *spec.Host // set for host ends
	NIC    *spec.NIC
}

// Address is the end's model address, e.g. switch.leaf1.port.Ethernet0.
func (e End) Address() string {
	if e.Switch != nil {
		return "switch." + e.Switch.Name + ".port." + e.Port.Name
	}
	return "host." + e.Host.Name + ".nic." + e.NIC.Name
}

// Scopes are the lint_ignore maps of the end, innermost first.
func (e End) Scopes(l *spec.Link) []spec.LintIgnores {
	if e.Switch != nil {
		return []spec.LintIgnores{e.Port.Ignore, e.Switch.Ignore, l.Ignore}
	}
	return []spec.LintIgnores{e.NIC.Ignore, e.Host.Ignore, l.Ignore}
}

// Ends resolves both ends of a link.
func Ends(s *spec.Spec, l *spec.Link) (End, End) {
	a, b := End{EP: l.A}, End{EP: l.B}
	a.Switch, a.Port, a.Host, a.NIC = l.EndA()
	b.Switch, b.Port, b.Host, b.NIC = l.EndB()
	if (a.Port == nil && a.NIC == nil) || (b.Port == nil && b.NIC == nil) {
		return resolveEnd(s, l.A), resolveEnd(s, l.B) // a link the loader did not resolve
	}
	return a, b
}

func resolveEnd(s *spec.Spec, ep spec.Endpoint) End {
	e := End{EP: ep}
	if ep.Kind == spec.KindSwitch {
		e.Switch = s.Switch(ep.Node)
		e.Port = e.Switch.Port(ep.Port)
	} else {
		e.Host = s.Host(ep.Node)
		e.NIC = e.Host.NIC(ep.Port)
	}
	return e
}
