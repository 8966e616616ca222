package sonic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// What SONiC's generic config updater refuses on the PFC_WD table, so
// that fabctl never plans it. Sources: sonic-net/sonic-utilities
// @691b1bbc (SU), generic_config_updater/:
//
//   - gu_common.py validate_field_operation l.184-203: the operations of
//     jsonpatch's from_diff(current, target), never the patch as written;
//     `remove` of /PFC_WD/GLOBAL/POLL_INTERVAL or /PFC_WD/GLOBAL is
//     illegal. generic_updater.py: apply-patch (PatchApplier.apply
//     l.106-121), replace (ConfigReplacer.replace l.171-183) and rollback
//     (FileSystemConfigRollbacker.rollback l.208-220) all run it.
//   - field_operation_validators.py rdma_config_update_validator
//     (l.98-179, the PFC_WD table's validator in
//     gcu_field_operation_validators.conf.json): the ASIC is named from
//     DEVICE_METADATA|localhost hwsku (get_asic_name l.23-78); an
//     unknown ASIC refuses every PFC_WD change (l.99-101). An operation
//     whose value is a row or a table contributes its keys as written
//     (l.128-133): adding the PFC_WD table ("Ethernet0", "GLOBAL") or the
//     GLOBAL row ("global/POLL_INTERVAL") matches none of the scenario's
//     lower-case fields ("global/poll_interval", l.153) and is refused on
//     every ASIC; adding a port row ("action", ...) or a field, changing a
//     field and removing a port row pass.
//
// fabctl reads what GCU reads: the HWSKU from the running CONFIG_DB, and
// the image's asic_type and build_version from `show version`
// (sonic-utilities show/main.py version l.1739, l.1748: the values of
// /etc/sonic/sonic_version.yml that get_asic_name and
// rdma_config_update_validator_common take from
// device_info.get_sonic_version_info(), l.33, l.103-109). It names the
// ASIC as get_asic_name does (cisco-8000 and marvell-teralynx by
// asic_type alone; mellanox and vs from the Mellanox lists, broadcom and
// vs from the Broadcom ones) and compares the build's branch (its 8-digit
// part) with the scenario's minimum for that ASIC (l.163-168). A switch
// whose `show version` was not read (an older plan) is looked up in both
// vendors' lists and no branch is checked: Apply's check (gcuRefusal)
// then meets GCU's own refusal for the rest.

// gcuMellanoxSKUs and gcuBroadcomSKUs are helper_data's HWSKU lists
// (SU gcu_field_operation_validators.conf.json, last changed in
// 51cd8e92, l.19-47): Mellanox names match exactly, case-insensitively
// (l.43-67); Broadcom names match as substrings of the HWSKU (l.68-76).
var gcuMellanoxSKUs = map[string][]string{
	"spc1": {"ACS-MSN2700", "ACS-MSN2740", "ACS-MSN2100", "ACS-MSN2410", "ACS-MSN2010", "Mellanox-SN2700", "Mellanox-SN2700-C28D8", "Mellanox-SN2700-D40C8S8", "Mellanox-SN2700-D44C10", "Mellanox-SN2700-D48C8", "ACS-MSN2700-A1", "Mellanox-SN2700-A1", "Mellanox-SN2700-A1-C28D8", "Mellanox-SN2700-A1-D40C8S8", "Mellanox-SN2700-A1-D44C10", "Mellanox-SN2700-A1-D48C8"},
	"spc2": {"ACS-MSN3800", "Mellanox-SN3800-D112C8", "ACS-MSN3420", "ACS-MSN3700C", "ACS-MSN3700", "Mellanox-SN3800-C64", "Mellanox-SN3800-D100C12S2", "Mellanox-SN3800-D24C52", "Mellanox-SN3800-D28C49S1", "Mellanox-SN3800-D28C50"},
	"spc3": {"ACS-MSN4700", "ACS-MSN4600", "ACS-MSN4600C", "ACS-MSN4410", "ACS-SN4280", "Mellanox-SN4600C-D112C8", "Mellanox-SN4600C-C64", "Mellanox-SN4700-O8C48", "Mellanox-SN4600C-D100C12S2", "Mellanox-SN4600C-D48C40", "Mellanox-SN4700-O32", "Mellanox-SN4700-V64", "Mellanox-SN4700-A96C8V8", "Mellanox-SN4700-C128", "Mellanox-SN4700-O28", "Mellanox-SN4700-O8V48", "Mellanox-SN4700-V48C32", "Mellanox-SN4280-O28", "Mellanox-SN4280-O8C80", "Mellanox-SN4280-C48", "Mellanox-SN4280-O8C40", "Mellanox-SN4280-O8V40", "Mellanox-SN4280-O4X96"},
	"spc4": {"ACS-SN5600", "Mellanox-SN5600-O128", "Mellanox-SN5600-V256", "Mellanox-SN5600-C256S1", "ACS-SN5400", "Mellanox-SN5600-C224O8", "Mellanox-SN5610N-C256S2", "Mellanox-SN5610N-C224O8"},
	"spc5": {"ACS-SN5640", "Mellanox-SN5640-C512S2", "Mellanox-SN5640-C448O16", "Mellanox-SN5640-C512X2", "Mellanox-SN5640-C508O1X2", "Mellanox-SN5640-O128X2"},
	"spc6": {"ACS-SN6600_LD", "Mellanox-SN6600_LD-P128C2", "Mellanox-SN6600_LD-P64O128C2", "ACS-SN6810_LD"},
}

var gcuBroadcomSKUs = map[string][]string{
	"th":   {"Force10-S6100", "Arista-7060CX-32S-C32", "Arista-7060CX-32S-C32-T1", "Arista-7060CX-32S-D48C8", "Celestica-DX010-C32", "Seastone-DX010"},
	"th2":  {"Arista-7260CX3-D108C10", "Arista-7260CX3-D108C8", "Arista-7260CX3-C64", "Arista-7260CX3-Q44", "Arista-7260CX3-Q64"},
	"th3":  {"Nokia-IXR7220-H3"},
	"th4":  {"Nokia-IXR7220-H4-64D", "Nokia-IXR7220-H4-32D"},
	"th5":  {"Nokia-IXR7220-H5-64D", "Arista-7060X6-64DE", "Arista-7060X6-64PE", "Arista-7060X6-64PE-C224O8", "Arista-7060X6-64PE-C256S2", "Nokia-IXR7220-H5-64O", "Nokia-IXR7220-H5-32D", "Arista-7060X6-64PE-B-C512S2", "Arista-7060X6-64PE-B-C448O16", "Arista-7060X6-64PE-B-O128", "Arista-7060X6-64PE-B-O128S2", "Arista-7060X6-16PE-384C-B-O128S2", "Arista-7060X6-64PE-B-P32O64", "Arista-7060X6-64PE-B-P64", "Arista-7060X6-64PE-B-P32V128", "Arista-7060X6-64PE-O128", "Arista-7060X6-64PE-O128S2", "Arista-7060X6-64PE-P32O64", "Arista-7060X6-64PE-P64", "Arista-7060X6-64PE-P32V128"},
	"th6":  {"Nokia-IXR7220-H6-64", "Nokia-IXR7220-H6-P128", "Nokia-IXR7220-H6-O256"},
	"td2":  {"Force10-S6000", "Force10-S6000-Q24S32", "Arista-7050-QX32", "Arista-7050-QX-32S", "Nexus-3164", "Arista-7050QX32S-Q32"},
	"td3":  {"Arista-7050CX3-32C-C32", "Arista-7050CX3-32S-C32", "Arista-7050CX3-32S-D48C8", "Arista-7050CX3-32S-C28S4", "Arista-7050CX3-32C-C28S4"},
	"td4":  {"Nokia-IXR7220-D4-36D"},
	"j2c+": {"Nokia-IXR7250E-36x100G", "Nokia-IXR7250E-36x400G", "Nokia-IXR7250-X3B", "Arista-7800R3A-36DM2-D36"},
	"q2c+": {"Nokia-IXR7250-X1B"},
	"jr2":  {"Arista-7800R3-48CQ2-C48", "Arista-7800R3-48CQM2-C48", "Arista-7808R3A-FM"},
	"q3d":  {"Arista-7280R4-32QF-32DF-64O", "Arista-7280R4K-32QF-32DF-64O"},
}

// gcuPFCWDMin is the "PFCWD enable/disable" scenario's platforms (conf.json
// l.50-89): each ASIC GCU lets change PFC_WD and the oldest branch it
// allows it on. jr2 is named by helper_data but not here, so GCU refuses
// its PFC_WD changes too.
var gcuPFCWDMin = map[string]string{"spc1": "20181100", "spc2": "20191100", "spc3": "20220500", "spc4": "20221100",
	"spc5": "20241200", "spc6": "20260500", "td2": "20181100", "th": "20181100", "th2": "20181100", "th3": "20240500",
	"th4": "20240500", "th5": "20240500", "th6": "20251100", "td3": "20201200", "td4": "20241100", "q2c+": "20241100",
	"j2c+": "20220500", "q3d": "20251100", "cisco-8000": "20201200", "marvell-teralynx": "20241100"}

// image is what GCU's validator knows of the switch's SONiC image:
// sonic_version.yml's asic_type and build_version ("" not read).
type image struct{ asicType, build string }

// imageOf is the image the planner's Read found.
func imageOf(live intent.State) image { return image{live[FactASICType], live[FactBuild]} }

// gcuASIC names the switch's ASIC as get_asic_name does
// (field_operation_validators.py l.23-78), "" for "unknown".
func gcuASIC(img image, hwsku string) string {
	switch at := img.asicType; at {
	case "cisco-8000", "marvell-teralynx":
		return at
	case "mellanox", "vs", "broadcom", "":
		if at != "broadcom" {
			for a, skus := range gcuMellanoxSKUs {
				for _, s := range skus {
					if strings.EqualFold(s, hwsku) {
						return a
					}
				}
			}
		}
		if at != "mellanox" {
			for a, skus := range gcuBroadcomSKUs {
				for _, s := range skus {
					if hwsku != "" && strings.Contains(strings.ToLower(hwsku), strings.ToLower(s)) {
						return a
					}
				}
			}
		}
	}
	return ""
}

// branchOf is the build's branch as GCU takes it: the last part of the
// build_version, split at ".", that is exactly 8 digits ("" none;
// field_operation_validators.py l.103-109).
func branchOf(build string) string {
	b := ""
	for _, p := range strings.Split(build, ".") {
		if len(p) == 8 && strings.Trim(p, "0123456789") == "" {
			b = p
		}
	}
	return b
}

// skuRefusal is why GCU refuses every PFC_WD change on this switch (its
// image and HWSKU), "" when it does not.
func skuRefusal(img image, hwsku string) string {
	a := gcuASIC(img, hwsku)
	at := ""
	if img.asicType != "" {
		at = fmt.Sprintf(", asic_type %q", img.asicType)
	}
	if a == "" {
		return fmt.Sprintf("SONiC GCU refuses PFC_WD changes on HWSKU %q%s: it is in none of the ASIC lists of gcu_field_operation_validators.conf.json, and rdma_config_update_validator returns False for an unknown ASIC (sonic-utilities generic_config_updater/field_operation_validators.py l.99-101); configure the watchdog with the pfcwd CLI, outside fabctl", hwsku, at)
	}
	min, ok := gcuPFCWDMin[a]
	if !ok {
		return fmt.Sprintf("SONiC GCU refuses PFC_WD changes on HWSKU %q (ASIC %s): the PFCWD scenario of gcu_field_operation_validators.conf.json lists no branch for it (field_operation_validators.py l.162-163)", hwsku, a)
	}
	if b := branchOf(img.build); b != "" && b < min {
		return fmt.Sprintf("SONiC GCU refuses PFC_WD changes on this image: its branch %s (build_version %q) is older than %s, the PFCWD scenario's minimum for ASIC %s (sonic-utilities field_operation_validators.py l.163-168); configure the watchdog with the pfcwd CLI, outside fabctl", b, img.build, min, a)
	}
	return ""
}

const (
	// FactHWSKU is DEVICE_METADATA|localhost hwsku, the name GCU's
	// PFC_WD validator looks up.
	FactHWSKU = drivers.PathFacts + "hwsku"
	// FactPFCWD says which PFC_WD rows GCU could not create: "absent"
	// (no PFC_WD table), "no-global" (no PFC_WD|GLOBAL) or "global".
	FactPFCWD = drivers.PathFacts + "pfcwd-table"
	// FactASICType and FactBuild are the image's asic_type and
	// build_version as `show version` prints them ("ASIC: ", "SONiC
	// Software Version: SONiC.").
	FactASICType = drivers.PathFacts + "asic_type"
	FactBuild    = drivers.PathFacts + "build_version"
)

func pfcwdFact(db DB) string {
	t, ok := db["PFC_WD"]
	switch {
	case !ok || len(t) == 0:
		return "absent"
	case t["GLOBAL"] == nil:
		return "no-global"
	}
	return "global"
}

// gcuUnexpressible lists the watchdog settings GCU would refuse to
// change on the switch the planner read (live facts), where the
// desired value differs from the live one.
func gcuUnexpressible(sw *intent.Switch, desired, live intent.State) map[string]string {
	out := map[string]string{}
	table, ok := live[FactPFCWD]
	if !ok {
		return out // not read: Apply's check (gcuRefusal) still holds
	}
	var paths []string
	for k := range desired {
		if strings.HasPrefix(k, "pfcwd/") || (strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/pfcwd")) {
			if desired[k] != live[k] {
				paths = append(paths, k)
			}
		}
	}
	if r := skuRefusal(imageOf(live), live[FactHWSKU]); r != "" {
		for _, k := range paths {
			out[k] = r
		}
		return out
	}
	for _, k := range paths {
		switch {
		case table == "absent" && (strings.HasPrefix(k, "pfcwd/") || desired[k] == "true"):
			out[k] = "SONiC GCU refuses to create the PFC_WD table: the added table's row names (\"GLOBAL\", \"Ethernet0\") match none of the PFCWD scenario's fields (sonic-utilities field_operation_validators.py l.128-133, l.149-160); start the watchdog with `pfcwd start_default` or `pfcwd start` first"
		case table == "no-global" && k == "pfcwd/poll":
			out[k] = "SONiC GCU refuses to create the PFC_WD|GLOBAL row: its field is matched as written, \"global/POLL_INTERVAL\", against \"global/poll_interval\" (sonic-utilities field_operation_validators.py l.128-133, l.153); set it with `pfcwd interval` first"
		}
	}
	return out
}

// gcuFilter drops from the steps' payloads the operations GCU would
// refuse on the switch the planner read: any removal of PFC_WD|GLOBAL or
// its POLL_INTERVAL, and the watchdog rows gcuUnexpressible lists as
// not expressible (with their pfcwd_sw_enable, so a port's watchdog
// stays as it is rather than half on).
func gcuFilter(steps []drivers.Change, live intent.State) []drivers.Change {
	table, read := live[FactPFCWD]
	sku := read && skuRefusal(imageOf(live), live[FactHWSKU]) != ""
	for i := range steps {
		var kept []string
		for _, line := range steps[i].Payload {
			var op Op
			if json.Unmarshal([]byte(line), &op) != nil {
				kept = append(kept, line)
				continue
			}
			wd := strings.HasPrefix(op.Path, "/PFC_WD/")
			global := strings.HasPrefix(op.Path, "/PFC_WD/GLOBAL")
			switch {
			case op.Op == "remove" && (op.Path == "/PFC_WD/GLOBAL" || op.Path == "/PFC_WD/GLOBAL/POLL_INTERVAL"):
				continue
			case read && wd && (sku || (table == "absent" && op.Op == "add") || (table == "no-global" && global && op.Op == "add")):
				continue
			case read && strings.HasPrefix(op.Path, "/PORT_QOS_MAP/") && strings.HasSuffix(op.Path, "/pfcwd_sw_enable") && (sku || table == "absent"):
				continue
			}
			kept = append(kept, line)
		}
		steps[i].Payload = kept
	}
	return steps
}

// gcuRefusal models validate_field_operation on PFC_WD for the move from
// cur to target (whole CONFIG_DBs) on a switch running img: why GCU would
// refuse it, or "".
func gcuRefusal(img image, cur, target map[string]any) string {
	old, _ := cur["PFC_WD"].(map[string]any)
	nw, _ := target["PFC_WD"].(map[string]any)
	if reflect.DeepEqual(old, nw) {
		return ""
	}
	og, _ := old["GLOBAL"].(map[string]any)
	ng, _ := nw["GLOBAL"].(map[string]any)
	_, oldTable := cur["PFC_WD"]
	_, newTable := target["PFC_WD"]
	if og != nil && newTable {
		if ng == nil {
			return "it removes PFC_WD|GLOBAL, which SONiC GCU forbids (sonic-utilities generic_config_updater/gu_common.py l.192-203)"
		}
		if _, had := og["POLL_INTERVAL"]; had {
			if _, has := ng["POLL_INTERVAL"]; !has {
				return "it removes PFC_WD|GLOBAL POLL_INTERVAL, which SONiC GCU forbids (sonic-utilities generic_config_updater/gu_common.py l.192-203)"
			}
		}
	}
	md, _ := cur["DEVICE_METADATA"].(map[string]any)
	lh, _ := md["localhost"].(map[string]any)
	hwsku, _ := lh["hwsku"].(string)
	if r := skuRefusal(img, hwsku); r != "" {
		return "it changes PFC_WD: " + r
	}
	if !oldTable && newTable {
		return "it creates the PFC_WD table, which SONiC GCU refuses (sonic-utilities field_operation_validators.py l.128-133, l.149-160)"
	}
	if oldTable && og == nil && ng != nil {
		return "it creates PFC_WD|GLOBAL, which SONiC GCU refuses (sonic-utilities field_operation_validators.py l.128-133, l.153)"
	}
	return ""
}
