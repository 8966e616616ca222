package nxos

import (
	"strings"
	"testing"
)

// TestFloorCarriesDeviceMTU: a port whose MTU is only a floor carries
// the device's own mtu 9216 (plan's liveFloors; Cisco's and Microsoft's
// configurations run it) and builds; the same MTU set by the spec is
// still refused (the IP MTU must leave room for the L2 overhead).
func TestFloorCarriesDeviceMTU(t *testing.T) {
	_, f := load(t, "testdata/nxlab")
	sw := nxosSwitch(t, f, "leaf4")
	for i := range sw.Ports {
		sw.Ports[i].MTU, sw.Ports[i].MTUFloor = JumboMTU, true
	}
	if _, err := Build(sw); err != nil {
		t.Fatalf("a floor port carrying the device's mtu 9216: %v", err)
	}
	sw.Ports[0].MTUFloor = false
	if _, err := Build(sw); err == nil || !strings.Contains(err.Error(), "mtu 9216 outside 576..9194") {
		t.Fatalf("mtu 9216 set by the spec: %v", err)
	}
}
