package sonicemu

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/linktruth"
)

// Link truth: `show interfaces status`, `show interfaces counters` and
// `show lldp table` answered from Options.Links (the testbed's cabling,
// a portlink.Source) over the CONFIG_DB PORT rows, in the shapes of
// testdata/vendor/sonic/show-links.txt (sonic-utilities' tests). A port
// the Source does not cable, or every port with a nil Source, is down
// with no neighbour; a port whose admin_status is not "up" is down
// whatever its cable.

// linkState is one port as the three commands see it.
type linkState struct {
	name, admin string
	row         map[string]any
	obs         linktruth.Observation
	up          bool
}

// linkStates reads the Source (outside the switch's lock: a live Source
// looks at the testbed's interfaces) and joins it with the PORT rows.
func (s *shell) linkStates() ([]linkState, error) {
	var cabled map[string]linktruth.Observation
	if src := s.sw.opts.Links; src != nil {
		var err error
		if cabled, err = src.Ports(context.Background()); err != nil {
			return nil, err
		}
	}
	sw := s.sw
	sw.mu.Lock()
	defer sw.mu.Unlock()
	rows, _ := sw.db["PORT"].(map[string]any)
	var out []linkState
	for _, p := range sw.ports() {
		row, _ := rows[p].(map[string]any)
		ls := linkState{name: p, row: row, admin: str(row["admin_status"]), obs: cabled[p]}
		if ls.admin == "" {
			ls.admin = "down" // portsyncd's default admin_status
		}
		ls.up = ls.admin == "up" && ls.obs.Oper == linktruth.Up
		out = append(out, ls)
	}
	return out, nil
}

// speedText is intfutil's port_speed_parse (scripts/intfutil l.159-174):
// Mb/s below 1000 as "<n>M", else "<n>G", or "<n.n>G" when not whole.
func speedText(mbps int64) string {
	switch {
	case mbps <= 0:
		return "N/A"
	case mbps < 1000:
		return fmt.Sprintf("%dM", mbps)
	case mbps%1000 >= 100:
		return fmt.Sprintf("%.1fG", float64(mbps)/1000)
	}
	return fmt.Sprintf("%.0fG", float64(mbps)/1000)
}

func orNA(v any) string {
	if s := str(v); s != "" {
		return s
	}
	return "N/A"
}

func (s *shell) showLinks(args []string) (string, int, bool) {
	cmd := strings.Join(args, " ")
	if cmd != "interfaces status" && cmd != "interfaces counters" && cmd != "lldp table" {
		return "", 0, false
	}
	ports, err := s.linkStates()
	if err != nil {
		return fmt.Sprintf("Error: %v\n", err), 1, true
	}
	switch cmd {
	case "interfaces status":
		// intfutil -c status: header_stat (l.460); Speed is STATE_DB's
		// (the negotiated one) when the port is up, else APPL_DB's (the
		// configured one), l.217-233; Oper/Admin/FEC from APPL_DB.
		var rows [][]string
		for _, p := range ports {
			speed := "N/A"
			if n, err := strconv.ParseInt(str(p.row["speed"]), 10, 64); err == nil {
				speed = speedText(n)
			}
			oper, fec := "down", orNA(p.row["fec"])
			if p.up {
				oper = "up"
				if p.obs.SpeedMbps > 0 {
					speed = speedText(p.obs.SpeedMbps)
				}
				if p.obs.FEC != "" {
					fec = p.obs.FEC
				}
			}
			rows = append(rows, []string{p.name, orNA(p.row["lanes"]), speed, orNA(p.row["mtu"]), fec, orNA(p.row["alias"]),
				"routed", oper, p.admin, "N/A", orNA(p.row["pfc_asym"])})
		}
		return tabulate([]string{"Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"}, rows), 0, true
	case "interfaces counters":
		// portstat header_std (utilities_common/portstat.py l.37),
		// STATE U / D / X (l.152-154, get_port_state l.411-435).
		var rows [][]string
		for _, p := range ports {
			state := "D"
			switch {
			case p.admin != "up":
				state = "X"
			case p.up:
				state = "U"
			}
			k := linktruth.Counters{}
			if p.obs.Counters != nil {
				k = *p.obs.Counters
			}
			rows = append(rows, []string{p.name, state, "0", "0.00 B/s", "0.00%", comma(k.InErrors), comma(k.InDiscards), "0",
				"0", "0.00 B/s", "0.00%", comma(k.OutErrors), comma(k.OutDiscards), "0"})
		}
		return tabulate([]string{"IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
			"TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"}, rows), 0, true
	}
	// lldpshow get_summary_output (l.169-192): capability codes, the
	// table (tabulate's defaults: text left-aligned), 50 dashes, the
	// total. Only an up port hears a neighbour.
	var rows [][]string
	for _, p := range ports {
		if !p.up {
			continue
		}
		for _, n := range p.obs.Neighbors {
			rows = append(rows, []string{p.name, n.SystemName, n.PortID, "", n.PortDesc})
		}
	}
	return "Capability codes: (R) Router, (B) Bridge, (O) Other\n" +
		tabulateAligned(false, []string{"LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"}, rows) +
		strings.Repeat("-", 50) + "\n" + fmt.Sprintf("Total entries displayed:  %d\n", len(rows)), 0, true
}
