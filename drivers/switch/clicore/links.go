package clicore

import (
	"context"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// PollLinks runs a platform's link truth commands on one session and
// parses their outputs (drivers.LinkReader); a parse error names the
// device.
func (k *Core) PollLinks(ctx context.Context, t drivers.Target, cmds []string, parse func(outs []string) (*linktruth.DeviceLinks, error)) (*linktruth.DeviceLinks, error) {
	outs, err := k.Poll(ctx, t, cmds)
	if err != nil {
		return nil, err
	}
	dl, err := parse(outs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Device.Name, err)
	}
	return dl, nil
}
