package intent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
)

// State is a device's normalised state: setting path -> canonical value.
// Paths are vendor-neutral ("port/Ethernet0/pfc", "tc/3/ecn/min"); values
// are canonical strings (bytes as integers, durations in ms, priority sets
// as "3,4"). Compile+Flatten give the desired State; a driver's Read gives
// the live State in the same terms.
type State map[string]string

// Keys returns the paths in order.
func (s State) Keys() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Fingerprint is a SHA-256 over the sorted state: plans record the
// fingerprint of what they observed, apply refuses when it moved.
func (s State) Fingerprint() string {
	h := sha256.New()
	for _, k := range s.Keys() {
		fmt.Fprintf(h, "%d:%s=%d:%s\n", len(k), k, len(s[k]), s[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Flatten returns a switch's desired State.
func (sw *Switch) Flatten() State {
	st := State{}
	st["trust"] = sw.Trust
	if sw.Trust == "dscp" && sw.Transport != "infiniband" {
		for d, tc := range sw.DSCPToTC {
			st[fmt.Sprintf("dscp/%d", d)] = strconv.Itoa(tc)
		}
	}
	flattenTCs(st, "", sw.TCs)
	if sw.Watchdog.Enabled {
		st["pfcwd/detect"] = durString(sw.Watchdog.Detect)
		st["pfcwd/restore"] = durString(sw.Watchdog.Restore)
		st["pfcwd/poll"] = durString(sw.Watchdog.Poll)
		st["pfcwd/action"] = sw.Watchdog.Action
	}
	if sw.Headroom > 0 {
		st["buffer/headroom"] = strconv.FormatInt(int64(sw.Headroom), 10)
	}
	for _, p := range sw.Ports {
		pre := "port/" + p.Name + "/"
		st[pre+"mtu"] = strconv.Itoa(p.MTU)
		st[pre+"pfc"] = intsString(p.PFC)
		st[pre+"pfcwd"] = boolString(p.Watchdog)
		st[pre+"pause"] = boolString(p.Pause)
		if p.Trust != sw.Trust {
			st[pre+"trust"] = p.Trust
		}
		if p.CableLength > 0 {
			st[pre+"cable"] = strconv.FormatFloat(float64(p.CableLength), 'f', -1, 64) + "m"
		}
	}
	return st
}

func flattenTCs(st State, pre string, tcs []TC) {
	for _, tc := range tcs {
		p := fmt.Sprintf("%stc/%d/", pre, tc.TC)
		st[p+"lossless"] = boolString(tc.Lossless)
		if tc.Strict {
			st[p+"sched"] = "strict"
		} else {
			st[p+"sched"] = "ets"
			st[p+"bandwidth"] = strconv.Itoa(tc.Bandwidth)
		}
		if tc.ECN != nil {
			st[p+"ecn/min"] = strconv.FormatInt(int64(tc.ECN.Min), 10)
			st[p+"ecn/max"] = strconv.FormatInt(int64(tc.ECN.Max), 10)
			st[p+"ecn/probability"] = strconv.FormatFloat(tc.ECN.Probability, 'f', -1, 64)
		}
	}
}

// Flatten returns a host's desired State.
func (h *Host) Flatten() State {
	st := State{}
	st["irqbalance"] = h.IRQBalance
	if h.NCCLEnvFile != "" {
		for k, v := range h.NCCL {
			st["nccl/"+k] = v
		}
	}
	for _, n := range h.NICs {
		pre := "nic/" + n.Name + "/"
		st[pre+"mtu"] = strconv.Itoa(n.MTU)
		addrs := append([]string(nil), n.Addresses...)
		sort.Strings(addrs)
		st[pre+"addresses"] = strings.Join(addrs, ",")
		if n.RoCEMode == "" {
			continue // iWARP/IB: no DCB on the host
		}
		st[pre+"trust"] = n.Trust
		if n.Trust == "dscp" {
			for d, tc := range n.DSCPToTC {
				st[fmt.Sprintf("%sdscp/%d", pre, d)] = strconv.Itoa(tc)
			}
		}
		st[pre+"pfc"] = intsString(n.PFC)
		st[pre+"pause"] = boolString(n.Pause)
		flattenTCs(st, pre, n.TCs)
		st[pre+"ecn"] = intsString(n.ECNPrios)
		st[pre+"roce_mode"] = n.RoCEMode
		st[pre+"tos"] = strconv.Itoa(h.RDMATos)
		if n.NUMA.Auto {
			st[pre+"irq_cpus"] = "auto"
		} else {
			st[pre+"irq_cpus"] = n.NUMA.CPUs.String()
		}
	}
	return st
}

// Field says how the diff treats the paths matching Pattern (path.Match
// syntax, e.g. "tc/*/ecn/min").
type Field struct {
	Pattern string
	// Tolerance is the relative difference (0.05 = 5 %) under which two
	// numeric values are equal: hardware quantises thresholds (a Spectrum
	// switch stores 146.48 KB for 150 KB).
	Tolerance float64
	// Disruptive marks changes that interrupt traffic, with the reason.
	Disruptive string
}

// FieldFor returns the first field whose pattern matches the path.
func FieldFor(fields []Field, p string) (Field, bool) {
	for _, f := range fields {
		if ok, _ := path.Match(f.Pattern, p); ok {
			return f, true
		}
	}
	return Field{}, false
}

// Equal reports whether two values are the same under a field's tolerance.
func (f Field) Equal(a, b string) bool {
	if a == b {
		return true
	}
	if f.Tolerance <= 0 {
		return false
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	den := math.Max(math.Abs(x), math.Abs(y))
	return den == 0 || math.Abs(x-y)/den <= f.Tolerance
}

// Action is what a plan does to one setting.
type Action string

// Actions, with Terraform's symbols.
const (
	Create Action = "+"
	Update Action = "~"
	Delete Action = "-"
)

// AttrChange is one setting that differs.
type AttrChange struct {
	Path       string `json:"path"`
	Action     Action `json:"action"`
	Before     string `json:"before,omitempty"`
	After      string `json:"after,omitempty"`
	Disruptive string `json:"disruptive,omitempty"`
}

// owner is the scope a path belongs to: "port/Ethernet0" for port paths,
// "nic/ens1f0" for NIC paths, the first segment otherwise ("tc", "dscp").
// A live path absent from the desired state is removed only when desired
// owns its scope: fabctl owns the QoS tables as a whole, but never touches
// a port or NIC the spec does not name.
func owner(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) >= 2 && (parts[0] == "port" || parts[0] == "nic") {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// Diff compares desired with live state and returns the changes that make
// live equal desired, sorted by path.
func Diff(desired, live State, fields []Field) []AttrChange {
	var out []AttrChange
	owned := map[string]bool{}
	for k := range desired {
		owned[owner(k)] = true
	}
	for _, k := range desired.Keys() {
		want := desired[k]
		f, _ := FieldFor(fields, k)
		have, ok := live[k]
		switch {
		case !ok:
			out = append(out, AttrChange{Path: k, Action: Create, After: want, Disruptive: f.Disruptive})
		case !f.Equal(want, have):
			out = append(out, AttrChange{Path: k, Action: Update, Before: have, After: want, Disruptive: f.Disruptive})
		}
	}
	for _, k := range live.Keys() {
		if _, ok := desired[k]; ok || !owned[owner(k)] {
			continue
		}
		f, _ := FieldFor(fields, k)
		out = append(out, AttrChange{Path: k, Action: Delete, Before: live[k], Disruptive: f.Disruptive})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
