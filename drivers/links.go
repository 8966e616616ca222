package drivers

import (
	"context"

	"github.com/fabctl/fabctl/internal/linktruth"
)

// LinkReader is implemented by drivers that read their device's link
// truth: per port the LLDP neighbour, operational state, negotiated
// speed, FEC and error counters (linktruth.DeviceLinks, keyed by the
// spec's port names). Plan calls it after Read, at most one more round
// trip to the device, and compares every device's report with the spec's
// links (linktruth.Compare); what it reports is never part of the live
// state, so counters that move do not make a saved plan stale.
//
// A driver that cannot read LLDP on a device still reports the ports
// (LLDP false, LLDPNote why); an error means nothing was read.
type LinkReader interface {
	ReadLinks(ctx context.Context, t Target) (*linktruth.DeviceLinks, error)
}
