package eos

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
)

// TestCheckOnDeviceRefusedByTheSwitch: a line eosemu's own grammar
// refuses (an IP MTU above 9214: eosemu/grammar.go, the range EOS's
// `mtu` takes) is refused by the check exactly as by the apply: the
// verdict carries EOS's text and the step, no session is left pending
// and the running-config is byte-identical; a clean check leaves no
// session either.
func TestCheckOnDeviceRefusedByTheSwitch(t *testing.T) {
	r := newRig(t)
	before := r.emu.RunningConfig()
	_, _, steps := r.plan(t)
	work := drivers.WithoutSaveSteps(steps)
	v := r.drv.CheckOnDevice(context.Background(), r.target, work)
	if v.Status != drivers.CheckAccepted || !v.Unchanged {
		t.Fatalf("clean check: %+v", v)
	}
	if s := r.emu.Sessions(); len(s) != 0 {
		t.Fatalf("a clean check left sessions: %v", s)
	}
	bad := append(work, drivers.Change{Paths: []string{"port/Ethernet1/mtu"}, Summary: "Ethernet1 MTU 9300",
		Payload: []string{"interface Ethernet1", "   mtu 9300"}})
	v = r.drv.CheckOnDevice(context.Background(), r.target, bad)
	if v.Status != drivers.CheckRefused || !v.Unchanged || v.Step != len(bad) || v.Summary != "Ethernet1 MTU 9300" ||
		strings.TrimSpace(v.Line) != "mtu 9300" || !strings.Contains(v.Message, "% Invalid input detected at '^' marker.") {
		t.Fatalf("refused check: %+v", v)
	}
	if s := r.emu.Sessions(); len(s) != 0 {
		t.Fatalf("a refused check left sessions: %v", s)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("the check changed the running-config")
	}
	if _, err := r.drv.Apply(context.Background(), r.target, bad, drivers.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "mtu 9300") {
		t.Fatalf("apply must refuse what the check refused: %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("the refused apply changed the running-config")
	}
}
