package sonicemu

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// YANG reports whether the emulator validates against SONiC YANG models.
func (sw *Switch) YANG() bool { return sw.opts.YANG != nil }

// validate checks a whole target CONFIG_DB: against the SONiC YANG models
// when the emulator has them (what GCU does), else with the hand-copied
// constraints below.
func (sw *Switch) validate(db map[string]any) error {
	if sw.opts.YANG != nil {
		if err := validateYANG(sw.opts.YANG, db); err != nil {
			return err
		}
		// the whole patched CONFIG_DB with its must/when/mandatory, as
		// GCU's sonic-yang validation does (libyang; nil without it)
		if sw.opts.Profile == nil {
			return nil
		}
		return libyang.ValidateConfigDBDir(sw.opts.YANG.Dir(), *sw.opts.Profile, db)
	}
	return validate(db)
}

// validateYANG validates a whole CONFIG_DB with yangval. Errors are
// joined sorted, one per violation, each naming the data path.
func validateYANG(s *yangval.Schema, db map[string]any) error {
	cdb := make(yangval.ConfigDB, len(db))
	for table, v := range db {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: table is not an object", table)
		}
		rowsOut := make(map[string]map[string]any, len(m))
		for key, rv := range m {
			row, ok := rv.(map[string]any)
			if !ok {
				return fmt.Errorf("%s|%s: entry is not an object", table, key)
			}
			rowsOut[key] = row
		}
		cdb[table] = rowsOut
	}
	var msgs []string
	for _, e := range s.ValidateConfigDB(cdb) {
		// yangval maps rows onto lists only; a table modelled as a
		// container of containers (DEVICE_METADATA|localhost) is checked
		// here, field by field.
		if top, table, ok := containerTable(e); ok {
			key := strings.TrimPrefix(e.Path, "/"+table+"|")
			msgs = append(msgs, validateContainerRow(s, top, table, key, cdb[table][key])...)
			continue
		}
		msgs = append(msgs, e.Error())
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// containerTable recognises yangval's "no list in /MOD:TOP/TABLE has a key
// of 1 part(s)" for a row key: the table may be a container of containers.
func containerTable(e yangval.Error) (top, table string, ok bool) {
	const pre, suf = "no list in ", " has a key of 1 part(s)"
	if !strings.HasPrefix(e.Msg, pre) || !strings.HasSuffix(e.Msg, suf) {
		return "", "", false
	}
	sp := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimPrefix(e.Msg, pre), suf), "/"), "/")
	if len(sp) != 2 || !strings.HasPrefix(e.Path, "/"+sp[1]+"|") {
		return "", "", false
	}
	return sp[0], sp[1], true
}

// validateContainerRow validates CONFIG_DB row TABLE|key as the container
// key of container TABLE of top (RFC 7951 at the root). CONFIG_DB values
// are strings; a field passes when the string, or its boolean or number
// reading, is valid (RFC 7951 wants JSON booleans and numbers).
func validateContainerRow(s *yangval.Schema, top, table, key string, row map[string]any) []string {
	doc := func(fields map[string]any) map[string]any {
		return map[string]any{top: map[string]any{table: map[string]any{key: fields}}}
	}
	if errs := s.Validate("/", doc(map[string]any{}), yangval.Options{}); len(errs) > 0 {
		return []string{fmt.Sprintf("/%s|%s: no list or container in /%s/%s for this key", table, key, top, table)}
	}
	var out []string
	for _, f := range sortedKeys(row) {
		v := row[f]
		cands := []any{v}
		if sv, ok := v.(string); ok {
			if b, err := strconv.ParseBool(sv); err == nil {
				cands = append(cands, b)
			}
			if _, err := strconv.ParseFloat(sv, 64); err == nil {
				cands = append(cands, json.Number(sv))
			}
		}
		var first []yangval.Error
		for i, c := range cands {
			errs := s.Validate("/", doc(map[string]any{f: c}), yangval.Options{})
			if len(errs) == 0 {
				first = nil
				break
			}
			if i == 0 {
				first = errs
			}
		}
		for _, e := range first {
			out = append(out, e.Error())
		}
	}
	return out
}

// validate checks a whole target CONFIG_DB against the constraints of
// the SONiC YANG models (sonic-buildimage src/sonic-yang-models/yang-models)
// for the tables fabctl touches: ranges, patterns and leafrefs. Errors read
// like libyang's, which GCU reports after "Given patch will produce invalid
// config. Error: ". This is a hand transcription, not a YANG engine: a
// table it does not know passes.
func validate(db map[string]any) error {
	ports := keysOf(db, "PORT")
	has := func(table, key string) bool {
		_, ok := keysOf(db, table)[deref(table, key)]
		return ok
	}
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	portRef := func(table, port string) {
		if _, ok := ports[port]; !ok {
			bad("%s: Leafref \"/sonic-port:sonic-port/sonic-port:PORT/sonic-port:PORT_LIST/sonic-port:name\" of value \"%s\" points to a non-existing leaf.", table, port)
		}
	}
	rng := func(where, v string, lo, hi int) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			bad("%s: Value \"%s\" does not satisfy the constraint \"%d..%d\" (range, length, or pattern).", where, v, lo, hi)
		}
	}
	prioList := regexp.MustCompile(`^([0-7](,[0-7])*)?$`)

	for name, f := range rows(db, "PORT") {
		if v, ok := f["mtu"]; ok {
			rng("PORT["+name+"]/mtu", str(v), 68, 9216) // sonic-port.yang: uint16 range 68..9216
		}
	}
	for name, f := range rows(db, "PORT_QOS_MAP") {
		if name != "global" {
			portRef("PORT_QOS_MAP", name)
		}
		for field, table := range map[string]string{
			"dscp_to_tc_map": "DSCP_TO_TC_MAP", "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
			"tc_to_queue_map": "TC_TO_QUEUE_MAP", "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
			"pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE", "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
			"scheduler": "SCHEDULER",
		} {
			if v, ok := f[field]; ok && !has(table, str(v)) {
				bad("PORT_QOS_MAP[%s]/%s: Leafref to %s of value \"%s\" points to a non-existing leaf.", name, field, table, str(v))
			}
		}
		for _, field := range []string{"pfc_enable", "pfcwd_sw_enable"} {
			if v, ok := f[field]; ok && !prioList.MatchString(str(v)) {
				bad("PORT_QOS_MAP[%s]/%s: Value \"%s\" does not satisfy the constraint \"([0-7](,[0-7])*)?\" (range, length, or pattern).", name, field, str(v))
			}
		}
	}
	for key, f := range rows(db, "QUEUE") {
		port, _, _ := strings.Cut(key, "|")
		if port != "CPU" {
			portRef("QUEUE", port)
		}
		if v, ok := f["scheduler"]; ok && !has("SCHEDULER", str(v)) {
			bad("QUEUE[%s]/scheduler: Leafref to SCHEDULER of value \"%s\" points to a non-existing leaf.", key, str(v))
		}
		if v, ok := f["wred_profile"]; ok && !has("WRED_PROFILE", str(v)) {
			bad("QUEUE[%s]/wred_profile: Leafref to WRED_PROFILE of value \"%s\" points to a non-existing leaf.", key, str(v))
		}
	}
	pgNum := regexp.MustCompile(`^[0-7](-[0-7])?$`)
	for key, f := range rows(db, "BUFFER_PG") {
		port, pg, _ := strings.Cut(key, "|")
		portRef("BUFFER_PG", port)
		if !pgNum.MatchString(pg) {
			bad("BUFFER_PG[%s]/pg_num: Value \"%s\" does not satisfy the constraint \"[0-7]((-)[0-7])?\" (range, length, or pattern).", key, pg)
		}
		if v, ok := f["profile"]; ok && str(v) != "NULL" && !has("BUFFER_PROFILE", str(v)) {
			bad("BUFFER_PG[%s]/profile: Leafref to BUFFER_PROFILE of value \"%s\" points to a non-existing leaf.", key, str(v))
		}
	}
	for name, f := range rows(db, "PFC_WD") {
		if name == "GLOBAL" {
			if v, ok := f["POLL_INTERVAL"]; ok {
				rng("PFC_WD[GLOBAL]/POLL_INTERVAL", str(v), 100, 1000)
			}
			continue
		}
		portRef("PFC_WD", name)
		if v, ok := f["detection_time"]; ok {
			rng("PFC_WD["+name+"]/detection_time", str(v), 100, 5000)
		}
		if v, ok := f["restoration_time"]; ok {
			rng("PFC_WD["+name+"]/restoration_time", str(v), 100, 60000)
		}
		if v, ok := f["action"]; ok {
			switch str(v) {
			case "drop", "forward", "alert":
			default:
				bad("PFC_WD[%s]/action: Invalid value \"%s\" in \"action\" element.", name, str(v))
			}
		}
	}
	for name, f := range rows(db, "SCHEDULER") {
		if v, ok := f["weight"]; ok {
			rng("SCHEDULER["+name+"]/weight", str(v), 1, 100)
		}
		if v, ok := f["type"]; ok && str(v) != "DWRR" && str(v) != "WRR" && str(v) != "STRICT" {
			bad("SCHEDULER[%s]/type: Invalid value \"%s\" in \"type\" element.", name, str(v))
		}
	}
	length := regexp.MustCompile(`^[0-9]+m$`)
	for name, f := range rows(db, "CABLE_LENGTH") {
		for port, v := range f {
			portRef("CABLE_LENGTH["+name+"]", port)
			if !length.MatchString(str(v)) {
				bad("CABLE_LENGTH[%s]/%s: Value \"%s\" does not satisfy the constraint \"[0-9]+m\" (range, length, or pattern).", name, port, str(v))
			}
		}
	}
	for _, table := range []string{"DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "DOT1P_TO_TC_MAP"} {
		for name, f := range rows(db, table) {
			for k, v := range f {
				if _, err := strconv.Atoi(k); err != nil {
					bad("%s[%s]: Invalid key \"%s\".", table, name, k)
				}
				if _, err := strconv.Atoi(str(v)); err != nil {
					bad("%s[%s]/%s: Invalid value \"%s\".", table, name, k, str(v))
				}
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

// deref accepts both reference styles: "[DSCP_TO_TC_MAP|AZURE]" and "AZURE".
func deref(table, v string) string {
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		t, k, ok := strings.Cut(v[1:len(v)-1], "|")
		if ok && t == table {
			return k
		}
	}
	return v
}

func keysOf(db map[string]any, table string) map[string]any {
	m, _ := db[table].(map[string]any)
	return m
}

func rows(db map[string]any, table string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for k, v := range keysOf(db, table) {
		if f, ok := v.(map[string]any); ok {
			out[k] = f
		} else {
			out[k] = map[string]any{}
		}
	}
	return out
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
