package lint

// Silencing and grouping of findings: the lint_ignore checks rules make for
// the parts of an aggregated finding, findings whose subject is one shared
// setting reported once, and the list phrasing of their messages.

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/spec"
	"github.com/hashicorp/hcl/v2"
)

// silencedFor reports whether a lint_ignore in one of the scopes silences
// the running rule for one part of an aggregated finding, and counts it as
// suppressed the way Report counts a silenced finding. Rules that fold many
// objects (ports, switches) into one finding use it to leave out the objects
// whose own blocks ignore the rule; the fabric's lint_ignore is left to
// Report, which silences the aggregated finding as a whole.
func (c *Context) silencedFor(scopes ...spec.LintIgnores) bool {
	for _, sc := range scopes {
		if _, ok := sc[c.rule.ID]; ok {
			c.suppressed++
			return true
		}
	}
	return false
}

// silencedBy reports whether a lint_ignore in scopes (or the fabric's) silences
// the running rule, and counts the suppression as Report would.
func (c *Context) silencedBy(scopes []spec.LintIgnores) bool {
	return c.silencedFor(append(scopes, c.Spec.Fabric.Ignore)...)
}

// findingGroups collects findings whose subject is one shared setting (a
// switch-wide or fabric-wide value that many ports, NICs or links inherit)
// and reports each setting once, naming how many objects it affects. A
// setting held by a single object is reported as a plain finding. Each
// object's own lint_ignore still silences its part.
type findingGroups struct {
	order []groupKey
	m     map[groupKey]*findingGroup
}

type groupKey struct {
	rng  hcl.Range
	kind string
}

type findingGroup struct {
	sev     Severity
	summary string
	src     settingOrigin
	noun    string // plural noun for the objects, e.g. "links", "NICs" (singular: drop the "s")
	items   []groupItem
}

type groupItem struct {
	label   string // short name, e.g. "leaf1:Ethernet0--gpu01:ens1f0"
	address string
	scopes  []spec.LintIgnores
	detail  string
}

// add records one object affected by the setting at o. kind separates
// different problems with the same setting.
func (g *findingGroups) add(c *Context, kind string, sev Severity, summary string, o settingOrigin, noun string, it groupItem) {
	if c.silencedBy(it.scopes) {
		return
	}
	if g.m == nil {
		g.m = map[groupKey]*findingGroup{}
	}
	k := groupKey{o.Range, kind}
	fg := g.m[k]
	if fg == nil {
		fg = &findingGroup{sev: sev, summary: summary, src: o, noun: noun}
		g.m[k] = fg
		g.order = append(g.order, k)
	}
	fg.items = append(fg.items, it)
}

// groupMaxListed bounds the objects a grouped finding names.
const groupMaxListed = 5

func (g *findingGroups) flush(c *Context) {
	for _, k := range g.order {
		fg := g.m[k]
		first := fg.items[0]
		if len(fg.items) == 1 || fg.src.Level == spec.FromObject {
			for _, it := range fg.items {
				c.Report(Finding{Severity: fg.sev, Subject: fg.src.Range, Address: it.address, Scopes: it.scopes, Summary: fg.summary, Detail: it.detail})
			}
			continue
		}
		var names []string
		for _, it := range fg.items[1:] {
			if len(names) == groupMaxListed {
				names = append(names, fmt.Sprintf("and %d more", len(fg.items)-1-groupMaxListed))
				break
			}
			names = append(names, it.label)
		}
		noun := fg.noun
		if len(fg.items) == 2 {
			noun = strings.TrimSuffix(noun, "s")
		}
		detail := fmt.Sprintf("%s\n\nThe same %s also affects %d more %s: %s.", first.detail, fg.src.What, len(fg.items)-1, noun, strings.Join(names, ", "))
		c.Report(Finding{Severity: fg.sev, Subject: fg.src.Range, Address: fg.src.Owner, Scopes: fg.src.Scopes, Summary: fg.summary, Detail: detail})
	}
	g.order, g.m = nil, nil
}

// joinCapped joins names, naming at most groupMaxListed.
func joinCapped(names []string) string { return capList(names, groupMaxListed) }

// capList joins items, listing at most max and counting the rest.
func capList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// plural returns "1 port" or "3 ports" ("2 switches").
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "ch") || strings.HasSuffix(word, "s") || strings.HasSuffix(word, "x") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
