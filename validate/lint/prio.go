package lint

// Priority sets (PFC enable sets, lists of priorities): arithmetic and
// how messages write them.

import (
	"strconv"
	"strings"
)

// prioSetString renders a priority set: "{3}", "{3, 4}", "{}".
func prioSetString(p []int) string {
	return "{" + joinIntList(p, ", ") + "}"
}

// hclIntList renders a set as the HCL list that sets it: "[3, 4]".
func hclIntList(p []int) string {
	return "[" + joinIntList(p, ", ") + "]"
}

func joinIntList(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, sep)
}

// prioSetMinus returns the elements of a (sorted) not in b.
func prioSetMinus(a, b []int) []int {
	var in [8]bool
	for _, x := range b {
		if x >= 0 && x < 8 {
			in[x] = true
		}
	}
	var out []int
	for _, x := range a {
		if x < 0 || x >= 8 || !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func prioSetEqual(a, b []int) bool {
	return len(prioSetMinus(a, b)) == 0 && len(prioSetMinus(b, a)) == 0
}

// prioList renders priorities as "3" or "3, 4".
func prioList(p []int) string { return joinIntList(p, ", ") }

// prioNoun is "priority 3" or "priorities 3, 4".
func prioNoun(p []int) string {
	if len(p) == 1 {
		return "priority " + prioList(p)
	}
	return "priorities " + prioList(p)
}

// containsInt reports whether v is in s.
func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
