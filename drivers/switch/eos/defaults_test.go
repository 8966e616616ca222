package eos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

// TestHiddenDefaultsPlanNoChange: on a switch whose built-in DSCP map
// equals the intent's, show running-config prints no qos map line after
// the apply (EOS hides defaults); the driver reads the map from show
// running-config all, so the apply verifies and a re-plan is empty
// instead of reporting every code point "not set" forever. A rollback
// returns the code points to the built-in map the switch really uses.
func TestHiddenDefaultsPlanNoChange(t *testing.T) {
	_, f := load(t, "testbed")
	sw := eosSwitch(t, f, "leaf2")
	def := map[int]int{}
	for d, tc := range sw.DSCPToTC {
		def[d] = tc
	}
	def[46] = (sw.DSCPToTC[46] + 1) % 8 // one code point differs: it is printed
	emu, err := eosemu.Start(eosemu.Options{Hostname: "leaf2", Password: switchtest.Password, Ports: 8, DSCPDefault: def})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	r := &rig{emu: emu, drv: NewWith(opts), sw: sw, target: target}
	pre := string(emu.RunningConfig())
	live, diff, steps := r.plan(t)
	if live["dscp/46"] != "" && live["dscp/46"] == switchtest.Desired(r.drv, sw)["dscp/46"] {
		t.Fatalf("dscp/46 read as the intent before the apply: %q", live["dscp/46"])
	}
	for _, c := range diff {
		if strings.HasPrefix(c.Path, "dscp/") && c.Path != "dscp/46" {
			t.Fatalf("a code point the built-in map already has planned: %+v", c)
		}
	}
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := string(emu.RunningConfig())
	if n := strings.Count(run, "qos map dscp "); n != 1 || !strings.Contains(run, "qos map dscp 46 to traffic-class") {
		t.Fatalf("running-config should print only the non-default code point:\n%s", run)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	if err := r.drv.Rollback(context.Background(), r.target, res); err != nil {
		t.Fatal(err)
	}
	if got := string(emu.RunningConfig()); got != pre {
		t.Fatalf("rollback did not return to the built-in map:\n%s", got)
	}
	// The restore replaced the configuration (rollback clean-config and the
	// recorded lines): the code point is back at its built-in class without
	// a derived `no` form, and no removal form was typed at all.
	clean := false
	for _, c := range emu.Commands() {
		if strings.HasPrefix(c, "no qos ") || strings.HasPrefix(c, "no priority-flow-control pause") || c == "no service-profile" {
			t.Fatalf("restore sent the unsourced removal %q", c)
		}
		clean = clean || c == "rollback clean-config"
	}
	if !clean {
		t.Fatalf("restore did not replace the configuration: %q", emu.Commands())
	}
	live, _, _ = r.plan(t)
	if live["dscp/46"] != "" && live["dscp/46"] != "-" && live["dscp/46"] == switchtest.Desired(r.drv, sw)["dscp/46"] {
		t.Fatalf("dscp/46 after rollback: %q", live["dscp/46"])
	}
}
