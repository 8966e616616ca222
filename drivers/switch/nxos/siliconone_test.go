package nxos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/nxosemu"
)

func TestSiliconOneModels(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  bool
	}{
		{"Nexus9000 C9808 Chassis", true},
		{"N9K-C9804", true},
		{"9808", true},
		{"NX-OSv Chassis", false},                // napalm-show-version.json
		{"Nexus9000 C93180YC-FX Chassis", false}, // Cloud Scale
		{"Nexus9000 C9336C-FX2 Chassis", false},
		{"N9K-C9364C", false},
		{"", false},
	} {
		if got := SiliconOne(tc.model); got != tc.want {
			t.Errorf("SiliconOne(%q) = %v", tc.model, got)
		}
	}
}

func TestParseChassis(t *testing.T) {
	got, err := ParseChassis(corpusBody(t, "napalm-show-version.json"))
	if err != nil || got != "NX-OSv Chassis" {
		t.Fatalf("NAPALM's capture: %q, %v", got, err)
	}
	for _, bad := range []string{"", "% Invalid command", `{"host_name": "x"}`, `{"chassis_id": "a\u001b[2Jb"}`, `{"chassis_id": 7}`, `{"chassis_id": "` + strings.Repeat("x", 81) + `"}`} {
		if _, err := ParseChassis(bad); err == nil {
			t.Errorf("ParseChassis(%q) accepted", bad)
		}
	}
}

// TestSiliconOneNotGuessed: a switch whose `show version` names a Nexus
// 9800 gets none of the Cloud Scale QoS forms: the plan lists every
// QoS, PFC and watchdog setting as not expressible with the reason, and
// sends only the interface MTU; render refuses. The same spec on the
// default chassis plans the QoS lines.
func TestSiliconOneNotGuessed(t *testing.T) {
	s, f := load(t, "testdata/nxlab")
	sw := nxosSwitch(t, f, "leaf4")
	plan := func(chassis string) (map[string]string, []drivers.Change, *rig) {
		emu, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf4", Password: switchtest.Password, Ports: 8, Chassis: chassis})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { emu.Close() })
		target, opts := switchtest.Connect(t, emu, sw, "admin")
		r := &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
		un, _, steps := r.planLive(t)
		return un, steps, r
	}
	un, steps, r := plan("Nexus9000 C9808 Chassis")
	var qos int
	for k, why := range un {
		if strings.HasPrefix(k, "tc/") || strings.HasPrefix(k, "dscp/") || k == "trust" || strings.HasSuffix(k, "/pfc") {
			qos++
			if !strings.Contains(why, "Silicon One") {
				t.Errorf("%s: %q", k, why)
			}
		}
		if strings.HasSuffix(k, "/mtu") {
			t.Errorf("the interface MTU listed: %s", k)
		}
	}
	if qos == 0 {
		t.Fatalf("no QoS setting listed as not expressible on a Nexus 9800: %v", un)
	}
	for _, st := range steps {
		for _, l := range st.Payload {
			if strings.Contains(l, "policy-map") || strings.Contains(l, "class-map") || strings.Contains(l, "priority-flow-control") {
				t.Errorf("a QoS line planned on a Nexus 9800: %q", l)
			}
		}
	}
	live, err := r.drv.Read(context.Background(), r.target)
	if err != nil {
		t.Fatal(err)
	}
	tg := r.target
	tg.Live = live
	if _, err := r.drv.Render(tg); err == nil || !strings.Contains(err.Error(), "Silicon One") {
		t.Fatalf("render on a Nexus 9800: %v", err)
	}
	un, steps, _ = plan("")
	for k, why := range un {
		if strings.Contains(why, "Silicon One") {
			t.Errorf("%s listed on the default chassis: %s", k, why)
		}
	}
	var policy bool
	for _, st := range steps {
		for _, l := range st.Payload {
			policy = policy || strings.Contains(l, "policy-map type network-qos")
		}
	}
	if !policy {
		t.Fatal("the default chassis planned no network-qos policy")
	}
}
