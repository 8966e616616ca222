package opensm

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Issue 38: every cabled port's tables are desired state, switch ports
// included (the adapter's P_Keys on the switch port facing it, none on
// an inter-switch port), and a difference is planned as a restore of that
// port: one step per port, named the spec's way, never a file write and
// never "a port leaving a partition".
func TestFabricPortsPlannedAsRestores(t *testing.T) {
	sm := loadSM(t, "../../../examples/ib-testbed")
	st := sm.Flatten()
	for k, want := range map[string]string{
		"ib/cn04/ib0/pkey/storage": "full",
		"ib/cn01/ib0/pkey/storage": "limited",
		"ib/cn01/ib0/pkey/Default": "full",
		"ib/leaf2/2/pkey/storage":  "full", // faces cn04:ib0
		"ib/leaf1/7/sl2vl":         "0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0",
		"ib/spine1/1/vlarb_high":   "1:32",
		"ib/sm01/ib0/vlarb_low":    "0:32,1:96,2:64",
		"partitions/storage/pkey":  "0x0002",
	} {
		if st[k] != want {
			t.Errorf("%s = %q, want %q", k, st[k], want)
		}
	}
	for k := range st {
		if strings.HasPrefix(k, "ib/leaf1/7/pkey/") || strings.HasPrefix(k, "ib/spine1/") && strings.Contains(k, "/pkey/") {
			t.Errorf("an inter-switch port has P_Keys in the desired state: %s", k)
		}
	}
	d := &Driver{}
	diff := intent.Diff(st, withoutKeys(st, "ib/leaf2/2/pkey/storage", "ib/cn02/ib0/sl2vl"), d.Fields())
	diff = append(diff, intent.AttrChange{Path: "ib/sm01/ib0/pkey/storage", Action: intent.Delete, Before: "full"})
	steps, err := d.Changes(drivers.Target{Device: sm.Device, Intent: sm}, diff, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps, want one per port: %+v", len(steps), steps)
	}
	all := ""
	for _, s := range steps {
		all += s.Summary + "\n  " + strings.Join(s.Payload, "\n  ") + "\n"
		if s.Disruptive != "" {
			t.Errorf("a restore is disruptive: %s", s.Disruptive)
		}
	}
	for _, want := range []string{
		"restore leaf2 port 2's P_Key table to what the subnet manager programs",
		"restore the P_Key of partition storage (full member)",
		"restore cn02:ib0's SL-to-VL table",
		"remove the P_Key of partition storage (full member), which the spec does not give the port",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("steps lack %q:\n%s", want, all)
		}
	}
	for _, c := range diff {
		if c.Disruptive != "" {
			t.Errorf("%s: disruptive %q", c.Path, c.Disruptive)
		}
	}
	if strings.Contains(all, "leaving a partition") || strings.Contains(all, "SIGHUP") {
		t.Errorf("a port restore reads as a file change:\n%s", all)
	}
}

func withoutKeys(st intent.State, keys ...string) intent.State {
	out := intent.State{}
	for k, v := range st {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// TestMemberRestoreNotDisruptive: a member put back into partitions.conf
// (testbed fault partition-drop, then apply) is a restore, not "a port
// leaving a partition"; removing one, or full turning limited, is.
func TestMemberRestoreNotDisruptive(t *testing.T) {
	d := &Driver{}
	const p = "partitions/storage/member/0x0c42a10300000e01"
	for _, c := range []struct {
		before, after string
		disruptive    bool
	}{
		{"", "full", false},
		{"", "limited", false},
		{"full", "", true},
		{"full", "limited", true},
	} {
		// The partition stays: desired owns its scope.
		before, after := intent.State{"partitions/storage/pkey": "0x0002"}, intent.State{"partitions/storage/pkey": "0x0002"}
		if c.before != "" {
			before[p] = c.before
		}
		if c.after != "" {
			after[p] = c.after
		}
		diff := intent.Diff(after, before, d.Fields())
		if len(diff) != 1 || (diff[0].Disruptive != "") != c.disruptive {
			t.Errorf("%q -> %q: %+v, want disruptive %v", c.before, c.after, diff, c.disruptive)
		}
	}
}
