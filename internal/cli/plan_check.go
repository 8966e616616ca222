package cli

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/plan"
)

// lockForCheck takes the fabric lock for plan --check-on-device (the
// lock apply takes: the state directory's lock file, or the engine's
// Locker): nobody applies while the devices are asked. A lock another
// run holds ends the plan with ExitLocked before any device is
// contacted.
func lockForCheck(ctx context.Context, f *Factory, locker apply.Locker, dir, fabric string, timeout time.Duration) (func(), error) {
	if locker == nil {
		locker = apply.FileLocker{StateDir: dir}
	}
	lock, err := locker.Lock(ctx, apply.LockRequest{Fabric: fabric, Operation: "plan --check-on-device",
		Version: readBuildInfo().Version, Timeout: timeout, Now: f.Now})
	var le *apply.LockedError
	if errors.As(err, &le) {
		fmt.Fprintf(f.IOStreams.ErrOut, "Error: %s\n", err)
		return nil, exitWith(ExitLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("take the fabric lock for --check-on-device: %w", err)
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := lock.Unlock(uctx); err != nil {
			fmt.Fprintf(f.IOStreams.ErrOut, "Warning: lock: %s\n", err)
		}
	}, nil
}

// checkVerdicts is the error a plan ends with when a device's own check
// refused its steps (ExitRefusedByDevice), or could not run to its end
// (ExitError); the view showed the verdicts first.
func checkVerdicts(p *plan.Plan, out string) error {
	if bad := p.CheckFailed(); len(bad) > 0 {
		var lines []string
		for _, d := range bad {
			lines = append(lines, fmt.Sprintf("  %s: %s", d.Address, d.Check.Message))
		}
		msg := fmt.Sprintf("the device check did not complete on %s:\n%s", plural(len(bad), "device", "devices"), strings.Join(lines, "\n"))
		if out != "" {
			msg += fmt.Sprintf("\nThe plan was not saved to %s.", out)
		}
		return errors.New(msg)
	}
	if len(p.Refused()) > 0 {
		return exitWith(ExitRefusedByDevice)
	}
	return nil
}

// writePlanJUnit writes the plan as JUnit XML for a pipeline's test
// report: one case per device, failed when the device could not be
// planned, or its own check refused the steps or did not complete;
// skipped (with the reason) when it was not checked on the device.
func writePlanJUnit(path string, p *plan.Plan, spec string, checked bool) error {
	suite := junitSuite{Name: "fabctl plan (" + spec + ")"}
	for _, d := range p.Devices {
		c := junitCase{Name: d.Address, Classname: "fabctl.plan"}
		v := d.Check
		switch {
		case d.Error != "":
			c.Failures = []junitFailure{{Message: d.Error, Type: "not-planned", Text: d.Error}}
		case !d.HasChanges():
			c.SystemOut = "no changes"
		case !checked:
			c.Skipped = &junitSkipped{Message: "not checked on device: run plan --check-on-device"}
		case v == nil:
			c.SystemOut = "only a save: nothing to check"
		case v.Status == drivers.CheckRefused:
			msg := fmt.Sprintf("refused at step %d (%s): %s", v.Step, v.Summary, v.Message)
			c.Failures = []junitFailure{{Message: msg, Type: v.Status, Text: "line: " + v.Line + "\n" + v.Message + "\nmethod: " + v.Method}}
		case v.Status == drivers.CheckFailed:
			c.Failures = []junitFailure{{Message: v.Message, Type: v.Status, Text: v.Message}}
		case v.Status == drivers.CheckNotChecked:
			c.Skipped = &junitSkipped{Message: "not checked on device: " + v.Message}
		default:
			c.SystemOut = "accepted by the device: " + v.Method
		}
		if d.Error == "" {
			// Unmanaged settings that differ: left as the device runs them.
			for _, u := range d.UnmanagedDiffering() {
				c.SystemOut = strings.TrimPrefix(c.SystemOut+"\n"+u.Line(), "\n")
			}
		}
		suite.add(c)
	}
	doc := junitSuites{Name: "fabctl plan", Tests: suite.Tests, Fails: suite.Fails, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644, safefile.Report)
}
