package openconfig

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// TestLinks: examples/testbed's leaf6 against its emulator answering its
// ports' state and LLDP neighbours from the cabling: clean as the spec
// draws it, each fault named by port in plan's links stage, and every
// port down without cabling.
func TestLinks(t *testing.T) {
	s, _ := load(t, "../../../examples/testbed")
	switchtest.RunLinks(t, s, "leaf6", func(t *testing.T, sw *intent.Switch, src portlink.Source) (drivers.Driver, drivers.Target) {
		g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorOpenConfig, Profile: &Descriptor.YANG.Profile, Links: src}, false)
		return newDriver(g.Options), g.DT
	})
}

// TestLinkPathsInModels: the interface paths and every leaf the reader
// takes from them are in ../shared/yang/openconfig. The LLDP path is
// openconfig-lldp's, which that set does not hold (links.go cites the
// file and lines it was checked against).
func TestLinkPathsInModels(t *testing.T) {
	var paths []string
	for _, leaf := range []string{"state/admin-status", "state/oper-status", "state/counters/in-errors", "state/counters/out-errors",
		"state/counters/in-discards", "state/counters/out-discards", "ethernet/state/negotiated-port-speed",
		"ethernet/state/port-speed", "ethernet/state/fec-mode"} {
		paths = append(paths, linkIfPaths[0]+"/"+leaf)
	}
	switchtest.CheckModelPaths(t, "openconfig", "openconfig-", append(paths, linkIfPaths...))
}

// TestReadLinksFaults: a device without LLDP state (the whole Get
// answered NotFound) is read again for its interfaces alone, LLDP said
// not read and why, still one round trip when LLDP is there; a device
// whose answer is wrong is an error naming the device, never a panic.
func TestReadLinksFaults(t *testing.T) {
	_, f := load(t, "../../../examples/testbed")
	sw := switchtest.Switch(t, f, "leaf6", Name)
	s, _ := load(t, "../../../examples/testbed")
	g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorOpenConfig, Profile: &Descriptor.YANG.Profile,
		Links: portlink.FromSpec(s, "leaf6")}, false)
	drv := newDriver(g.Options).(*Driver)
	ctx := context.Background()
	before := g.Target.Stats().Get
	dl, err := drv.ReadLinks(ctx, g.DT)
	if err != nil || !dl.LLDP || len(dl.Ports["Ethernet0"].Neighbors) != 1 {
		t.Fatalf("clean read: %+v, %v", dl, err)
	}
	if n := g.Target.Stats().Get - before; n != 1 {
		t.Fatalf("%d Gets, want one", n)
	}
	g.Target.Inject(gnmitarget.Fault{RPC: "Get", Kind: gnmitarget.FaultReject, Code: codes.NotFound, Message: "no lldp"})
	dl, err = drv.ReadLinks(ctx, g.DT)
	if err != nil || dl.LLDP || !strings.Contains(dl.LLDPNote, "/lldp/interfaces/interface[name=*]") || dl.Ports["Ethernet0"].Oper != "up" {
		t.Fatalf("without LLDP: %+v, %v", dl, err)
	}
	if err := g.Target.SetState("/interfaces/interface[name=Ethernet0]/ethernet/state/negotiated-port-speed", []byte(`"openconfig-if-ethernet:SPEED_FAST"`)); err != nil {
		t.Fatal(err)
	}
	_, err = drv.ReadLinks(ctx, g.DT)
	if err == nil || !strings.Contains(err.Error(), "leaf6") || !strings.Contains(err.Error(), "SPEED_FAST") {
		t.Fatalf("hostile answer: %v", err)
	}
}
