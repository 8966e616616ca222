package sonic

import (
	"maps"
	"strconv"
	"strings"
)

// Rows keyed by a list of ports. SONiC's own documentation writes a
// PORT_QOS_MAP row for several ports at once, its key the ports joined
// by commas (sonic-buildimage @ 086b03bd src/sonic-yang-models/doc/
// Configuration.md l.2377-2390, "Ethernet50,Ethernet52,Ethernet54,
// Ethernet56"; testdata/vendor/sonic/configdb-qos.txt), and orchagent
// applies such a row to every port it lists: sonic-swss @ e6b0c5b5
// orchagent/qosorch.cpp l.2058 (handlePortQosMapTable: port_names =
// tokenize(key, list_item_delimiter), ',' in orchagent/orch.h l.34), the
// maps, pfc_enable and pfcwd_sw_enable set port by port (l.2175-2226).
// QUEUE keys take a port list and a queue range ("Ethernet0,Ethernet4|3-4":
// qosorch.cpp l.1806-1811, Orch::parseIndexRange in orch.cpp l.1049-1076,
// which refuses a range whose low end is not below its high end), and
// BUFFER_PG keys a port list (bufferorch.cpp l.1327).
//
// Read sees the rows as orchagent applies them: perPort splits each such
// row into one row per port (and per queue). A port that two rows cover
// (its own and a list's, or two lists) gets what the rows agree on; a
// field they do not agree on (a value, or a field one row lacks) depends
// on the order orchagent processed them (each SET replaces the port's
// maps: qosorch.cpp l.2158-2173), so it reads Inconsistent and never
// equals a desired value.

// listTables are the tables whose keys orchagent splits, and whether the
// part after '|' is an index range orchagent splits too.
var listTables = map[string]bool{"PORT_QOS_MAP": false, "QUEUE": true, "BUFFER_PG": false}

// perPort returns db with the list-keyed rows of listTables split; db
// itself when it has none (the tables are then shared, not copied).
func (db DB) perPort() DB {
	var out DB
	for table, ranges := range listTables {
		tab := db[table]
		if !hasListKey(tab, ranges) {
			continue
		}
		if out == nil {
			out = maps.Clone(db)
		}
		out[table] = splitRows(tab, ranges)
	}
	if out == nil {
		return db
	}
	return out
}

func hasListKey(tab map[string]map[string]string, ranges bool) bool {
	for k := range tab {
		ports, idx, _ := strings.Cut(k, "|")
		if strings.Contains(ports, ",") || (ranges && strings.Contains(idx, "-")) {
			return true
		}
	}
	return false
}

// splitRows splits a table's keys (see perPort) and merges the rows that
// cover the same port (and index).
func splitRows(tab map[string]map[string]string, ranges bool) map[string]map[string]string {
	cover := map[string][]map[string]string{}
	for k, row := range tab {
		for _, e := range splitKey(k, ranges) {
			cover[e] = append(cover[e], row)
		}
	}
	out := make(map[string]map[string]string, len(cover))
	for k, rows := range cover {
		out[k] = mergeRows(rows)
	}
	return out
}

// splitKey is the keys one row stands for: "global" and a port's own
// key are themselves; a malformed range (orchagent refuses the row) is
// none.
func splitKey(k string, ranges bool) []string {
	ports, idx, hasIdx := strings.Cut(k, "|")
	idxs := []string{idx}
	if ranges && hasIdx && strings.Contains(idx, "-") {
		a, b, _ := strings.Cut(idx, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || lo < 0 || lo >= hi || hi > 63 {
			return nil
		}
		idxs = idxs[:0]
		for i := lo; i <= hi; i++ {
			idxs = append(idxs, strconv.Itoa(i))
		}
	}
	var out []string
	for _, p := range strings.Split(ports, ",") {
		if p == "" {
			continue
		}
		for _, i := range idxs {
			if hasIdx {
				out = append(out, p+"|"+i)
			} else {
				out = append(out, p)
			}
		}
	}
	return out
}

// mergeRows is the row a port gets from the rows that cover it: a field
// the rows do not all hold with one value is Inconsistent.
func mergeRows(rows []map[string]string) map[string]string {
	if len(rows) == 1 {
		return rows[0]
	}
	out := map[string]string{}
	for _, r := range rows {
		for f := range r {
			out[f] = r[f]
		}
	}
	for f, v := range out {
		for _, r := range rows {
			if w, ok := r[f]; !ok || w != v {
				out[f] = Inconsistent
				break
			}
		}
	}
	return out
}
