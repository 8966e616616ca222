package sonic

import (
	"encoding/json"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// TestReadPortListKeys: rows keyed by a list of ports (and QUEUE rows by
// a queue range) read as each listed port's (portlists.go); two rows
// that cover one port and disagree read Inconsistent.
func TestReadPortListKeys(t *testing.T) {
	sw := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet0"}, {Name: "Ethernet4"}, {Name: "Ethernet8"}}}
	for _, tc := range []struct {
		name string
		db   string
		want map[string]string // "" = absent
	}{{
		name: "documented list row",
		db: `{"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
 "PORT_QOS_MAP": {"Ethernet0,Ethernet4,Ethernet8": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"}},
 "DSCP_TO_TC_MAP": {"AZURE": {"26": "3"}}}`,
		want: map[string]string{"trust": "dscp", "dscp/26": "3", "port/Ethernet0/pfc": "3,4",
			"port/Ethernet4/pfc": "3,4", "port/Ethernet8/pfc": "3,4", "port/Ethernet4/trust": ""},
	}, {
		name: "queue list and range",
		db: `{"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
 "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|3-4": {"scheduler": "s1"}},
 "SCHEDULER": {"s1": {"type": "DWRR", "weight": "40"}}}`,
		want: map[string]string{"tc/3/sched": "ets", "tc/3/bandwidth": "40", "tc/4/bandwidth": "40"},
	}, {
		name: "malformed range is refused (orchagent parseIndexRange)",
		db: `{"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
 "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|4-3": {"scheduler": "s1"}, "Ethernet0|0-99999999": {"scheduler": "s1"}},
 "SCHEDULER": {"s1": {"type": "DWRR", "weight": "40"}}}`,
		want: map[string]string{"tc/3/sched": "", "tc/4/sched": ""},
	}, {
		name: "a port's own row and a list row disagree",
		db: `{"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
 "PORT_QOS_MAP": {"Ethernet0,Ethernet4,Ethernet8": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"},
   "Ethernet4": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3"}},
 "DSCP_TO_TC_MAP": {"AZURE": {"26": "3"}}}`,
		want: map[string]string{"trust": "dscp", "port/Ethernet0/pfc": "3,4", "port/Ethernet4/pfc": Inconsistent},
	}, {
		name: "disagreeing maps",
		db: `{"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
 "PORT_QOS_MAP": {"Ethernet0,Ethernet4,Ethernet8": {"dscp_to_tc_map": "AZURE"},
   "Ethernet8,Ethernet12": {"dot1p_to_tc_map": "AZURE"}},
 "DSCP_TO_TC_MAP": {"AZURE": {"26": "3"}}}`,
		want: map[string]string{"port/Ethernet8/trust": Inconsistent},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := ParseConfigDB([]byte(tc.db))
			if err != nil {
				t.Fatal(err)
			}
			st := db.State(sw)
			for k, v := range tc.want {
				if got, ok := st[k]; got != v || (v == "" && ok) {
					t.Errorf("%s = %q (set %v), want %q", k, got, ok, v)
				}
			}
		})
	}
}

// FuzzSplitListRows: a patch built on any running CONFIG_DB (hostile
// keys, non-object rows, malformed ranges) never panics and leaves no
// row keyed by a list of ports in its result (portlists.go).
func FuzzSplitListRows(f *testing.F) {
	f.Add(`{"PORT_QOS_MAP": {"Ethernet0,Ethernet4": {"pfc_enable": "3,4"}, "Ethernet4": {"pfc_enable": "3"}}, "QUEUE": {"Ethernet0,Ethernet4|3-4": {"scheduler": "s"}, "Ethernet0|4-3": {}}}`)
	f.Add(`{"BUFFER_PG": {",|": "x", "a,,b|0-63": {"profile": "NULL"}}, "QUEUE": {"|-": 1}}`)
	f.Add(`{"PORT_QOS_MAP": {"~1,/": {"a": "b"}}}`)
	steps := []drivers.Change{{Payload: []string{
		`{"op":"add","path":"/PORT_QOS_MAP/Ethernet0/pfc_enable","value":"3"}`,
		`{"op":"add","path":"/QUEUE/Ethernet0|3","value":{"scheduler":"x"}}`,
	}}}
	f.Fuzz(func(t *testing.T, doc string) {
		var cur map[string]any
		if json.Unmarshal([]byte(doc), &cur) != nil || cur == nil {
			return
		}
		_, target, err := effectivePatch(cur, steps)
		if err != nil {
			return
		}
		for table, ranges := range listTables {
			tab, _ := target[table].(map[string]any)
			for k := range tab {
				if isListKey(k, ranges) {
					t.Fatalf("%s|%q left in the result", table, k)
				}
			}
		}
	})
}
