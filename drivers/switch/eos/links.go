package eos

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// The link truth commands (testdata/vendor/eos/shapes.txt), structured:
// EOS prints any show command as JSON after `| json` (the eAPI model).
// Their shapes are the real outputs NAPALM keeps as fixtures
// (testdata/vendor/eos/napalm-show-interfaces.json,
// napalm-show-lldp-neighbors-detail.json; NAPALM's get_interfaces and
// get_lldp_neighbors_detail read the same fields, napalm/eos/eos.py).
//
// Read runs none of them (its commands print configuration only), and no
// single EOS command holds both the interfaces' state and the LLDP table:
// `show interfaces` has no neighbour and `show lldp neighbors detail` no
// state, speed or counters. So the link read is these two commands, on
// one connection.
//
// Not read: FEC. `show interfaces | json` does not report it; EOS prints
// it in `show interfaces error-correction`, a third command, and no
// vendor source in the corpus shows that command's JSON shape.
const (
	showLLDP       = "show lldp neighbors detail | json"
	showInterfaces = "show interfaces | json"
)

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks reads every port's LLDP neighbours, state, bandwidth and
// error counters (drivers.LinkReader).
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	return d.PollLinks(ctx, t, []string{showInterfaces, showLLDP}, func(outs []string) (*linktruth.DeviceLinks, error) {
		return ParseLinks(outs[0], outs[1])
	})
}

// eosInterfaces is the part of `show interfaces | json` fabctl reads.
type eosInterfaces struct {
	Interfaces map[string]*struct {
		InterfaceStatus    string `json:"interfaceStatus"`
		LineProtocolStatus string `json:"lineProtocolStatus"`
		Bandwidth          int64  `json:"bandwidth"` // bit/s
		Counters           *struct {
			TotalInErrors  uint64 `json:"totalInErrors"`
			TotalOutErrors uint64 `json:"totalOutErrors"`
			InDiscards     uint64 `json:"inDiscards"`
			OutDiscards    uint64 `json:"outDiscards"`
		} `json:"interfaceCounters"`
	} `json:"interfaces"`
}

// eosLLDP is the part of `show lldp neighbors detail | json` fabctl reads.
type eosLLDP struct {
	Neighbors map[string]*struct {
		Info []struct {
			SystemName string `json:"systemName"`
			ChassisID  string `json:"chassisId"`
			Port       struct {
				IDType string `json:"interfaceIdType"`
				ID     string `json:"interfaceId"`
				Desc   string `json:"interfaceDescription"`
			} `json:"neighborInterfaceInfo"`
		} `json:"lldpNeighborInfo"`
	} `json:"lldpNeighbors"`
}

// ParseLinks reads the two outputs into a link report. A port is up
// when its line protocol is (EOS: "up"; "connected" is the status the
// same port shows); administratively down when its status is "disabled"
// (NAPALM's get_interfaces, napalm/eos/eos.py:618); bandwidth 0 is a
// speed the port does not report.
func ParseLinks(interfaces, lldp string) (*linktruth.DeviceLinks, error) {
	var ifs eosInterfaces
	if err := json.Unmarshal([]byte(interfaces), &ifs); err != nil {
		return nil, fmt.Errorf("%s: %v (want the JSON object of EOS's interfaces model)", showInterfaces, err)
	}
	var nb eosLLDP
	if err := json.Unmarshal([]byte(lldp), &nb); err != nil {
		return nil, fmt.Errorf("%s: %v (want the JSON object of EOS's LLDP neighbors model)", showLLDP, err)
	}
	if ifs.Interfaces == nil {
		return nil, fmt.Errorf("%s: no \"interfaces\" object", showInterfaces)
	}
	if nb.Neighbors == nil {
		return nil, fmt.Errorf("%s: no \"lldpNeighbors\" object", showLLDP)
	}
	dl := &linktruth.DeviceLinks{Ports: make(map[string]*linktruth.Observation, len(ifs.Interfaces)), LLDP: true,
		Source: showInterfaces, LLDPSource: showLLDP}
	for name, i := range ifs.Interfaces {
		if i == nil {
			return nil, fmt.Errorf("%s: interface %q is null", showInterfaces, name)
		}
		if i.Bandwidth < 0 {
			return nil, fmt.Errorf("%s: interface %q: negative bandwidth %d", showInterfaces, name, i.Bandwidth)
		}
		o := &linktruth.Observation{Port: name, Oper: linktruth.Down, SpeedMbps: linktruth.Mbps(i.Bandwidth),
			AdminDown: i.InterfaceStatus == "disabled"}
		if i.LineProtocolStatus == "up" {
			o.Oper = linktruth.Up
		}
		if c := i.Counters; c != nil {
			o.Counters = &linktruth.Counters{InErrors: c.TotalInErrors, OutErrors: c.TotalOutErrors, InDiscards: c.InDiscards, OutDiscards: c.OutDiscards}
		}
		dl.Ports[name] = o
	}
	for name, n := range nb.Neighbors {
		o := dl.Ports[name]
		if o == nil || n == nil {
			continue // a port `show interfaces` did not list: not judged
		}
		for _, x := range n.Info {
			o.Neighbors = append(o.Neighbors, linktruth.Neighbor{SystemName: x.SystemName, ChassisID: x.ChassisID,
				// interfaceName ids are printed in double quotes
				// (issue1153's "\"et-0/0/20\""); NAPALM strips them.
				PortID: strings.Trim(x.Port.ID, `"`), PortIDSubtype: x.Port.IDType, PortDesc: x.Port.Desc})
		}
	}
	return dl, nil
}
