package plan

import (
	"slices"
	"strconv"

	"github.com/fabctl/fabctl/intent"
)

// Unmanaged is a setting the spec leaves as the device runs it (spec
// unmanaged on the switch, host, nic or infiniband block): not part of Desired, never
// a change, rendered or sent, and never checked. The plan lists every
// such setting the spec would otherwise set or the device has.
type Unmanaged struct {
	Path string `json:"path"`
	// Live is the device's value; Absent: the device does not have the
	// setting (Live ""). Spec is the value the spec would set without
	// unmanaged ("" none).
	Live   string `json:"live"`
	Absent bool   `json:"absent,omitempty"`
	Spec   string `json:"spec,omitempty"`
	// Differs: without unmanaged, the plan would change the setting.
	Differs bool `json:"differs"`
	// Reason is the spec's reason.
	Reason string `json:"reason"`
}

// unmanagedOf returns the spec's unmanaged settings of a device's intent
// as a matcher (intent's Leaves), nil when the device has none.
func unmanagedOf(in any) func(path string) (string, bool) {
	if u, ok := in.(intent.Unmanager); ok && u.HasUnmanaged() {
		return u.Leaves
	}
	return nil
}

// leaveUnmanaged takes the settings held (unmanaged) out of a device
// plan: its changes and tolerated values under them become Unmanaged
// entries, as does every other desired setting under them, and the
// desired state returned no longer names them, so nothing is rendered,
// sent or verified for them.
func leaveUnmanaged(dp *DevicePlan, held func(string) (string, bool), desired, live intent.State) intent.State {
	listed := map[string]bool{}
	keep := func(cs []intent.AttrChange, differs bool) []intent.AttrChange {
		out := cs[:0:0]
		for _, c := range cs {
			why, ok := held(c.Path)
			if !ok {
				out = append(out, c)
				continue
			}
			lv, absent := liveValue(live, c.Path)
			dp.Unmanaged = append(dp.Unmanaged, Unmanaged{Path: c.Path, Live: lv, Absent: absent, Spec: desired[c.Path], Differs: differs, Reason: why})
			listed[c.Path] = true
		}
		return out
	}
	dp.Changes = keep(dp.Changes, true)
	dp.Tolerated = keep(dp.Tolerated, false)
	out := make(intent.State, len(desired))
	for k, v := range desired {
		why, ok := held(k)
		if !ok {
			out[k] = v
			continue
		}
		if !listed[k] {
			lv, absent := liveValue(live, k)
			dp.Unmanaged = append(dp.Unmanaged, Unmanaged{Path: k, Live: lv, Absent: absent, Spec: v, Reason: why})
		}
	}
	// Drift on a setting now unmanaged is the device's to have.
	drift := dp.Drift[:0:0]
	for _, c := range dp.Drift {
		if _, ok := held(c.Path); !ok {
			drift = append(drift, c)
		}
	}
	dp.Drift = drift
	slices.SortFunc(dp.Unmanaged, func(a, b Unmanaged) int { return naturalCmp(a.Path, b.Path) })
	return out
}

// liveValue is a setting's live value, and whether the device lacks it.
func liveValue(live intent.State, path string) (string, bool) {
	v, ok := live[path]
	if !ok || v == intent.NotSet {
		return "", true
	}
	return v, false
}

// unmanagedPaths are the paths a device plan lists as unmanaged, nil
// when none.
func (d *DevicePlan) unmanagedPaths() map[string]bool {
	if len(d.Unmanaged) == 0 {
		return nil
	}
	m := make(map[string]bool, len(d.Unmanaged))
	for _, u := range d.Unmanaged {
		m[u.Path] = true
	}
	return m
}

// UnmanagedDiffering are the device's unmanaged settings whose live value
// is not what the spec would set: what the plan leaves as the device runs
// it.
func (d *DevicePlan) UnmanagedDiffering() []Unmanaged {
	var out []Unmanaged
	for _, u := range d.Unmanaged {
		if u.Differs {
			out = append(out, u)
		}
	}
	return out
}

// unmanages is held(path), false for a device without unmanaged settings.
func unmanages(held func(string) (string, bool), path string) (string, bool) {
	if held == nil {
		return "", false
	}
	return held(path)
}

// Line is how plans, validate and JUnit reports name an unmanaged
// setting: "trust: unmanaged: left as the device runs it (both): <reason>".
func (u Unmanaged) Line() string {
	return u.Path + ": unmanaged: left as the device runs it (" + u.LiveText() + "): " + u.Reason
}

// LiveText is the device's value as plans quote one ("3,4", `""`), or
// "absent".
func (u Unmanaged) LiveText() string {
	if u.Absent {
		return "absent"
	}
	if u.Live == "" {
		return `""`
	}
	for _, r := range u.Live {
		if r == ' ' || r == '"' || r == '\\' || !strconv.IsPrint(r) {
			return strconv.Quote(u.Live)
		}
	}
	return u.Live
}

// UnmanagedCounts are the plan's unmanaged settings that differ from the
// spec, and the devices they are on.
func (p *Plan) UnmanagedCounts() (settings, devices int) {
	for _, d := range p.Devices {
		if d.Error != "" {
			continue
		}
		if n := len(d.UnmanagedDiffering()); n > 0 {
			settings += n
			devices++
		}
	}
	return settings, devices
}

// UnmanagedMoved are the unmanaged settings whose value in live (read
// back after an apply) is not the one the plan read: the apply changed a
// setting the spec leaves to the device (a driver step that rewrites a
// whole object, such as a policy holding another queue). Before is the
// value now ("" absent), After the one the device ran (apply restores
// it).
func (d *DevicePlan) UnmanagedMoved(live intent.State) []intent.AttrChange {
	var out []intent.AttrChange
	for _, u := range d.Unmanaged {
		now, absent := liveValue(live, u.Path)
		if now == u.Live && absent == u.Absent {
			continue
		}
		c := intent.AttrChange{Path: u.Path, Action: intent.Update, Before: now, After: u.Live}
		switch {
		case absent:
			c.Action = intent.Create
		case u.Absent:
			c.Action = intent.Delete
		}
		out = append(out, c)
	}
	return out
}
