package plan

import (
	"context"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Observation is what one device's driver read, for fabctl import: the
// live State, the driver's tolerances, and its limits for a candidate
// intent (drivers.Limiter), answered from this read.
type Observation struct {
	Address string
	Live    intent.State // nil when Err is set
	Err     string
	Fields  []intent.Field
	// Unexpressible is the driver's Limiter for a candidate intent of
	// this device and its desired State (nil: the driver has none).
	Unexpressible func(in any, desired intent.State) map[string]string
	// Read reads the device again for another intent of it: drivers
	// read what an intent names (the traffic classes of its spec) beside
	// what the device has configured.
	Read func(in any) (intent.State, error)
}

// Observe reads every selected switch, host and subnet manager of a
// compiled fabric (an inventory) through its driver, in parallel as Make
// does, without planning anything: fabctl import infers a spec from what
// it returns.
func Observe(ctx context.Context, f *intent.Fabric, reg *drivers.Registry, opts Options) []*Observation {
	units := selectedUnits(f, opts, true)
	out := make([]*Observation, len(units))
	eachUnit(units, opts, func(i int, u Unit) {
		out[i] = observe(ctx, u, reg, opts)
	})
	return out
}

func observe(ctx context.Context, u Unit, reg *drivers.Registry, opts Options) *Observation {
	o := &Observation{Address: u.Device.Addr()}
	drv, err := reg.New(driverFor(u.Device, opts))
	if err != nil {
		o.Err = err.Error()
		return o
	}
	t := Target(u, opts)
	o.Read = func(in any) (intent.State, error) {
		rt := t
		rt.Intent = in
		return drv.Read(ctx, rt)
	}
	live, err := drv.Read(ctx, t)
	if err != nil {
		o.Err = fmt.Sprintf("read %s: %v", o.Address, err)
		return o
	}
	o.Live, o.Fields = live, drv.Fields()
	if lim, ok := drv.(drivers.Limiter); ok {
		o.Unexpressible = func(in any, desired intent.State) map[string]string {
			ct := t
			ct.Intent, ct.Live = in, live
			return lim.Unexpressible(ct, desired)
		}
	}
	return o
}
