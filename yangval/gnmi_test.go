package yangval

import (
	"encoding/json"
	"strings"
	"testing"
)

func ops(t *testing.T, s *Schema, spec ...string) []SetOp {
	t.Helper()
	var out []SetOp
	for i := 0; i+2 < len(spec)+2 && i < len(spec); i += 3 {
		elems, err := ParsePath(spec[i+1])
		if err != nil {
			t.Fatal(err)
		}
		op := SetOp{Path: elems}
		switch spec[i] {
		case "delete":
			op.Op = OpDelete
		case "replace":
			op.Op = OpReplace
		case "update":
			op.Op = OpUpdate
		}
		if op.Op != OpDelete {
			if err := decodeNumbersTest(spec[i+2], &op.Value); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, op)
	}
	return s.QualifySet(out, "openconfig-")
}

func decodeNumbersTest(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	return dec.Decode(v)
}

func TestPathRoundTrip(t *testing.T) {
	for _, p := range []string{"/", "/a/b[k=v]/c", "/a[x=1][y=2]", `/i[name=ethernet-1/1]/x`, `/q[name=a\]b\\c]`} {
		elems, err := ParsePath(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := PathString(elems); got != p {
			t.Errorf("round trip %q -> %q", p, got)
		}
	}
	elems, _ := ParsePath(`/q[name=a\]b\\c]`)
	if elems[0].Keys["name"] != `a]b\c` {
		t.Errorf("unescaped key %q", elems[0].Keys["name"])
	}
	if _, err := ParsePath("/a[k=v"); err == nil {
		t.Error("unterminated key accepted")
	}
}

func TestValidateSet(t *testing.T) {
	s := loadSet(t, "openconfig")
	cases := []struct {
		name string
		ops  []string
		path string // "" for a valid request
		msg  string
	}{
		{"valid update of a keyed leaf", []string{"update", "/interfaces/interface[name=E0]/config/mtu", "9100"}, "", ""},
		{"numeric key only in the path", []string{"replace", "/qos/scheduler-policies/scheduler-policy[name=p]/schedulers/scheduler[sequence=0]", `{"config": {"sequence": 0, "priority": "STRICT"}}`}, "", ""},
		{"delete a whole list", []string{"delete", "/qos/queues/queue", ""}, "", ""},
		{"key value of the wrong type", []string{"update", "/qos/scheduler-policies/scheduler-policy[name=p]/schedulers/scheduler[sequence=x]/config", `{}`},
			"/qos/scheduler-policies/scheduler-policy[name=p]/schedulers/scheduler[sequence=x]", "key sequence: leafref to /openconfig-qos:qos/scheduler-policies/scheduler-policy/schedulers/scheduler/config/sequence: not an integer"},
		{"unknown key", []string{"update", "/qos/queues/queue[nam=Q]", `{}`}, "/qos/queues/queue[name=]", `"nam" is not a key`},
		{"keys on a container", []string{"update", "/qos[name=x]", `{}`}, "/qos", "not a list"},
		{"replace without a mandatory leaf", []string{"replace", "/interfaces/interface[name=E0]", `{"config": {"name": "E0"}}`}, "/interfaces/interface[name=E0]/config/type", "replace: mandatory leaf missing"},
		{"update need not carry mandatory leaves", []string{"update", "/interfaces/interface[name=E0]", `{"config": {"name": "E0"}}`}, "", ""},
		{"delete of a state node", []string{"delete", "/interfaces/interface[name=E0]/state/mtu", ""}, "/interfaces/interface[name=E0]/state", "delete: "},
		{"delete of a key leaf", []string{"delete", "/qos/queues/queue[name=Q]/name", ""}, "/qos/queues/queue[name=Q]/name", "list key cannot be deleted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.ValidateSet(ops(t, s, c.ops...))
			if c.path == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected:%s", errStrings(errs))
				}
				return
			}
			expectOne(t, errs, c.path, c.msg)
		})
	}
}

func TestValidatePayloadRefs(t *testing.T) {
	s := loadSet(t, "openconfig")
	base := []string{
		"replace", "/qos/queues/queue[name=Q3]", `{"config": {"name": "Q3", "queue-id": 3}}`,
		"update", "/interfaces/interface[name=E0]/config", `{"mtu": 9100}`,
	}
	good := append(append([]string(nil), base...),
		"replace", "/qos/forwarding-groups/forwarding-group[name=fg]", `{"name": "fg", "config": {"name": "fg", "output-queue": "Q3"}}`,
		// the interface exists through the key in a path only
		"replace", "/qos/interfaces/interface[interface-id=E0]", `{"config": {"interface-id": "E0"}, "interface-ref": {"config": {"interface": "E0"}}}`)
	if errs := s.ValidatePayload(ops(t, s, good...)); len(errs) > 0 {
		t.Fatalf("valid payload:%s", errStrings(errs))
	}
	bad := append(append([]string(nil), base...),
		"replace", "/qos/forwarding-groups/forwarding-group[name=fg]", `{"name": "fg", "config": {"name": "fg", "output-queue": "Q9"}}`,
		"replace", "/qos/interfaces/interface[interface-id=E1]", `{"config": {"interface-id": "E1"}, "interface-ref": {"config": {"interface": "E1"}}}`)
	errs := s.ValidatePayload(ops(t, s, bad...))
	expectOne(t, errs, "/qos/forwarding-groups/forwarding-group[name=fg]/config/output-queue", "leafref")
	expectOne(t, errs, "/qos/interfaces/interface[interface-id=E1]/interface-ref/config/interface", "leafref: no /openconfig-interfaces:interfaces/interface/name")
	if len(errs) != 2 {
		t.Errorf("want 2 errors:%s", errStrings(errs))
	}
	// ValidateSet alone does not see across operations
	if errs := s.ValidateSet(ops(t, s, bad...)); len(errs) != 0 {
		t.Errorf("ValidateSet checked references:%s", errStrings(errs))
	}
	// a module the payload leaves alone is assumed to hold its objects
	noIfs := []string{"replace", "/qos/interfaces/interface[interface-id=E1]", `{"config": {"interface-id": "E1"}, "interface-ref": {"config": {"interface": "E1"}}}`}
	if errs := s.ValidatePayload(ops(t, s, noIfs...)); len(errs) > 0 {
		t.Errorf("reference into an untouched module:%s", errStrings(errs))
	}
}

func TestValidateTreeComplete(t *testing.T) {
	s := loadSet(t, "openconfig")
	var tree map[string]any
	_ = json.Unmarshal([]byte(`{"openconfig-qos:qos": {"interfaces": {"interface": [{"interface-id": "E0", "config": {"interface-id": "E0"},
		"interface-ref": {"config": {"interface": "E0"}}}]}, "queues": {"queue": [{"name": "Q1", "config": {"queue-id": 1}}]}}}`), &tree)
	errs := s.ValidateTree(tree)
	// no /interfaces at all: the reference dangles in a whole configuration
	expectOne(t, errs, "/qos/interfaces/interface[interface-id=E0]/interface-ref/config/interface", "leafref")
	// the key leafref name -> ../config/name needs config/name
	expectOne(t, errs, "/qos/queues/queue[name=Q1]/config/name", "missing: list key name=Q1")
	if len(errs) != 2 {
		t.Errorf("want 2:%s", errStrings(errs))
	}
	// ValidateJSON (a partial payload) accepts both
	if errs := s.Validate("/", tree, Options{}); len(errs) > 0 {
		t.Errorf("partial validation:%s", errStrings(errs))
	}
	// RefsOnly reports only the dangling reference, not the bad value
	obj(tree, "openconfig-qos:qos", "queues", "queue", 0, "config")["queue-id"] = 300
	errs = s.Validate("/", tree, Options{RefsOnly: true, Complete: true})
	expectOne(t, errs, "/qos/interfaces/interface[interface-id=E0]/interface-ref/config/interface", "leafref")
	for _, e := range errs {
		if strings.Contains(e.Msg, "range") {
			t.Errorf("RefsOnly reported %v", e)
		}
	}
}

func TestNodeAPI(t *testing.T) {
	s := loadSet(t, "openconfig")
	if n := s.ResolveRoot("interfaces", "openconfig-"); !n.Valid() || n.Module() != "openconfig-interfaces" || n.JSONName() != "openconfig-interfaces:interfaces" {
		t.Errorf("ResolveRoot interfaces: %+v", n)
	}
	if n := s.ResolveRoot("interfaces", ""); n.Valid() {
		t.Errorf("ambiguous root resolved without a preference: %s", n.Module())
	}
	if len(s.RootNodes("interfaces")) != 2 || len(s.RootNodes("ietf-interfaces:interfaces")) != 1 {
		t.Errorf("RootNodes: %v", s.RootNodes("interfaces"))
	}
	sched := s.ResolveRoot("qos", "").Child("scheduler-policies").Child("scheduler-policy").Child("schedulers").Child("scheduler")
	if sched.Kind() != List || len(sched.Keys()) != 1 || sched.Keys()[0] != "sequence" {
		t.Fatalf("scheduler: %v %v", sched.Kind(), sched.Keys())
	}
	if v := sched.Child("sequence").Value("3"); v != json.Number("3") {
		t.Errorf("typed key through a leafref: %#v", v)
	}
	eth := s.ResolveRoot("interfaces", "openconfig-").Child("interface").Child("openconfig-if-ethernet:ethernet")
	if !eth.Valid() || eth.JSONName() != "openconfig-if-ethernet:ethernet" {
		t.Errorf("augmented child: %v", eth.Valid())
	}
	if st := s.ResolveRoot("qos", "").Child("queues").Child("queue").Child("state"); st.Config() {
		t.Errorf("state container is config")
	}
	mods := s.Modules()
	if len(mods) < 20 || mods[0].Name > mods[1].Name {
		t.Errorf("modules: %v", mods)
	}
}

func TestConfigDBFragment(t *testing.T) {
	s := loadSet(t, "sonic")
	db := sonicDB("9100", "400")
	delete(db["PORT"]["Ethernet8"], "speed")
	if errs := s.ValidateConfigDBFragment(db); len(errs) != 0 {
		t.Errorf("fragment without speed:%s", errStrings(errs))
	}
	db["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] = "NOPE"
	expectOne(t, s.ValidateConfigDBFragment(db), "/sonic-port-qos-map/PORT_QOS_MAP/PORT_QOS_MAP_LIST[ifname=Ethernet0]/dscp_to_tc_map", "leafref")
}
