package opensm

import (
	"context"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
)

// DiagRunner runs infiniband-diags (ibnetdiscover, smpquery) on the
// subnet manager host, over the driver's connection to it (SSH, or this
// machine with sm_connect = "local"), through sudo -n when the host says
// sudo: validate's InfiniBand stage discovers the fabric with it. close
// ends the connection.
func (d *Driver) DiagRunner(ctx context.Context, t drivers.Target) (r ibfabric.Runner, close func(), err error) {
	sm, s, err := d.open(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	run := func(ctx context.Context, name string, args ...string) ([]byte, error) {
		var b strings.Builder
		if sm.Sudo {
			b.WriteString("sudo -n -- ")
		}
		b.WriteString(shq(name))
		for _, a := range args {
			b.WriteString(" " + shq(a))
		}
		out, errb, code, err := s.r.run(ctx, b.String(), nil)
		switch {
		case err != nil:
			return out, s.runErr(name, err)
		case code != 0:
			return out, fmt.Errorf("%s: exit %d: %s", name, code, lastLine(errb))
		}
		return out, nil
	}
	return ibfabric.RunnerFunc(run), s.r.close, nil
}
