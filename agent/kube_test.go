package agent

import (
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/kube"
)

func TestMentions(t *testing.T) {
	for _, c := range []struct {
		msg, nic string
		want     bool
	}{
		{"link eth1 not found", "eth1", true},
		{"link eth10 not found", "eth1", false},
		{"read eth1: no such device", "eth1", true},
		{"veth1 missing", "eth1", false},
		{"eth1", "eth1", true},
		{"nic/eth1/mtu", "eth1", true},
		{"", "eth1", false},
	} {
		if got := mentions(c.msg, c.nic); got != c.want {
			t.Errorf("mentions(%q, %q) = %v", c.msg, c.nic, got)
		}
	}
}

// TestNICReport: one NIC's failure is reported on that NIC; the others
// say why they are not verified, and a success verifies every NIC.
func TestNICReport(t *testing.T) {
	h := &intent.Host{NICs: []intent.NIC{{Name: "eth0"}, {Name: "eth1"}, {Name: "eth2"}}}
	ok := &agentproto.Response{OK: true}
	for _, n := range nicReport(h, ok, &apply.DeviceResult{}) {
		if n.Reason != kube.NICVerified {
			t.Errorf("success: %+v", n)
		}
	}
	bad := &agentproto.Response{Errors: []agentproto.Error{{Kind: agentproto.KindVerify, Message: "eth1 read back differs"}}}
	res := &apply.DeviceResult{Remaining: []intent.AttrChange{{Path: "nic/eth2/mtu", Before: "1500", After: "9000"}}}
	got := map[string]string{}
	for _, n := range nicReport(h, bad, res) {
		got[n.Name] = n.Reason
	}
	want := map[string]string{"eth0": kube.NICNotVerified, "eth1": kube.NICFailed, "eth2": kube.NICDiffers}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
}
