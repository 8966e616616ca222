package plan

import (
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// TestWithoutUnexpressible: a setting the plan lists as not expressible
// is neither set nor removed (a SONiC port watchdog GCU refuses: the
// desired state drops port/X/pfcwd, the live "false" must not become a
// removal that apply's verification then finds "still present").
func TestWithoutUnexpressible(t *testing.T) {
	dp := &DevicePlan{Unexpressible: []Unexpressible{{Path: "port/Ethernet0/pfcwd", Value: "true", Reason: "r"}}}
	in := []intent.AttrChange{
		{Path: "port/Ethernet0/pfcwd", Action: intent.Delete, Before: "false"},
		{Path: "port/Ethernet0/mtu", Action: intent.Delete, Before: "9100"},
		{Path: "port/Ethernet4/pfcwd", Action: intent.Delete, Before: "false"},
	}
	got := dp.WithoutUnexpressible(in)
	if len(got) != 2 || got[0].Path != "port/Ethernet0/mtu" || got[1].Path != "port/Ethernet4/pfcwd" {
		t.Fatalf("got %+v", got)
	}
	if len(in) != 3 || in[0].Path != "port/Ethernet0/pfcwd" {
		t.Fatal("the input slice was modified")
	}
}
