package cumulus

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// showInterfaces is the link truth command (testdata/vendor/cumulus/
// shapes.txt): NVUE's whole interface tree as JSON, every interface with
// its link (state, speed, stats) and its LLDP neighbours, in one command
// (nvue-show-interface-json.txt). Read's commands print configuration
// only (`nv config show -o json`, `nv config diff applied startup`), so
// this is the one command the link read adds.
//
// Not read: the administrative state (the operational tree's link.state
// is the port's state; that it is down by configuration is in the
// applied tree, not in this output), FEC (no source shows where the
// operational tree reports it).
const showInterfaces = "nv show interface -o json"

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks reads every port's LLDP neighbours, state, speed and error
// counters (drivers.LinkReader).
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	return d.PollLinks(ctx, t, []string{showInterfaces}, func(outs []string) (*linktruth.DeviceLinks, error) {
		return ParseLinks(outs[0])
	})
}

type nvInterface struct {
	Link *struct {
		State map[string]json.RawMessage `json:"state"`
		Speed string                     `json:"speed"`
		Stats *struct {
			InErrors  uint64 `json:"in-errors"`
			OutErrors uint64 `json:"out-errors"`
			InDrops   uint64 `json:"in-drops"`
			OutDrops  uint64 `json:"out-drops"`
		} `json:"stats"`
	} `json:"link"`
	LLDP *struct {
		Neighbor map[string]*struct {
			Chassis struct {
				ID   string `json:"chassis-id"`
				Name string `json:"system-name"`
			} `json:"chassis"`
			Port struct {
				Name string `json:"name"`
				Desc string `json:"description"`
				Type string `json:"type"`
			} `json:"port"`
		} `json:"neighbor"`
	} `json:"lldp"`
}

// ParseLinks reads `nv show interface -o json` into a link report: a
// port is up when link.state holds "up" ({"up": {}}, NVUE-API.md);
// link.speed is written as the `nv show interface` table prints it
// ("1G"); the errors and drops are link.stats'. An interface whose state
// names neither up nor down, or holds both, is refused.
func ParseLinks(out string) (*linktruth.DeviceLinks, error) {
	var ifs map[string]*nvInterface
	if err := json.Unmarshal([]byte(out), &ifs); err != nil {
		return nil, fmt.Errorf("%s: %v (want NVUE's JSON object of interfaces)", showInterfaces, err)
	}
	if ifs == nil {
		return nil, fmt.Errorf("%s: not a JSON object of interfaces", showInterfaces)
	}
	dl := &linktruth.DeviceLinks{Ports: make(map[string]*linktruth.Observation, len(ifs)), LLDP: true,
		Source: showInterfaces, LLDPSource: showInterfaces + " (lldp.neighbor)"}
	for name, i := range ifs {
		if i == nil || i.Link == nil {
			continue // an interface without a link (a VRF's, a loopback's): no cable
		}
		o := &linktruth.Observation{Port: name}
		_, up := i.Link.State["up"]
		_, down := i.Link.State["down"]
		switch {
		case up && !down:
			o.Oper = linktruth.Up
		case down && !up:
			o.Oper = linktruth.Down
		case len(i.Link.State) != 0:
			return nil, fmt.Errorf("%s: %s: link state %s is neither up nor down", showInterfaces, name, keys(i.Link.State))
		}
		if i.Link.Speed != "" {
			mbps, ok := linktruth.ParseSpeed(i.Link.Speed)
			if !ok {
				return nil, fmt.Errorf("%s: %s: link speed %q is not a speed", showInterfaces, name, i.Link.Speed)
			}
			o.SpeedMbps = mbps
		}
		if s := i.Link.Stats; s != nil {
			o.Counters = &linktruth.Counters{InErrors: s.InErrors, OutErrors: s.OutErrors, InDiscards: s.InDrops, OutDiscards: s.OutDrops}
		}
		if i.LLDP != nil {
			for id, n := range i.LLDP.Neighbor {
				if n == nil {
					continue
				}
				sys := n.Chassis.Name
				if sys == "" {
					sys = id // the neighbour's id is its system name (LLDP.md)
				}
				o.Neighbors = append(o.Neighbors, linktruth.Neighbor{SystemName: sys, ChassisID: n.Chassis.ID,
					PortID: n.Port.Name, PortIDSubtype: n.Port.Type, PortDesc: n.Port.Desc})
			}
			sort.Slice(o.Neighbors, func(a, b int) bool { return o.Neighbors[a].String() < o.Neighbors[b].String() })
		}
		dl.Ports[name] = o
	}
	return dl, nil
}

func keys(m map[string]json.RawMessage) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, fmt.Sprintf("%q", k))
	}
	sort.Strings(out)
	return "{" + strings.Join(out, ", ") + "}"
}
