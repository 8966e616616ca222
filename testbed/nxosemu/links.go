package nxosemu

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// The link commands, answered from Options.Links (testbed/portlink) in
// the JSON real NX-OS prints after `| json` (testdata/vendor/nxos/):
//
//   - `show interface | json`: TABLE_interface.ROW_interface, one row per
//     interface, every value a string as NX-OS 10.x prints them
//     (harvest-show-interface.json): state "up" when the cable is up,
//     admin_state "down" with state_rsn_desc "Administratively down" for
//     a shut port (napalm-show-interface.json, Ethernet2/7), eth_speed
//     "40 Gb/s" when up and "auto-speed" when down, eth_oper_fec_state
//     when the cabling names a FEC, eth_inerr, eth_outerr, eth_indiscard,
//     eth_outdiscard.
//   - `show lldp neighbors detail | json`: TABLE_nbor_detail.ROW_nbor_detail,
//     one row per neighbour heard on an up port, l_port_id abbreviated
//     ("Eth1/1"), sys_name, chassis_id, port_id, port_desc ("null" when
//     the neighbour sent none), port_type "Interface Name" (the capture's)
//     or, for a MAC port ID, "Mac Address" (NX-OS's spelling of the MAC
//     subtype in the same capture's chassis_type). With no neighbour the
//     table is absent and neigh_count 0 (cisco.nxos keeps `show lldp
//     neighbors` with no neighbour as {"neigh_count": "0"}).
//
// NX-OS prints a one-row table as the row itself (NAPALM's
// _get_table_rows reads both); the emulator does too.
//
// With no Source every port is down and hears nothing (portlink's rule).

// links reads the Source (nil: nothing cabled). When the Source fails
// the second result is the error line the command prints instead.
func (s *shell) links() (map[string]linktruth.Observation, string) {
	ports, err := portlink.Read(context.Background(), s.sw.opts.Links)
	if err != nil {
		// Not a vendor output: the testbed's cabling could not be read.
		return nil, "% link state unavailable: " + err.Error() + "\n"
	}
	return ports, ""
}

func (s *shell) interfaceNames() []string {
	names := make([]string, 0, len(s.sw.running.Interfaces))
	for n := range s.sw.running.Interfaces {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return interfaceLess(names[i], names[j]) })
	return names
}

// table is an NX-OS table: the rows, or the row itself when there is one.
func table(rows []map[string]any) any {
	if len(rows) == 1 {
		return rows[0]
	}
	return rows
}

func str(n uint64) string { return strconv.FormatUint(n, 10) }

func (s *shell) showInterfaceJSON() string {
	ports, fail := s.links()
	if fail != "" {
		return fail
	}
	var rows []map[string]any
	for _, n := range s.interfaceNames() {
		o, cabled := ports[n]
		shut := s.sw.running.Interfaces[n].Shutdown || cabled && o.AdminDown
		r := map[string]any{"interface": n, "state": "down", "admin_state": "up", "share_state": "Dedicated",
			"eth_hw_desc": "Ethernet", "eth_speed": "auto-speed"}
		switch {
		case shut:
			r["admin_state"], r["state_rsn_desc"] = "down", "Administratively down"
		case cabled && o.Oper == linktruth.Up:
			r["state"] = "up"
			if o.SpeedMbps > 0 {
				r["eth_speed"] = speed(o.SpeedMbps)
			}
		}
		if cabled && o.FEC != "" {
			r["eth_oper_fec_state"] = o.FEC
		}
		var c linktruth.Counters
		if cabled && o.Counters != nil {
			c = *o.Counters
		}
		r["eth_inerr"], r["eth_outerr"], r["eth_indiscard"], r["eth_outdiscard"] = str(c.InErrors), str(c.OutErrors), str(c.InDiscards), str(c.OutDiscards)
		rows = append(rows, r)
	}
	return marshal(map[string]any{"TABLE_interface": map[string]any{"ROW_interface": table(rows)}})
}

// speed is eth_speed: "40 Gb/s" (harvest-show-interface.json), "1000 Mb/s"
// (napalm-show-interface.json).
func speed(mbps int64) string {
	if mbps%1000 == 0 && mbps >= 10000 {
		return strconv.FormatInt(mbps/1000, 10) + " Gb/s"
	}
	return strconv.FormatInt(mbps, 10) + " Mb/s"
}

func (s *shell) showLLDPJSON() string {
	ports, fail := s.links()
	if fail != "" {
		return fail
	}
	var rows []map[string]any
	for _, n := range s.interfaceNames() {
		o, ok := ports[n]
		if !ok || o.Oper != linktruth.Up || o.AdminDown || s.sw.running.Interfaces[n].Shutdown {
			continue
		}
		for _, nb := range o.Neighbors {
			portType := "Interface Name"
			if t := strings.ToLower(nb.PortIDSubtype); t == "mac" || t == "macaddress" {
				portType = "Mac Address"
			}
			desc := nb.PortDesc
			if desc == "" {
				desc = "null"
			}
			rows = append(rows, map[string]any{"chassis_id": nb.ChassisID, "port_type": portType, "port_id": nb.PortID,
				"l_port_id": "Eth" + strings.TrimPrefix(n, "Ethernet"), "port_desc": desc, "sys_name": nb.SystemName, "ttl": 120})
		}
	}
	out := map[string]any{"neigh_hdr": "neigh_hdr", "neigh_count": len(rows)}
	if len(rows) > 0 {
		out["TABLE_nbor_detail"] = map[string]any{"ROW_nbor_detail": table(rows)}
	}
	return marshal(out)
}

func marshal(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b) + "\n"
}
