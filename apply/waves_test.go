package apply

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

func TestWaves(t *testing.T) {
	chg := func(kind, name string, cs ...intent.AttrChange) *plan.DevicePlan {
		return &plan.DevicePlan{Address: kind + "." + name, Kind: kind, Name: name, Changes: cs}
	}
	upd := func(p, before, after string) intent.AttrChange {
		return intent.AttrChange{Path: p, Action: intent.Update, Before: before, After: after}
	}
	tests := []struct {
		name     string
		devs     []*plan.DevicePlan
		order    Order
		conflict bool
		waves    [][]int
		reason   string
	}{
		{
			name: "PFC enabled on a new priority: switches first",
			devs: []*plan.DevicePlan{
				chg("host", "h1", upd("nic/eth0/pfc", "3", "3,4")),
				chg("switch", "s1", upd("port/Ethernet0/pfc", "3", "3,4")),
			},
			order: SwitchesFirst, waves: [][]int{{1}, {0}}, reason: "widens",
		},
		{
			name: "class made lossless (create): switches first",
			devs: []*plan.DevicePlan{
				chg("switch", "s1", intent.AttrChange{Path: "tc/4/lossless", Action: intent.Create, After: "true"}),
				chg("host", "h1", intent.AttrChange{Path: "nic/eth0/tc/4/lossless", Action: intent.Update, Before: "false", After: "true"}),
			},
			order: SwitchesFirst, waves: [][]int{{0}, {1}},
		},
		{
			name: "PFC removed: hosts first",
			devs: []*plan.DevicePlan{
				chg("switch", "s1", upd("port/Ethernet0/pfc", "3,4", "3")),
				chg("host", "h1", upd("nic/eth0/pfc", "3,4", "3")),
				chg("switch", "s2", intent.AttrChange{Path: "port/Ethernet0/pfc", Action: intent.Delete, Before: "3"}),
			},
			order: HostsFirst, waves: [][]int{{1}, {0, 2}}, reason: "narrows",
		},
		{
			name:  "lossless class removed: hosts first",
			devs:  []*plan.DevicePlan{chg("switch", "s1", intent.AttrChange{Path: "tc/3/lossless", Action: intent.Delete, Before: "true"}), chg("host", "h1", upd("nic/eth0/mtu", "9000", "9000"))},
			order: HostsFirst, waves: [][]int{{1}, {0}},
		},
		{
			name:  "MTU raised: switches first",
			devs:  []*plan.DevicePlan{chg("host", "h1", upd("nic/eth0/mtu", "1500", "9000")), chg("switch", "s1", upd("port/Ethernet0/mtu", "1500", "9100"))},
			order: SwitchesFirst, waves: [][]int{{1}, {0}},
		},
		{
			name:  "MTU lowered: hosts first",
			devs:  []*plan.DevicePlan{chg("switch", "s1", upd("port/Ethernet0/mtu", "9100", "1500")), chg("host", "h1", upd("nic/eth0/mtu", "9000", "1500"))},
			order: HostsFirst, waves: [][]int{{1}, {0}},
		},
		{
			name: "priority moved 3 -> 4: conflict, switches first",
			devs: []*plan.DevicePlan{
				chg("host", "h1", upd("nic/eth0/pfc", "3", "4")),
				chg("switch", "s1", upd("port/Ethernet0/pfc", "3", "4")),
			},
			order: SwitchesFirst, conflict: true, waves: [][]int{{1}, {0}}, reason: "apply the additions first",
		},
		{
			name:  "no lossless or MTU change: switches first",
			devs:  []*plan.DevicePlan{chg("host", "h1", upd("nic/eth0/tos", "96", "106")), chg("switch", "s1", upd("trust", "pcp", "dscp")), chg("switch", "s2")},
			order: SwitchesFirst, waves: [][]int{{1}, {0}}, reason: "default",
		},
		{
			name:  "only hosts",
			devs:  []*plan.DevicePlan{chg("host", "h1", upd("nic/eth0/pfc", "", "3"))},
			order: SwitchesFirst, waves: [][]int{{0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wp := Waves(tt.devs)
			if wp.Order != tt.order || wp.Conflict != tt.conflict || !reflect.DeepEqual(wp.Waves, tt.waves) {
				t.Errorf("got %s conflict=%v waves %v; want %s %v %v (%s)", wp.Order, wp.Conflict, wp.Waves, tt.order, tt.conflict, tt.waves, wp.Reason)
			}
			if !strings.Contains(wp.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", wp.Reason, tt.reason)
			}
		})
	}
}
