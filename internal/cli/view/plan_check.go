package view

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/plan"
)

// checkLine is a device's verdict of plan --check-on-device in one line,
// without its mark: "accepted by the device", "refused at step 2 of 5
// (...): line → the device's text", "not checked on device: why",
// "check failed: what".
func checkLine(d *plan.DevicePlan) string {
	v := d.Check
	switch v.Status {
	case drivers.CheckAccepted:
		return "accepted by the device, nothing committed, read back unchanged"
	case drivers.CheckRefused:
		where := "refused"
		if v.Step > 0 {
			where = fmt.Sprintf("refused at step %d of %d (%s)", v.Step, len(d.Steps), v.Summary)
		}
		return fmt.Sprintf("%s: %q → %s", where, v.Line, deviceText(v.Message))
	case drivers.CheckNotChecked:
		return "not checked on device: " + v.Message
	}
	s := "check failed: " + deviceText(v.Message)
	if v.Kept != "" {
		s += " (left on the device: " + v.Kept + ")"
	}
	return s
}

// deviceText joins a device's multi-line text with " / ", blank lines
// and caret lines dropped.
func deviceText(s string) string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r", ""), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "^" {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " / ")
}

// checkedDevices are the devices with a verdict, in plan order.
func checkedDevices(p *plan.Plan) []*plan.DevicePlan {
	var out []*plan.DevicePlan
	for _, d := range p.Devices {
		if d.Check != nil {
			out = append(out, d)
		}
	}
	return out
}

// writeChecks is the human view's section of plan --check-on-device:
// one line per device with changes.
func writeChecks(h *humanWriter, p *plan.Plan, st Style) {
	ds := checkedDevices(p)
	if len(ds) == 0 {
		return
	}
	h.line("Checked on the devices (--check-on-device; nothing was committed):")
	for _, d := range ds {
		mark := apply(st.Add, "✔")
		switch d.Check.Status {
		case drivers.CheckRefused, drivers.CheckFailed:
			mark = apply(st.Error, "✘")
		case drivers.CheckNotChecked:
			mark = apply(st.Faint, "-")
		}
		h.line("  %s %s: %s", mark, deviceTitle(d), checkLine(d))
	}
	if n := len(p.Refused()); n > 0 {
		h.line("")
		h.line("%s", apply(st.Error, fmt.Sprintf("Error: %s refused the planned change: fix the spec (or the device) and plan again; nothing was applied.", plural(n, "device", "devices"))))
	}
	h.line("")
}
