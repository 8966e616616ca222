// Package linktruth is the Ethernet cabling and link check: what a
// device reports of each of its ports (LLDP neighbour, operational state,
// negotiated speed, FEC, error and discard counters: an Observation)
// compared with the spec's links. Each end of a link must see the other
// end as its LLDP neighbour, be up, run at the link's speed and count no
// more errors than the fabric allows. Nothing here reads a device: the
// drivers fill Observations (drivers.LinkReader) and plan and validate
// call Compare; a difference is a cabling or link fault no change fixes
// (verdict "mismatch", as InfiniBand's cabling findings).
package linktruth

import (
	"strconv"
	"strings"
)

// Oper states of a port.
const (
	Up   = "up"
	Down = "down"
)

// Neighbor is one LLDP neighbour seen on a port: the remote System Name
// TLV, the Port ID TLV (and its subtype, when the device says) and the
// Port Description TLV (IEEE 802.1AB-2016 8.5.3, 8.5.5, 8.5.6).
type Neighbor struct {
	SystemName    string `json:"system_name,omitempty"`
	PortID        string `json:"port_id,omitempty"`
	PortIDSubtype string `json:"port_id_subtype,omitempty"`
	PortDesc      string `json:"port_description,omitempty"`
	ChassisID     string `json:"chassis_id,omitempty"`
}

func (n Neighbor) String() string {
	s := n.SystemName
	if s == "" {
		s = "chassis " + n.ChassisID
	}
	p := n.PortID
	if p == "" {
		p = n.PortDesc
	}
	return s + ":" + p
}

// Counters are a port's error and discard counters as the device reports
// them (since it last cleared them).
type Counters struct {
	InErrors    uint64 `json:"in_errors"`
	OutErrors   uint64 `json:"out_errors"`
	InDiscards  uint64 `json:"in_discards"`
	OutDiscards uint64 `json:"out_discards"`
}

// Observation is what a device reports of one of its ports.
type Observation struct {
	// Port is the port's name in the spec's words (a switch port, a host
	// NIC's netdev).
	Port string `json:"port"`
	// Oper is Up, Down, or "" when the device did not say.
	Oper string `json:"oper,omitempty"`
	// AdminDown: the port is administratively down (not brought up, or
	// shut): its being down, and its peer's, is configuration, which
	// apply brings up where the spec manages the port, not a cable.
	AdminDown bool `json:"admin_down,omitempty"`
	// SpeedMbps is the negotiated speed in Mb/s (0: not reported).
	SpeedMbps int64 `json:"speed_mbps,omitempty"`
	// FEC is the forward error correction in use, in the device's words
	// ("" not reported).
	FEC string `json:"fec,omitempty"`
	// Counters are nil when the device did not report them.
	Counters *Counters `json:"counters,omitempty"`
	// Neighbors are the LLDP neighbours seen on the port (none: LLDP
	// runs but nothing was heard).
	Neighbors []Neighbor `json:"neighbors,omitempty"`
}

// DeviceLinks is one device's report of its ports.
type DeviceLinks struct {
	// Ports are the observed ports by name.
	Ports map[string]*Observation `json:"ports"`
	// Source names what the state was read with ("show interfaces
	// status | json", "netlink + ethtool").
	Source string `json:"source"`
	// LLDP is true when the device's LLDP neighbours were read (Ports'
	// Neighbors are then meaningful); LLDPSource names what read them
	// ("show lldp neighbors detail | json", "lldpcli -f json show
	// neighbors"), LLDPNote says why they were not.
	LLDP       bool   `json:"lldp"`
	LLDPSource string `json:"lldp_source,omitempty"`
	LLDPNote   string `json:"lldp_note,omitempty"`
	// PortIDs are the LLDP Port IDs the device's ports advertise where
	// they are not the port's name, by port: SONiC's lldpmgrd advertises
	// the PORT table's alias (sonic-buildimage
	// dockers/docker-lldp/lldpmgrd, generate_pending_lldp_config_cmd_for_port:
	// `lldpcli configure ports <port> lldp portidsubtype local <alias>`),
	// so its neighbours hear "etp1", not "Ethernet0". Compare accepts
	// either on the far end.
	PortIDs map[string]string `json:"port_ids,omitempty"`
}

// Mbps converts a spec bit rate (bits per second) to Mb/s.
func Mbps(bps int64) int64 { return bps / 1_000_000 }

// SpeedString writes a speed in Mb/s the way vendors quote it: "400G",
// "25G", "100M".
func SpeedString(mbps int64) string {
	switch {
	case mbps <= 0:
		return "unknown speed"
	case mbps%1000 == 0:
		return strconv.FormatInt(mbps/1000, 10) + "G"
	case mbps >= 1000:
		return strconv.FormatFloat(float64(mbps)/1000, 'f', -1, 64) + "G"
	}
	return strconv.FormatInt(mbps, 10) + "M"
}

// ParseSpeed reads a speed as devices write it ("100G", "400Gbps",
// "25000", "100000Mb/s", "10Mbps"); a bare number is Mb/s. ok is false
// for anything else.
func ParseSpeed(s string) (mbps int64, ok bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"gbps", 1000}, {"gb/s", 1000}, {"gbit/s", 1000}, {"g", 1000}, {"mbps", 1}, {"mb/s", 1}, {"mbit/s", 1}, {"m", 1}} {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.s)), suf.m
			break
		}
	}
	if t == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil && n >= 0 && n < 1<<40 {
		return n * mult, true
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && f >= 0 && f < 1<<40 {
		return int64(f * float64(mult)), true
	}
	return 0, false
}
