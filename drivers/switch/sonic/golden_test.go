package sonic

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// goldenHeader names the document whose syntax the rendered file follows.
const goldenHeader = "# fabctl render: SONiC CONFIG_DB rows (config_db.json fragment)\n" +
	"# Syntax: sonic-net/sonic-buildimage src/sonic-yang-models/doc/Configuration.md\n" +
	"# (PORT, DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE,\n" +
	"#  SCHEDULER, WRED_PROFILE, QUEUE, PORT_QOS_MAP, BUFFER_PG, CABLE_LENGTH, PFC_WD)\n" +
	"# Buffer model: dynamic (BUFFER_PG profile NULL); PORT mtu is the IP MTU\n"

func TestGoldenRender(t *testing.T) {
	for _, c := range []struct{ dir, sw, golden string }{
		{"testbed", "leaf1", "testbed-leaf1.golden"},
		{"ai-pod", "leaf1", "ai-pod-leaf1.golden"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			_, f := load(t, c.dir)
			sw := sonicSwitch(t, f, c.sw)
			files, err := (&Driver{}).Render(drivers.Target{Device: sw.Device, Intent: sw})
			if err != nil {
				t.Fatal(err)
			}
			got := append([]byte(goldenHeader), files[0].Data...)
			testutil.Golden(t, filepath.Join("testdata", c.golden), got)
			// The rendering reads back as the intent's state.
			db, _ := ParseConfigDB(files[0].Data)
			st, want2 := db.State(sw), sw.Flatten()
			un := Unexpressible(sw, ModelDynamic)
			for k, v := range want2 {
				if _, skip := un[k]; skip {
					continue // not rendered: listed as not expressible
				}
				if !(intent.Field{}).Equal(v, st[k]) { // a port MTU floor (">=9000") holds any MTU at least that
					t.Errorf("%s: rendered reads back %q, want %q", k, st[k], v)
				}
			}
		})
	}
}

func FuzzReadConfigDB(f *testing.F) {
	_, fab := load(f, "testbed")
	sw := sonicSwitch(f, fab, "leaf1")
	f.Add([]byte(`{"PORT":{"Ethernet0":{"mtu":"9100"}},"PORT_QOS_MAP":{"global":{"dscp_to_tc_map":"[DSCP_TO_TC_MAP|AZURE]"}},"DSCP_TO_TC_MAP":{"AZURE":{"3":"3","4":"4"}}}`))
	f.Add([]byte(`{"QUEUE":{"Ethernet0|3":{"scheduler":"x"}},"PFC_WD":{"GLOBAL":{"POLL_INTERVAL":1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ReadConfigDB(b, sw)
		if err == nil && st == nil {
			t.Fatal("nil state without error")
		}
	})
}

// FuzzParseConfigDBPaths: the one-pass decode of ParseConfigDB and its
// level-by-level tolerant path give the same DB and the same error.
func FuzzParseConfigDBPaths(f *testing.F) {
	f.Add([]byte(`{"PORT":{"Ethernet0":{"mtu":"9100","admin_status":"up"}},"PFC_WD":{"GLOBAL":{"POLL_INTERVAL":1}}}`))
	f.Add([]byte(`{"PORT":{"Ethernet0":{"description":"a\"b\u00e9","x":null,"y":["1"]}},"T":null,"U":{"r":null}}`))
	f.Add([]byte(`{"PORT":{"Ethernet0":"not an object"},"QUEUE":"not a table","X":{"a":{"b":"c"}},"X":{"d":{}}}`))
	f.Add([]byte("{\"PORT\":{\"E\":{\"v\":\"\xff\xfe\"}}}"))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := ParseConfigDB(b)
		want, werr := parseConfigDBTolerant(b)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("errors differ: %v / %v", gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("one pass %#v\ntolerant %#v", got, want)
		}
	})
}
