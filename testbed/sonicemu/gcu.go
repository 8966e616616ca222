package sonicemu

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// GCU's transition checks: what `config apply-patch`, `config replace`
// and `config rollback` refuse before they change anything, written from
// sonic-net/sonic-utilities @691b1bbc (SU below):
//
//   - generic_updater.py PatchApplier.apply l.106-121 simulates the target
//     CONFIG_DB and calls ConfigWrapper.validate_field_operation(old,
//     target); ConfigReplacer.replace l.171-183 generates the patch from
//     the current CONFIG_DB to the target and applies it through
//     PatchApplier; FileSystemConfigRollbacker.rollback l.208-220 loads the
//     checkpoint and replaces with it. All three meet the same checks.
//   - gu_common.py validate_field_operation l.184-236: the operations of
//     jsonpatch.JsonPatch.from_diff(old, target) (l.189), never the
//     patch as written; `remove` of /PFC_WD/GLOBAL/POLL_INTERVAL,
//     /PFC_WD/GLOBAL and /LOOPBACK_INTERFACE/Loopback0 is illegal
//     (l.192-203), then every operation runs the field operation validators
//     its table lists in gcu_field_operation_validators.conf.json
//     (l.217-236).
//   - field_operation_validators.py rdma_config_update_validator
//     (l.98-179): the ASIC from asic_type and DEVICE_METADATA|localhost
//     hwsku (get_asic_name l.23-78; unknown refuses, l.99-101), the branch
//     from build_version's 8-digit part (l.102-109), the operation's fields
//     (l.117-137: path elements with a digit dropped, lower-cased, and a
//     dict value's keys appended as they are), each matched exactly
//     against a scenario's fields, its platform's minimum branch and its
//     operations (l.145-175).
//
// Modelled: the illegal removals and rdma_config_update_validator (the
// tables whose validator it is in the excerpt: PFC_WD, BUFFER_POOL).
// Not modelled: PORT's port_config_update_validator (checks only fec and
// speed, l.216-284, which fabctl never writes), BUFFER_PROFILE's
// buffer_profile_config_update_validator and the data ACL check.

//go:embed testdata/gcu_field_operation_validators.json
var gcuConfJSON []byte

type gcuScenario struct {
	Fields     []string          `json:"fields"`
	Operations []string          `json:"operations"`
	Platforms  map[string]string `json:"platforms"`
}

type gcuConf struct {
	Helper struct {
		RDMA struct {
			Mellanox map[string][]string `json:"mellanox_asics"`
			Broadcom map[string][]string `json:"broadcom_asics"`
		} `json:"rdma_config_update_validator"`
	} `json:"helper_data"`
	Tables map[string]struct {
		Validators []string `json:"field_operation_validators"`
		Data       struct {
			RDMA map[string]gcuScenario `json:"rdma_config_update_validator"`
		} `json:"validator_data"`
	} `json:"tables"`
}

var gcu = func() gcuConf {
	var c gcuConf
	if err := json.Unmarshal(gcuConfJSON, &c); err != nil {
		panic("sonicemu: testdata/gcu_field_operation_validators.json: " + err.Error())
	}
	return c
}()

// Python dicts keep the JSON file's order; get_asic_name walks
// broadcom_asics in it (l.70-76) and spc1..spc6 in turn (l.44-67).
var (
	broadcomOrder = []string{"th", "th2", "th3", "th4", "th5", "th6", "td2", "td3", "td4", "j2c+", "q2c+", "jr2", "q3d"}
	mellanoxOrder = []string{"spc1", "spc2", "spc3", "spc4", "spc5", "spc6"}
)

// gcuOp is one operation of jsonpatch's from_diff.
type gcuOp struct {
	Op    string
	Path  string
	Value any
}

// fromDiff is python-jsonpatch's JsonPatch.from_diff over CONFIG_DB
// objects (DiffBuilder._compare_dicts: removed keys, added keys, then
// common keys compared; a value changed in place is a replace). The
// move optimisation (a removed value equal to an added one) is not
// modelled: CONFIG_DB rows rarely move.
func fromDiff(path string, src, dst map[string]any) []gcuOp {
	var out []gcuOp
	for _, k := range sortedKeys(src) {
		if _, ok := dst[k]; !ok {
			out = append(out, gcuOp{"remove", path + "/" + ptrEsc(k), nil})
		}
	}
	for _, k := range sortedKeys(dst) {
		if _, ok := src[k]; !ok {
			out = append(out, gcuOp{"add", path + "/" + ptrEsc(k), dst[k]})
		}
	}
	for _, k := range sortedKeys(src) {
		d, ok := dst[k]
		if !ok {
			continue
		}
		s := src[k]
		sm, sok := s.(map[string]any)
		dm, dok := d.(map[string]any)
		switch {
		case sok && dok:
			out = append(out, fromDiff(path+"/"+ptrEsc(k), sm, dm)...)
		case !reflect.DeepEqual(s, d):
			out = append(out, gcuOp{"replace", path + "/" + ptrEsc(k), d})
		}
	}
	return out
}

func ptrEsc(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }

func ptrParts(p string) []string {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

// illegalRemove is gu_common.py l.192-200.
var illegalRemove = []string{"/PFC_WD/GLOBAL/POLL_INTERVAL", "/PFC_WD/GLOBAL", "/LOOPBACK_INTERFACE/Loopback0"}

// validateFieldOperation is gu_common.py validate_field_operation for
// this switch (its asic_type and build_version; the HWSKU is old's
// DEVICE_METADATA|localhost hwsku, which `sonic-cfggen -d -v` reads from
// the running CONFIG_DB, field_operation_validators.py l.20, l.40).
func (sw *Switch) validateFieldOperation(old, target map[string]any) error {
	ops := fromDiff("", old, target)
	for _, field := range illegalRemove {
		for _, op := range ops {
			if op.Op == "remove" && op.Path == field {
				return fmt.Errorf("Given patch operation is invalid. Operation: remove is illegal on field: %s", field)
			}
		}
	}
	hwsku := str(rowOf(old, "DEVICE_METADATA", "localhost")["hwsku"])
	for _, op := range ops {
		table := ptrParts(op.Path)[0]
		t, ok := gcu.Tables[table]
		if !ok {
			continue
		}
		for _, fn := range t.Validators {
			if !strings.HasSuffix(fn, ".rdma_config_update_validator") {
				continue
			}
			if !sw.rdmaValidator(hwsku, op, t.Data.RDMA) {
				return fmt.Errorf("Modification of %s table is illegal- validating function %s returned False", table, fn)
			}
		}
	}
	return nil
}

// asicName is get_asic_name (l.23-78).
func (sw *Switch) asicName(hwsku string) string {
	switch at := sw.opts.ASICType; at {
	case "cisco-8000", "marvell-teralynx":
		return at
	case "mellanox", "vs", "broadcom":
		if at != "broadcom" {
			for _, a := range mellanoxOrder {
				for _, s := range gcu.Helper.RDMA.Mellanox[a] {
					if strings.EqualFold(s, hwsku) {
						return a
					}
				}
			}
		}
		if at != "mellanox" {
			for _, a := range broadcomOrder {
				for _, s := range gcu.Helper.RDMA.Broadcom[a] {
					if strings.Contains(strings.ToLower(hwsku), strings.ToLower(s)) {
						return a
					}
				}
			}
		}
	}
	return "unknown"
}

var branchRE = regexp.MustCompile(`^\d{8}$`)

// rdmaValidator is rdma_config_update_validator (exact field match,
// port names dropped: l.178-179) over one from_diff operation.
func (sw *Switch) rdmaValidator(hwsku string, op gcuOp, scenarios map[string]gcuScenario) bool {
	asic := sw.asicName(hwsku)
	if asic == "unknown" {
		return false
	}
	branch := ""
	for _, s := range strings.Split(sw.opts.BuildVersion, ".") {
		if branchRE.MatchString(s) {
			branch = s
		}
	}
	var kept []string
	for _, e := range ptrParts(op.Path)[1:] {
		if !strings.ContainsAny(e, "0123456789") {
			kept = append(kept, e)
		}
	}
	cleaned := strings.ToLower(strings.Join(kept, "/"))
	var fields []string
	if m, ok := op.Value.(map[string]any); ok {
		for _, k := range sortedKeys(m) {
			if cleaned != "" {
				fields = append(fields, cleaned+"/"+k)
			} else {
				fields = append(fields, k)
			}
		}
	} else {
		fields = append(fields, cleaned)
	}
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, f := range fields {
		var sc *gcuScenario
		for _, n := range names {
			s := scenarios[n]
			for _, g := range s.Fields {
				if f == g {
					sc = &s
					break
				}
			}
			if sc != nil {
				break
			}
		}
		if sc == nil || sc.Platforms[asic] == "" {
			return false
		}
		allowed := false
		for _, o := range sc.Operations {
			allowed = allowed || o == op.Op
		}
		if !allowed {
			return false
		}
		if branch != "" && branch < sc.Platforms[asic] {
			return false
		}
	}
	return true
}
