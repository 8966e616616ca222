package gnmitransport

import (
	"context"
	"errors"
	"fmt"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/yangval"
)

// Update is one value a Get returned: its full path (prefix joined, list
// keys as the device filled them in) and the decoded JSON_IETF value.
type Update struct {
	Path []yangval.PathElem
	Val  any
}

// maxUpdates bounds the updates one GetState accepts: a device answers
// a few per port; far more is hostile or broken output, refused before
// it is decoded.
const maxUpdates = 1 << 20

// GetState reads several paths (wildcard keys allowed) in ONE GetRequest
// of data type ALL (configuration and state, gNMI specification 3.3.1)
// and returns every update of every notification. A path with no data
// makes the device answer codes.NotFound for the whole request (gNMI
// specification 3.3.4): the error's Code says so.
func (c *Client) GetState(ctx context.Context, paths []string) ([]Update, error) {
	req := &gpb.GetRequest{Type: gpb.GetRequest_ALL, Encoding: gpb.Encoding_JSON_IETF}
	for _, s := range paths {
		p, err := Path(s)
		if err != nil {
			return nil, &Error{Device: c.device, RPC: "Get", Path: s, Code: codes.InvalidArgument, Detail: err.Error()}
		}
		req.Path = append(req.Path, p)
	}
	name := ""
	if len(paths) > 0 {
		name = paths[0]
	}
	var resp *gpb.GetResponse
	err := retry(ctx, c.opts, func() error {
		rctx, cancel := c.rpcCtx(ctx)
		defer cancel()
		var err error
		resp, err = c.gnmi.Get(rctx, req)
		if err == nil {
			return nil
		}
		e := c.wrap("Get", name, err)
		if e.Code != codes.Unavailable {
			return &permanent{e}
		}
		return e
	})
	if err != nil {
		var pe *permanent
		if errors.As(err, &pe) {
			return nil, pe.e
		}
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, &Error{Device: c.device, RPC: "Get", Path: name, Code: status.Code(err), Detail: err.Error()}
	}
	return c.decodeUpdates(name, resp)
}

// decodeUpdates flattens a GetResponse into updates, refusing what is not
// JSON_IETF, does not parse, or is too large.
func (c *Client) decodeUpdates(name string, resp *gpb.GetResponse) ([]Update, error) {
	var out []Update
	for _, n := range resp.GetNotification() {
		prefix := n.GetPrefix()
		for _, u := range n.GetUpdate() {
			if len(out) >= maxUpdates {
				return nil, &Error{Device: c.device, RPC: "Get", Path: name, Detail: fmt.Sprintf("the device answered with more than %d updates", maxUpdates)}
			}
			b := u.GetVal().GetJsonIetfVal()
			if b == nil {
				b = u.GetVal().GetJsonVal()
			}
			var elems []yangval.PathElem
			for _, pp := range []*gpb.Path{prefix, u.GetPath()} {
				for _, e := range pp.GetElem() {
					elems = append(elems, yangval.PathElem{Name: e.GetName(), Keys: e.GetKey()})
				}
			}
			where := yangval.PathString(elems)
			if b == nil {
				return nil, &Error{Device: c.device, RPC: "Get", Path: where, Detail: fmt.Sprintf("the device answered with a %T value, not JSON_IETF", u.GetVal().GetValue())}
			}
			val, err := Decode(b)
			if err != nil {
				return nil, &Error{Device: c.device, RPC: "Get", Path: where, Detail: "the device's JSON_IETF does not parse: " + err.Error()}
			}
			out = append(out, Update{Path: elems, Val: unwrap(where, val)})
		}
	}
	return out, nil
}
