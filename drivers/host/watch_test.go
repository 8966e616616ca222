package host

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

// TestDCBStateDiff: the flattened DCB state carries the plan's paths and
// the raw fields, and a drift lists exactly what moved.
func TestDCBStateDiff(t *testing.T) {
	ets := dcbnl.ETS{TCTSA: [8]uint8{2, 2, 2, 2, 2, 2, 2, 2}, TCTxBW: [8]uint8{50, 0, 0, 50}, PrioTC: [8]uint8{0, 0, 0, 3}}
	dcbx := uint8(0x09)
	base := &dcbnl.IEEE{ETS: &ets, PFC: &dcbnl.PFC{Enable: 0x08, Delay: 7},
		Apps: []dcbnl.App{{Selector: dcbnl.SelDSCP, Priority: 3, Protocol: 26}}, DCBX: &dcbx,
		Maxrate: &dcbnl.Maxrate{1000000}, Buffer: &dcbnl.Buffer{BufferSize: [8]uint32{1000}}}
	b := dcbState("e0", base)
	for k, v := range map[string]string{
		"nic/e0/pfc": "3", "nic/e0/trust": "dscp", "nic/e0/dscp/26": "3", "nic/e0/tc/3/bandwidth": "50",
		"nic/e0/dcb/prio_tc": "0,0,0,3,0,0,0,0", "nic/e0/dcb/pfc_delay": "7", "nic/e0/dcb/dcbx": "0x09",
		"nic/e0/dcb/maxrate": "1000000,0,0,0,0,0,0,0", "nic/e0/dcb/buffer/size": "1000,0,0,0,0,0,0,0",
	} {
		if b[k] != v {
			t.Errorf("%s = %q, want %q", k, b[k], v)
		}
	}
	if d := diffStates(b, dcbState("e0", base)); len(d) != 0 {
		t.Fatalf("no change reported as %v", d)
	}
	// dcb pfc set dev e0 prio-pfc 3:off 4:on, and the DSCP entry deleted.
	now := *base
	now.PFC = &dcbnl.PFC{Enable: 0x10, Delay: 7}
	now.Apps = nil
	var got []string
	for _, c := range diffStates(b, dcbState("e0", &now)) {
		got = append(got, string(c.Action)+" "+c.Path+" "+c.Before+" -> "+c.After)
	}
	s := strings.Join(got, "\n")
	for _, want := range []string{"~ nic/e0/pfc 3 -> 4", "~ nic/e0/trust dscp -> pcp", "- nic/e0/dscp/26 3 -> ",
		"~ nic/e0/tc/3/lossless true -> false"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	if changesKey(nil) != "" || changesKey([]intent.AttrChange{{Path: "x"}}) == "" {
		t.Fatal("changesKey")
	}
}
