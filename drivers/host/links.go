package host

import (
	"context"
	"errors"
	"net"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
)

// linkSource names what the host's link report is read with: the
// kernel's operational state and 64-bit statistics over rtnetlink
// (IFLA_OPERSTATE, RFC 2863 states; IFLA_STATS64 rx/tx_errors and
// rx/tx_dropped, include/uapi/linux/if_link.h) and the negotiated speed
// over the ethtool ioctl ETHTOOL_GSET (include/uapi/linux/ethtool.h:
// speed and speed_hi, SPEED_UNKNOWN = -1; net/ethtool/ioctl.c
// ethtool_get_settings answers it from the driver's get_link_ksettings).
// GSET rather than the library's GLINKSETTINGS helper: that one prints a
// warning on stdout at the kernel's nwords handshake, which would reach
// plan's own output.
const linkSource = "rtnetlink (IFLA_OPERSTATE, IFLA_STATS64) + ethtool (ETHTOOL_GSET)"

// lldpNote says why a host's LLDP neighbours are not in its report:
// fabctl does not query lldpd (lldpcli -f json show neighbors) yet, so a
// switch port facing a host is judged by the host's state and speed and
// by the switch's own LLDP table.
const lldpNote = "fabctl does not query lldpd on hosts yet"

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks reads the state, speed and error counters of the spec's
// NICs on a local or namespace host. A host reached over SSH is read by
// its agent, whose protocol has no link read yet: an error says so.
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	if h.Connect.Kind == "ssh" {
		return nil, errors.New("the agent of a host reached over SSH does not report its links yet")
	}
	s, err := open(h)
	if err != nil {
		return nil, err
	}
	defer s.close()
	dl := &linktruth.DeviceLinks{Ports: make(map[string]*linktruth.Observation, len(h.NICs)), Source: linkSource, LLDPNote: lldpNote}
	for i := range h.NICs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := h.NICs[i].Name
		link, err := s.nl.LinkByName(name)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				continue // not reported: the comparison says the port was not reported
			}
			return nil, err
		}
		a := link.Attrs()
		o := &linktruth.Observation{Port: name, Oper: linktruth.Down}
		// RFC 2863 ifOperStatus: only "up" passes traffic ("unknown" is
		// a driver without carrier reporting, such as a dummy device:
		// not judged).
		switch a.OperState {
		case netlink.OperUp:
			o.Oper = linktruth.Up
		case netlink.OperUnknown:
			o.Oper = ""
		}
		// IFF_UP clear: nobody brought the NIC up (testbed up leaves
		// it so for apply) or it was shut; not a cable.
		o.AdminDown = a.Flags&net.FlagUp == 0
		if st := a.Statistics; st != nil {
			o.Counters = &linktruth.Counters{InErrors: st.RxErrors, OutErrors: st.TxErrors, InDiscards: st.RxDropped, OutDiscards: st.TxDropped}
		}
		if o.Oper == linktruth.Up {
			if eth, err := s.ethtool(); err == nil {
				var cmd ethtool.EthtoolCmd
				if speed, err := eth.CmdGet(&cmd, name); err == nil && speed != 0 && speed != ^uint32(0) {
					o.SpeedMbps = int64(speed)
				}
			}
		}
		dl.Ports[name] = o
	}
	return dl, nil
}
