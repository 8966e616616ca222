package srlinux

import (
	"context"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/gnmic"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

// TestGnmicRequestFile: the rendered gnmi-setrequest.json, read the way
// `gnmic set --request-file` reads it (gnmic.SetRequest: gnmic
// itself is not served by the module proxy), sent with fabctl's gNMI
// client to an SR Linux target with its factory configuration, leaves
// the device as fabctl apply would: the next plan (plan.Make, as `fabctl
// plan`) shows no change.
func TestGnmicRequestFile(t *testing.T) {
	s, f := load(t, "testbed")
	sw := switchtest.Switch(t, f, "leaf5", Name)
	g := switchtest.StartGNMI(t, sw, gnmitarget.Config{Flavor: gnmitarget.FlavorSRLinux, Initial: SystemDefaults()}, false)
	drv := newDriver(g.Options)
	e := switchtest.NewEngine(t, drv, s, f, sw, g.DT.Credentials)
	if dp := e.Plan(t); !dp.HasChanges() {
		t.Fatal("nothing to configure: the test would prove nothing")
	}
	files, err := drv.(drivers.Renderer).Render(g.DT)
	if err != nil || len(files) != 1 || files[0].Name != "gnmi-setrequest.json" {
		t.Fatalf("render: %v %+v", err, files)
	}
	req, err := gnmic.SetRequest(files[0].Data, "")
	if err != nil {
		t.Fatal(err)
	}
	cl, _, err := gnmitransport.Dial(context.Background(), g.DT, g.Options)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Set(context.Background(), req); err != nil {
		t.Fatalf("the target refused the request file's Set: %v", err)
	}
	if dp := e.Plan(t); dp.Error != "" || dp.HasChanges() {
		t.Fatalf("plan after the request file: %s %+v", dp.Error, dp.Changes)
	}
}
