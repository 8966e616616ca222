package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// A spec port the switch does not have is refused at plan time: the
// driver's Read names the device's ports (drivers.FactPorts) when what it
// reads lists them, and a device with a missing port is not planned
// (Error), so apply refuses the whole run before touching any device
// instead of configuring some switches and failing on the one that
// lacks the port.

// missingPorts are the switch intent's ports that the live state's port
// inventory lacks, with the inventory; none when the driver reports no
// inventory or the intent is not a switch's.
func missingPorts(in any, live intent.State) (missing, inventory []string) {
	sw, ok := in.(*intent.Switch)
	if !ok || sw == nil {
		return nil, nil
	}
	inv, ok := drivers.Ports(live)
	if !ok {
		return nil, nil
	}
	have := make(map[string]bool, len(inv))
	for _, n := range inv {
		have[n] = true
	}
	for _, p := range sw.Ports {
		if !have[p.Name] {
			missing = append(missing, p.Name)
		}
	}
	return missing, inv
}

// portsError says which ports the device lacks and the nearest names it
// has.
func portsError(device string, missing, inventory []string) string {
	var parts []string
	for _, m := range missing {
		part := fmt.Sprintf("%q", m)
		if near := nearestNames(m, inventory, 3); len(near) > 0 {
			part += " (nearest: " + strings.Join(near, ", ") + ")"
		}
		parts = append(parts, part)
	}
	what := "port"
	if len(missing) > 1 {
		what = "ports"
	}
	return fmt.Sprintf("%s has no %s %s: the spec names a port the switch does not have; nothing is applied until the spec names its ports (or the switch has them)",
		device, what, strings.Join(parts, ", "))
}

// nearestNames are up to n names of inv closest to name: smallest edit
// distance first, then natural order; names further than half of name's
// length are left out.
func nearestNames(name string, inv []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, len(name)/2)
	var cs []cand
	for _, x := range inv {
		if d := editDistance(name, x, limit); d <= limit {
			cs = append(cs, cand{x, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return naturalCmp(a.name, b.name)
	})
	out := make([]string, 0, n)
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b (bytes), or more
// than limit once it exceeds it. Port names are short; written here
// rather than imported: the one use does not justify a dependency.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// portLocations names where the spec declares each missing port of a
// switch (its port block, or the link endpoint that implies it).
func portLocations(s *spec.Spec, switchName string, missing []string) string {
	sw := s.Switch(switchName)
	if sw == nil {
		return ""
	}
	var locs []string
	for _, m := range missing {
		if p := sw.Port(m); p != nil && p.Src.Block.Filename != "" {
			locs = append(locs, fmt.Sprintf("%s at %s:%d", m, p.Src.Block.Filename, p.Src.Block.Start.Line))
		}
	}
	if len(locs) == 0 {
		return ""
	}
	return " (" + strings.Join(locs, "; ") + ")"
}
