package importer_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/switch/sonic"
	"github.com/fabctl/fabctl/intent"
)

// TestSONiCListRowApply: on a switch booted with Configuration.md's
// CONFIG_DB (one PORT_QOS_MAP row keyed by the list
// "Ethernet50,Ethernet52,Ethernet54,Ethernet56"), the imported spec with
// one listed port's PFC changed plans exactly that change, applies, and
// plans empty again: the apply splits the list row into one row per port
// (drivers/switch/sonic/portlists.go) instead of writing
// PORT_QOS_MAP|Ethernet50 beside it, which read as Inconsistent and never
// converged, and which GCU's YANG validation refuses. The other listed
// ports, in the spec or not, read as before.
func TestSONiCListRowApply(t *testing.T) {
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	sw := bootConfigurationMD(t)
	dir := t.TempDir()
	vendorInventory(t, dir, "sonic", sw, []string{"Ethernet56", "Ethernet50"}, map[string]string{
		"Ethernet50": "  cable_length = \"40m\"\n",
	})
	res := importDir(t, dir, []string{"leaf1"})
	// Ethernet50's block is the second port block the spec writes
	i := bytes.Index(res.HCL, []byte(`port "Ethernet50" {`))
	j := bytes.Index(res.HCL[i:], []byte("pfc = [3, 4]"))
	if i < 0 || j < 0 {
		t.Fatalf("imported spec has no pfc = [3, 4] for Ethernet50:\n%s", res.HCL)
	}
	src := append(append(append([]byte{}, res.HCL[:i+j]...), "pfc = [4]"...), res.HCL[i+j+len("pfc = [3, 4]"):]...)
	replaceSpec(t, dir, src)

	others := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet52"}, {Name: "Ethernet54"}, {Name: "Ethernet56"}}}
	read := func() intent.State {
		db, err := sonic.ParseConfigDB(sw.RunningConfig())
		if err != nil {
			t.Fatal(err)
		}
		return db.State(others)
	}
	before := read()
	p := planDir(t, dir, []string{"leaf1"})
	cs := changesOf(p, "leaf1")
	if len(cs) != 1 || cs[0].Path != "port/Ethernet50/pfc" {
		t.Fatalf("plan: %+v, want port/Ethernet50/pfc only", cs)
	}
	var summary []string
	for _, st := range p.Device("leaf1").Steps {
		summary = append(summary, st.Summary)
	}
	if s := strings.Join(summary, "\n"); !strings.Contains(s, `splits the list row(s) PORT_QOS_MAP|"Ethernet50,Ethernet52,Ethernet54,Ethernet56"`) {
		t.Errorf("plan does not say the list row is split:\n%s", s)
	}
	applyDir(t, dir, []string{"leaf1"})
	if cs := changesOf(planDir(t, dir, []string{"leaf1"}), "leaf1"); len(cs) != 0 {
		t.Fatalf("plan after the apply: %+v", cs)
	}
	if after := read(); !reflect.DeepEqual(before, after) {
		t.Errorf("the other listed ports changed:\nbefore %v\nafter  %v", before, after)
	}
	db, _ := sonic.ParseConfigDB(sw.RunningConfig())
	if _, ok := db["PORT_QOS_MAP"]["Ethernet50,Ethernet52,Ethernet54,Ethernet56"]; ok {
		t.Errorf("list row still there: %v", db["PORT_QOS_MAP"])
	}
	if got := db["PORT_QOS_MAP"]["Ethernet52"]["scheduler"]; got != "scheduler.port" {
		t.Errorf("Ethernet52's own row lost the list row's fields: %v", db["PORT_QOS_MAP"]["Ethernet52"])
	}
}
