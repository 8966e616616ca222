package opensm

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
)

// DiagRunner runs infiniband-diags (ibnetdiscover, smpquery) on the
// subnet manager host, over the driver's connection to it (SSH, or this
// machine with sm_connect = "local"), from the spec's diags_dir, through sudo -n when the
// host says sudo: validate's InfiniBand stage discovers the fabric with it. close
// ends the connection.
func (d *Driver) DiagRunner(ctx context.Context, t drivers.Target) (r ibfabric.Runner, close func(), err error) {
	_, s, err := d.open(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	return s.diagRunner(), s.r.close, nil
}
