package sonic

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// TestApplySplitsListRow: a switch booted with its QoS bound by list rows
// (PORT_QOS_MAP "Ethernet0,Ethernet4,Ethernet8" and QUEUE
// "Ethernet0,Ethernet4,Ethernet8|3", as Configuration.md writes them:
// testdata/vendor/sonic/configdb-qos.txt) plans empty; a spec that changes
// one listed port's PFC or trust plans that change, says the list row is
// split, applies it as one patch that removes the list row and writes one
// row per listed port (portlists.go), plans empty again, leaves the other
// listed ports (Ethernet4 in the spec, Ethernet8 outside it) reading what
// they read before, and a rollback writes the list row back.
func TestApplySplitsListRow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(p *intent.Port)
		path   string
	}{
		{"pfc", func(p *intent.Port) { p.PFC = append(p.PFC, 6) }, "port/Ethernet0/pfc"},
		{"trust", func(p *intent.Port) { p.Trust = "pcp" }, "port/Ethernet0/trust"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
			r.applyAll(t)
			const list = "Ethernet0,Ethernet4,Ethernet8"
			r.emu.Edit(func(db map[string]any) {
				pqm, q := db["PORT_QOS_MAP"].(map[string]any), db["QUEUE"].(map[string]any)
				pqm[list], q[list+"|3"] = pqm["Ethernet0"], q["Ethernet0|3"]
				for _, p := range []string{"Ethernet0", "Ethernet4", "Ethernet8"} {
					delete(pqm, p)
					delete(q, p+"|3")
				}
			})
			r.emu.Save()
			if _, diff, _ := r.plan(t); len(diff) != 0 {
				t.Fatalf("the list rows do not plan empty: %+v", diff)
			}
			others := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet4"}, {Name: "Ethernet8"}}}
			before := r.running(t).State(others)
			pre := r.emu.RunningConfig()

			for i := range r.sw.Ports {
				if r.sw.Ports[i].Name == "Ethernet0" {
					tc.change(&r.sw.Ports[i])
				}
			}
			live, diff, steps := r.plan(t)
			if len(diff) != 1 || diff[0].Path != tc.path {
				t.Fatalf("plan: %+v, want only %s", diff, tc.path)
			}
			var summary string
			for _, st := range steps {
				summary += st.Summary + "\n"
			}
			if !strings.Contains(summary, `splits the list row(s) PORT_QOS_MAP|"`+list+`", QUEUE|"`+list+`|3"`) {
				t.Errorf("plan does not say the list rows are split:\n%s", summary)
			}
			tg := r.target
			tg.Live = live
			res, err := r.drv.Apply(context.Background(), tg, steps, drivers.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, diff, _ := r.plan(t); len(diff) != 0 {
				t.Fatalf("re-plan after the apply not empty: %+v", diff)
			}
			db := r.running(t)
			if _, ok := db["PORT_QOS_MAP"][list]; ok {
				t.Errorf("list row still there next to the ports' own rows: %v", db["PORT_QOS_MAP"])
			}
			if _, ok := db["QUEUE"][list+"|3"]; ok {
				t.Errorf("QUEUE list row still there (the SONiC YANG refuses it): %v", db["QUEUE"])
			}
			if after := db.State(others); !reflect.DeepEqual(before, after) {
				t.Errorf("the other listed ports changed:\nbefore %v\nafter  %v", before, after)
			}
			// GCU's config replace validates its target against the SONiC
			// YANG, which refuses the list keys: the rollback restores them
			// as one row per port and says so.
			err = r.drv.Rollback(context.Background(), r.target, res)
			if err == nil || !strings.Contains(err.Error(), "restored as one row per listed port") {
				t.Fatalf("rollback: %v", err)
			}
			preDB, err := ParseConfigDB(pre)
			if err != nil {
				t.Fatal(err)
			}
			all := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet0"}, {Name: "Ethernet4"}, {Name: "Ethernet8"}, {Name: "Ethernet124"}}}
			if got, want := r.running(t).State(all), preDB.State(all); !reflect.DeepEqual(got, want) {
				t.Errorf("after rollback the ports read\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// TestFailedApplyRestoresListRows: an apply on a switch with list rows
// that GCU refuses is recovered with the list rows split (GCU's
// `config rollback` validates the checkpoint against the SONiC YANG,
// which refuses them), not left as a partial apply.
func TestFailedApplyRestoresListRows(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	r.applyAll(t)
	const list = "Ethernet0,Ethernet4,Ethernet8"
	r.emu.Edit(func(db map[string]any) {
		pqm := db["PORT_QOS_MAP"].(map[string]any)
		pqm[list] = pqm["Ethernet0"]
		for _, p := range []string{"Ethernet0", "Ethernet4", "Ethernet8"} {
			delete(pqm, p)
		}
	})
	all := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet0"}, {Name: "Ethernet4"}, {Name: "Ethernet8"}, {Name: "Ethernet124"}}}
	before := r.running(t).State(all)
	r.sw.Ports[0].PFC = append(r.sw.Ports[0].PFC, 6)
	live, _, steps := r.plan(t)
	r.emu.RejectPatches("Failed to apply patch due to: injected")
	tg := r.target
	tg.Live = live
	_, err := r.drv.Apply(context.Background(), tg, steps, drivers.ApplyOptions{})
	var pe *drivers.PartialError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "restored as one row per listed port") {
		t.Fatalf("want a recovered apply naming the split list rows, got %v", err)
	}
	if after := r.running(t).State(all); !reflect.DeepEqual(before, after) {
		t.Errorf("after recovery the ports read\n%v\nwant\n%v", after, before)
	}
	if cps := r.emu.Checkpoints(); len(cps) != 0 {
		t.Errorf("checkpoint left behind: %v", cps)
	}
}
