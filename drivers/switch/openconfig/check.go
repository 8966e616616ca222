package openconfig

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
)

// noCheck: gNMI defines no validate-only Set (gNMI specification,
// openconfig/reference rpc/gnmi/gnmi-specification.md §3.4.3: the
// operations of one SetRequest are one transaction, applied whole or
// refused whole), and OpenConfig defines no candidate datastore of its
// own; what the plan checks is the payload against the OpenConfig YANG
// models with libyang (plan, validate --static, render --yang-dir).
const noCheck = "gNMI has no validate-only Set (gNMI specification §3.4.3: a SetRequest is applied whole or refused whole, so a refusal at apply changes nothing on the device); the payloads are checked against the OpenConfig YANG models with libyang, not by the device"

// CheckOnDevice: not available (noCheck).
func (d *Driver) CheckOnDevice(context.Context, drivers.Target, []drivers.Change) drivers.DeviceCheck {
	return drivers.NotChecked(noCheck)
}
