package sonic

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// planExpressed plans the rig's intent as the planner does.
func (r *rig) planExpressed(t *testing.T) (map[string]string, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	return switchtest.PlanExpressed(t, r.drv, r.target, r.sw.Flatten())
}

// TestGCUWatchdogNotPlanned: on switches where SONiC's GCU refuses the
// PFC_WD change (gcu.go), the plan lists the watchdog settings as not
// expressible with GCU's reason and the apply, run against the
// emulator's own GCU validators, succeeds and converges on the rest.
// Without gcuUnexpressible/gcuFilter (or without the image read from
// show version) the emulator refuses the patch.
func TestGCUWatchdogNotPlanned(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts sonicemu.Options
		edit func(db map[string]any)
		want map[string]string // path -> reason fragment
	}{
		{name: "HWSKU in no GCU list",
			edit: func(db map[string]any) {
				db["DEVICE_METADATA"].(map[string]any)["localhost"].(map[string]any)["hwsku"] = "DellEMC-Z9864f-O64"
			},
			want: map[string]string{"pfcwd/poll": "in none of the ASIC lists", "pfcwd/detect": "in none of the ASIC lists"}},
		// The image, read from show version (gcu.go imageOf): a branch older
		// than the PFCWD scenario's minimum for td2 (20181100), and a
		// broadcom image, on which GCU looks a HWSKU up in the Broadcom
		// lists only (a Mellanox SKU then names no ASIC).
		{name: "branch older than the ASIC's", opts: sonicemu.Options{BuildVersion: "SONiC.20180330.12"},
			want: map[string]string{"pfcwd/poll": "its branch 20180330", "pfcwd/detect": "older than 20181100"}},
		{name: "mellanox HWSKU on a broadcom image", opts: sonicemu.Options{ASICType: "broadcom"},
			edit: func(db map[string]any) {
				db["DEVICE_METADATA"].(map[string]any)["localhost"].(map[string]any)["hwsku"] = "ACS-SN5600"
			},
			want: map[string]string{"pfcwd/poll": `asic_type "broadcom"`}},
		{name: "no PFC_WD table", opts: sonicemu.Options{NoDefaultPFCWD: true},
			want: map[string]string{"pfcwd/poll": "refuses to create the PFC_WD table", "pfcwd/detect": "refuses to create the PFC_WD table"}},
		{name: "no PFC_WD|GLOBAL",
			edit: func(db map[string]any) {
				db["PFC_WD"] = map[string]any{"Ethernet124": map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}}
			},
			want: map[string]string{"pfcwd/poll": "refuses to create the PFC_WD|GLOBAL row"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Ports, tc.opts.BufferModel = 32, "dynamic"
			r := rigWith(t, tc.opts)
			if tc.edit != nil {
				r.emu.Edit(tc.edit)
			}
			un, _, steps := r.planExpressed(t)
			for k, frag := range tc.want {
				if !strings.Contains(un[k], frag) {
					t.Errorf("%s: not expressible = %q, want it to say %q", k, un[k], frag)
				}
			}
			if tc.name == "no PFC_WD|GLOBAL" && un["pfcwd/detect"] != "" {
				t.Errorf("pfcwd/detect listed although port rows can be written: %s", un["pfcwd/detect"])
			}
			if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
				t.Fatalf("apply met a refusal the plan should have avoided: %v", err)
			}
			if _, diff, _ := r.planExpressed(t); len(diff) != 0 {
				t.Fatalf("re-plan after apply: %+v", diff)
			}
		})
	}
}

// TestGCUNeverRemovesPollInterval: a payload removing PFC_WD|GLOBAL or
// its POLL_INTERVAL never leaves the planner (gu_common.py l.192-203),
// and Apply refuses, before any checkpoint, a patch the switch would
// refuse or could not roll back.
func TestGCUNeverRemovesPollInterval(t *testing.T) {
	steps := gcuFilter([]drivers.Change{{Payload: []string{
		`{"op":"remove","path":"/PFC_WD/GLOBAL/POLL_INTERVAL"}`,
		`{"op":"remove","path":"/PFC_WD/GLOBAL"}`,
		`{"op":"add","path":"/PORT/Ethernet0/mtu","value":"9000"}`,
	}}}, nil)
	if len(steps[0].Payload) != 1 || !strings.Contains(steps[0].Payload[0], "/PORT/") {
		t.Fatalf("payload after the GCU filter: %q", steps[0].Payload)
	}
	md := map[string]any{"localhost": map[string]any{"hwsku": "Force10-S6000"}}
	global := map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "200"}, "Ethernet0": map[string]any{"action": "drop"}}
	port := map[string]any{"Ethernet0": map[string]any{"action": "drop"}}
	for _, tc := range []struct {
		name        string
		cur, target map[string]any
		want        string
	}{
		{"remove GLOBAL", map[string]any{"DEVICE_METADATA": md, "PFC_WD": global}, map[string]any{"DEVICE_METADATA": md, "PFC_WD": port}, "removes PFC_WD|GLOBAL"},
		{"remove POLL_INTERVAL", map[string]any{"DEVICE_METADATA": md, "PFC_WD": global},
			map[string]any{"DEVICE_METADATA": md, "PFC_WD": map[string]any{"GLOBAL": map[string]any{"BIG_RED_SWITCH": "enable"}}}, "removes PFC_WD|GLOBAL POLL_INTERVAL"},
		{"create GLOBAL", map[string]any{"DEVICE_METADATA": md, "PFC_WD": port}, map[string]any{"DEVICE_METADATA": md, "PFC_WD": global}, "creates PFC_WD|GLOBAL"},
		{"create the table", map[string]any{"DEVICE_METADATA": md}, map[string]any{"DEVICE_METADATA": md, "PFC_WD": port}, "creates the PFC_WD table"},
		{"remove the whole table", map[string]any{"DEVICE_METADATA": md, "PFC_WD": global}, map[string]any{"DEVICE_METADATA": md}, ""},
		{"unknown HWSKU", map[string]any{"DEVICE_METADATA": map[string]any{"localhost": map[string]any{"hwsku": "x"}}, "PFC_WD": global},
			map[string]any{"DEVICE_METADATA": map[string]any{"localhost": map[string]any{"hwsku": "x"}}, "PFC_WD": map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "100"}, "Ethernet0": map[string]any{"action": "drop"}}}, "in none of the ASIC lists"},
		{"th5 by substring", map[string]any{"DEVICE_METADATA": map[string]any{"localhost": map[string]any{"hwsku": "Arista-7060X6-64PE-B-O128"}}, "PFC_WD": global},
			map[string]any{"DEVICE_METADATA": map[string]any{"localhost": map[string]any{"hwsku": "Arista-7060X6-64PE-B-O128"}}, "PFC_WD": map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "100"}}}, ""},
	} {
		got := gcuRefusal(image{}, tc.cur, tc.target)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: gcuRefusal = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestGCURollbackKeepsGlobal: a run-level rollback to a CONFIG_DB without
// PFC_WD|GLOBAL (the switch had none when the apply began, a pfcwd
// command wrote it since) is refused by GCU (the emulator runs
// validate_field_operation on `config replace`); the driver restores
// everything but PFC_WD and says so, instead of failing the whole
// rollback.
func TestGCURollbackKeepsGlobal(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	r.emu.Edit(func(db map[string]any) {
		db["PFC_WD"] = map[string]any{"Ethernet124": map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}}
	})
	_, _, steps := r.planExpressed(t)
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.emu.Edit(func(db map[string]any) {
		db["PFC_WD"].(map[string]any)["GLOBAL"] = map[string]any{"POLL_INTERVAL": "200"}
	})
	err = r.drv.Rollback(context.Background(), r.target, res)
	if err == nil || !strings.Contains(err.Error(), "rolled back except PFC_WD") {
		t.Fatalf("rollback: %v", err)
	}
	db := r.running(t)
	if db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] != "200" {
		t.Fatalf("PFC_WD|GLOBAL after rollback: %v", db["PFC_WD"])
	}
	if _, ok := db["DSCP_TO_TC_MAP"]; ok {
		t.Fatal("the rest was not rolled back")
	}
}
