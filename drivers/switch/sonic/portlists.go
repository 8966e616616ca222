package sonic

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
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
		if isListKey(k, ranges) {
			return true
		}
	}
	return false
}

// isListKey reports whether orchagent splits the key: a list of ports,
// or (QUEUE) an index range.
func isListKey(k string, ranges bool) bool {
	ports, idx, _ := strings.Cut(k, "|")
	return strings.Contains(ports, ",") || (ranges && strings.Contains(idx, "-"))
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

// Writing next to a list row. Apply writes a port's own rows
// (PORT_QOS_MAP|Ethernet0, QUEUE|Ethernet0|3, BUFFER_PG|Ethernet0|3-4);
// next to a list row that covers the same port the two would disagree,
// read Inconsistent and never converge. And GCU refuses any patch whose
// target CONFIG_DB holds a list row at all: it simulates the patch on the
// running CONFIG_DB and validates the whole result against the SONiC
// YANG (sonic-utilities @691b1bbc generic_config_updater/
// generic_updater.py PatchApplier.apply l.106-121, patch_sorter.py
// StrictPatchSorter.sort l.2401-2415), whose PORT_QOS_MAP, QUEUE and BUFFER_PG
// keys are leafrefs to one PORT name (sonic-port-qos-map.yang ifname,
// sonic-queue.yang ifname, sonic-buffer-pg.yang port, in ../shared/yang/
// sonic). So a patch that changes anything first removes every list row
// and adds one row per key it stands for (splitKey) with the list row's
// fields; fabctl's own operations then change the ports the plan
// changes. The other listed ports keep the list row's values, each in its
// own row, which orchagent applies the same way (qosorch.cpp l.2058, per
// port). A port that already had its own row keeps it and gains the list
// row's fields it lacked (its own row's fields were order-dependent
// before; Read showed them Inconsistent); a row with a range orchagent
// refuses is removed, as it never took effect. It is one patch: GCU
// validates its result as a whole, and its sorter orders the changes so
// that each intermediate CONFIG_DB validates too (FullConfigMoveValidator
// l.866-875), widening a move up to its parent table or the whole
// CONFIG_DB where no narrower one does (UpperLevelMoveExtender
// l.2087-2106); the emulator applies the patch at once and validates
// the result. A rollback cannot
// write a list row back through GCU (`config replace` and `config
// rollback` apply through the same PatchApplier: ConfigReplacer.replace
// l.171-183, FileSystemConfigRollbacker.rollback l.208-220): Rollback and
// the recovery of a failed apply restore the prior CONFIG_DB with its
// list rows split the same way and say so (hooks.go, splitRestored).

// splitAllListRows splits, in doc, every list row of listTables (tables
// and keys sorted) and returns the operations that do it.
func splitAllListRows(doc map[string]any) []Op {
	var out []Op
	for _, table := range []string{"BUFFER_PG", "PORT_QOS_MAP", "QUEUE"} {
		ranges := listTables[table]
		tab, _ := doc[table].(map[string]any)
		var keys []string
		for k := range tab {
			if isListKey(k, ranges) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			row, _ := tab[k].(map[string]any)
			delete(tab, k)
			out = append(out, Op{Op: "remove", Path: ptr(table, k)})
			for _, e := range splitKey(k, ranges) {
				merged := map[string]any{}
				for f, v := range row {
					merged[f] = v
				}
				if own, ok := tab[e].(map[string]any); ok {
					for f, v := range own {
						merged[f] = v
					}
				}
				tab[e] = merged
				out = append(out, Op{Op: "add", Path: ptr(table, e), Value: toAny(merged)})
			}
		}
	}
	return out
}

// FactListRows lists the running CONFIG_DB's list rows (listTables), one
// "TABLE|key" a line, so that plan says which of them the apply splits.
const FactListRows = drivers.PathFacts + "list-rows"

func listRowsFact(db DB) string {
	var out []string
	for table, ranges := range listTables {
		for k := range db[table] {
			if isListKey(k, ranges) {
				out = append(out, table+"|"+k)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// noteSplits says, in the first step that writes anything, which list
// rows of the switch the planner read the apply splits (splitAllListRows).
func noteSplits(steps []drivers.Change, live intent.State) []drivers.Change {
	if live[FactListRows] == "" {
		return steps
	}
	var rows []string
	for _, l := range strings.Split(live[FactListRows], "\n") {
		if table, k, ok := strings.Cut(l, "|"); ok {
			rows = append(rows, fmt.Sprintf("%s|%q", table, k))
		}
	}
	for i := range steps {
		if len(steps[i].Payload) > 0 {
			steps[i].Summary += "; splits the list row(s) " + strings.Join(rows, ", ") +
				" into one row per listed port with the list row's values (SONiC's YANG keys these tables by one port, and GCU validates the whole result)"
			break
		}
	}
	return steps
}

// listKeys names the list rows the ops (splitAllListRows) remove.
func listKeys(ops []Op) string {
	var out []string
	for _, o := range ops {
		if o.Op == "remove" {
			if parts, err := split(o.Path); err == nil && len(parts) == 2 {
				out = append(out, fmt.Sprintf("%s|%q", parts[0], parts[1]))
			}
		}
	}
	return strings.Join(out, ", ")
}

// hasListRows reports whether a `show runningconfiguration all` output
// holds a list row of listTables.
func hasListRows(running []byte) bool {
	db, err := ParseConfigDB(running)
	return err == nil && listRowsFact(db) != ""
}
