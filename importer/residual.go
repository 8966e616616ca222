package importer

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// residual is what still differs between a candidate spec and one
// device, as plan would diff it.
type residual struct {
	dev     *device
	desired intent.State
	changes []change
}

type change struct {
	intent.AttrChange
	reason string
	// unmanaged: written into its block's unmanaged map (unmanage).
	unmanaged bool
}

// residuals diffs each read device's desired State under the candidate
// spec against its live State the way plan does: without the settings
// its driver cannot express, with the driver's tolerances.
func residuals(cand *spec.Spec, devs []*device) []*residual {
	f := intent.Compile(cand)
	ins := map[string]any{}
	for _, sw := range f.Switches {
		ins[sw.Addr()] = sw
	}
	for _, h := range f.Hosts {
		ins[h.Addr()] = h
	}
	var out []*residual
	for _, d := range devs {
		if d.live == nil {
			continue
		}
		in, ok := ins[d.addr]
		if !ok {
			continue
		}
		var desired intent.State
		switch x := in.(type) {
		case *intent.Switch:
			desired = x.Flatten()
		case *intent.Host:
			desired = x.Flatten()
		}
		desired = clean(desired)
		var un map[string]string
		if d.obs.Unexpressible != nil {
			un = d.obs.Unexpressible(in, desired)
			for k := range un {
				delete(desired, k)
			}
		}
		leaves := in.(intent.Unmanager).Leaves
		r := &residual{dev: d, desired: desired}
		for _, c := range intent.Diff(desired, d.live, d.obs.Fields) {
			if _, skip := un[c.Path]; skip {
				continue
			}
			if _, left := leaves(c.Path); left {
				continue // the spec leaves it unmanaged, as plan does
			}
			r.changes = append(r.changes, change{AttrChange: c})
		}
		if len(r.changes) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// absorb writes overrides for the residual's changes the spec can say on
// the device, port or NIC; every other change gets its reason. It reports
// whether it wrote anything new.
func absorb(r *residual, doc *document) bool {
	d := r.dev
	ok, why := doc.writable(d.kind, d.name)
	grew := false
	dscpDone := map[string]bool{}
	for i := range r.changes {
		c := &r.changes[i]
		if !ok {
			c.reason = why
			continue
		}
		var reason string
		var wrote bool
		if d.kind == intent.KindSwitch {
			wrote, reason = absorbSwitch(d, r, c, dscpDone)
		} else {
			wrote, reason = absorbHost(d, r, c, dscpDone)
		}
		c.reason = reason
		grew = grew || wrote
	}
	return grew
}

// setOv records an override; true when it is new or changed.
func setOv(d *device, sub, attr string, v cty.Value, c *change) bool {
	var old value
	var had bool
	if sub == "" {
		old, had = d.ov.attrs[attr]
	} else {
		old, had = d.ov.sub[sub][attr]
	}
	if had && old.v.RawEquals(v) {
		return false
	}
	d.ov.set(sub, attr, value{v: v, path: c.Path, live: c.Before})
	return true
}

// scopeReason is why a change on a fabric-wide setting stays.
func scopeReason(c *change) string {
	switch {
	case strings.Contains(c.Path, "tc/"):
		return "traffic classes (ETS, lossless, ECN thresholds, rate caps) are fabric-wide in the spec language: this device's value differs from the fabric's class and no per-device attribute can say it"
	case strings.HasPrefix(c.Path, "pfcwd/"):
		return "the PFC watchdog's timers and action are fabric-wide in the spec language (a port can only turn it on or off)"
	case c.Action == intent.Create:
		return "the device does not have this setting, and the spec cannot say it is absent on this device"
	}
	return "the spec has no per-device or per-port attribute for this setting"
}

// dscpReason is why a DSCP map entry stays: the device has no DSCP map
// (it does not classify on DSCP), or its value is not a priority.
func dscpReason(live intent.State, prefix string) string {
	if _, ok := live[prefix+"dscp/default"]; !ok {
		return "the device has no DSCP map (it does not classify on DSCP), and the spec cannot say so: its trust is dscp or pcp"
	}
	return "the device's value is not a priority 0..7"
}

// valueReason is why a value the device has stays: not one the spec's
// attribute takes.
func valueReason(c *change, live string) string {
	if strings.HasSuffix(c.Path, "trust") {
		if t, detail, ok := strings.Cut(live, " ("); ok && validTrust(t) {
			// The driver read a classification on t that is not the
			// one the spec's classes make (NX-OS: another input policy).
			return fmt.Sprintf("the device classifies on %s, but not as the spec's classes would (%s: the plan binds fabctl's classification instead", t, detail)
		}
		return fmt.Sprintf("trust %q is not one the spec takes (dscp or pcp)", live)
	}
	return fmt.Sprintf("the device's value %q is not one the spec's attribute takes", live)
}

func absorbSwitch(d *device, r *residual, c *change, dscpDone map[string]bool) (bool, string) {
	live := d.live[c.Path]
	has := c.Action != intent.Create && live != intent.NotSet
	switch {
	case c.Path == "trust" && has && validTrust(live):
		return setOv(d, "", "trust", cty.StringVal(live), c), ""
	case c.Path == "trust" && has:
		return false, valueReason(c, live)
	case isDSCP(c.Path, ""):
		return absorbDSCP(d, r, "", dscpDone), dscpReason(d.live, "")
	case c.Path == "buffer/headroom" && has:
		if n, err := strconv.ParseInt(live, 10, 64); err == nil && n > 0 {
			return setOv(d, subKey("buffer", ""), "headroom", cty.StringVal(sizeText(live)), c), ""
		}
	case strings.HasPrefix(c.Path, "port/") && has:
		j := strings.LastIndexByte(c.Path, '/')
		port, attr := c.Path[len("port/"):j], c.Path[j+1:]
		// Only the spec's ports are diffed (plan never touches another).
		if attr == "pause" && live == "true" && pfcRuns(d.live, "port/"+port+"/") {
			return false, pauseWithPFC
		}
		if w, ok := portOverride(d, subKey("port", port), attr, live, c); ok {
			return w, "the port's " + attr + " depends on other settings that differ (" + attrHint(attr) + ")"
		}
		if attr == "mtu" || attr == "pfc" || attr == "pfcwd" || attr == "pause" || attr == "trust" {
			return false, valueReason(c, live)
		}
	}
	return false, scopeReason(c)
}

// pauseWithPFC is why import writes no `pause = true` where PFC runs too:
// intent compiles pause off wherever PFC is on (intent.NIC.Pause, the
// port's likewise) and lint's QOS-6 refuses the pair, so the override
// would be an error that changes nothing. Left out, the plan turns
// global pause off, which is what a lossless class needs.
const pauseWithPFC = "802.3x global pause runs together with PFC here; the spec cannot say both (lint QOS-6: the pair is rejected by the device or one silently wins, and link pause stops every class)"

// pfcRuns says whether the live state has PFC on some priority under
// prefix ("nic/eth1/", "port/Ethernet0/").
func pfcRuns(live intent.State, prefix string) bool {
	v, ok := prioSet(live[prefix+"pfc"])
	return ok && len(v) > 0
}

func attrHint(attr string) string {
	if attr == "pfcwd" {
		return "the watchdog runs only on a port with PFC"
	}
	return "see the other entries for this port"
}

func portOverride(d *device, sub, attr, live string, c *change) (bool, bool) {
	switch attr {
	case "mtu":
		if n, ok := atoi(live); ok && n >= 576 && n <= 65520 {
			return setOv(d, sub, "mtu", cty.NumberIntVal(int64(n)), c), true
		}
	case "pfc":
		if v, ok := prioSet(live); ok {
			return setOv(d, sub, "pfc", intsVal(v), c), true
		}
	case "pfcwd":
		if live == "true" || live == "false" {
			return setOv(d, sub, "pfc_watchdog", cty.BoolVal(live == "true"), c), true
		}
	case "pause":
		if live == "true" || live == "false" {
			return setOv(d, sub, "pause", cty.BoolVal(live == "true"), c), true
		}
	case "trust":
		if validTrust(live) {
			return setOv(d, sub, "trust", cty.StringVal(live), c), true
		}
	}
	return false, false
}

func absorbHost(d *device, r *residual, c *change, dscpDone map[string]bool) (bool, string) {
	live := d.live[c.Path]
	has := c.Action != intent.Create && live != intent.NotSet
	if c.Path == "irqbalance" && has && (live == "keep" || live == "stop") {
		return setOv(d, "", "irqbalance", cty.StringVal(live), c), ""
	}
	rest, ok := strings.CutPrefix(c.Path, "nic/")
	if !ok {
		return false, scopeReason(c)
	}
	nic, attr, ok := strings.Cut(rest, "/")
	if !ok {
		return false, scopeReason(c)
	}
	sub := subKey("nic", nic)
	if isDSCP(c.Path, "nic/"+nic+"/") {
		return absorbDSCP(d, r, nic, dscpDone), dscpReason(d.live, "nic/"+nic+"/")
	}
	if !has {
		return false, scopeReason(c)
	}
	switch attr {
	case "mtu", "vlan/mtu":
		if n, ok := atoi(live); ok && n >= 576 && n <= 65520 {
			return setOv(d, sub, "mtu", cty.NumberIntVal(int64(n)), c), ""
		}
	case "addresses", "vlan/addresses":
		if v, ok := prefixes(live); ok {
			return setOv(d, sub, "addresses", v, c), ""
		}
	case "trust":
		if validTrust(live) {
			return setOv(d, sub, "trust", cty.StringVal(live), c), ""
		}
	case "pfc":
		if v, ok := prioSet(live); ok {
			return setOv(d, sub, "pfc", intsVal(v), c), ""
		}
	case "pause":
		if live == "true" && pfcRuns(d.live, "nic/"+nic+"/") {
			return false, pauseWithPFC
		}
		if live == "true" || live == "false" {
			return setOv(d, sub, "pause", cty.BoolVal(live == "true"), c), ""
		}
	case "ecn":
		v, ok := prioSet(live)
		if !ok {
			break
		}
		if len(v) == 0 {
			return setOv(d, sub, "ecn", cty.False, c), ""
		}
		w1 := setOv(d, sub, "ecn", cty.True, c)
		w2 := setOv(d, sub, "dcqcn_priorities", intsVal(v), c)
		return w1 || w2, "DCQCN's priorities always include the RDMA classes' (spec dcqcn_priorities)"
	case "tos":
		if n, ok := atoi(live); ok && n >= 0 && n <= 255 {
			return setOv(d, "", "rdma_tos", cty.NumberIntVal(int64(n)), c), "rdma_tos is per host: this host's NICs differ from each other"
		}
	case "irq_cpus":
		if live == "auto" || (len(live) <= 4096 && cpuList.MatchString(live)) {
			return setOv(d, sub, "numa", cty.StringVal(live), c), ""
		}
	case "firmware_lldp":
		if live == "on" || live == "off" {
			return setOv(d, sub, "firmware_lldp", cty.BoolVal(live == "on"), c), ""
		}
	}
	return false, scopeReason(c)
}

// cpuList is a CPU list as sysfs writes one ("0-15,32-47"), bounded by
// length where it is used.
var cpuList = regexp.MustCompile(`^[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?)*$`)

// isDSCP says whether path is a DSCP map entry under prefix.
func isDSCP(path, prefix string) bool {
	rest, ok := strings.CutPrefix(path, prefix+"dscp/")
	if !ok {
		return false
	}
	if rest == "default" {
		return true
	}
	_, err := strconv.Atoi(rest)
	return err == nil
}

// absorbDSCP writes the device's (nic "" = the switch's) DSCP map entries
// that differ from what the candidate spec gives it, once per table.
func absorbDSCP(d *device, r *residual, nic string, done map[string]bool) bool {
	if done[nic] {
		return false
	}
	done[nic] = true
	prefix := ""
	if nic != "" {
		prefix = "nic/" + nic + "/"
	}
	live, ok := liveTable(d.live, prefix)
	if !ok {
		return false
	}
	want, ok := liveTable(r.desired, prefix)
	if !ok {
		return false
	}
	m := d.ov.dscp
	if nic != "" {
		m = d.ov.nicDSCP[nic]
		if m == nil {
			m = map[int]int{}
			d.ov.nicDSCP[nic] = m
		}
	}
	grew := false
	for cp := range live {
		if live[cp] >= 0 && live[cp] != want[cp] {
			if old, had := m[cp]; !had || old != live[cp] {
				m[cp] = live[cp]
				grew = true
			}
		}
	}
	return grew
}

func validTrust(s string) bool { return s == spec.TrustDSCP || s == spec.TrustPCP }

// prioSet parses a priority set in state form ("3,4", "" for none).
func prioSet(s string) ([]int, bool) {
	if s == "" {
		return []int{}, true
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, ok := atoi(strings.TrimSpace(f))
		if !ok || n < 0 || n > 7 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// prefixes parses an address list in state form ("10.0.0.1/31,...").
func prefixes(s string) (cty.Value, bool) {
	if s == "" {
		return cty.ListValEmpty(cty.String), true
	}
	var el []cty.Value
	for _, f := range strings.Split(s, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(f))
		if err != nil {
			return cty.NilVal, false
		}
		el = append(el, cty.StringVal(p.String()))
	}
	return cty.TupleVal(el), true
}
