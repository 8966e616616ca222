package libyang

import (
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/yangval"
)

// sonicBase is the part of a running CONFIG_DB every SONiC fragment
// needs (GCU validates the patched whole configuration): the port with
// its mandatory lanes, the buffer model and the lossless pool.
func sonicBase(ports ...string) ConfigDB {
	db := ConfigDB{
		"DEVICE_METADATA": {"localhost": {"buffer_model": "dynamic"}},
		"BUFFER_POOL":     {"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"}},
		"PORT":            {},
	}
	for i, p := range ports {
		db["PORT"][p] = map[string]any{"lanes": strings.Join([]string{itoa(4 * i), itoa(4*i + 1), itoa(4*i + 2), itoa(4*i + 3)}, ","), "speed": "400000"}
	}
	return db
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestConstraintClasses: for each class of constraint a payload that
// violates it is refused, with that kind, and the fixed payload passes.
func TestConstraintClasses(t *testing.T) {
	sonic := profile(t, "sonic")
	oc := profile(t, "openconfig")
	srl := profile(t, "srlinux")
	factory := srlFactory(t)
	row := func(table, key string, fields map[string]any) ConfigDB {
		return MergeConfigDB(sonicBase("Ethernet0"), ConfigDB{table: {key: fields}})
	}
	ocIf := func(typ string, eth bool) []byte {
		i := map[string]any{"name": "e1", "config": map[string]any{"name": "e1"}}
		if typ != "" {
			i["config"].(map[string]any)["type"] = typ
		}
		if eth {
			i["openconfig-if-ethernet:ethernet"] = map[string]any{"config": map[string]any{"enable-flow-control": false}}
		}
		b, _ := json.Marshal(map[string]any{"openconfig-interfaces:interfaces": map[string]any{"interface": []any{i}}})
		return b
	}
	srlIf := func(fc string) SetRequest {
		return SetRequest{Update: []Update{{Path: "/interface[name=ethernet-1/1]",
			Val: json.RawMessage(`{"name":"ethernet-1/1","ethernet":{"flow-control":{` + fc + `}}}`)}}}
	}
	srlQoS := func(sub string) SetRequest {
		return SetRequest{Replace: []Update{
			{Path: "/qos/classifiers/dscp-policy[name=p]", Val: json.RawMessage(`{"name":"p","dscp":[{"value":26,"forwarding-class":"fc3"}]}`)},
			{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1" + sub + "]", Val: json.RawMessage(
				`{"interface-id":"ethernet-1/1` + sub + `","interface-ref":{"interface":"ethernet-1/1"` +
					map[bool]string{true: `,"subinterface":0`, false: ``}[sub != ""] + `},"input":{"classifiers":{"dscp-policy":"p"}}}`)},
		}, Update: []Update{{Path: "/interface[name=ethernet-1/1]", Val: json.RawMessage(
			`{"name":"ethernet-1/1","subinterface":[{"index":0}]}`)}}}
	}
	for _, tc := range []struct {
		name       string
		kind       Kind
		sub        string
		bad, fixed func() error
	}{
		{"must/sonic-wred-min-max", KindMust, "Green max threshold",
			func() error {
				return sonic.ValidateConfigDB(row("WRED_PROFILE", "W", map[string]any{"green_min_threshold": "2000", "green_max_threshold": "1000"}), Options{})
			},
			func() error {
				return sonic.ValidateConfigDB(row("WRED_PROFILE", "W", map[string]any{"green_min_threshold": "1000", "green_max_threshold": "2000"}), Options{})
			}},
		{"must/srlinux-classifier-on-port", KindMust, "Attachment of classifiers",
			func() error { return srl.ValidateSet(factory, srlQoS(""), Options{}) },
			func() error { return srl.ValidateSet(factory, srlQoS(".0"), Options{}) }},
		{"when/openconfig-ethernet-on-loopback", KindWhen, "ethernetCsmacd",
			func() error { return oc.ValidateJSON(ocIf("iana-if-type:softwareLoopback", true), Options{}) },
			func() error { return oc.ValidateJSON(ocIf("iana-if-type:ethernetCsmacd", true), Options{}) }},
		{"if-feature/srlinux-7220-d5-tx-flow-control", KindIfFeature, "tx-flow-control",
			func() error { return srl.ValidateSet(factory, srlIf(`"receive":false,"transmit":false`), Options{}) },
			func() error { return srl.ValidateSet(factory, srlIf(`"receive":false`), Options{}) }},
		{"leafref/sonic-port-qos-map", KindLeafref, "DSCP_TO_TC_MAP",
			func() error {
				return sonic.ValidateConfigDB(row("PORT_QOS_MAP", "Ethernet0", map[string]any{"dscp_to_tc_map": "NOPE"}), Options{})
			},
			func() error {
				db := row("PORT_QOS_MAP", "Ethernet0", map[string]any{"dscp_to_tc_map": "NOPE"})
				db["DSCP_TO_TC_MAP"] = map[string]map[string]any{"NOPE": {"26": "3"}}
				return sonic.ValidateConfigDB(db, Options{})
			}},
		{"leafref/openconfig-partial-update", KindLeafref, "no target instance",
			func() error {
				return oc.ValidateSet(nil, SetRequest{Update: []Update{{Path: "/openconfig-qos:qos/forwarding-groups/forwarding-group[name=fg]",
					Val: json.RawMessage(`{"name":"fg","config":{"name":"fg","output-queue":"not-in-payload"}}`)}}}, Options{})
			},
			func() error {
				return oc.ValidateSet(nil, SetRequest{Update: []Update{
					{Path: "/openconfig-qos:qos/queues/queue[name=not-in-payload]", Val: json.RawMessage(`{"name":"not-in-payload","config":{"name":"not-in-payload"}}`)},
					{Path: "/openconfig-qos:qos/forwarding-groups/forwarding-group[name=fg]",
						Val: json.RawMessage(`{"name":"fg","config":{"name":"fg","output-queue":"not-in-payload"}}`)}}}, Options{})
			}},
		{"mandatory/openconfig-interface-type", KindMandatory, "type",
			func() error { return oc.ValidateJSON(ocIf("", false), Options{}) },
			func() error { return oc.ValidateJSON(ocIf("iana-if-type:ethernetCsmacd", false), Options{}) }},
		{"mandatory/sonic-port-lanes", KindMandatory, "lanes",
			func() error {
				return sonic.ValidateConfigDB(ConfigDB{"PORT": {"Ethernet0": {"mtu": "9100"}}}, Options{})
			},
			func() error { return sonic.ValidateConfigDB(sonicBase("Ethernet0"), Options{}) }},
		{"range/sonic-port-mtu", KindType, "99999",
			func() error {
				return sonic.ValidateConfigDB(MergeConfigDB(sonicBase("Ethernet0"), ConfigDB{"PORT": {"Ethernet0": {"mtu": "99999"}}}), Options{})
			},
			func() error {
				return sonic.ValidateConfigDB(MergeConfigDB(sonicBase("Ethernet0"), ConfigDB{"PORT": {"Ethernet0": {"mtu": "9100"}}}), Options{})
			}},
		{"range/srlinux-pfc-detection-timer", KindType, "5000",
			func() error {
				return srl.ValidateSet(factory, SetRequest{Replace: []Update{{Path: "/qos/pfc-mapping-profile[name=p]",
					Val: json.RawMessage(`{"name":"p","received-pfc-pause-frames":{"deadlock":{"detection-timer":5000}}}`)}}}, Options{})
			},
			func() error {
				return srl.ValidateSet(factory, SetRequest{Replace: []Update{{Path: "/qos/pfc-mapping-profile[name=p]",
					Val: json.RawMessage(`{"name":"p","received-pfc-pause-frames":{"deadlock":{"detection-timer":200}}}`)}}}, Options{})
			}},
		{"pattern/sonic-pfc-enable", KindType, "Unsatisfied pattern",
			func() error {
				return sonic.ValidateConfigDB(row("PORT_QOS_MAP", "Ethernet0", map[string]any{"pfc_enable": "3,9"}), Options{})
			},
			func() error {
				return sonic.ValidateConfigDB(row("PORT_QOS_MAP", "Ethernet0", map[string]any{"pfc_enable": "3,4"}), Options{})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.bad()
			if err == nil {
				t.Fatalf("violating payload accepted")
			}
			wantKind(t, err, tc.kind, tc.sub)
			t.Logf("refused: %v", err)
			if err := tc.fixed(); err != nil {
				t.Errorf("fixed payload refused:\n%v", err)
			}
		})
	}
}

// TestRewrites: each SR Linux load-time rewrite applies (the expected
// lines change) and is needed: without it a valid payload is refused,
// with it the payload passes.
func TestRewrites(t *testing.T) {
	srl := profile(t, "srlinux")
	factory := srlFactory(t)
	applied := map[string]int{}
	for _, a := range srl.Rewrites() {
		applied[a.Name] += len(a.Changes)
		for _, c := range a.Changes {
			if c.Old == c.New || c.Line <= 0 {
				t.Errorf("%s %s: bad change %+v", a.Name, a.Module, c)
			}
		}
	}
	want := map[string]int{"srl-nodeset-eq-boolean": 29, "srl-scheduler-seq1-absent-priority": 1,
		"srl-unicast-vs-absent-multicast-queue": 1, "srl-subinterface-type-absent": 4}
	for n, w := range want {
		if applied[n] != w {
			t.Errorf("rewrite %s changed %d expressions, want %d", n, applied[n], w)
		}
	}
	if len(applied) != len(want) {
		t.Errorf("rewrites applied: %v, want %v", applied, want)
	}
	// the payload each rewrite makes valid
	payloads := map[string]SetRequest{
		// PFC on a port whose 802.3x receive is off: the pfc-enable must
		// compares flow-control/receive with false()
		"srl-nodeset-eq-boolean": {Update: []Update{
			{Path: "/interface[name=ethernet-1/1]", Val: json.RawMessage(`{"name":"ethernet-1/1","ethernet":{"flow-control":{"receive":false}}}`)},
			{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]", Val: json.RawMessage(`{"interface-id":"ethernet-1/1","interface-ref":{"interface":"ethernet-1/1"},"pfc":{"pfc-enable":true}}`)},
		}},
		// a strict sequence 0 and a weighted sequence 1
		"srl-scheduler-seq1-absent-priority": {Replace: []Update{{Path: "/qos/scheduler-policies/scheduler-policy[name=sp]", Val: json.RawMessage(
			`{"name":"sp","scheduler":[{"sequence":0,"priority":"strict","input":[{"id":"queue-6","queue-name":"queue-6"}]},{"sequence":1,"input":[{"id":"queue-0","queue-name":"queue-0","weight":50}]}]}`)}}},
		// a DSCP classifier on a routed subinterface (no explicit type)
		"srl-subinterface-type-absent": {Replace: []Update{
			{Path: "/qos/classifiers/dscp-policy[name=p]", Val: json.RawMessage(`{"name":"p","dscp":[{"value":26,"forwarding-class":"fc3"}]}`)},
			{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1.0]", Val: json.RawMessage(
				`{"interface-id":"ethernet-1/1.0","interface-ref":{"interface":"ethernet-1/1","subinterface":0},"input":{"classifiers":{"dscp-policy":"p"}}}`)},
		}, Update: []Update{{Path: "/interface[name=ethernet-1/1]", Val: json.RawMessage(`{"name":"ethernet-1/1","subinterface":[{"index":0}]}`)}}},
		// the factory forwarding classes themselves (unicast-queue, no multicast-queue)
		"srl-unicast-vs-absent-multicast-queue": {},
	}
	for name, req := range payloads {
		t.Run(name, func(t *testing.T) {
			if err := srl.ValidateSet(factory, req, Options{}); err != nil {
				t.Fatalf("with the rewrite, the payload is refused:\n%v", err)
			}
			p := profiles()["srlinux"]
			var rws []Rewrite
			for _, rw := range p.Rewrites {
				if rw.Name != name {
					rws = append(rws, rw)
				}
			}
			p.Rewrites = rws
			without, err := Load(sharedYang, p)
			if err != nil {
				t.Fatal(err)
			}
			defer without.Close()
			err = without.ValidateSet(factory, req, Options{})
			if err == nil {
				t.Fatalf("without the rewrite the payload is accepted: the rewrite is not needed")
			}
			wantKind(t, err, KindMust, "")
			t.Logf("without %s: %v", name, err)
		})
	}
}

func TestNodeSetBoolean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`must ". = false() or ../x = 'y'";`, `must ". = 'false' or ../x = 'y'";`},
		{`must 'not(true() = ../../a or false() = ../../a)';`, `must 'not(../../a = "true" or ../../a = "false")';`},
		{`must '/p:i[p:n=current()/../n]/p:r = false()';`, `must '/p:i[p:n=current()/../n]/p:r = "false"';`},
		{`must 'boolean(/q:qos/q:x) = false()';`, `must 'boolean(/q:qos/q:x) = false()';`},
		{`when "current() = true()";`, `when "current() = 'true'";`},
		{`description "a = false() here";`, `description "a = false() here";`},
		{`must ". != false()";`, `must ". != false()";`},
	} {
		got, _ := yangval.NodeSetBoolean(tc.in)
		if got != tc.want {
			t.Errorf("NodeSetBoolean(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// TestCollectsAll: libyang stops at the first problem; every problem of
// a payload is reported, one Error each.
func TestCollectsAll(t *testing.T) {
	sonic := profile(t, "sonic")
	db := MergeConfigDB(sonicBase("Ethernet0", "Ethernet4"), ConfigDB{
		"PORT":         {"Ethernet0": {"mtu": "99999"}},
		"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "NOPE", "pfc_enable": "3,9"}, "Ethernet4": {"tc_to_queue_map": "GONE"}},
		"WRED_PROFILE": {"W": {"green_min_threshold": "2000", "green_max_threshold": "1000"}},
		"PFC_WD":       {"GLOBAL": {"POLL_INTERVAL": "300"}, "Ethernet0": {"action": "drop", "detection_time": "200", "restoration_time": "400"}},
		"FOO":          {"x": {"a": "b"}},
		"QUEUE":        {"Ethernet0|3": {"bogus": "1"}},
	})
	es := asErrors(t, sonic.ValidateConfigDB(db, Options{}))
	kinds := map[Kind]int{}
	for _, e := range es {
		kinds[e.Kind]++
	}
	t.Logf("%d problems:\n%v", len(es), es)
	want := map[Kind]int{KindUnknown: 2, KindType: 2, KindLeafref: 2, KindMust: 2}
	for k, n := range want {
		if kinds[k] < n {
			t.Errorf("want at least %d %s problems, got %d", n, k, kinds[k])
		}
	}
	if es2 := asErrors(t, sonic.ValidateConfigDB(db, Options{MaxErrors: 2})); len(es2) != 2 {
		t.Errorf("MaxErrors 2: got %d", len(es2))
	}
}

func TestBadInput(t *testing.T) {
	c := profile(t, "openconfig")
	for _, in := range []string{``, `{`, `[]`, `"x"`, `{"nope:x":1}`, `{"openconfig-qos:qos":[1,2]}`, `{"openconfig-qos:qos":{"queues":{"queue":[{"config":{}}]}}}`, `{} {}`} {
		err := c.ValidateJSON([]byte(in), Options{})
		if err == nil {
			t.Errorf("%q accepted", in)
			continue
		}
		asErrors(t, err)
	}
	if err := c.ValidateSet(nil, SetRequest{Update: []Update{{Path: "/qos/queues/queue[name=Q", Val: json.RawMessage(`{}`)}, {Path: "/nope", Val: json.RawMessage(`1`)}, {Path: "/qos", Val: json.RawMessage(`{`)}}}, Options{}); len(asErrors(t, err)) != 3 {
		t.Errorf("bad paths and values: %v", err)
	}
}

// TestConcurrent validates on one context from many goroutines (run
// with -race).
func TestConcurrent(t *testing.T) {
	sonic := profile(t, "sonic")
	good := sonicBase("Ethernet0")
	bad := MergeConfigDB(good, ConfigDB{"PORT": {"Ethernet0": {"mtu": "99999"}}})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if err := sonic.ValidateConfigDB(good, Options{}); err != nil {
					t.Error(err)
					return
				}
				if err := sonic.ValidateConfigDB(bad, Options{}); err == nil {
					t.Error("bad accepted")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestProfiles(t *testing.T) {
	for n, p := range profiles() {
		if p.Source == "" || p.Set != n || p.Name == "" {
			t.Errorf("profile %s: no source or name, or set %q", n, p.Set)
		}
		c := profile(t, n)
		if n == "srlinux" && len(c.Features()["srl_nokia-features"]) != len(p.Features["srl_nokia-features"]) {
			t.Errorf("srlinux features: %d", len(c.Features()["srl_nokia-features"]))
		}
	}
	if _, err := Load(sharedYang, yangval.Profile{Name: "nope", Set: "nope"}); err == nil {
		t.Error("a profile without models loaded")
	}
	// a feature the models do not define is refused at load
	p := profiles()["srlinux"]
	p.Features = map[string][]string{"srl_nokia-features": {"no-such-feature"}}
	p.Rewrites = nil
	if c, err := Load(sharedYang, p); err == nil {
		c.Close()
		t.Error("unknown feature accepted")
	}
	// a rewrite that no longer matches the models is refused at load
	p = profiles()["srlinux"]
	p.Rewrites = []Rewrite{{Name: "stale", Module: "srl_nokia-qos", Old: "no such text", New: "x", Count: 1}}
	if c, err := Load(sharedYang, p); err == nil {
		c.Close()
		t.Error("stale rewrite accepted")
	}
}

// TestNoLeak validates refused and accepted payloads many times and
// checks that the process's resident memory does not keep growing
// (every libyang tree, error record and C string is freed).
func TestNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srl := profile(t, "srlinux")
	sonic := profile(t, "sonic")
	factory := srlFactory(t)
	bad := MergeConfigDB(sonicBase("Ethernet0"), ConfigDB{"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "NOPE", "pfc_enable": "3,9"}}, "FOO": {"x": {"a": "b"}}})
	req := SetRequest{Replace: []Update{{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]", Val: json.RawMessage(
		`{"interface-id":"ethernet-1/1","interface-ref":{"interface":"ethernet-1/1"},"input":{"classifiers":{"dscp-policy":"nope"}},"bogus":1}`)}}}
	round := func(n int) {
		for i := 0; i < n; i++ {
			_ = sonic.ValidateConfigDB(bad, Options{})
			_ = srl.ValidateSet(factory, req, Options{})
			_ = srl.ValidateJSON([]byte(`{"srl_nokia-qos:qos":{"queues":{"queue":[{"queue-index":1,"name":"q"}]}}}`), Options{})
		}
	}
	round(200)
	runtime.GC()
	before := rss(t)
	round(2000)
	runtime.GC()
	after := rss(t)
	t.Logf("RSS %d kB -> %d kB after 2000 rounds", before, after)
	if after-before > 20*1024 {
		t.Errorf("RSS grew by %d kB over 2000 rounds: a leak", after-before)
	}
}

func rss(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("no VmRSS")
	return 0
}
