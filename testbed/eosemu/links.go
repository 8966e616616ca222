package eosemu

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// The link commands, answered from Options.Links (testbed/portlink) in
// the JSON models real EOS prints after `| json`, as NAPALM keeps them
// (testdata/vendor/eos/napalm-show-interfaces.json,
// napalm-show-lldp-neighbors-detail.json):
//
//   - `show interfaces | json`: every interface of the switch under
//     "interfaces" with interfaceStatus "connected" and lineProtocolStatus
//     "up" when its cable is up, "notconnect"/"down" when not, "disabled"
//     when administratively down (NAPALM's get_interfaces reads "disabled"
//     as not enabled, napalm/eos/eos.py:618), bandwidth in bit/s and the
//     interfaceCounters totals.
//   - `show lldp neighbors detail | json`: every interface under
//     "lldpNeighbors" with its lldpNeighborInfo list, empty when nothing
//     was heard (the fixture's Ethernet12). A neighbour whose Port ID is a
//     MAC prints interfaceIdType "macAddress" with the Port Description
//     (Ethernet8, an lldpd host); any other prints "interfaceName" with
//     the name in double quotes (Ethernet27/1, another switch). The corpus
//     shows no other subtype, so none is printed.
//
// With no Source every port is down and hears nothing (portlink's rule).
const (
	cmdShowInterfaces = "show interfaces | json"
	cmdShowLLDP       = "show lldp neighbors detail | json"
)

type eosCounters struct {
	TotalInErrors  uint64 `json:"totalInErrors"`
	TotalOutErrors uint64 `json:"totalOutErrors"`
	InDiscards     uint64 `json:"inDiscards"`
	OutDiscards    uint64 `json:"outDiscards"`
}

type eosInterface struct {
	Name               string      `json:"name"`
	InterfaceStatus    string      `json:"interfaceStatus"`
	LineProtocolStatus string      `json:"lineProtocolStatus"`
	Hardware           string      `json:"hardware"`
	Bandwidth          int64       `json:"bandwidth"`
	Counters           eosCounters `json:"interfaceCounters"`
	Description        string      `json:"description"`
}

type eosNeighborPort struct {
	IDType string `json:"interfaceIdType"`
	ID     string `json:"interfaceId"`
	Desc   string `json:"interfaceDescription"`
}

type eosNeighbor struct {
	Port       eosNeighborPort `json:"neighborInterfaceInfo"`
	ChassisID  string          `json:"chassisId"`
	SystemName string          `json:"systemName"`
	TTL        int             `json:"ttl"`
}

// links reads the Source (nil: nothing cabled). When the Source fails
// the second result is the error line the command prints instead.
func (s *shell) links() (map[string]linktruth.Observation, string) {
	ports, err := portlink.Read(context.Background(), s.sw.opts.Links)
	if err != nil {
		// Not a vendor output: the testbed's cabling could not be read.
		return nil, "% Error: link state unavailable: " + err.Error() + "\n"
	}
	return ports, ""
}

// interfaceNames are the switch's interfaces in EOS order.
func (s *shell) interfaceNames() []string {
	names := make([]string, 0, len(s.sw.running.Interfaces))
	for n := range s.sw.running.Interfaces {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return interfaceLess(names[i], names[j]) })
	return names
}

func (s *shell) showInterfacesJSON() string {
	ports, fail := s.links()
	if fail != "" {
		return fail
	}
	out := map[string]eosInterface{}
	for _, n := range s.interfaceNames() {
		o, cabled := ports[n]
		i := eosInterface{Name: n, InterfaceStatus: "notconnect", LineProtocolStatus: "down", Hardware: "ethernet",
			Description: s.sw.running.Interfaces[n].Description}
		switch {
		case cabled && o.AdminDown:
			i.InterfaceStatus = "disabled"
		case cabled && o.Oper == linktruth.Up:
			i.InterfaceStatus, i.LineProtocolStatus = "connected", "up"
			i.Bandwidth = o.SpeedMbps * 1_000_000
		}
		if cabled && o.Counters != nil {
			c := o.Counters
			i.Counters = eosCounters{TotalInErrors: c.InErrors, TotalOutErrors: c.OutErrors, InDiscards: c.InDiscards, OutDiscards: c.OutDiscards}
		}
		out[n] = i
	}
	return marshal(map[string]any{"interfaces": out})
}

func (s *shell) showLLDPJSON() string {
	ports, fail := s.links()
	if fail != "" {
		return fail
	}
	out := map[string]any{}
	for _, n := range s.interfaceNames() {
		info := []eosNeighbor{}
		if o, ok := ports[n]; ok && o.Oper == linktruth.Up && !o.AdminDown {
			for _, nb := range o.Neighbors {
				info = append(info, eosNeighborOf(nb))
			}
		}
		out[n] = map[string]any{"lldpNeighborInfo": info}
	}
	return marshal(map[string]any{"lldpNeighbors": out})
}

func eosNeighborOf(nb linktruth.Neighbor) eosNeighbor {
	e := eosNeighbor{SystemName: nb.SystemName, ChassisID: nb.ChassisID, TTL: 120}
	switch strings.ToLower(nb.PortIDSubtype) {
	case "mac", "macaddress":
		e.Port = eosNeighborPort{IDType: "macAddress", ID: nb.PortID, Desc: nb.PortDesc}
	default:
		desc := nb.PortDesc
		if desc == "" {
			desc = nb.PortID
		}
		e.Port = eosNeighborPort{IDType: "interfaceName", ID: `"` + nb.PortID + `"`, Desc: desc}
	}
	return e
}

func marshal(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b) + "\n"
}
