package nxos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// The link truth commands (testdata/vendor/nxos/shapes.txt), structured:
// NX-OS prints a show command's NX-API JSON after `| json`. Their shapes
// are real outputs kept as fixtures: `show interface` from NAPALM
// (napalm-show-interface.json, NX-OS 7.x: counters as numbers) and from
// NetApp Harvest (harvest-show-interface.json, NX-OS 10.2(4): every value
// a string, FEC included), `show lldp neighbors detail` from Harvest
// (harvest-show-lldp-neighbors-detail.json).
//
// Read runs configuration commands only (`show running-config`, `show
// startup-config`), and no NX-OS show command holds both the ports'
// state and the LLDP table, so the link read is these two commands on
// one connection.
const (
	showInterface = "show interface | json"
	showLLDP      = "show lldp neighbors detail | json"
)

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks reads every port's LLDP neighbours, state, speed, FEC and
// error counters (drivers.LinkReader).
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	return d.PollLinks(ctx, t, []string{showInterface, showLLDP}, func(outs []string) (*linktruth.DeviceLinks, error) {
		return ParseLinks(outs[0], outs[1])
	})
}

// count is an NX-OS counter: a JSON number (7.x) or a string of digits
// (10.x, harvest-show-interface.json).
type count uint64

func (c *count) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("counter %s is not a whole number", b)
	}
	*c = count(v)
	return nil
}

// rows decodes an NX-OS table's rows: a list, or a single object (NX-OS
// prints a one-row table as the row itself; NAPALM's _get_table_rows,
// napalm/nxos/nxos.py l.678-697, reads both).
func rows[T any](raw json.RawMessage) ([]T, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '{' {
		var one T
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		return []T{one}, nil
	}
	var many []T
	err := json.Unmarshal(raw, &many)
	return many, err
}

type nxInterface struct {
	Interface  string `json:"interface"`
	State      string `json:"state"`
	AdminState string `json:"admin_state"`
	Speed      string `json:"eth_speed"`
	FEC        string `json:"eth_oper_fec_state"`
	InErr      *count `json:"eth_inerr"`
	OutErr     *count `json:"eth_outerr"`
	InDiscard  *count `json:"eth_indiscard"`
	OutDiscard *count `json:"eth_outdiscard"`
}

type nxNeighbor struct {
	LocalPort  string `json:"l_port_id"`
	SystemName string `json:"sys_name"`
	ChassisID  string `json:"chassis_id"`
	PortID     string `json:"port_id"`
	PortType   string `json:"port_type"`
	PortDesc   string `json:"port_desc"`
}

// ParseLinks reads the two outputs into a link report, keyed by the
// interfaces' full names (Ethernet1/1, the spec's words). A port is up
// when its state is "up", administratively down when admin_state is
// "down" (NAPALM's get_interfaces reads is_enabled from admin_state,
// napalm/nxos/nxos.py l.976); eth_speed "40 Gb/s" is the negotiated
// speed ("auto-speed", printed by a port that is down, is none);
// eth_oper_fec_state the FEC in use where the release prints it (10.x).
func ParseLinks(interfaces, lldp string) (*linktruth.DeviceLinks, error) {
	var it struct {
		Table *struct {
			Row json.RawMessage `json:"ROW_interface"`
		} `json:"TABLE_interface"`
	}
	if err := json.Unmarshal([]byte(interfaces), &it); err != nil {
		return nil, fmt.Errorf("%s: %v (want NX-OS's JSON TABLE_interface)", showInterface, err)
	}
	if it.Table == nil {
		return nil, fmt.Errorf("%s: no TABLE_interface", showInterface)
	}
	ifs, err := rows[nxInterface](it.Table.Row)
	if err != nil {
		return nil, fmt.Errorf("%s: ROW_interface: %v", showInterface, err)
	}
	var nt struct {
		Table *struct {
			Row json.RawMessage `json:"ROW_nbor_detail"`
		} `json:"TABLE_nbor_detail"`
	}
	if err := json.Unmarshal([]byte(lldp), &nt); err != nil {
		return nil, fmt.Errorf("%s: %v (want NX-OS's JSON TABLE_nbor_detail)", showLLDP, err)
	}
	var nbs []nxNeighbor
	if nt.Table != nil { // no table: no neighbour heard
		if nbs, err = rows[nxNeighbor](nt.Table.Row); err != nil {
			return nil, fmt.Errorf("%s: ROW_nbor_detail: %v", showLLDP, err)
		}
	}
	dl := &linktruth.DeviceLinks{Ports: make(map[string]*linktruth.Observation, len(ifs)), LLDP: true,
		Source: showInterface, LLDPSource: showLLDP}
	for _, i := range ifs {
		if i.Interface == "" {
			return nil, fmt.Errorf("%s: a row without an interface name", showInterface)
		}
		o := &linktruth.Observation{Port: i.Interface, Oper: linktruth.Down, AdminDown: i.AdminState == "down"}
		if i.State == "up" {
			o.Oper = linktruth.Up
		}
		if mbps, ok := linktruth.ParseSpeed(i.Speed); ok {
			o.SpeedMbps = mbps
		}
		o.FEC = i.FEC
		if i.InErr != nil || i.OutErr != nil {
			o.Counters = &linktruth.Counters{InErrors: val(i.InErr), OutErrors: val(i.OutErr), InDiscards: val(i.InDiscard), OutDiscards: val(i.OutDiscard)}
		}
		dl.Ports[i.Interface] = o
	}
	for _, n := range nbs {
		o := dl.Ports[longName(n.LocalPort)]
		if o == nil {
			continue // mgmt0, or a port `show interface` did not list: not judged
		}
		desc := n.PortDesc
		if desc == "null" {
			desc = "" // the neighbour sent no Port Description (harvest-show-lldp-neighbors-detail.json)
		}
		o.Neighbors = append(o.Neighbors, linktruth.Neighbor{SystemName: n.SystemName, ChassisID: n.ChassisID,
			PortID: n.PortID, PortIDSubtype: subtype(n.PortType), PortDesc: desc})
	}
	return dl, nil
}

func val(c *count) uint64 {
	if c == nil {
		return 0
	}
	return uint64(*c)
}

// longName is the interface name `show interface` prints for the LLDP
// table's abbreviated local port: "Eth1/1" is "Ethernet1/1" (the two
// fixtures; NAPALM's canonical_interface_name does the same).
func longName(p string) string {
	if rest, ok := strings.CutPrefix(p, "Eth"); ok && !strings.HasPrefix(rest, "ernet") {
		return "Ethernet" + rest
	}
	return p
}

// subtype names NX-OS's port_type in linktruth's words where it is one
// of IEEE 802.1AB's port ID subtypes comparison cares about.
func subtype(t string) string {
	switch t {
	case "Interface Name":
		return "ifname"
	case "Mac Address":
		return "mac"
	}
	return t
}
