package sonicemu

import (
	"fmt"
	"sort"
	"strings"
)

// commit makes target the running CONFIG_DB and runs what buffermgrd does
// with the change (sw.mu held).
func (sw *Switch) commit(target map[string]any) {
	prev := sw.db
	sw.db = target
	if str(rowOf(target, "DEVICE_METADATA", "localhost")["buffer_model"]) != "dynamic" {
		buffermgrdTraditional(prev, target)
	}
}

// pgProfile is one line of pg_profile_lookup.ini.
type pgProfile struct{ size, xon, xoff, threshold, xonOffset string }

// pgLookup is the SONiC virtual switch's pg_profile_lookup.ini
// (sonic-net/sonic-buildimage @ 086b03bd device/virtual/x86_64-kvm_x86_64-r0/
// SONiC-VM/pg_profile_lookup.ini; testdata/vendor/sonic/buffermgrd-traditional.txt):
// every speed 10000..100000 with cable 5m, 40m or 300m has size 56368,
// xon 18432, xoff 55120, threshold -3, xon_offset 2496.
func pgLookup(speed, cable string) (pgProfile, bool) {
	switch speed {
	case "10000", "25000", "40000", "50000", "100000":
	default:
		return pgProfile{}, false
	}
	switch cable {
	case "5m", "40m", "300m":
		return pgProfile{"56368", "18432", "55120", "-3", "2496"}, true
	}
	return pgProfile{}, false
}

// buffermgrdTraditional does what sonic-swss cfgmgr/buffermgr.cpp
// (BufferMgr::doSpeedUpdateTask, @ e6b0c5b5; buffermgrd-traditional.txt)
// does in the traditional buffer model when a port's speed, cable length
// (CABLE_LENGTH) or PORT_QOS_MAP pfc_enable changes: it needs all three
// (else it waits or logs), skips cable "0m", looks the profile
// pg_lossless_<speed>_<cable>_profile up in pg_profile_lookup.ini (none:
// error, nothing written), creates it in BUFFER_PROFILE unless it exists
// (pool ingress_lossless_pool, xon, xon_offset, xoff, size, and
// <pool mode>_th; the emulator has no BUFFER_POOL and uses dynamic_th, the
// mode of the stock ingress_lossless_pool), and writes
// BUFFER_PG|<port>|<pgs> = that profile for the pfc_enable PGs,
// consecutive PGs as one range ("3-4"), unless the row already names it.
// It never removes a PG row when pfc_enable shrinks (only on an admin-down
// port of a Mellanox or Barefoot platform, which this is not).
func buffermgrdTraditional(prev, next map[string]any) {
	ports := rowsOf(next, "PORT")
	names := make([]string, 0, len(ports))
	for p := range ports {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, port := range names {
		speed := str(ports[port]["speed"])
		cable := cableOf(next, port)
		pfc, hasPFC := rowOf(next, "PORT_QOS_MAP", port)["pfc_enable"]
		oldPFC, oldHas := rowOf(prev, "PORT_QOS_MAP", port)["pfc_enable"]
		oldSpeed := str(rowOf(prev, "PORT", port)["speed"])
		if speed == oldSpeed && cable == cableOf(prev, port) && hasPFC == oldHas && str(pfc) == str(oldPFC) {
			continue // no event for this port
		}
		if cable == "" || cable == "0m" || !hasPFC {
			continue
		}
		prof, ok := pgLookup(speed, cable)
		if !ok {
			continue // "No PG profile configured for speed %s and cable length %s"
		}
		name := fmt.Sprintf("pg_lossless_%s_%s_profile", speed, cable)
		profiles := tableOf(next, "BUFFER_PROFILE")
		if _, ok := profiles[name]; !ok {
			profiles[name] = map[string]any{"pool": "ingress_lossless_pool", "xon": prof.xon, "xon_offset": prof.xonOffset,
				"xoff": prof.xoff, "size": prof.size, "dynamic_th": prof.threshold}
		}
		pgs := map[int]bool{}
		for _, s := range strings.Split(str(pfc), ",") {
			var n int
			if _, err := fmt.Sscanf(s, "%d", &n); err == nil && n >= 0 && n < 8 {
				pgs[n] = true
			}
		}
		bpg := tableOf(next, "BUFFER_PG")
		for _, r := range ranges(pgs) {
			key := port + "|" + r
			if row, ok := bpg[key].(map[string]any); ok && str(row["profile"]) == name {
				continue
			}
			bpg[key] = map[string]any{"profile": name}
		}
		if len(bpg) == 0 {
			delete(next, "BUFFER_PG")
		}
	}
}

// ranges groups a PG set like buffermgr.cpp generateIdListFromMap:
// consecutive ids as "lo-hi", single ids alone.
func ranges(set map[int]bool) []string {
	var out []string
	for i := 0; i < 8; i++ {
		if !set[i] {
			continue
		}
		j := i
		for j+1 < 8 && set[j+1] {
			j++
		}
		if i == j {
			out = append(out, fmt.Sprint(i))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", i, j))
		}
		i = j
	}
	return out
}

func cableOf(db map[string]any, port string) string {
	for _, row := range rowsOf(db, "CABLE_LENGTH") {
		if v, ok := row[port]; ok {
			return str(v)
		}
	}
	return ""
}

func rowOf(db map[string]any, table, key string) map[string]any {
	t, _ := db[table].(map[string]any)
	r, _ := t[key].(map[string]any)
	if r == nil {
		return map[string]any{}
	}
	return r
}

func rowsOf(db map[string]any, table string) map[string]map[string]any {
	out := map[string]map[string]any{}
	t, _ := db[table].(map[string]any)
	for k, v := range t {
		if r, ok := v.(map[string]any); ok {
			out[k] = r
		}
	}
	return out
}

func tableOf(db map[string]any, table string) map[string]any {
	t, ok := db[table].(map[string]any)
	if !ok {
		t = map[string]any{}
		db[table] = t
	}
	return t
}
