package plan

import (
	"context"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
)

// CheckSteps is checkOnDevice for a device planned before (apply's
// pre-flight of a saved plan): drv is the device's driver, t its target.
func CheckSteps(ctx context.Context, drv drivers.Driver, t drivers.Target, steps []drivers.Change) *drivers.DeviceCheck {
	return checkOnDevice(ctx, drv, t, steps)
}

// checkOnDevice asks the device whether it takes the planned steps
// (Options.CheckOnDevice): the driver's drivers.Checker sends them
// through the platform's non-committing path and reads the device back.
// The save step is left out (a check changes nothing to save). A driver
// without a Checker is not checked, and the verdict says so.
func checkOnDevice(ctx context.Context, drv drivers.Driver, t drivers.Target, steps []drivers.Change) *drivers.DeviceCheck {
	work := drivers.WithoutSaveSteps(steps)
	if len(work) == 0 {
		return nil
	}
	c, ok := drv.(drivers.Checker)
	if !ok {
		v := drivers.NotChecked(fmt.Sprintf("the %s driver has no non-committing check", drv.Name()))
		return &v
	}
	v := c.CheckOnDevice(ctx, t, work)
	if v.Status == drivers.CheckRefused || v.Status == drivers.CheckFailed {
		v.Message = drivers.RedactSecretWords(v.Message, "<redacted>")
	}
	return &v
}

// Refused lists the devices whose own check refused their steps.
func (p *Plan) Refused() []*DevicePlan {
	var out []*DevicePlan
	for _, d := range p.Devices {
		if d.Check != nil && d.Check.Status == drivers.CheckRefused {
			out = append(out, d)
		}
	}
	return out
}

// CheckFailed lists the devices whose check did not run to its end or
// did not leave the device as it was.
func (p *Plan) CheckFailed() []*DevicePlan {
	var out []*DevicePlan
	for _, d := range p.Devices {
		if d.Check != nil && d.Check.Status == drivers.CheckFailed {
			out = append(out, d)
		}
	}
	return out
}
