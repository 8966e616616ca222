package spec

import (
	"sort"
	"strings"
)

// Acceptances are the settings a switch, host or NIC block accepts as not
// in effect: accept_not_in_effect = { "<setting>" = "<reason>" }. A
// setting of a lossless, RDMA or CNP class that the device cannot express
// fails plan and validate unless one of these accepts it; an accepted
// setting is reported as "accepted, not in effect", never as valid.
//
// A key is a setting path as plans print it, relative to the block (a
// NIC's keys leave out "nic/<name>/"): "pfc", "tc/3/lossless",
// "port/*/pfc". '*' matches any run of characters, '/' included (port
// names such as Ethernet1/1 hold one), so "*" accepts every setting; a key
// also accepts the settings below it ("dscp" accepts "dscp/26").
type Acceptances map[string]string

// Match returns the reason of the most specific key that accepts the
// setting path (relative to the block), and whether one does.
func (a Acceptances) Match(path string) (string, bool) {
	if len(a) == 0 {
		return "", false
	}
	best, found := "", false
	for k := range a {
		if !acceptMatch(k, path) {
			continue
		}
		// The longest key wins; equal lengths go by key order, so the
		// answer does not depend on map order.
		if !found || len(k) > len(best) || len(k) == len(best) && k < best {
			best, found = k, true
		}
	}
	if !found {
		return "", false
	}
	return a[best], true
}

// MatchNICFirst matches a host's setting path ("nic/eth1/pfc") against
// its NIC's keys (relative to the NIC: "pfc") first, then the host's
// (over the full path): how accept_not_in_effect and unmanaged are both
// tried.
func MatchNICFirst(path string, nic func(name string) Acceptances, host Acceptances) (string, bool) {
	if rest, ok := strings.CutPrefix(path, "nic/"); ok {
		if name, rel, ok := strings.Cut(rest, "/"); ok {
			if why, ok := nic(name).Match(rel); ok {
				return why, true
			}
		}
	}
	return host.Match(path)
}

// Keys returns the keys in order.
func (a Acceptances) Keys() []string {
	out := make([]string, 0, len(a))
	for k := range a {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// acceptMatch reports whether key accepts path: the key matches the
// whole path, or the path's leading segments.
func acceptMatch(key, path string) bool {
	if glob(key, path) {
		return true
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && glob(key, path[:i]) {
			return true
		}
	}
	return false
}

// glob matches s against a pattern whose only wildcard is '*' (any run of
// characters, '/' included). Iterative, with one backtrack point: linear
// in practice and never exponential.
func glob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// validAcceptKey reports what is wrong with a key ("" when nothing).
func validAcceptKey(k string) string {
	switch {
	case strings.TrimSpace(k) == "":
		return "is empty"
	case strings.HasPrefix(k, "/") || strings.HasSuffix(k, "/") || strings.Contains(k, "//"):
		return "is not a setting path (segments are separated by one '/', e.g. \"tc/3/lossless\")"
	}
	for _, r := range k {
		if r < 0x21 || r > 0x7e {
			return "holds a space or a character outside printable ASCII"
		}
	}
	return ""
}
