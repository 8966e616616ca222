package eos

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
)

func TestFamilyOf(t *testing.T) {
	for _, c := range []struct {
		model, queue, chip string
		ok                 bool
	}{
		{"DCS-7060X6-64PE-F", QueueStrata, "Tomahawk5", true},
		{"Arista-7060X6-64PE", QueueStrata, "Tomahawk5", true},
		{"DCS-7060CX-32S-F", QueueStrata, "Tomahawk", true},
		{"DCS-7050CX3-32S-F", QueueStrata, "Trident3", true},
		{"DCS-7800R3A-36DM2", QueueSand, "Jericho2C+", true},
		{"DCS-7800R3-48CQ2", QueueSand, "Jericho2", true},
		{"DCS-7280R4-32QF-32DF-64O", QueueSand, "Qumran3D", true},
		{"vEOS", QueueStrata, "vEOS", true},
		{"cEOSLab", "", "", false}, // no source says which keyword cEOS takes
		{"DCS-7280CR3-32P4", "", "", false},
		{"", "", "", false},
	} {
		f, ok := FamilyOf(c.model)
		if ok != c.ok || f.Queue != c.queue || f.Chip != c.chip {
			t.Errorf("FamilyOf(%q) = %+v, %v", c.model, f, ok)
		}
	}
}

func TestParseModel(t *testing.T) {
	for in, want := range map[string]string{
		"Arista vEOS\nHardware version:    \n":           "vEOS",
		"\r\nArista DCS-7060X6-64PE-F\r\nHardware ...\n": "DCS-7060X6-64PE-F",
		"Arista DCS-7060X6 extra\n":                      "",
		"% Invalid input\nArista vEOS\n":                 "",
		"Arista DCS-7060;reload\n":                       "",
		"":                                               "",
	} {
		if got := ParseModel(in); got != want {
			t.Errorf("ParseModel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStrataSwitchConverges: on a Strata switch (DCS-7060X6, Tomahawk 5)
// the driver reads the model from `show version`, renders uc-tx-queue,
// which the switch takes (it refuses tx-queue), and a re-plan is empty.
func TestStrataSwitchConverges(t *testing.T) {
	r := newRigModel(t, "DCS-7060X6-64PE-F")
	live, _, steps := r.plan(t)
	if live[FactModel] != "DCS-7060X6-64PE-F" {
		t.Fatalf("model read: %q", live[FactModel])
	}
	payload := strings.Join(flattenPayload(steps), "\n")
	if !strings.Contains(payload, "   uc-tx-queue 3") || strings.Contains(payload, " tx-queue ") && !strings.Contains(payload, "uc-tx-queue") {
		t.Fatalf("payload:\n%s", payload)
	}
	if strings.Contains(strings.ReplaceAll(payload, "uc-tx-queue", ""), "tx-queue") {
		t.Fatalf("Sand keyword sent to a Strata switch:\n%s", payload)
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
}

// TestUnknownModelNotGuessed: a model no source places keeps its queue
// settings out of the plan (not expressible, with the reason) and no
// queue line is rendered.
func TestUnknownModelNotGuessed(t *testing.T) {
	_, f := load(t, "testbed")
	sw := eosSwitch(t, f, "leaf2")
	d := New().(*Driver)
	desired := switchtest.Desired(d, sw)
	live := intent.State{FactModel: "DCS-9999X-1"}
	un := d.Unexpressible(drivers.Target{Intent: sw, Live: live}, desired)
	n := 0
	for k := range desired {
		if queuePath(k) {
			n++
			if !strings.Contains(un[k], "DCS-9999X-1 is in no sourced platform table") {
				t.Fatalf("%s: %q", k, un[k])
			}
		}
	}
	if n == 0 {
		t.Fatal("the intent has no queue settings")
	}
	if _, ok := un["trust"]; ok {
		t.Fatal("trust listed")
	}
	// No live state (an offline render): nothing listed for the queues.
	if un := d.Unexpressible(drivers.Target{Intent: sw}, desired); un["tc/3/sched"] != "" {
		t.Fatal(un)
	}
	diff := []intent.AttrChange{{Path: "trust", After: "dscp", Action: intent.Create}}
	steps, err := changes(sw, diff, live)
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(flattenPayload(steps), "\n"); strings.Contains(p, "tx-queue") || !strings.Contains(p, "qos trust dscp") {
		t.Fatalf("payload:\n%s", p)
	}
}

func flattenPayload(steps []drivers.Change) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Payload...)
	}
	return out
}

// TestSpecModel: a spec's model decides an offline render's keyword, a
// model in no table is refused rather than guessed, and a spec model of
// another chip family than the switch reports stops the plan naming both.
func TestSpecModel(t *testing.T) {
	_, f := load(t, "testbed")
	sw := *eosSwitch(t, f, "leaf2")
	render := func(model string) (string, error) {
		sw.Model = model
		files, err := New().(*Driver).Render(drivers.Target{Intent: &sw})
		if err != nil {
			return "", err
		}
		return string(files[0].Data), nil
	}
	if out, err := render("DCS-7060X6-64PE-F"); err != nil || !strings.Contains(out, "\n   uc-tx-queue 3\n") || strings.Contains(out, "\n   tx-queue ") {
		t.Fatalf("Strata render (%v):\n%s", err, out)
	}
	if out, err := render(""); err != nil || !strings.Contains(out, "\n   tx-queue 3\n") {
		t.Fatalf("render without a model (%v):\n%s", err, out)
	}
	if _, err := render("DCS-7280CR3-32P4"); err == nil || !strings.Contains(err.Error(), "DCS-7280CR3-32P4 is in no sourced platform table") {
		t.Fatalf("unknown model rendered: %v", err)
	}
	sw.Model = "DCS-7060X6-64PE-F"
	_, err := changes(&sw, []intent.AttrChange{{Path: "trust", After: "dscp", Action: intent.Create}}, intent.State{FactModel: "DCS-7800R3-48CQ2"})
	if err == nil || !strings.Contains(err.Error(), "the spec says model DCS-7060X6-64PE-F (Tomahawk5, uc-tx-queue) but the switch reports DCS-7800R3-48CQ2 (Jericho2, tx-queue)") {
		t.Fatalf("model mismatch: %v", err)
	}
	if _, err := changes(&sw, []intent.AttrChange{{Path: "trust", After: "dscp", Action: intent.Create}}, intent.State{FactModel: "DCS-7060X6-64PE"}); err != nil {
		t.Fatal(err)
	}
}
