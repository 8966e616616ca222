package sonic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Inconsistent is the value Read reports for a switch-wide setting that
// the ports disagree on (a queue bound to another scheduler on one port):
// it never equals a desired value, so the plan re-applies the setting.
const Inconsistent = "inconsistent"

// ParseConfigDB decodes `show runningconfiguration all` (CONFIG_DB as a
// JSON object of tables). Rows that are not objects and non-string values
// are kept as their JSON text; tables that are not objects are skipped.
//
// A CONFIG_DB whose tables and rows are all objects (what SONiC prints)
// is decoded in one pass; only other documents take the tolerant path
// that decodes each level on its own (which scanned the text once per
// level and decoded every value with its own json.Unmarshal: the JSON
// decoding was 4% of a 64-switch plan's CPU). Both give the same DB
// (FuzzParseConfigDBPaths).
func ParseConfigDB(b []byte) (DB, error) {
	var all map[string]map[string]map[string]json.RawMessage
	if json.Unmarshal(b, &all) != nil {
		return parseConfigDBTolerant(b)
	}
	db := make(DB, len(all))
	for t, rows := range all {
		tab := make(map[string]map[string]string, len(rows))
		for k, fields := range rows {
			row := make(map[string]string, len(fields))
			for f, fv := range fields {
				row[f] = fieldValue(fv)
			}
			tab[k] = row
		}
		db[t] = tab
	}
	return db, nil
}

// fieldValue is a CONFIG_DB field's value: the string a JSON string
// holds, else the JSON text. A plain string (no escapes, valid UTF-8)
// is sliced out without a decoder.
func fieldValue(fv json.RawMessage) string {
	if n := len(fv); n >= 2 && fv[0] == '"' && fv[n-1] == '"' && bytes.IndexByte(fv, '\\') < 0 && utf8.Valid(fv) {
		return string(fv[1 : n-1])
	}
	var s string
	if json.Unmarshal(fv, &s) != nil {
		s = string(fv)
	}
	return s
}

// parseConfigDBTolerant decodes a CONFIG_DB level by level, skipping
// tables and rows that are not objects, each value with its own
// json.Unmarshal.
func parseConfigDBTolerant(b []byte) (DB, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("running configuration is not a CONFIG_DB JSON object: %w", err)
	}
	db := DB{}
	for t, tv := range raw {
		var rows map[string]json.RawMessage
		if json.Unmarshal(tv, &rows) != nil {
			continue
		}
		tab := map[string]map[string]string{}
		for k, rv := range rows {
			var fields map[string]json.RawMessage
			if json.Unmarshal(rv, &fields) != nil {
				continue
			}
			row := map[string]string{}
			for f, fv := range fields {
				var s string
				if json.Unmarshal(fv, &s) != nil {
					s = string(fv)
				}
				row[f] = s
			}
			tab[k] = row
		}
		db[t] = tab
	}
	return db, nil
}

// deref resolves a map reference in either style CONFIG_DB documents use:
// "[DSCP_TO_TC_MAP|AZURE]" (older) or "AZURE" (newer).
func deref(table, v string) string {
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		if t, k, ok := strings.Cut(v[1:len(v)-1], "|"); ok && t == table {
			return k
		}
	}
	return v
}

// ReadConfigDB normalises a running CONFIG_DB into fabctl's state paths
// for the settings the switch intent manages (its ports, its classes).
func ReadConfigDB(b []byte, sw *intent.Switch) (intent.State, error) {
	if sw == nil {
		return nil, errors.New("no switch intent")
	}
	db, err := ParseConfigDB(b)
	if err != nil {
		return nil, err
	}
	return db.State(sw), nil
}

// State is the normalised state of the rows fabctl manages.
func (db DB) State(sw *intent.Switch) intent.State {
	st := intent.State{}
	db = db.perPort() // rows keyed by a list of ports, as orchagent applies them (portlists.go)
	ports := db.managedPorts(sw)
	trust := db.readTrust(st, sw, ports)
	for tc := range db.tcs(ports) {
		db.readTC(st, ports, tc)
	}
	db.readWatchdog(st, ports)
	db.readPorts(st, sw, ports, trust)
	return st
}

// PortNames are the switch's ports: the PORT table's keys. SONiC's
// CONFIG_DB has a PORT row for every front-panel port of the HWSKU
// (port_config.ini), configured or not (Configuration.md "PORT";
// configdb-sample-reference-format.txt), so this is the port inventory
// (drivers.FactPorts).
func (db DB) PortNames() []string {
	out := make([]string, 0, len(db["PORT"]))
	for name := range db["PORT"] {
		out = append(out, name)
	}
	return out
}

// BufferModel is DEVICE_METADATA|localhost buffer_model; a switch without
// it runs the traditional model ("the default model used by all other
// vendors", sonic-device_metadata.yang: configdb-buffer-profile-metadata.txt:26-30).
func (db DB) BufferModel() string {
	if db["DEVICE_METADATA"]["localhost"]["buffer_model"] == ModelDynamic {
		return ModelDynamic
	}
	return ModelTraditional
}

// portTrust is what a PORT_QOS_MAP row classifies on; Inconsistent when
// rows covering the port disagree on a map (perPort).
func portTrust(q map[string]string) string {
	switch {
	case q["dscp_to_tc_map"] == Inconsistent || q["dot1p_to_tc_map"] == Inconsistent:
		return Inconsistent
	case q["dscp_to_tc_map"] != "":
		return spec.TrustDSCP
	case q["dot1p_to_tc_map"] != "":
		return spec.TrustPCP
	}
	return "none"
}

// readTrust reads the switch's trust and DSCP map; it returns the trust
// ("" when nothing classifies). DSCP trust is the global dscp_to_tc_map,
// the only global map orchagent applies (configdb-global-map-pfcwd.txt:20);
// PCP trust is per port (dot1p_to_tc_map on the managed ports), with
// fabctl's DOT1P_TO_TC_MAP row as the sign when no port is managed.
func (db DB) readTrust(st intent.State, sw *intent.Switch, ports []string) string {
	global := db["PORT_QOS_MAP"]["global"]
	trust, mapName := "", global["dscp_to_tc_map"]
	var pt, names []string
	for _, p := range ports {
		q := db["PORT_QOS_MAP"][p]
		pt = append(pt, portTrust(q))
		names = append(names, q["dscp_to_tc_map"])
	}
	common, some := agree(pt)
	switch {
	case mapName != "":
		trust = spec.TrustDSCP
	case some && common == spec.TrustDSCP:
		// Older images bind the DSCP map per port only (no global row).
		trust = spec.TrustDSCP
		mapName, _ = agree(names)
	case some && common == spec.TrustPCP:
		trust = spec.TrustPCP
	case !some:
		if _, has := db["DOT1P_TO_TC_MAP"][MapName]; has {
			trust = spec.TrustPCP
		}
	default:
		// The ports disagree: take the majority's way.
		n := 0
		for _, v := range pt {
			if v == spec.TrustPCP {
				n++
			}
		}
		if 2*n > len(pt) {
			trust = spec.TrustPCP
		}
	}
	if trust != "" {
		st["trust"] = trust
	}
	if trust == spec.TrustDSCP && sw.Transport != "infiniband" {
		name := deref("DSCP_TO_TC_MAP", mapName)
		var table [64]int
		for k, v := range db["DSCP_TO_TC_MAP"][name] {
			d, err1 := strconv.Atoi(k)
			tc, err2 := strconv.Atoi(v)
			if err1 == nil && err2 == nil && d >= 0 && d < 64 {
				table[d] = tc
			}
		}
		intent.PutDSCP(st, "", &table)
	}
	return trust
}

// managedPorts are the ports the intent manages that exist on the switch.
func (db DB) managedPorts(sw *intent.Switch) []string {
	var ports []string
	for _, p := range sw.Ports {
		if _, ok := db["PORT"][p.Name]; ok {
			ports = append(ports, p.Name)
		}
	}
	return ports
}

// agree returns the common value of per-port values, Inconsistent when
// they differ, ok=false when no port has one.
func agree(vals []string) (string, bool) {
	out, seen := "", false
	for _, v := range vals {
		if v == "" {
			continue
		}
		if seen && v != out {
			return Inconsistent, true
		}
		out, seen = v, true
	}
	return out, seen
}

// tcs are the traffic classes: from the queues of the managed ports, or
// from fabctl's own scheduler rows when there are none.
func (db DB) tcs(ports []string) map[int]bool {
	tcs := map[int]bool{}
	for k := range db["QUEUE"] {
		p, q, _ := strings.Cut(k, "|")
		if n, err := strconv.Atoi(q); err == nil && n >= 0 && n < 8 && contains(ports, p) {
			tcs[n] = true
		}
	}
	if len(ports) == 0 {
		for k := range db["SCHEDULER"] {
			if n, err := strconv.Atoi(strings.TrimPrefix(k, "FABCTL_TC")); err == nil && strings.HasPrefix(k, "FABCTL_TC") && n >= 0 && n < 8 {
				tcs[n] = true
			}
		}
	}
	return tcs
}

// readTC reads one traffic class across the managed ports' queues and
// priority groups: scheduler, WRED/ECN, lossless and headroom.
func (db DB) readTC(st intent.State, ports []string, tc int) {
	pre := "tc/" + strconv.Itoa(tc) + "/"
	var sched, wred, pg []string
	for _, p := range ports {
		qrow := db["QUEUE"][p+"|"+strconv.Itoa(tc)]
		sched = append(sched, deref("SCHEDULER", qrow["scheduler"]))
		wred = append(wred, deref("WRED_PROFILE", qrow["wred_profile"]))
		pg = append(pg, strconv.FormatBool(db.losslessPG(p, tc)))
	}
	if len(ports) == 0 {
		sched = []string{schedName(tc)}
		if _, ok := db["WRED_PROFILE"][wredName(tc)]; ok {
			wred = []string{wredName(tc)}
		}
	}
	db.readScheduler(st, pre, sched)
	db.readWRED(st, pre, wred)
	db.readPG(st, pre, pg)
}

// readScheduler reads the queues' scheduler (names per port).
func (db DB) readScheduler(st intent.State, pre string, sched []string) {
	if s, ok := agree(sched); ok {
		if s == Inconsistent {
			st[pre+"sched"] = Inconsistent
		} else if r := db["SCHEDULER"][s]; strings.EqualFold(r["type"], "STRICT") {
			st[pre+"sched"] = "strict"
		} else {
			st[pre+"sched"] = "ets"
			st[pre+"bandwidth"] = r["weight"]
		}
	}
}

// readWRED reads the queues' WRED profile (names per port).
func (db DB) readWRED(st intent.State, pre string, wred []string) {
	if w, ok := agree(wred); ok {
		if w == Inconsistent {
			st[pre+"ecn/min"] = Inconsistent
		} else if r, ok := db["WRED_PROFILE"][w]; ok {
			st[pre+"ecn/min"] = r["green_min_threshold"]
			st[pre+"ecn/max"] = r["green_max_threshold"]
			st[pre+"ecn/probability"] = normFloat(r["green_drop_probability"])
		}
	}
}

// readPG reads lossless from the priority groups ("true"/"false" per port).
func (db DB) readPG(st intent.State, pre string, pg []string) {
	st[pre+"lossless"] = "false"
	if v, ok := agree(pg); ok {
		st[pre+"lossless"] = v
	}
}

// losslessPG reports whether traffic class tc lands in a lossless priority
// group on port p: its PG (the port's tc_to_pg_map, identity when unset)
// is covered by a BUFFER_PG key ("3" or a range "3-4", as the templates
// and buffermgrd write them: configdb-buffer-pg.txt) whose profile
// reserves headroom: "NULL" (dynamic model, computed by buffermgrd), a
// profile with xoff (pg_lossless_*), or headroom_type dynamic
// (Configuration.md BUFFER_PG / Buffer profile). The lossy PG 0 profile
// (ingress_lossy_profile: dynamic_th, pool, size only) is not lossless.
func (db DB) losslessPG(p string, tc int) bool {
	pg := tc
	if m := deref("TC_TO_PRIORITY_GROUP_MAP", db["PORT_QOS_MAP"][p]["tc_to_pg_map"]); m != "" {
		if v, err := strconv.Atoi(db["TC_TO_PRIORITY_GROUP_MAP"][m][strconv.Itoa(tc)]); err == nil {
			pg = v
		}
	}
	for k, r := range db["BUFFER_PG"] {
		port, pgs, _ := strings.Cut(k, "|")
		lo, hi, ok := parsePG(pgs)
		if port != p || !ok || pg < lo || pg > hi {
			continue
		}
		prof := deref("BUFFER_PROFILE", r["profile"])
		if prof == "NULL" {
			return true
		}
		pr := db["BUFFER_PROFILE"][prof]
		if pr["xoff"] != "" || pr["headroom_type"] == "dynamic" {
			return true
		}
	}
	return false
}

// readWatchdog reads the PFC watchdog: the global poll interval and the
// managed ports' common settings.
func (db DB) readWatchdog(st intent.State, ports []string) {
	if v, ok := db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"]; ok {
		st["pfcwd/poll"] = v + "ms"
	}
	var det, res, act []string
	for _, p := range ports {
		r := db["PFC_WD"][p]
		det, res, act = append(det, r["detection_time"]), append(res, r["restoration_time"]), append(act, r["action"])
	}
	if v, ok := agree(det); ok {
		st["pfcwd/detect"] = msOrRaw(v)
	}
	if v, ok := agree(res); ok {
		st["pfcwd/restore"] = msOrRaw(v)
	}
	if v, ok := agree(act); ok {
		st["pfcwd/action"] = v
	}
}

// readPorts reads the managed ports: MTU, PFC, watchdog, pause, trust,
// cable length.
func (db DB) readPorts(st intent.State, sw *intent.Switch, ports []string, trust string) {
	byName := map[string]intent.Port{}
	for _, p := range sw.Ports {
		byName[p.Name] = p
	}
	for _, name := range ports {
		pre := "port/" + name + "/"
		if mtu, err := strconv.Atoi(db["PORT"][name]["mtu"]); err == nil {
			st[pre+"mtu"] = strconv.Itoa(mtu) // the IP MTU (orchagent-port-mtu.txt)
		}
		q := db["PORT_QOS_MAP"][name]
		st[pre+"pfc"] = normInts(q["pfc_enable"])
		_, wd := db["PFC_WD"][name]
		st[pre+"pfcwd"] = strconv.FormatBool(wd)
		st[pre+"pause"] = "false" // SONiC has no 802.3x setting in CONFIG_DB
		if pt := portTrust(q); pt != trust {
			st[pre+"trust"] = portTrust(q)
		}
		for _, row := range db["CABLE_LENGTH"] {
			if v, ok := row[name]; ok {
				st[pre+"cable"] = cable(v, byName[name].CableLength)
				break
			}
		}
	}
}

// cable reads "5m". CABLE_LENGTH holds whole metres: a desired 2.5 m is
// rendered "3m", so a live value equal to the desired one rounded up
// reads as the desired value (quantisation, not drift).
func cable(v string, want spec.Length) string {
	n, err := strconv.ParseFloat(strings.TrimSuffix(v, "m"), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return v
	}
	if want > 0 && math.Ceil(float64(want)) == n {
		return strconv.FormatFloat(float64(want), 'f', -1, 64) + "m"
	}
	return strconv.FormatFloat(n, 'f', -1, 64) + "m"
}

func msOrRaw(v string) string {
	if _, err := strconv.Atoi(v); err == nil {
		return v + "ms"
	}
	return v
}

func normFloat(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return v
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func normInts(v string) string {
	if v == "" {
		return ""
	}
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return v
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return ints(out)
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
