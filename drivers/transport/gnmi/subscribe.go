package gnmitransport

import (
	"context"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// Subscribe opens a Subscribe RPC and sends sl; the caller reads the
// responses until ctx ends (a STREAM subscription never ends by itself).
// Errors name the device and the first path, never a secret.
func (c *Client) Subscribe(ctx context.Context, sl *gpb.SubscriptionList) (gpb.GNMI_SubscribeClient, error) {
	path := ""
	if subs := sl.GetSubscription(); len(subs) > 0 {
		path = PathString(sl.GetPrefix(), subs[0].GetPath())
	}
	s, err := c.gnmi.Subscribe(ctx)
	if err != nil {
		return nil, c.wrap("Subscribe", path, err)
	}
	if err := s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: sl}}); err != nil {
		return nil, c.wrap("Subscribe", path, err)
	}
	return s, nil
}

// SubscribeError wraps an error of a Subscribe stream's Recv like the
// client's other RPC errors.
func (c *Client) SubscribeError(path string, err error) error { return c.wrap("Subscribe", path, err) }
