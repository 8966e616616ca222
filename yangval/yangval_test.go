package yangval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

var (
	schemaMu    sync.Mutex
	schemaCache = map[string]*Schema{}
)

func loadSet(t testing.TB, set string) *Schema {
	t.Helper()
	// The models live outside the repository, in ../shared/yang (see
	// its README.md).
	dir := testutil.Shared(t, "yang", set)
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s := schemaCache[set]; s != nil {
		return s
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	schemaCache[set] = s
	return s
}

// ocPayload is a valid OpenConfig QoS + interfaces document (RFC 7951).
const ocPayload = `{
 "openconfig-qos:qos": {
  "queues": {"queue": [
    {"name": "Q3", "config": {"name": "Q3", "queue-id": 3}},
    {"name": "Q0", "config": {"name": "Q0", "queue-id": 0}}]},
  "forwarding-groups": {"forwarding-group": [
    {"name": "fg-roce", "config": {"name": "fg-roce", "output-queue": "Q3"}},
    {"name": "fg-be", "config": {"name": "fg-be", "output-queue": "Q0"}}]},
  "classifiers": {"classifier": [
    {"name": "dscp", "config": {"name": "dscp", "type": "IPV4"},
     "terms": {"term": [
       {"id": "roce", "config": {"id": "roce"},
        "conditions": {"ipv4": {"config": {"dscp-set": [26, 24]}}},
        "actions": {"config": {"target-group": "fg-roce"}}}]}}]},
  "queue-management-profiles": {"queue-management-profile": [
    {"name": "ecn", "config": {"name": "ecn"},
     "wred": {"uniform": {"config": {"min-threshold": "150000", "max-threshold": "1500000",
        "enable-ecn": true, "max-drop-probability-percent": 10}}}}]},
  "scheduler-policies": {"scheduler-policy": [
    {"name": "sp", "config": {"name": "sp"},
     "schedulers": {"scheduler": [
       {"sequence": 0, "config": {"sequence": 0, "priority": "STRICT", "type": "openconfig-qos-types:TWO_RATE_THREE_COLOR"},
        "inputs": {"input": [
          {"id": "in3", "config": {"id": "in3", "input-type": "QUEUE", "queue": "Q3", "weight": "50"}}]}}]}}]},
  "interfaces": {"interface": [
    {"interface-id": "Ethernet0", "config": {"interface-id": "Ethernet0"},
     "interface-ref": {"config": {"interface": "Ethernet0"}},
     "input": {"classifiers": {"classifier": [{"type": "IPV4", "config": {"type": "IPV4", "name": "dscp"}}]}},
     "output": {"scheduler-policy": {"config": {"name": "sp"}},
       "queues": {"queue": [{"name": "Q3", "config": {"name": "Q3", "queue-management-profile": "ecn"}}]}}}]}
 },
 "openconfig-interfaces:interfaces": {"interface": [
   {"name": "Ethernet0", "config": {"name": "Ethernet0", "mtu": 9100, "type": "iana-if-type:ethernetCsmacd", "enabled": true},
    "openconfig-if-ethernet:ethernet": {"config": {"port-speed": "openconfig-if-ethernet:SPEED_400GB", "mac-address": "00:11:22:33:44:55"}}}]}
}`

// mutate decodes ocPayload, applies f, and re-encodes it.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ocPayload), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// get walks a decoded document: keys for objects, ints for arrays.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func obj(v any, path ...any) map[string]any { return get(v, path...).(map[string]any) }

func qos(m map[string]any) map[string]any { return obj(m, "openconfig-qos:qos") }

func errStrings(errs []Error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  " + e.Error())
	}
	return b.String()
}

type violation struct {
	name    string
	payload func(t *testing.T) []byte
	path    string // expected Error.Path
	msg     string // substring of Error.Msg
}

// cascading violations: further errors follow from them (references to the
// entry whose key is missing or changed no longer resolve).
var cascade = map[string]bool{
	"list key missing":                       true,
	"list key inconsistent with config/name": true,
}

func expectOne(t *testing.T, errs []Error, path, msg string) {
	t.Helper()
	for _, e := range errs {
		if e.Path == path && strings.Contains(e.Msg, msg) {
			return
		}
	}
	t.Errorf("want error at %s containing %q, got:%s", path, msg, errStrings(errs))
}

func TestOpenConfigValid(t *testing.T) {
	s := loadSet(t, "openconfig")
	if errs := s.ValidateJSON("/", []byte(ocPayload)); len(errs) > 0 {
		t.Fatalf("valid payload rejected:%s", errStrings(errs))
	}
	// the same subtree at a gNMI path, and a single list entry
	var m map[string]any
	_ = json.Unmarshal([]byte(ocPayload), &m)
	sub, _ := json.Marshal(obj(m, "openconfig-qos:qos", "queues"))
	if errs := s.ValidateJSON("/openconfig-qos:qos/queues", sub); len(errs) > 0 {
		t.Fatalf("subtree rejected:%s", errStrings(errs))
	}
	if errs := s.ValidateJSON("/qos/queues/queue[name=Q7]", []byte(`{"config":{"name":"Q7","queue-id":7}}`)); len(errs) > 0 {
		t.Fatalf("list entry rejected:%s", errStrings(errs))
	}
}

func TestOpenConfigViolations(t *testing.T) {
	s := loadSet(t, "openconfig")
	qm := "/qos/queue-management-profiles/queue-management-profile[name=ecn]/wred/uniform/config"
	cases := []violation{
		{"unknown leaf pfc-enable (OpenConfig has no PFC)", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "interfaces", "interface", 0, "config")["pfc-enable"] = true
			})
		}, "/qos/interfaces/interface[interface-id=Ethernet0]/config/pfc-enable", "unknown node"},
		{"unknown leaf with suggestion", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "queues", "queue", 0, "config")["queue-idd"] = 3
			})
		}, "/qos/queues/queue[name=Q3]/config/queue-idd", `did you mean "queue-id"`},
		{"out of range percentage", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "queue-management-profiles", "queue-management-profile", 0, "wred", "uniform", "config")["max-drop-probability-percent"] = 250
			})
		}, qm + "/max-drop-probability-percent", "out of range"},
		{"uint8 overflow", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) { obj(qos(m), "queues", "queue", 0, "config")["queue-id"] = 300 })
		}, "/qos/queues/queue[name=Q3]/config/queue-id", "out of range"},
		{"bad enum", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "scheduler-policies", "scheduler-policy", 0, "schedulers", "scheduler", 0, "config")["priority"] = "STRICTLY"
			})
		}, "/qos/scheduler-policies/scheduler-policy[name=sp]/schedulers/scheduler[sequence=0]/config/priority", `did you mean "STRICT"`},
		{"bad identity", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(m, "openconfig-interfaces:interfaces", "interface", 0, "config")["type"] = "iana-if-type:ethernetCsmacdX"
			})
		}, "/interfaces/interface[name=Ethernet0]/config/type", "not an identity derived from interface-type"},
		{"identity with wrong module prefix", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(m, "openconfig-interfaces:interfaces", "interface", 0, "openconfig-if-ethernet:ethernet", "config")["port-speed"] = "openconfig-qos:SPEED_400GB"
			})
		}, "/interfaces/interface[name=Ethernet0]/ethernet/config/port-speed", "not an identity"},
		{"pattern violation (mac-address)", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(m, "openconfig-interfaces:interfaces", "interface", 0, "openconfig-if-ethernet:ethernet", "config")["mac-address"] = "00:11:22:33:44:zz"
			})
		}, "/interfaces/interface[name=Ethernet0]/ethernet/config/mac-address", "does not match pattern"},
		{"wrong JSON type (string for boolean)", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "queue-management-profiles", "queue-management-profile", 0, "wred", "uniform", "config")["enable-ecn"] = "yes"
			})
		}, qm + "/enable-ecn", "not a boolean"},
		{"RFC 7951: uint8 as a string", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) { obj(qos(m), "queues", "queue", 0, "config")["queue-id"] = "3" })
		}, "/qos/queues/queue[name=Q3]/config/queue-id", "must be a JSON number"},
		{"state leaf written", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "queues", "queue", 0)["state"] = map[string]any{"name": "Q3"}
			})
		}, "/qos/queues/queue[name=Q3]/state", "config false"},
		{"list key missing", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) { delete(obj(qos(m), "queues", "queue", 0), "name") })
		}, "/qos/queues/queue[name=?]", `no key leaf "name"`},
		{"list key inconsistent with config/name", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) { obj(qos(m), "queues", "queue", 0, "config")["name"] = "Q4" })
		}, "/qos/queues/queue[name=Q3]/config/name", "does not match list key name=Q3"},
		{"duplicate list entry", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				q := obj(qos(m), "queues")
				q["queue"] = append(q["queue"].([]any), get(q, "queue", 0))
			})
		}, "/qos/queues/queue[name=Q3]", "duplicate list entry"},
		{"dangling leafref queue-management-profile", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "interfaces", "interface", 0, "output", "queues", "queue", 0, "config")["queue-management-profile"] = "nope"
			})
		}, "/qos/interfaces/interface[interface-id=Ethernet0]/output/queues/queue[name=Q3]/config/queue-management-profile", "leafref: no /openconfig-qos:qos/queue-management-profiles/queue-management-profile/config/name"},
		{"dangling leafref forwarding-group output-queue", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "forwarding-groups", "forwarding-group", 0, "config")["output-queue"] = "Q9"
			})
		}, "/qos/forwarding-groups/forwarding-group[name=fg-roce]/config/output-queue", "leafref"},
		{"dangling leafref to another module (interface-ref)", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				obj(qos(m), "interfaces", "interface", 0, "interface-ref", "config")["interface"] = "Ethernet99"
			})
		}, "/qos/interfaces/interface[interface-id=Ethernet0]/interface-ref/config/interface", "leafref: no /openconfig-interfaces:interfaces/interface/name"},
		{"mandatory leaf missing (interface type)", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				delete(obj(m, "openconfig-interfaces:interfaces", "interface", 0, "config"), "type")
			})
		}, "/interfaces/interface[name=Ethernet0]/config/type", "mandatory"},
		{"unknown top-level node", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) { m["openconfig-qos:qoss"] = map[string]any{} })
		}, "/openconfig-qos:qoss", `unknown top-level node (did you mean "qos"?)`},
		{"wrong module qualifier", func(t *testing.T) []byte {
			return mutate(t, func(m map[string]any) {
				e := obj(m, "openconfig-interfaces:interfaces", "interface", 0)
				e["openconfig-qos:ethernet"] = e["openconfig-if-ethernet:ethernet"]
				delete(e, "openconfig-if-ethernet:ethernet")
			})
		}, "/interfaces/interface[name=Ethernet0]/ethernet", "belongs to module openconfig-if-ethernet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.ValidateJSON("/", c.payload(t))
			expectOne(t, errs, c.path, c.msg)
			if len(errs) != 1 && !cascade[c.name] {
				t.Errorf("want exactly one error, got %d:%s", len(errs), errStrings(errs))
			}
		})
	}
}

func TestPathForms(t *testing.T) {
	s := loadSet(t, "openconfig")
	cases := []struct {
		path, value, errPath, msg string
	}{
		{"/qos/queues/queue[name=Q1]", `{"name":"Q2","config":{"name":"Q1"}}`, "/qos/queues/queue[name=Q1]/name", "path key"},
		{"/qos/queues/queue[name=Q1]/config/queue-id", `256`, "/qos/queues/queue[name=Q1]/config/queue-id", "out of range"},
		{"/qos/queues/queue[name=Q1]/state", `{}`, "/qos/queues/queue[name=Q1]/state", "config false"},
		{"/qos/queuez", `{}`, "/qos/queuez", `did you mean "queues"`},
		{"/interfaces", `{}`, "/interfaces", "ambiguous"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			expectOne(t, s.ValidateJSON(c.path, []byte(c.value)), c.errPath, c.msg)
		})
	}
	// leafref targets outside the validated subtree are type-checked only
	if errs := s.ValidateJSON("/openconfig-qos:qos/forwarding-groups/forwarding-group[name=x]",
		[]byte(`{"config":{"name":"x","output-queue":"not-in-payload"}}`)); len(errs) > 0 {
		t.Errorf("partial update rejected:%s", errStrings(errs))
	}
}

func TestXSDPatterns(t *testing.T) {
	cases := []struct {
		pat, in string
		ok      bool
	}{
		{`[0-9]+`, "123", true},
		{`[0-9]+`, "12a", false},   // implicitly anchored
		{`a$b`, "a$b", true},       // '$' is literal in XSD
		{`^a`, "^a", true},         // '^' is literal in XSD
		{`[^a-z]+`, "ABC", true},   // negated class
		{`\d{1,3}`, "1234", false}, //
		{`\p{L}+`, "héllo", true},  // unicode category
		{`\i\c*`, "_a-b.c", true},  // XSD name chars
		{`6[0-3]|[1-5][0-9]?|[0-9]?`, "63", true},
		{`6[0-3]|[1-5][0-9]?|[0-9]?`, "64", false}, // anchoring applies to the whole alternation
	}
	for _, c := range cases {
		re, err := compileXSD(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := re.MatchString(c.in); got != c.ok {
			t.Errorf("pattern %q on %q: got %v want %v", c.pat, c.in, got, c.ok)
		}
	}
	if _, err := compileXSD(`[a-z-[aeiou]]`); err == nil {
		t.Errorf("class subtraction should be reported as unsupported")
	}
}

const srlPFC = `{
 "srl_nokia-qos:qos": {
  "pfc-mapping-profile": [{
    "name": "pfc-roce",
    "received-pfc-pause-frames": {
      "deadlock": {"enable": true, "detection-timer": %d, "recovery-timer": 200}
    }
  }]
 }
}`

func TestSRLinux(t *testing.T) {
	s := loadSet(t, "srlinux")
	if errs := s.ValidateJSON("/", []byte(fmt.Sprintf(srlPFC, 100))); len(errs) > 0 {
		t.Fatalf("valid SR Linux PFC payload rejected:%s", errStrings(errs))
	}
	errs := s.ValidateJSON("/", []byte(fmt.Sprintf(srlPFC, 5)))
	expectOne(t, errs, "/qos/pfc-mapping-profile[name=pfc-roce]/received-pfc-pause-frames/deadlock/detection-timer", "out of range 10..1500")
	if len(errs) != 1 {
		t.Errorf("want one error:%s", errStrings(errs))
	}
	for _, e := range errs {
		if e.Value != "5" {
			t.Errorf("error value %q, want 5", e.Value)
		}
	}
}

func sonicDB(mtu, detection string) map[string]map[string]map[string]any {
	return map[string]map[string]map[string]any{
		"PORT": {
			"Ethernet0": {"lanes": "0,1,2,3", "speed": "400000", "mtu": mtu, "admin_status": "up"},
			"Ethernet8": {"lanes": "8,9,10,11", "speed": "400000", "mtu": "9100"},
		},
		"PFC_WD": {
			"Ethernet0": {"action": "drop", "detection_time": detection, "restoration_time": "400"},
			"GLOBAL":    {"POLL_INTERVAL": "200"},
		},
		"DSCP_TO_TC_MAP": {
			"AZURE": {"0": "0", "24": "3", "26": "3", "48": "6"},
		},
		"PORT_QOS_MAP": {
			"Ethernet0": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"},
		},
	}
}

func TestSONiCConfigDB(t *testing.T) {
	s := loadSet(t, "sonic")
	if errs := s.ValidateConfigDB(sonicDB("9100", "400")); len(errs) > 0 {
		t.Fatalf("valid CONFIG_DB rejected:%s", errStrings(errs))
	}
	cases := []struct {
		name    string
		db      func() map[string]map[string]map[string]any
		path    string
		msg     string
		wantVal string
	}{
		{"PORT mtu 9300", func() map[string]map[string]map[string]any { return sonicDB("9300", "400") },
			"/sonic-port/PORT/PORT_LIST[name=Ethernet0]/mtu", "out of range 68..9216", "9300"},
		{"PFC_WD detection_time 50", func() map[string]map[string]map[string]any { return sonicDB("9100", "50") },
			"/sonic-pfcwd/PFC_WD/PFC_WD_LIST[ifname=Ethernet0]/detection_time", "out of range 100..5000", "50"},
		{"DSCP 64", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			db["DSCP_TO_TC_MAP"]["AZURE"]["64"] = "1"
			return db
		}, "/sonic-dscp-tc-map/DSCP_TO_TC_MAP/DSCP_TO_TC_MAP_LIST[name=AZURE]/DSCP_TO_TC_MAP[dscp=64]/dscp", "pattern", "64"},
		{"dangling dscp_to_tc_map", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			db["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] = "NOPE"
			return db
		}, "/sonic-port-qos-map/PORT_QOS_MAP/PORT_QOS_MAP_LIST[ifname=Ethernet0]/dscp_to_tc_map", "leafref", "NOPE"},
		{"PFC_WD on unknown port", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			db["PFC_WD"]["Ethernet4"] = map[string]any{"action": "drop"}
			return db
		}, "/sonic-pfcwd/PFC_WD/PFC_WD_LIST[ifname=Ethernet4]/ifname", "leafref", "Ethernet4"},
		{"unknown field", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			db["PORT"]["Ethernet0"]["mtuu"] = "9100"
			return db
		}, "/sonic-port/PORT/PORT_LIST[name=Ethernet0]/mtuu", `did you mean "mtu"`, ""},
		{"mandatory speed missing", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			delete(db["PORT"]["Ethernet8"], "speed")
			return db
		}, "/sonic-port/PORT/PORT_LIST[name=Ethernet8]/speed", "mandatory", ""},
		{"bad enum admin_status", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			db["PORT"]["Ethernet0"]["admin_status"] = "upp"
			return db
		}, "/sonic-port/PORT/PORT_LIST[name=Ethernet0]/admin_status", "", "upp"},
		{"unknown table", func() map[string]map[string]map[string]any {
			db := sonicDB("9100", "400")
			db["PORTT"] = map[string]map[string]any{"x": {}}
			return db
		}, "/PORTT", `did you mean "PORT"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.ValidateConfigDB(c.db())
			expectOne(t, errs, c.path, c.msg)
			if len(errs) != 1 {
				t.Errorf("want exactly one error, got %d:%s", len(errs), errStrings(errs))
			}
			if len(errs) == 1 && errs[0].Value != c.wantVal {
				t.Errorf("value %q, want %q", errs[0].Value, c.wantVal)
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	s := loadSet(t, "openconfig")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs := s.ValidateJSON("/", []byte(ocPayload)); len(errs) > 0 {
				t.Errorf("concurrent validation:%s", errStrings(errs))
			}
		}()
	}
	wg.Wait()
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil {
		t.Errorf("empty dir: want error")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yang"), []byte("module bad { namespace \"urn:bad\"; prefix b; import nope { prefix n; } leaf x { type n:t; } }"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing import: got %v", err)
	}
}

func TestUnsupportedReported(t *testing.T) {
	for _, set := range []string{"openconfig", "srlinux", "sonic"} {
		s := loadSet(t, set)
		for _, u := range s.Unsupported {
			t.Logf("%s: not checked: %s", set, u)
		}
	}
}

// TestConfigDBContainerRows: DEVICE_METADATA is modelled as a container
// per key (localhost), not a list.
func TestConfigDBContainerRows(t *testing.T) {
	s := loadSet(t, "sonic")
	ok := map[string]map[string]map[string]any{"DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "hwsku": "Force10-S6000"}}}
	if errs := s.ValidateConfigDB(ok); len(errs) != 0 {
		t.Errorf("valid DEVICE_METADATA refused: %v", errs)
	}
	bad := map[string]map[string]map[string]any{"DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "no_such_field": "x"}}}
	if errs := s.ValidateConfigDB(bad); len(errs) == 0 {
		t.Errorf("unknown DEVICE_METADATA field accepted")
	}
}

// TestStateOption: a device's operational data (config false nodes) is
// refused as configuration and, with Options.State, checked like it:
// types, enums and identities of state leaves.
func TestStateOption(t *testing.T) {
	s := loadSet(t, "openconfig")
	st := `{"openconfig-interfaces:interfaces":{"interface":[{"name":"Ethernet0","state":{"oper-status":"UP","counters":{"in-errors":"3"}},
	  "openconfig-if-ethernet:ethernet":{"state":{"negotiated-port-speed":"openconfig-if-ethernet:SPEED_400GB"}}}]}}`
	if errs := s.ValidateJSON("/", []byte(st)); len(errs) == 0 || !strings.Contains(errStrings(errs), "config false") {
		t.Fatalf("state accepted as configuration: %s", errStrings(errs))
	}
	if errs := s.ValidateJSONOpts("/", []byte(st), Options{State: true}); len(errs) > 0 {
		t.Fatalf("valid state refused:%s", errStrings(errs))
	}
	for leaf, bad := range map[string]string{`"oper-status":"UP"`: `"oper-status":"SIDEWAYS"`, `"in-errors":"3"`: `"in-errors":"-3"`, `SPEED_400GB`: `SPEED_3GB`} {
		b := strings.Replace(st, leaf, bad, 1)
		if errs := s.ValidateJSONOpts("/", []byte(b), Options{State: true}); len(errs) == 0 {
			t.Errorf("%s accepted", bad)
		}
	}
}
