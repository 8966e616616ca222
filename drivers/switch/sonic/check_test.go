package sonic

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
)

// TestCheckOnDeviceGCURefuses: a patch GCU's own field-operation
// validator refuses (removing PFC_WD|GLOBAL: sonicemu/gcu.go, from
// generic_config_updater's validators) is refused by the dry run as by
// apply-patch, with GCU's words and the step patching PFC_WD, and the
// running CONFIG_DB is byte-identical; the clean plan's dry run is
// accepted and writes nothing (the emulator counts no patch).
func TestCheckOnDeviceGCURefuses(t *testing.T) {
	r := newRig(t)
	before := r.emu.RunningConfig()
	_, _, steps := r.plan(t)
	work := drivers.WithoutSaveSteps(steps)
	v := r.drv.CheckOnDevice(context.Background(), r.target, work)
	if v.Status != drivers.CheckAccepted || !v.Unchanged || !strings.Contains(v.Method, "--dry-run") {
		t.Fatalf("clean check: %+v", v)
	}
	if n := r.emu.Patches(); n != 0 || !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatalf("a dry run applied %d patches or changed CONFIG_DB", n)
	}
	bad := append(work, drivers.Change{Paths: []string{"pfcwd/poll"}, Summary: "drop the PFC watchdog's global row",
		Payload: []string{`{"op":"remove","path":"/PFC_WD/GLOBAL"}`}})
	v = r.drv.CheckOnDevice(context.Background(), r.target, bad)
	if v.Status != drivers.CheckRefused || !v.Unchanged || v.Step == 0 || !strings.Contains(strings.Join(bad[v.Step-1].Payload, ""), "/PFC_WD") ||
		!strings.Contains(v.Message, "PFC_WD") {
		t.Fatalf("refused check: %+v", v)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("the refused check changed CONFIG_DB")
	}
	// Apply refuses it too (before its checkpoint: fabctl's own model of
	// the same validator, gcuRefusal).
	if _, err := r.drv.Apply(context.Background(), r.target, bad, drivers.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "PFC_WD") {
		t.Fatalf("apply must refuse what the dry run refused (%q): %v", v.Message, err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("the refused apply changed CONFIG_DB")
	}
}
