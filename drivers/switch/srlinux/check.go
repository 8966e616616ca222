package srlinux

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
)

// noCheck: SR Linux validates a candidate without committing it through
// its JSON-RPC server's `validate` method and the CLI's candidate mode
// (Nokia SR Linux System Management Guide, "JSON-RPC management"),
// neither of which fabctl's SR Linux transport (gNMI) reaches; gNMI's
// Set has no validate-only form (gNMI specification §3.4.3).
const noCheck = "SR Linux's validate-without-commit is its JSON-RPC `validate` method (Nokia SR Linux System Management Guide), which fabctl's gNMI transport does not reach, and gNMI has no validate-only Set (gNMI specification §3.4.3: a refused Set changes nothing); the payloads are checked against SR Linux's YANG models with libyang, not by the device"

// CheckOnDevice: not available (noCheck).
func (d *Driver) CheckOnDevice(context.Context, drivers.Target, []drivers.Change) drivers.DeviceCheck {
	return drivers.NotChecked(noCheck)
}
