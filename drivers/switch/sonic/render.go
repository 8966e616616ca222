package sonic

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// L2Overhead is what SONiC's PORT mtu (an L2 frame size) adds to the IP
// MTU fabctl's intent carries: Ethernet header 14 + one 802.1Q tag 4 +
// FCS 4 = 22 bytes, so IP MTU 9000 renders PORT mtu "9022" and a live
// "9100" reads back as IP MTU 9078. It is the one place the overhead is
// defined; Render and Read both use it.
const L2Overhead = 22

// Object names fabctl owns in CONFIG_DB.
const (
	MapName      = "FABCTL"          // DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, TC_TO_*, MAP_PFC_PRIORITY_TO_QUEUE
	HeadroomName = "FABCTL_HEADROOM" // BUFFER_PROFILE for a configured headroom
	CableTable   = "AZURE"           // CABLE_LENGTH row SONiC's templates use
	LosslessPool = "ingress_lossless_pool"
)

func schedName(tc int) string { return "FABCTL_TC" + strconv.Itoa(tc) }
func wredName(tc int) string  { return "FABCTL_TC" + strconv.Itoa(tc) + "_ECN" }

// DB is CONFIG_DB: table -> key -> field -> value.
type DB map[string]map[string]map[string]string

func (db DB) set(table, key, field, value string) {
	t := db[table]
	if t == nil {
		t = map[string]map[string]string{}
		db[table] = t
	}
	r := t[key]
	if r == nil {
		r = map[string]string{}
		t[key] = r
	}
	r[field] = value
}

func (db DB) row(table, key string) (map[string]string, bool) {
	r, ok := db[table][key]
	return r, ok
}

// JSON renders the DB the way `show runningconfiguration all` and
// config_db.json do: sorted keys, indent 4.
func (db DB) JSON() []byte {
	b, _ := json.MarshalIndent(db, "", "    ")
	return append(b, '\n')
}

func ms(d interface{ Milliseconds() int64 }) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// cableMetres renders a cable length the way CABLE_LENGTH wants it:
// whole metres ("[0-9]+m"), rounded up (more headroom is safe).
func cableMetres(l spec.Length) string {
	return strconv.Itoa(int(math.Ceil(float64(l)))) + "m"
}

// Desired renders a switch intent into the CONFIG_DB rows fabctl manages
// (sonic-buildimage src/sonic-yang-models/doc/Configuration.md).
func Desired(sw *intent.Switch) (DB, error) {
	db := DB{}
	dscp := sw.Trust == spec.TrustDSCP && sw.Transport != "infiniband"
	if dscp {
		for d, tc := range sw.DSCPToTC {
			db.set("DSCP_TO_TC_MAP", MapName, strconv.Itoa(d), strconv.Itoa(tc))
		}
	}
	needDot1p := !dscp
	for _, p := range sw.Ports {
		if p.Trust != spec.TrustDSCP {
			needDot1p = true
		}
	}
	for i := 0; i < 8; i++ {
		s := strconv.Itoa(i)
		if needDot1p {
			db.set("DOT1P_TO_TC_MAP", MapName, s, s)
		}
		db.set("TC_TO_PRIORITY_GROUP_MAP", MapName, s, s)
		db.set("TC_TO_QUEUE_MAP", MapName, s, s)
		db.set("MAP_PFC_PRIORITY_TO_QUEUE", MapName, s, s)
	}
	if dscp {
		db.set("PORT_QOS_MAP", "global", "dscp_to_tc_map", MapName)
	} else {
		db.set("PORT_QOS_MAP", "global", "dot1p_to_tc_map", MapName)
	}
	var lossless []int
	for _, tc := range sw.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			return nil, fmt.Errorf("traffic class %d: SONiC has queues 0-7", tc.TC)
		}
		if tc.Strict {
			db.set("SCHEDULER", schedName(tc.TC), "type", "STRICT")
		} else {
			if tc.Bandwidth < 1 || tc.Bandwidth > 100 {
				return nil, fmt.Errorf("traffic class %d: DWRR weight %d outside SONiC's 1..100", tc.TC, tc.Bandwidth)
			}
			db.set("SCHEDULER", schedName(tc.TC), "type", "DWRR")
			db.set("SCHEDULER", schedName(tc.TC), "weight", strconv.Itoa(tc.Bandwidth))
		}
		if tc.ECN != nil {
			w := wredName(tc.TC)
			db.set("WRED_PROFILE", w, "ecn", "ecn_all")
			db.set("WRED_PROFILE", w, "wred_green_enable", "true")
			db.set("WRED_PROFILE", w, "green_min_threshold", strconv.FormatInt(int64(tc.ECN.Min), 10))
			db.set("WRED_PROFILE", w, "green_max_threshold", strconv.FormatInt(int64(tc.ECN.Max), 10))
			db.set("WRED_PROFILE", w, "green_drop_probability", strconv.FormatFloat(tc.ECN.Probability, 'f', -1, 64))
		}
		if tc.Lossless {
			lossless = append(lossless, tc.TC)
		}
	}
	pgProfile := "NULL" // dynamic buffer model: SONiC computes the headroom
	if sw.Headroom > 0 {
		h := strconv.FormatInt(int64(sw.Headroom), 10)
		db.set("BUFFER_PROFILE", HeadroomName, "pool", LosslessPool)
		db.set("BUFFER_PROFILE", HeadroomName, "xon", "0")
		db.set("BUFFER_PROFILE", HeadroomName, "xoff", h)
		db.set("BUFFER_PROFILE", HeadroomName, "size", h)
		db.set("BUFFER_PROFILE", HeadroomName, "dynamic_th", "0")
		pgProfile = HeadroomName
	}
	if sw.Watchdog.Enabled {
		db.set("PFC_WD", "GLOBAL", "POLL_INTERVAL", ms(sw.Watchdog.Poll))
	}
	for _, p := range sw.Ports {
		if p.Pause {
			return nil, fmt.Errorf("port %s: 802.3x pause has no CONFIG_DB setting in SONiC", p.Name)
		}
		db.set("PORT", p.Name, "mtu", strconv.Itoa(p.MTU+L2Overhead))
		q := func(f, v string) { db.set("PORT_QOS_MAP", p.Name, f, v) }
		if p.Trust == spec.TrustDSCP && dscp {
			q("dscp_to_tc_map", MapName)
		} else {
			q("dot1p_to_tc_map", MapName)
		}
		q("tc_to_queue_map", MapName)
		q("tc_to_pg_map", MapName)
		q("pfc_to_queue_map", MapName)
		q("pfc_enable", ints(p.PFC))
		if p.Watchdog && sw.Watchdog.Enabled {
			q("pfcwd_sw_enable", ints(p.PFC))
			db.set("PFC_WD", p.Name, "action", sw.Watchdog.Action)
			db.set("PFC_WD", p.Name, "detection_time", ms(sw.Watchdog.Detect))
			db.set("PFC_WD", p.Name, "restoration_time", ms(sw.Watchdog.Restore))
		}
		for _, tc := range sw.TCs {
			k := p.Name + "|" + strconv.Itoa(tc.TC)
			db.set("QUEUE", k, "scheduler", schedName(tc.TC))
			if tc.ECN != nil {
				db.set("QUEUE", k, "wred_profile", wredName(tc.TC))
			}
		}
		for _, tc := range lossless {
			db.set("BUFFER_PG", p.Name+"|"+strconv.Itoa(tc), "profile", pgProfile)
		}
		if p.CableLength > 0 {
			db.set("CABLE_LENGTH", CableTable, p.Name, cableMetres(p.CableLength))
		}
	}
	return db, nil
}

func ints(v []int) string {
	s := append([]int(nil), v...)
	sort.Ints(s)
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
