package drivers

import "context"

// The statuses of a DeviceCheck.
const (
	// CheckAccepted: the device took every line of the change list in
	// its non-committing path, and read back as it was before.
	CheckAccepted = "accepted"
	// CheckRefused: the device refused a line; Step, Line and Message
	// say which and in its own words. The device read back as it was.
	CheckRefused = "refused"
	// CheckNotChecked: the platform has no vendor-sourced non-committing
	// path fabctl can reach; Message says why and what is checked
	// instead.
	CheckNotChecked = "not-checked"
	// CheckFailed: the check could not run to its end (the connection
	// dropped, the device did not answer), or the device did not read
	// back as it was; Message says what happened and Kept names what the
	// device may still hold.
	CheckFailed = "failed"
)

// DeviceCheck is a device's own verdict on a planned change list, got
// through its non-committing path (an EOS configuration session that is
// aborted, SONiC GCU's dry run): what `fabctl plan --check-on-device`
// reports per device.
type DeviceCheck struct {
	Status string `json:"status"`
	// Method is what ran on the device ("configure session …, show
	// session-config diffs, abort"); "" when nothing ran.
	Method string `json:"method,omitempty"`
	// Step is the 1-based position, in the device's steps, of the step
	// the refusal answers (0: not known); Summary is that step's
	// summary and Line the payload line the device refused.
	Step    int    `json:"step,omitempty"`
	Summary string `json:"step_summary,omitempty"`
	Line    string `json:"line,omitempty"`
	// Message is the device's own text for a refusal (secret words
	// redacted), the reason a device was not checked, or what failed.
	Message string `json:"message,omitempty"`
	// Unchanged: after the check the device's configuration was read
	// back and is what it was before (false with CheckNotChecked: nothing
	// was sent).
	Unchanged bool `json:"unchanged"`
	// Kept names what a failed check may have left on the device (a
	// configuration session to abort) when it could not be cleared.
	Kept string `json:"kept,omitempty"`
}

// Checker is implemented by drivers that can ask a device whether it
// takes a change list without committing it. CheckOnDevice sends steps
// (the device's planned steps, without the save step) through the
// platform's non-committing path, leaves the device as it was and
// verifies that by reading its configuration back. It always returns a
// verdict: a platform without a sourced path returns CheckNotChecked
// with the reason; an error is CheckFailed with its message. t.Live is
// the state the planner read.
type Checker interface {
	CheckOnDevice(ctx context.Context, t Target, steps []Change) DeviceCheck
}

// NotChecked is the verdict of a platform without a non-committing path.
func NotChecked(why string) DeviceCheck { return DeviceCheck{Status: CheckNotChecked, Message: why} }

// RefusedAt fills a refusal's step from the line the device refused:
// the first step whose payload holds it (lines compared without their
// indentation), unless Step is already set.
func (c *DeviceCheck) RefusedAt(steps []Change) {
	if c.Step == 0 {
		for i, s := range steps {
			for _, l := range s.Payload {
				if trimmed(l) == trimmed(c.Line) {
					c.Step = i + 1
					break
				}
			}
			if c.Step != 0 {
				break
			}
		}
	}
	if c.Step > 0 && c.Step <= len(steps) {
		c.Summary = steps[c.Step-1].Summary
	}
}

func trimmed(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '\r') {
		j--
	}
	return s[i:j]
}
