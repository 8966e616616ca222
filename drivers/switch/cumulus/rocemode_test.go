package cumulus

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// TestRoCEModeDefaults: RoCE mode with nothing overridden marks TC0 and
// TC3 (roce-514.txt, `nv show qos roce`: congestion-control enabled-tc
// 0,3), and a switch that is not in RoCE mode yet gets, in the step that
// turns it on, every section the mode implies, not only those its diff
// names: a TC3 without ECN (a RoCEv1 fabric) showed no ECN difference
// before RoCE mode and kept the mode's ECN after it.
func TestRoCEModeDefaults(t *testing.T) {
	_, f := load(t, "testdata/cllab")
	sw := clSwitch(t, f, "leaf2")
	st, err := ReadConfigJSON([]byte(`[{"set": {"qos": {"roce": {"enable": "on"}}}}]`), sw)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tc := range sw.TCs {
		if tc.TC == 0 || tc.TC == 3 {
			seen++
		}
		got := st["tc/"+strconv.Itoa(tc.TC)+"/ecn/min"]
		if want := tc.TC == 0 || tc.TC == 3; want != (got == "150000") {
			t.Errorf("RoCE mode defaults: tc/%d/ecn/min = %q (ECN expected: %v)", tc.TC, got, want)
		}
	}

	if seen != 2 {
		t.Fatalf("cllab leaf2 has not both TC0 and TC3: %+v", sw.TCs)
	}

	v1 := *sw
	v1.TCs = append([]intent.TC(nil), sw.TCs...)
	for i := range v1.TCs {
		v1.TCs[i].ECN = nil
	}
	diff := []intent.AttrChange{{Path: "port/" + sw.Ports[0].Name + "/mtu", Action: intent.Update, Before: "1500", After: "9000"}}
	for _, on := range []bool{false, true} {
		steps, err := changes(&v1, diff, nil, on)
		if err != nil {
			t.Fatal(err)
		}
		all := ""
		for _, s := range steps {
			if len(s.Payload) == 0 {
				t.Errorf("roceOn=%v: an empty step %+v", on, s)
			}
			all += strings.Join(s.Payload, "\n") + "\n"
		}
		has := strings.Contains(all, "traffic-class 3 ecn disable")
		if has == on {
			t.Errorf("roceOn=%v: TC3's ECN disable sent = %v, want %v\n%s", on, has, !on, all)
		}
		if !strings.HasPrefix(all, "nv set qos roce\n") {
			t.Errorf("roceOn=%v: the first step does not start with nv set qos roce\n%s", on, all)
		}
	}
}
