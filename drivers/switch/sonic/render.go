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

// PORT mtu is the IP (L3) MTU: orchagent adds the 22-byte L2 overhead
// itself when it programs SAI_PORT_ATTR_MTU (sonic-swss
// orchagent/portsorch.cpp setPortMtu; testdata/vendor/sonic/
// orchagent-port-mtu.txt:7-13), so the intent's MTU is written and read
// back unchanged. MinMTU..MaxMTU is sonic-port.yang's range
// (orchagent-port-mtu.txt:14-15).
const (
	MinMTU = 68
	MaxMTU = 9216
)

// Buffer models (DEVICE_METADATA|localhost buffer_model, pattern
// "dynamic|traditional": testdata/vendor/sonic/
// configdb-buffer-profile-metadata.txt:24-30).
const (
	// ModelDynamic: headroom is computed by buffermgrd; a lossless PG is a
	// BUFFER_PG row with profile "NULL" (configdb-buffer-pg.txt:14-15).
	ModelDynamic = "dynamic"
	// ModelTraditional: buffermgrd itself writes BUFFER_PG|<port>|<pgs>
	// = pg_lossless_<speed>_<cable>_profile for the PGs in the port's
	// PORT_QOS_MAP pfc_enable (sonic-swss cfgmgr/buffermgr.cpp
	// doSpeedUpdateTask; buffermgrd-traditional.txt): fabctl writes no
	// BUFFER_PG row.
	ModelTraditional = "traditional"
)

// Object names fabctl owns in CONFIG_DB.
const (
	MapName    = "FABCTL" // DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, TC_TO_*, MAP_PFC_PRIORITY_TO_QUEUE
	CableTable = "AZURE"  // CABLE_LENGTH row SONiC's templates use (configdb-qos.txt:42)
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

// Unexpressible lists the desired settings SONiC's CONFIG_DB cannot hold
// in the given buffer model, with the reason (drivers.Limiter).
func Unexpressible(sw *intent.Switch, model string) map[string]string {
	out := map[string]string{}
	if sw.Headroom > 0 {
		// config/main.py update_profile (sonic-utilities, l.9080-9099):
		// a static lossless profile needs xon and xoff apart ("Xon is
		// mandatory for non-dynamic profile"), size = xon + xoff; the
		// intent has one headroom number, and in the traditional model
		// buffermgrd rewrites every pfc_enable PG to its own
		// pg_lossless_<speed>_<cable>_profile (buffermgr.cpp).
		out["buffer/headroom"] = "SONiC: a fixed headroom is a static BUFFER_PROFILE that needs xon and xoff separately (sonic-utilities config buffer profile: \"Xon is mandatory for non-dynamic profile\"); the intent gives one number. Leave it to buffermgrd (dynamic: profile NULL; traditional: pg_profile_lookup.ini)"
	}
	for _, tc := range sw.TCs {
		if tc.Lossless && tc.TC == 0 {
			// qos_config.j2 TC_TO_PRIORITY_GROUP_MAP (configdb-qos.txt) maps
			// every lossy class to PG 0, whose BUFFER_PG row is the lossy
			// ingress profile (buffers_config.j2 "<port>|0").
			out["tc/0/lossless"] = "SONiC: PG 0 is the lossy priority group every lossy class maps to (qos_config.j2 TC_TO_PRIORITY_GROUP_MAP, buffers_config.j2 <port>|0 ingress_lossy_profile); use another class for lossless traffic"
		}
	}
	watched := false
	for _, p := range sw.Ports {
		if p.Pause {
			out["port/"+p.Name+"/pause"] = "SONiC: 802.3x link pause has no CONFIG_DB field in the sources (sonic-port.yang, Configuration.md PORT)"
		}
		watched = watched || p.Watchdog
	}
	if sw.Watchdog.Enabled && !watched {
		// sonic-pfcwd.yang (configdb-global-map-pfcwd.txt): detection_time,
		// restoration_time and action are fields of a port's PFC_WD row;
		// only POLL_INTERVAL is global. Without a port to watch (no PFC
		// priority on any managed port: iWARP, a lossy fabric) no row
		// holds them, and a read finds none.
		for _, k := range []string{"pfcwd/detect", "pfcwd/restore", "pfcwd/action"} {
			out[k] = "SONiC: the PFC watchdog's detection time, restoration time and action are fields of each watched port's PFC_WD row (sonic-pfcwd.yang); no managed port has a PFC priority to watch, so no row holds them (only PFC_WD|GLOBAL POLL_INTERVAL is written)"
		}
	}
	return out
}

// Desired renders a switch intent into the CONFIG_DB rows fabctl manages
// for the dynamic buffer model (Render's assumption: the model is a
// property of the device, read by Read; see DesiredFor).
func Desired(sw *intent.Switch) (DB, error) { return DesiredFor(sw, ModelDynamic) }

// pgRanges groups lossless PGs into BUFFER_PG key suffixes the way the
// templates and buffermgrd write them: consecutive PGs as one range
// ("3-4"), others alone ("3", "6"); sonic-buffer-pg.yang allows one
// range per key ("[0-7]((-)[0-7])?", configdb-buffer-pg.txt:4).
func pgRanges(pgs []int) []string {
	s := append([]int(nil), pgs...)
	sort.Ints(s)
	var out []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			out = append(out, strconv.Itoa(s[i]))
		} else {
			out = append(out, strconv.Itoa(s[i])+"-"+strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return out
}

// parsePG reads a BUFFER_PG key suffix ("3" or "3-4") as its PG range.
func parsePG(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || lo < 0 || hi > 7 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// losslessTCs are the intent's lossless classes SONiC can express (not 0).
func losslessTCs(sw *intent.Switch) []int {
	var out []int
	for _, tc := range sw.TCs {
		if tc.Lossless && tc.TC != 0 {
			out = append(out, tc.TC)
		}
	}
	sort.Ints(out)
	return out
}

// DesiredFor renders a switch intent into the CONFIG_DB rows fabctl
// manages in the given buffer model (sonic-buildimage
// src/sonic-yang-models/doc/Configuration.md; testdata/vendor/sonic/).
// Settings Unexpressible lists are left out.
func DesiredFor(sw *intent.Switch, model string) (DB, error) {
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
	lossless := losslessTCs(sw)
	isLossless := map[int]bool{}
	for _, tc := range lossless {
		isLossless[tc] = true
	}
	for i := 0; i < 8; i++ {
		s := strconv.Itoa(i)
		if needDot1p {
			db.set("DOT1P_TO_TC_MAP", MapName, s, s) // configdb-qos.txt:6 (YANG key form)
		}
		// Lossy classes share PG 0, lossless ones get their own PG, as
		// qos_config.j2's TC_TO_PRIORITY_GROUP_MAP does (configdb-qos.txt:39,
		// audit: sonic-buildimage PR #2650 "Map tc 1, 2, 5, and 6 back to pg 0").
		pg := "0"
		if isLossless[i] {
			pg = s
		}
		db.set("TC_TO_PRIORITY_GROUP_MAP", MapName, s, pg)
		db.set("TC_TO_QUEUE_MAP", MapName, s, s)           // configdb-qos.txt:40
		db.set("MAP_PFC_PRIORITY_TO_QUEUE", MapName, s, s) // configdb-qos.txt:38
	}
	if dscp {
		// Only dscp_to_tc_map takes effect under "global"
		// (configdb-global-map-pfcwd.txt:18-20); a PCP switch binds
		// dot1p_to_tc_map per port.
		db.set("PORT_QOS_MAP", "global", "dscp_to_tc_map", MapName)
	}
	for _, tc := range sw.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			return nil, fmt.Errorf("traffic class %d: SONiC has queues 0-7", tc.TC)
		}
		if tc.Strict {
			db.set("SCHEDULER", schedName(tc.TC), "type", "STRICT") // configdb-qos.txt:28
		} else {
			if tc.Bandwidth < 1 || tc.Bandwidth > 100 {
				return nil, fmt.Errorf("traffic class %d: DWRR weight %d outside SONiC's 1..100", tc.TC, tc.Bandwidth)
			}
			db.set("SCHEDULER", schedName(tc.TC), "type", "DWRR") // configdb-qos.txt:41
			db.set("SCHEDULER", schedName(tc.TC), "weight", strconv.Itoa(tc.Bandwidth))
		}
		if tc.ECN != nil {
			if p := tc.ECN.Probability; p != math.Trunc(p) || p < 1 || p > 100 {
				// sonic-wred-profile.yang: green_drop_probability is a
				// uint64 percent, 0..100 (0 would mark nothing)
				return nil, fmt.Errorf("traffic class %d: ECN probability %v: SONiC's green_drop_probability is a whole percent 1..100", tc.TC, p)
			}
			w := wredName(tc.TC) // configdb-qos.txt:31-36
			db.set("WRED_PROFILE", w, "ecn", "ecn_all")
			db.set("WRED_PROFILE", w, "wred_green_enable", "true")
			db.set("WRED_PROFILE", w, "green_min_threshold", strconv.FormatInt(int64(tc.ECN.Min), 10))
			db.set("WRED_PROFILE", w, "green_max_threshold", strconv.FormatInt(int64(tc.ECN.Max), 10))
			db.set("WRED_PROFILE", w, "green_drop_probability", strconv.Itoa(int(tc.ECN.Probability)))
		}
	}
	if sw.Watchdog.Enabled {
		db.set("PFC_WD", "GLOBAL", "POLL_INTERVAL", ms(sw.Watchdog.Poll)) // configdb-global-map-pfcwd.txt:23
	}
	for _, p := range sw.Ports {
		if p.MTU < MinMTU || p.MTU > MaxMTU {
			return nil, fmt.Errorf("port %s: mtu %d outside SONiC's %d..%d (PORT mtu is the IP MTU)", p.Name, p.MTU, MinMTU, MaxMTU)
		}
		db.set("PORT", p.Name, "mtu", strconv.Itoa(p.MTU))
		q := func(f, v string) { db.set("PORT_QOS_MAP", p.Name, f, v) } // configdb-qos.txt:19
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
			q("pfcwd_sw_enable", ints(p.PFC)) // configdb-global-map-pfcwd.txt:21-22
			db.set("PFC_WD", p.Name, "action", sw.Watchdog.Action)
			db.set("PFC_WD", p.Name, "detection_time", ms(sw.Watchdog.Detect))
			db.set("PFC_WD", p.Name, "restoration_time", ms(sw.Watchdog.Restore))
		}
		for _, tc := range sw.TCs {
			k := p.Name + "|" + strconv.Itoa(tc.TC)
			db.set("QUEUE", k, "scheduler", schedName(tc.TC)) // configdb-qos.txt:24-25
			if tc.ECN != nil {
				db.set("QUEUE", k, "wred_profile", wredName(tc.TC))
			}
		}
		if model != ModelTraditional {
			for _, r := range pgRanges(lossless) {
				db.set("BUFFER_PG", p.Name+"|"+r, "profile", "NULL") // configdb-buffer-pg.txt:14-15
			}
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
