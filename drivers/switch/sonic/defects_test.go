package sonic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// Tests for the defects the audit and docs/vendor-sources.md (SONiC) list;
// each failed on the driver before its fix.

// rigWith is newRig with emulator options.
func rigWith(t *testing.T, o sonicemu.Options) *rig {
	t.Helper()
	s, f := load(t, "testbed")
	sw := sonicSwitch(t, f, "leaf1")
	o.Password = switchtest.Password
	emu, err := sonicemu.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	return &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
}

func (r *rig) applyAll(t *testing.T) {
	t.Helper()
	_, _, steps := r.plan(t)
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) running(t *testing.T) DB {
	t.Helper()
	db, err := ParseConfigDB(r.emu.RunningConfig())
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestMTUIsIPMTU: CONFIG_DB PORT mtu is the IP MTU; orchagent adds the 22
// bytes (orchagent-port-mtu.txt). Intent 9000 renders "9000" (was "9022"),
// a live "9100" reads back 9100 (was 9078), the ASIC gets 9022.
func TestMTUIsIPMTU(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"}).exactMTU()
	db, err := Desired(r.sw)
	if err != nil {
		t.Fatal(err)
	}
	if got := db["PORT"]["Ethernet0"]["mtu"]; got != "9000" {
		t.Fatalf("PORT mtu rendered %q, want the IP MTU 9000", got)
	}
	st, err := ReadConfigDB([]byte(`{"PORT":{"Ethernet0":{"mtu":"9100"}}}`), r.sw)
	if err != nil {
		t.Fatal(err)
	}
	if st["port/Ethernet0/mtu"] != "9100" {
		t.Fatalf("live 9100 read as %q", st["port/Ethernet0/mtu"])
	}
	r.applyAll(t)
	if got := r.emu.SAIPortMTU("Ethernet0"); got != 9022 {
		t.Fatalf("orchagent programs %d, want 9000+22", got)
	}
}

// TestNoGlobalDot1pMap: orchagent ignores every PORT_QOS_MAP|global map
// but dscp_to_tc_map (configdb-global-map-pfcwd.txt:20): a PCP switch
// binds dot1p_to_tc_map per port only, and reads back as PCP.
func TestNoGlobalDot1pMap(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	r.sw.Trust = spec.TrustPCP
	for i := range r.sw.Ports {
		r.sw.Ports[i].Trust = spec.TrustPCP
	}
	db, err := Desired(r.sw)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := db["PORT_QOS_MAP"]["global"]; ok {
		t.Fatalf("PORT_QOS_MAP|global rendered on a PCP switch: %v", g)
	}
	if db["PORT_QOS_MAP"]["Ethernet0"]["dot1p_to_tc_map"] != MapName {
		t.Fatal("no per-port dot1p_to_tc_map")
	}
	r.applyAll(t)
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("PCP switch does not read back: %+v", diff)
	}
	if strings.Contains(string(r.emu.RunningConfig()), `"global"`) {
		t.Fatal("global PORT_QOS_MAP row written")
	}
}

// TestLossyClassesOnPG0: qos_config.j2 maps every lossy class to PG 0 and
// each lossless class to its own PG (configdb-qos.txt:39).
func TestLossyClassesOnPG0(t *testing.T) {
	_, f := load(t, "testbed")
	sw := sonicSwitch(t, f, "leaf1")
	db, err := Desired(sw)
	if err != nil {
		t.Fatal(err)
	}
	lossless := map[string]bool{}
	for _, tc := range sw.TCs {
		if tc.Lossless {
			lossless[itoa(tc.TC)] = true
		}
	}
	for tc, pg := range db["TC_TO_PRIORITY_GROUP_MAP"][MapName] {
		want := "0"
		if lossless[tc] {
			want = tc
		}
		if pg != want {
			t.Errorf("TC %s -> PG %s, want %s", tc, pg, want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// template adds what buffers_config.j2 writes in the dynamic model
// (configdb-buffer-pg.txt:5-6, 14-15): "<port>|3-4" NULL and "<port>|0"
// ingress_lossy_profile (Configuration.md Buffer profile).
func template(db map[string]any) {
	pg := map[string]any{}
	for p := range db["PORT"].(map[string]any) {
		pg[p+"|3-4"] = map[string]any{"profile": "NULL"}
		pg[p+"|0"] = map[string]any{"profile": "ingress_lossy_profile"}
	}
	db["BUFFER_PG"] = pg
	db["BUFFER_PROFILE"] = map[string]any{"ingress_lossy_profile": map[string]any{"dynamic_th": "3", "pool": "ingress_lossless_pool", "size": "0"}}
}

// TestBufferPGOwnsTemplateRows: fabctl writes BUFFER_PG keys as the
// templates do and replaces the template's overlapping "<port>|3-4" instead
// of adding "<port>|3" beside it; the lossy "<port>|0" stays.
func TestBufferPGOwnsTemplateRows(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	r.emu.Edit(template)
	if db := r.running(t); !db.losslessPG("Ethernet0", 3) || !db.losslessPG("Ethernet0", 4) || db.losslessPG("Ethernet0", 0) {
		t.Fatal("template range key <port>|3-4 not read as lossless PGs 3 and 4 (or lossy PG 0 read as lossless)")
	}
	r.applyAll(t)
	db := r.running(t)
	for _, p := range []string{"Ethernet0", "Ethernet4", "Ethernet124"} {
		if _, ok := db["BUFFER_PG"][p+"|3-4"]; ok {
			t.Errorf("%s|3-4 left beside fabctl's rows", p)
		}
		if db["BUFFER_PG"][p+"|3"]["profile"] != "NULL" {
			t.Errorf("%s|3 not written", p)
		}
		if db["BUFFER_PG"][p+"|0"]["profile"] != "ingress_lossy_profile" {
			t.Errorf("lossy %s|0 touched", p)
		}
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan: %+v", diff)
	}
	// Two consecutive lossless classes are one range key, as the templates write.
	r.sw.TCs = append(r.sw.TCs, intent.TC{TC: 4, Lossless: true, Bandwidth: 10})
	if d, _ := Desired(r.sw); d["BUFFER_PG"]["Ethernet0|3-4"]["profile"] != "NULL" || len(d["BUFFER_PG"]) != 3 {
		t.Fatalf("lossless 3,4 not keyed 3-4: %v", d["BUFFER_PG"])
	}
}

// TestTraditionalBufferModel: with buffer_model traditional profile NULL
// means nothing; buffermgrd writes BUFFER_PG from pfc_enable
// (buffermgrd-traditional.txt). The driver writes no BUFFER_PG row, the
// lossless class reads back from buffermgrd's row, and a fixed headroom is
// listed as not expressible.
func TestTraditionalBufferModel(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "traditional"})
	for i := range r.sw.Ports {
		r.sw.Ports[i].CableLength = 5 // a cable pg_profile_lookup.ini has
	}
	_, _, steps := r.plan(t)
	for _, s := range steps {
		for _, l := range s.Payload {
			if strings.Contains(l, "BUFFER_PG") || strings.Contains(l, `"NULL"`) {
				t.Fatalf("BUFFER_PG written in the traditional model: %s", l)
			}
		}
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	db := r.running(t)
	if db["BUFFER_PG"]["Ethernet0|3"]["profile"] != "pg_lossless_100000_5m_profile" {
		t.Fatalf("buffermgrd's PG row missing: %v", db["BUFFER_PG"])
	}
	live, diff, _ := r.plan(t)
	if len(diff) != 0 {
		t.Fatalf("re-plan: %+v", diff)
	}
	if live[FactBufferModel] != ModelTraditional {
		t.Fatalf("read buffer model %q, want the fact %q", live[FactBufferModel], ModelTraditional)
	}
	r.target.Live = live // as the planner hands it back
	r.sw.Headroom = 100000
	if un := r.drv.Unexpressible(r.target, r.sw.Flatten()); un["buffer/headroom"] == "" {
		t.Fatalf("headroom not listed as not expressible: %v", un)
	}
	// A plan made for the dynamic model is refused on a traditional switch.
	dyn := NewWith(r.drv.SSH)
	r.target.Live = nil
	steps2, err := dyn.Changes(r.target, []intentChange{{Path: "tc/3/lossless"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Apply(context.Background(), r.target, steps2, drivers.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "traditional buffer model") {
		t.Fatalf("want refusal of BUFFER_PG on a traditional switch, got %v", err)
	}
}

type intentChange = intent.AttrChange
