package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// LinkSource is one emulated switch's live ports (portlink.Source): what
// the testbed's cabling says of the switch's veth ends now. Each call
// re-reads the record (a fault rewrites it), then per port:
//
//   - oper state, IFF_UP and the IFLA_STATS64 counters of the veth end
//     over rtnetlink in the fabric namespace (include/uapi/linux/if_link.h);
//     a port a link-down fault set down reads down with its configuration
//     up (the cable, not the switch, is what the fault broke);
//   - the speed of an up port: the veth's fixed 10000 Mb/s
//     (drivers/net/veth.c veth_get_link_ksettings), or the speed a
//     speed fault recorded as the port's trained speed;
//   - the LLDP neighbours the switch's lldpd heard on the veth end
//     (lldpcli -u SOCKET -f json show neighbors).
//
// Without an lldpd on the testbed (Record.LLDPNote) Ports fails with
// that reason rather than report ports that heard nobody.
type LinkSource struct {
	Dir    string // the testbed directory
	Switch string
}

var _ portlink.Source = LinkSource{}

// Ports implements portlink.Source.
func (ls LinkSource) Ports(ctx context.Context) (map[string]linktruth.Observation, error) {
	r, err := ReadRecord(ls.Dir)
	if err != nil {
		return nil, err
	}
	var agent *LLDPAgent
	for i := range r.LLDP {
		if r.LLDP[i].Device == "switch."+ls.Switch {
			agent = &r.LLDP[i]
		}
	}
	var mine []PortVeth
	for _, p := range r.Ports {
		if p.Switch == ls.Switch {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		return map[string]linktruth.Observation{}, nil
	}
	if agent == nil {
		why := r.LLDPNote
		if why == "" {
			why = "the testbed runs no LLDP agent for " + ls.Switch
		}
		return nil, errors.New(why)
	}
	heard, err := lldpNeighbors(ctx, agent.Socket)
	if err != nil {
		return nil, fmt.Errorf("%s's LLDP agent: %w", ls.Switch, err)
	}
	h, err := nsHandle(r.FabricNetns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	out := make(map[string]linktruth.Observation, len(mine))
	for _, p := range mine {
		l, err := h.LinkByName(p.Veth)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				continue // mid-fault rename: no cable on the port now
			}
			return nil, err
		}
		out[p.Port] = observe(p, l.Attrs(), r.Faults, heard[p.Veth])
	}
	return out, nil
}

// observe is one port's Observation from its veth end's attributes.
func observe(p PortVeth, a *netlink.LinkAttrs, f EthFaults, heard []linktruth.Neighbor) linktruth.Observation {
	key := p.Switch + ":" + p.Port
	o := linktruth.Observation{Port: p.Port, Oper: linktruth.Down, Neighbors: heard}
	if a.OperState == netlink.OperUp {
		o.Oper = linktruth.Up
	}
	// IFF_UP clear is the switch's shutdown, except where a link-down
	// fault cleared it to pull the cable: the port stays configured up.
	o.AdminDown = a.Flags&net.FlagUp == 0 && !slices.Contains(f.Down, key)
	if st := a.Statistics; st != nil {
		o.Counters = &linktruth.Counters{InErrors: st.RxErrors, OutErrors: st.TxErrors, InDiscards: st.RxDropped, OutDiscards: st.TxDropped}
	}
	if o.Oper == linktruth.Up {
		o.SpeedMbps = vethSpeedMbps
		if s, ok := f.SpeedMbps[key]; ok {
			o.SpeedMbps = s
		}
	} else {
		o.Neighbors = nil
	}
	return o
}
