package host

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
)

// noCheck: a host has no non-committing path (netlink, DCB netlink and
// sysfs writes take effect when made). What its plan checks instead is
// its own read of the NIC: what the NIC and its kernel driver cannot
// take (no DCB support, fewer traffic classes than the spec's classes:
// bnxt's ets_cap, ...) is listed as not expressible.
const noCheck = "hosts have no non-committing path (netlink, DCB and sysfs writes take effect when made); the plan is made from the host's own read-back, which names what the NIC cannot take (no DCB, fewer traffic classes than the spec) as not expressible, and apply restores the host if the kernel refuses a step"

// CheckOnDevice: not available on hosts (noCheck).
func (d *Driver) CheckOnDevice(context.Context, drivers.Target, []drivers.Change) drivers.DeviceCheck {
	return drivers.NotChecked(noCheck)
}
