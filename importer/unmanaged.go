package importer

import (
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// unmanage writes each of the residual's changes into the unmanaged map
// of the block that holds the setting (the switch's, the host's, or the
// NIC's for nic/X/...), with the reason import leaves it out: the
// written spec then leaves it as the device runs it (docs/spec.md
// #unmanaged), and plan lists it instead of changing it. A device whose
// block import cannot write into (for_each), a key the spec language
// has no setting for, or one the block already accepts not in effect
// stays a change. It reports whether it wrote anything.
func unmanage(r *residual, doc *document) bool {
	d := r.dev
	if ok, _ := doc.writable(d.kind, d.name); !ok {
		return false
	}
	wrote := false
	for i := range r.changes {
		c := &r.changes[i]
		sub, kind, key := "", d.kind, c.Path
		if d.kind == intent.KindHost {
			if rest, ok := strings.CutPrefix(c.Path, "nic/"); ok {
				if nic, rel, ok := strings.Cut(rest, "/"); ok {
					sub, kind, key = subKey("nic", nic), "nic", rel
				}
			}
		}
		if spec.UnmanagedKeyProblem(kind, key) != "" {
			continue
		}
		if _, accepted := doc.accepted(d, sub)[key]; accepted {
			continue
		}
		reason := c.reason
		if reason == "" {
			reason = "an override was written but the setting still differs (it depends on others that differ)"
		}
		m := d.ov.unmanaged[sub]
		if m == nil {
			m = map[string]string{}
			d.ov.unmanaged[sub] = m
		}
		m[key] = "imported: " + specReason(reason, d.live[c.Path])
		c.reason, c.unmanaged, wrote = reason, true, true
	}
	return wrote
}

// specReason is a left-out reason as the written spec says it: device
// output never goes into the spec, so a reason that quotes the device's
// value (or a part of it) is said without it; the report keeps the
// value.
func specReason(reason, live string) string {
	if live == "" {
		return reason
	}
	_, detail, _ := strings.Cut(live, " (")
	detail = strings.TrimSuffix(detail, ")")
	if strings.Contains(reason, live) || strings.Contains(reason, strconv.Quote(live)) || detail != "" && strings.Contains(reason, detail) {
		return "the device's value is not one the spec can say (fabctl import's report has it)"
	}
	return reason
}

// stillDiffers keeps the changes of before, each marked as unmanaged or
// not, and adds any change after (the diff of the spec with the
// unmanaged maps written) still has that before did not: what the
// written spec leaves out.
func stillDiffers(before, after []*residual) []*residual {
	had := map[string]bool{}
	for _, r := range before {
		for _, c := range r.changes {
			had[r.dev.addr+" "+c.Path] = true
		}
	}
	out := before
	for _, r := range after {
		var extra []change
		for _, c := range r.changes {
			if !had[r.dev.addr+" "+c.Path] {
				c.reason = "differs once the settings the spec cannot say are left unmanaged (they depend on each other)"
				extra = append(extra, c)
			}
		}
		if len(extra) > 0 {
			out = append(out, &residual{dev: r.dev, desired: r.desired, changes: extra})
		}
	}
	return out
}

// blockMaps are the inventory's own unmanaged and
// accept_not_in_effect maps of a device's block (sub "") or NIC.
func (doc *document) blockMaps(d *device, sub string) (unmanaged, accept spec.Acceptances) {
	switch d.kind {
	case intent.KindSwitch:
		if sw := doc.inv.Switch(d.name); sw != nil {
			return sw.Unmanaged, sw.Accept
		}
	case intent.KindHost:
		h := doc.inv.Host(d.name)
		if h == nil {
			return nil, nil
		}
		if sub == "" {
			return h.Unmanaged, h.Accept
		}
		if _, nic := splitSub(sub); h.NIC(nic) != nil {
			return h.NIC(nic).Unmanaged, h.NIC(nic).Accept
		}
	}
	return nil, nil
}

func (doc *document) accepted(d *device, sub string) spec.Acceptances {
	_, a := doc.blockMaps(d, sub)
	return a
}

// unmanagedVal is the unmanaged map written on a block: the inventory's
// own entries and import's.
func (doc *document) unmanagedVal(d *device, sub string) map[string]string {
	own, _ := doc.blockMaps(d, sub)
	out := make(map[string]string, len(own)+len(d.ov.unmanaged[sub]))
	for k, v := range own {
		out[k] = v
	}
	for k, v := range d.ov.unmanaged[sub] {
		out[k] = v
	}
	return out
}
