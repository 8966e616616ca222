package apply

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/plan"
)

// DeviceRefusedError refuses a run whose pre-flight (RunOptions.
// CheckOnDevice) a device refused, or could not complete on a device:
// nothing was applied. Each device's plan holds its verdict (Check).
type DeviceRefusedError struct{ Devices []*plan.DevicePlan }

func (e *DeviceRefusedError) Error() string {
	parts := firstFew(len(e.Devices), func(i int) string {
		d := e.Devices[i]
		v := d.Check
		if v.Status == drivers.CheckRefused {
			return fmt.Sprintf("%s refused step %d (%s): %q: %s", d.Address, v.Step, v.Summary, v.Line, strings.Join(strings.Fields(v.Message), " "))
		}
		return fmt.Sprintf("%s: the device check did not complete: %s", d.Address, v.Message)
	})
	return "apply refused by the devices' own check (--check-on-device), nothing was applied: " + strings.Join(parts, "; ")
}

// preflight asks every device with steps whether it takes them, through
// its driver's non-committing check (plan.CheckSteps), at most par at a
// time, and sets each device plan's Check. It returns a
// *DeviceRefusedError naming the devices that refused or whose check did
// not complete.
func preflight(ctx context.Context, reg *drivers.Registry, devs []Device, par int) error {
	if par <= 0 {
		par = 16
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for _, d := range devs {
		if len(d.Plan.Steps) == 0 || d.Plan.Error != "" {
			continue
		}
		drv, err := reg.New(d.Plan.Driver)
		if err != nil {
			v := drivers.DeviceCheck{Status: drivers.CheckFailed, Message: err.Error()}
			d.Plan.Check = &v
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(d Device, drv drivers.Driver) {
			defer wg.Done()
			defer func() { <-sem }()
			d.Plan.Check = plan.CheckSteps(ctx, drv, d.Target, d.Plan.Steps)
		}(d, drv)
	}
	wg.Wait()
	var bad []*plan.DevicePlan
	for _, d := range devs {
		if v := d.Plan.Check; v != nil && (v.Status == drivers.CheckRefused || v.Status == drivers.CheckFailed) {
			bad = append(bad, d.Plan)
		}
	}
	if len(bad) > 0 {
		return &DeviceRefusedError{Devices: bad}
	}
	return nil
}
