package nxos

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/nxosemu"
)

// planLive plans the rig's intent as the planner does.
func (r *rig) planLive(t *testing.T) (map[string]string, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	return switchtest.PlanExpressed(t, r.drv, r.target, expressible(r.sw))
}

// TestL2PortMTU: on a switch whose ports are layer 2 (`system default
// switchport`), NX-OS refuses `mtu 9000` (Cisco TechNote 118994; the
// emulator too). The plan lists the ports' MTU as not expressible,
// saying it sets the system jumbo MTU instead, renders `mtu 9216`, and
// the apply converges; a routed port (`no switchport`) keeps its exact
// MTU. Without the port-mode read the apply meets the refusal.
func TestL2PortMTU(t *testing.T) {
	s, f := load(t, "testdata/nxlab")
	sw := nxosSwitch(t, f, "leaf4")
	// An exact MTU, as a port's own mtu sets it (a floor, the hosts'
	// MTU, is met by the system jumbo MTU and is not listed).
	for i := range sw.Ports {
		sw.Ports[i].MTUFloor = false
	}
	emu, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf4", Password: switchtest.Password, Ports: 8, DefaultSwitchport: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	r := &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
	if len(sw.Ports) < 2 || sw.Ports[0].MTU != 9000 {
		t.Fatalf("the case needs two ports with mtu 9000: %+v", sw.Ports)
	}
	routed := sw.Ports[1].Name
	emu.Edit(func(c *nxosemu.Config) { c.Interfaces[routed].Mode = "no switchport" })
	un, _, steps := r.planLive(t)
	l2 := sw.Ports[0].Name
	if !strings.Contains(un["port/"+l2+"/mtu"], "fabctl sets mtu 9216") {
		t.Fatalf("port/%s/mtu not expressible = %q", l2, un["port/"+l2+"/mtu"])
	}
	if un["port/"+routed+"/mtu"] != "" {
		t.Fatalf("the routed port's MTU listed: %s", un["port/"+routed+"/mtu"])
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	run := string(emu.RunningConfig())
	if !strings.Contains(run, "interface "+l2+"\n") || !strings.Contains(run, "interface "+routed+"\n  no switchport\n") {
		t.Fatal(run)
	}
	for _, want := range []string{"interface " + l2 + "\n", "interface " + routed + "\n"} {
		sec := run[strings.Index(run, want):]
		sec = sec[:strings.Index(sec[1:], "\ninterface")+1]
		mtu := map[string]string{l2: "  mtu 9216\n", routed: "  mtu 9000\n"}[strings.Fields(want)[1]]
		if !strings.Contains(sec, mtu) {
			t.Errorf("%q lacks %q", sec, mtu)
		}
	}
	if _, diff, _ := r.planLive(t); len(diff) != 0 {
		t.Fatalf("re-plan: %+v", diff)
	}
}

// TestRollbackAfterSave: what the engine does under --on-failure
// rollback with a device it already saved (apply.rollbackOne): the
// checkpoint outlives `copy running-config startup-config` (a save acts
// on the startup-config only: save.txt (2)), so Rollback restores the
// running-config, and the second save puts the startup-config back too.
func TestRollbackAfterSave(t *testing.T) {
	r := newRig(t)
	before, startup := r.emu.RunningConfig(), r.emu.StartupConfig()
	_, _, steps := r.plan(t)
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Save(context.Background(), r.target); err != nil {
		t.Fatal(err)
	}
	if string(r.emu.StartupConfig()) == string(startup) {
		t.Fatal("the save changed nothing")
	}
	if err := r.drv.Rollback(context.Background(), r.target, res); err != nil {
		t.Fatalf("rollback after a save: %v", err)
	}
	if err := r.drv.Save(context.Background(), r.target); err != nil {
		t.Fatal(err)
	}
	if string(r.emu.RunningConfig()) != string(before) || ConfigBody(string(r.emu.StartupConfig())) != ConfigBody(string(startup)) {
		t.Fatal("running or startup configuration differs from before the run")
	}
}

// TestNetworkQoSRebuildDisruptive: a change that rebuilds the
// network-qos policy (a no-drop class goes: only removing the policy
// clears pause pfc-cos) leaves every lossless class lossy until the
// re-attach; its step says so.
func TestNetworkQoSRebuildDisruptive(t *testing.T) {
	_, f := load(t, "testdata/nxlab")
	sw := nxosSwitch(t, f, "leaf4")
	desired := expressible(sw)
	var lossless string
	for _, tc := range sw.TCs {
		if tc.Lossless {
			lossless = "tc/" + strconv.Itoa(tc.TC) + "/lossless"
		}
	}
	if lossless == "" {
		t.Fatal("the case needs a lossless class")
	}
	// The switch has a no-drop class 5 the intent does not want.
	diff := []intent.AttrChange{{Path: "tc/5/lossless", Action: intent.Delete, Before: "true"}}
	steps, err := changes(sw, diff, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range steps {
		if strings.Contains(strings.Join(st.Payload, "\n"), "no policy-map type network-qos ") {
			found = true
			if !strings.Contains(st.Disruptive, "every lossless class is lossy") {
				t.Errorf("network-qos rebuild step not marked lossy mid-change: %q", st.Disruptive)
			}
		}
	}
	if !found {
		t.Fatalf("no network-qos rebuild planned: %+v", steps)
	}
}
