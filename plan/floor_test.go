package plan

import (
	"context"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// capture is the memory driver that keeps the intent its Changes got.
type capture struct {
	memory.Driver
	got *intent.Switch
}

func (c *capture) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	if sw, ok := t.Intent.(*intent.Switch); ok {
		c.got = sw
	}
	return c.Driver.Changes(t, diff, desired)
}

// A switch port the spec gives no MTU keeps a larger MTU the device has
// (no change, and a step that rewrites the port for another reason
// renders the device's MTU); a smaller one is raised to the floor.
func TestMTUFloorPlan(t *testing.T) {
	s := testutil.LoadSrc(t, src)
	f := intent.Compile(s)
	store := memory.NewStore()
	var last *capture
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "eos", "host"} {
		_ = reg.Register(n, func() drivers.Driver { last = &capture{Driver: memory.Driver{Store: store}}; return last })
	}
	for _, u := range Units(f) {
		st := intent.State{}
		for k, v := range u.State {
			st[k] = v
		}
		if u.Device.Name == "leaf1" {
			st["port/Ethernet0/mtu"] = "9216" // the NOS's jumbo default
			st["port/Ethernet1/mtu"] = "1500"
			st["port/Ethernet0/pfc"] = "" // another change on the same port
		}
		store.Set(u.Device.Name, st)
	}
	leaf := f.Switches[0]
	if leaf.Name != "leaf1" || len(leaf.Ports) != 2 || !leaf.Ports[0].MTUFloor {
		t.Fatalf("leaf1 ports %+v", leaf.Ports)
	}
	u := Unit{Device: leaf.Device, Intent: leaf}
	dp := planDevice(context.Background(), u, reg, Options{})
	got := map[string]intent.AttrChange{}
	for _, c := range dp.Changes {
		got[c.Path] = c
	}
	if _, ok := got["port/Ethernet0/mtu"]; ok {
		t.Errorf("a 9216 port is lowered to the hosts' MTU: %+v", got["port/Ethernet0/mtu"])
	}
	if c, ok := got["port/Ethernet1/mtu"]; !ok || c.Before != "1500" || c.After != ">=9000" {
		t.Errorf("a 1500 port is not raised: %+v", c)
	}
	if last.got == nil || last.got.Ports[0].MTU != 9216 || last.got.Ports[1].MTU != 9000 {
		t.Errorf("the renderer got %+v", last.got)
	}
	if leaf.Ports[0].MTU != 9000 {
		t.Errorf("the compiled intent was changed: %+v", leaf.Ports[0])
	}
}
