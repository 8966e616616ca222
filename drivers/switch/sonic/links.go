package sonic

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// The link read's commands, on one SSH session, and their output shapes
// (testdata/vendor/sonic/show-links.txt, from sonic-utilities' tests):
//
//   - show interfaces status (scripts/intfutil -c status): per port Speed
//     (port_speed_parse: "25G", "100M", "2.5G"), FEC, Oper and Admin from
//     APPL_DB PORT_TABLE;
//   - show interfaces counters (portstat): RX_ERR, RX_DRP, TX_ERR, TX_DRP
//     per port from COUNTERS_DB;
//   - show lldp table (lldpshow over lldpctl -f xml): LocalPort,
//     RemoteDevice (the SysName TLV), RemotePortID, RemotePortDescr.
//
// Three commands, not one: no sonic-utilities command holds the ports'
// speed, their error counters and the LLDP neighbours together (intfutil
// has no counters, portstat no speed, lldpshow neither), and the
// databases behind them are three (APPL_DB, COUNTERS_DB keyed by SAI
// object id through COUNTERS_PORT_NAME_MAP, lldpd's own table), which
// sonic-db-cli reads one at a time too. They share one connection.
const (
	showIntStatus   = "show interfaces status"
	showIntCounters = "show interfaces counters"
	showLLDPTable   = "show lldp table"
)

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks implements drivers.LinkReader: the three commands on one
// session.
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	return d.PollLinks(ctx, t, []string{showIntStatus, showIntCounters, showLLDPTable}, func(outs []string) (*linktruth.DeviceLinks, error) {
		return ParseLinks(outs[0], outs[1], outs[2])
	})
}

// ParseLinks reads the three outputs into a link report. A status or
// counters output without its table, or with a value that is not what
// the tool prints, is an error naming the command and the port; an LLDP
// output without its table (lldpshow prints "Error: ..." when lldpctl
// fails, e.g. the lldp container is down) reports the ports without
// their neighbours, saying why.
func ParseLinks(status, counters, lldp string) (*linktruth.DeviceLinks, error) {
	dl := &linktruth.DeviceLinks{Ports: map[string]*linktruth.Observation{},
		Source: showIntStatus + ", " + showIntCounters, LLDP: true, LLDPSource: showLLDPTable}
	st, ok := clicore.CutTable(status, "Interface")
	if !ok {
		return nil, fmt.Errorf("%s: no Interface table (sonic-utilities intfutil): %s", showIntStatus, firstLine(status))
	}
	col := func(t clicore.Table, cmd string, names ...string) ([]int, error) {
		idx := make([]int, len(names))
		for i, n := range names {
			if idx[i] = t.Col(n); idx[i] < 0 {
				return nil, fmt.Errorf("%s: the table has no %s column", cmd, n)
			}
		}
		return idx, nil
	}
	c, err := col(st, showIntStatus, "Interface", "Speed", "FEC", "Oper", "Admin", "Alias")
	if err != nil {
		return nil, err
	}
	for _, r := range st.Rows {
		name := r[c[0]]
		if name == "" || strings.HasPrefix(name, "PortChannel") {
			continue // a LAG is not a cable
		}
		o := &linktruth.Observation{Port: name}
		switch v := r[c[3]]; v {
		case "up", "down":
			o.Oper = v
		case "N/A", "":
		default:
			return nil, fmt.Errorf("%s: port %s: Oper %q is not up, down or N/A", showIntStatus, name, v)
		}
		o.AdminDown = r[c[4]] == "down"
		if v := r[c[1]]; v != "N/A" && v != "" {
			mbps, ok := linktruth.ParseSpeed(v)
			if !ok {
				return nil, fmt.Errorf("%s: port %s: Speed %q is not a speed", showIntStatus, name, v)
			}
			o.SpeedMbps = mbps
		}
		if v := r[c[2]]; v != "N/A" {
			o.FEC = v
		}
		// lldpmgrd advertises the alias as the port's LLDP Port ID
		// (linktruth.DeviceLinks.PortIDs); the port name when none.
		if v := r[c[5]]; v != "N/A" && v != "" && v != name {
			if dl.PortIDs == nil {
				dl.PortIDs = map[string]string{}
			}
			dl.PortIDs[name] = v
		}
		dl.Ports[name] = o
	}
	ct, ok := clicore.CutTable(counters, "IFACE")
	if !ok {
		return nil, fmt.Errorf("%s: no IFACE table (sonic-utilities portstat): %s", showIntCounters, firstLine(counters))
	}
	k, err := col(ct, showIntCounters, "IFACE", "RX_ERR", "TX_ERR", "RX_DRP", "TX_DRP")
	if err != nil {
		return nil, err
	}
	for _, r := range ct.Rows {
		o := dl.Ports[r[k[0]]]
		if o == nil {
			continue
		}
		var n [4]uint64
		seen := false
		for i := range n {
			v := r[k[i+1]]
			if v == "N/A" || v == "" {
				continue
			}
			x, ok := clicore.Count(v)
			if !ok || x >= 1<<63 {
				return nil, fmt.Errorf("%s: port %s: %s %q is not a counter", showIntCounters, o.Port, ct.Header[k[i+1]], v)
			}
			n[i], seen = uint64(x), true
		}
		if seen {
			o.Counters = &linktruth.Counters{InErrors: n[0], OutErrors: n[1], InDiscards: n[2], OutDiscards: n[3]}
		}
	}
	lt, ok := clicore.CutTable(lldp, "LocalPort")
	if !ok {
		dl.LLDP, dl.LLDPSource = false, ""
		dl.LLDPNote = showLLDPTable + " printed no neighbour table: " + firstLine(lldp)
		return dl, nil
	}
	l, err := col(lt, showLLDPTable, "LocalPort", "RemoteDevice", "RemotePortID", "RemotePortDescr")
	if err != nil {
		return nil, err
	}
	for _, r := range lt.Rows {
		o := dl.Ports[r[l[0]]]
		if o == nil {
			continue
		}
		n := linktruth.Neighbor{SystemName: r[l[1]], PortID: r[l[2]], PortDesc: r[l[3]]}
		// lldpshow prints no subtype: a MAC-shaped id is lldpd's
		// default Port ID (the MAC, with the name in the description)
		if _, err := net.ParseMAC(n.PortID); err == nil {
			n.PortIDSubtype = "mac"
		}
		o.Neighbors = append(o.Neighbors, n)
	}
	return dl, nil
}

// firstLine is the first non-blank line of a command's output, at most
// 80 characters, for an error.
func firstLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 80 {
				l = l[:80] + "..."
			}
			return fmt.Sprintf("%q", l)
		}
	}
	return "(nothing)"
}
