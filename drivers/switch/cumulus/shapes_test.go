package cumulus

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const platform = "cumulus"

// cumulusPlaceholders narrow the notation for NVUE: an interface is an swp
// port (breakouts swpNsM).
var cumulusPlaceholders = map[string]string{"if": `swp[0-9]+(?:s[0-9]+)?`}

func loadShapes(t *testing.T) []switchtest.CompiledRow {
	t.Helper()
	return switchtest.CompileRows(t, platform, cumulusPlaceholders)
}

// TestShapesIndex: every row is well formed and its evidence points at a
// line inside a corpus file (switchtest.LoadShapes); no row the driver
// sends is CONTRADICTED or NO-SOURCE.
func TestShapesIndex(t *testing.T) {
	var rows []switchtest.ShapeRow
	for _, r := range loadShapes(t) {
		rows = append(rows, r.ShapeRow)
	}
	switchtest.CheckRows(t, platform, rows)
}

// TestShapesMatcherRefusesUndocumented: the matcher is not vacuous: the
// forms the driver sent before the vendor audit, with several attributes
// in one nv set, match no documented row.
func TestShapesMatcherRefusesUndocumented(t *testing.T) {
	rows := loadShapes(t)
	for _, bad := range []string{
		"nv set qos pfc default-global tx enable rx enable",
		"nv set qos congestion-control default-global traffic-class 3 min-threshold 150000 max-threshold 1500000 probability 100 ecn enable",
		"nv set qos egress-scheduler default-global traffic-class 0 mode dwrr bw-percent 50",
		"nv set qos pfc-watchdog polling-interval 100 robustness 2",
		"nv config apply -y",
		"nv config history",
		"nv set interface swp1 link mtu 9300",
		"nv set qos egress-scheduler default-global traffic-class 8 mode dwrr",
	} {
		if r, ok := switchtest.Documented(rows, bad); ok {
			t.Errorf("%q matches shapes.txt:%d %q", bad, r.Line, r.Text)
		}
	}
	if _, ok := switchtest.Documented(rows, "nv set qos pfc default-global tx enable"); !ok {
		t.Fatal("the matcher refuses a documented form")
	}
}

// TestShapesConformance collects every command the driver sends to the
// emulator (sshemu records them) over representative runs: render, plan
// and apply from empty with several profiles, a port moved back to
// default-global (nv unset), drift repair, a refused line (detach), a drop
// after the apply (re-apply of the recorded revision), Rollback, Read and
// Save; plus every line of Render for the golden specs. It fails on any
// command that matches no SOURCED or DERIVED row of shapes.txt.
func TestShapesConformance(t *testing.T) {
	rows := loadShapes(t)
	sent := map[string]bool{}
	for _, lines := range renderAll(t) {
		for _, l := range lines {
			sent[l] = true
		}
	}

	_, f := switchtest.Load(t, switchtest.MixedQoS)
	sw := clSwitch(t, f, "leaf-cl")
	emu, err := cumulusemu.Start(cumulusemu.Options{Hostname: "leaf-cl", Password: switchtest.Password, Ports: 4, AutoSave: "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	target, opts := switchtest.Connect(t, emu, sw, "cumulus")
	drv := NewWith(opts)
	ctx := context.Background()
	planApply := func(opts drivers.ApplyOptions) (drivers.Result, error) {
		t.Helper()
		_, _, steps := switchtest.Plan(t, drv, target, expressible(sw))
		return drv.Apply(ctx, target, steps, opts)
	}
	res, err := planApply(drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := drv.Save(ctx, target); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.ReadLinks(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := drv.Rollback(ctx, target, res); err != nil {
		t.Fatal(err)
	}
	// A refused line: the pending revision is detached.
	emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`link mtu`), Kind: sshemu.Reject, Output: "Error: refused\n", Times: 1})
	if _, err := planApply(drivers.ApplyOptions{}); err == nil {
		t.Fatal("refused line applied")
	}
	// A drop right after the apply: the recorded revision is re-applied.
	emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^nv config apply --assume-yes$`), Kind: sshemu.DropAfter, Times: 1})
	if _, err := planApply(drivers.ApplyOptions{}); err == nil {
		t.Fatal("dropped apply succeeded")
	}
	if _, err := planApply(drivers.ApplyOptions{ConfirmTimeout: 1}); err != nil {
		t.Fatal(err)
	}
	// Drift, then the legacy port returns to default-global (nv unset).
	emu.Edit(func(tr map[string]any) { cumulusemu.SetPath(tr, "interface.swp2.link.mtu", 1600) })
	for i := range sw.Ports {
		if sw.Ports[i].Name == "swp4" {
			sw.Ports[i].Trust = "dscp"
		}
		if sw.Ports[i].Name == "swp3" {
			sw.Ports[i].PFC = []int{3}
		}
	}
	if _, err := planApply(drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := drv.Save(ctx, target); err != nil {
		t.Fatal(err)
	}
	// A telemetry poll (counters.go).
	if _, err := drv.ReadCounters(ctx, target); err != nil {
		t.Fatal(err)
	}
	for _, c := range emu.Commands() {
		c = strings.TrimSpace(c)
		if c == "" || c == "exit" { // scrapligo's on-close (Platform)
			continue
		}
		sent[c] = true
	}

	cmds := make([]string, 0, len(sent))
	for c := range sent {
		cmds = append(cmds, c)
	}
	switchtest.CheckConformance(t, platform, rows, cmds)
}
