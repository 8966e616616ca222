package opensm

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
)

// noCheck: opensm(8) documents reading its files at start and on
// SIGHUP, and no way to have it parse a partition or QoS policy file
// without acting on it; the plan renders the files from the spec,
// whose partitions and QoS levels the spec loader checks.
const noCheck = "no sourced way to have opensm parse its files without acting on them (opensm(8) reads them at start and on SIGHUP); the files are rendered from the checked spec and read back after apply"

// CheckOnDevice: not available on subnet managers (noCheck).
func (d *Driver) CheckOnDevice(context.Context, drivers.Target, []drivers.Change) drivers.DeviceCheck {
	return drivers.NotChecked(noCheck)
}
