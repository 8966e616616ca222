package libyang

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// reEthernet is a SONiC front-panel port name (sonic-port.yang: PORT's
// key; port_config.ini names them EthernetN, N the first lane's offset).
var reEthernet = regexp.MustCompile(`^Ethernet([0-9]+)$`)

// FragmentBase is the part of a running CONFIG_DB that a rendered
// fragment (fabctl's config_db.json) relies on and does not write, the
// configuration `config apply-patch` validates it over (GCU validates
// the patched whole, mandatory fields included):
//
//   - a PORT row for every port the fragment names (PORT, PORT_QOS_MAP,
//     PFC_WD, BUFFER_PG, QUEUE keys, CABLE_LENGTH fields), with the
//     fields sonic-port.yang makes mandatory: lanes (and speed, which
//     every port_config.ini sets). The lanes are placeholders derived
//     from the port number (EthernetN: N..N+3): a port's lanes are the
//     platform's, never fabctl's, and validation needs only that they
//     are present and well formed;
//   - DEVICE_METADATA|localhost buffer_model "dynamic", the buffer model
//     fabctl renders for (the SONiC driver writes BUFFER_PG profile NULL,
//     which the dynamic model's buffermgrd fills);
//   - BUFFER_POOL ingress_lossless_pool, which every SONiC buffer
//     template defines (sonic-buildimage device/*/buffers_defaults*.j2).
//
// It is what `fabctl render --yang-dir` and the libyang tests validate a
// fragment over: MergeConfigDB(FragmentBase(db), db).
func FragmentBase(db ConfigDB) ConfigDB {
	ports := map[string]bool{}
	for table, rows := range db {
		for key, fields := range rows {
			switch table {
			case "CABLE_LENGTH":
				for f := range fields {
					ports[f] = true
				}
			case "PORT", "PORT_QOS_MAP", "PFC_WD", "BUFFER_PG", "QUEUE", "BUFFER_QUEUE":
				if k := strings.Split(key, "|")[0]; k != "global" && k != "GLOBAL" {
					ports[k] = true
				}
			}
		}
	}
	base := ConfigDB{
		"DEVICE_METADATA": {"localhost": {"buffer_model": "dynamic"}},
		"BUFFER_POOL":     {"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"}},
		"PORT":            {},
	}
	next := 10000 // lanes for ports not named EthernetN
	for _, p := range sortedKeys(ports) {
		first := 0
		if m := reEthernet.FindStringSubmatch(p); m != nil {
			first, _ = strconv.Atoi(m[1])
		} else {
			first, next = next, next+4
		}
		base["PORT"][p] = map[string]any{
			"lanes": fmt.Sprintf("%d,%d,%d,%d", first, first+1, first+2, first+3),
			"speed": "400000",
		}
	}
	return base
}
