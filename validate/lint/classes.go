package lint

// Traffic classes as findings describe them: which class a DSCP code point
// lands in, the lossless classes on a set of priorities, built-in default
// classes and ECN profiles.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// losslessClassNames names the lossless classes on priority p.
func losslessClassNames(s *spec.Spec, prios []int) string {
	var names []string
	for _, c := range s.Classes {
		if !c.Lossless {
			continue
		}
		for _, p := range prios {
			if c.Priority == p {
				names = append(names, fmt.Sprintf("%q (priority %d)", c.Name, c.Priority))
				break
			}
		}
	}
	if len(names) == 0 {
		return "no class"
	}
	if len(names) == 1 {
		return "class " + names[0]
	}
	return "classes " + strings.Join(names, ", ")
}

// classOfDSCP returns, per code point, the first class that lists it (nil
// for code points no class lists).
func classOfDSCP(s *spec.Spec) [64]*spec.Class {
	var out [64]*spec.Class
	for _, c := range s.Classes {
		for _, d := range c.DSCP {
			if d >= 0 && d < 64 && out[d] == nil {
				out[d] = c
			}
		}
	}
	return out
}

// fabricDefaultClass returns the class that receives unclaimed code points, or nil.
func fabricDefaultClass(s *spec.Spec) *spec.Class {
	for _, c := range s.Classes {
		if c.Default {
			return c
		}
	}
	return nil
}

// describeDSCP names the class a code point lands in under the fabric map.
func describeDSCP(s *spec.Spec, byDSCP [64]*spec.Class, d int) string {
	if c := byDSCP[d]; c != nil {
		return fmt.Sprintf("class %q, priority %d", c.Name, c.Priority)
	}
	if c := fabricDefaultClass(s); c != nil {
		return fmt.Sprintf("default class %q, priority %d", c.Name, c.Priority)
	}
	return "no class, priority 0"
}

// dscpClassName names the class a code point lands in under the fabric map.
func dscpClassName(s *spec.Spec, byDSCP [64]*spec.Class, d int) string {
	if c := byDSCP[d]; c != nil {
		return fmt.Sprintf("class %q", c.Name)
	}
	if c := fabricDefaultClass(s); c != nil {
		return fmt.Sprintf("default class %q", c.Name)
	}
	return "no class"
}

// classHasDSCP reports whether c lists code point d.
func classHasDSCP(c *spec.Class, d int) bool {
	for _, x := range c.DSCP {
		if x == d {
			return true
		}
	}
	return false
}

// sortedIntKeys returns a map's int keys in order.
func sortedIntKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// isDefaultClass reports whether the class is one of the built-in default
// classes (the spec declares no class block): their source is the fabric
// block, so findings about them point at a fabric attribute instead.
func isDefaultClass(s *spec.Spec, c *spec.Class) bool {
	return c.Src.Block == s.Fabric.Src.Block && len(c.Src.Attrs) == 0
}

// ecnString renders an ECN profile as "150KB/1.5MB/100%".
func ecnString(e *spec.ECNProfile) string {
	return fmt.Sprintf("%s/%s/%s%%", e.Min, e.Max, strconv.FormatFloat(e.Probability, 'f', -1, 64))
}
