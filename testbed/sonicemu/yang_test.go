package sonicemu

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/switch/sonic"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/yangval/libyang"
)

func TestYANGValidation(t *testing.T) {
	sw, err := Start(Options{Password: "pw", Ports: 4, YANGDir: testutil.Shared(t, "yang", "sonic"), Profile: &sonic.Descriptor.YANG.Profile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	if !sw.YANG() {
		t.Fatal("YANG off")
	}
	if err := sw.validate(DefaultConfigDB("sonic", 4)); err != nil {
		t.Fatalf("factory CONFIG_DB fails the models: %v", err)
	}
	tm := login(t, sw)
	before := sw.RunningConfig()

	// Out of range (sonic-port.yang mtu 68..9216): refused, nothing changes.
	tm.write("/tmp/p.json", `[{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9300"}]`)
	out := tm.cmd("sudo config apply-patch /tmp/p.json")
	if !strings.Contains(out, "Given patch will produce invalid config. Error: ") || !strings.Contains(out, "mtu") {
		t.Fatalf("range: %q", out)
	}
	if tm.cmd("echo $?") != "2\n" {
		t.Fatal("exit status")
	}
	t.Log(out)
	// A leafref to a port that does not exist.
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/PFC_WD/Ethernet99", "value": {"action": "drop", "detection_time": "200", "restoration_time": "200"}}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(out, "Given patch will produce invalid config") || !strings.Contains(out, "Ethernet99") {
		t.Fatalf("leafref: %q", out)
	}
	// A table no model knows: the hand-copied checks let it through, YANG does not.
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/NO_SUCH_TABLE", "value": {"x": {"a": "b"}}}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(out, "no SONiC YANG model for this table") {
		t.Fatalf("unknown table: %q", out)
	}
	// DEVICE_METADATA is a container of containers in the models.
	tm.write("/tmp/p.json", `[{"op": "replace", "path": "/DEVICE_METADATA/localhost/mac", "value": "not-a-mac"}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(out, "Given patch will produce invalid config") || !strings.Contains(out, "mac") {
		t.Fatalf("device metadata: %q", out)
	}
	// config replace is validated too.
	tm.write("/tmp/r.json", strings.Replace(string(before), `"mtu": "9100"`, `"mtu": "10000"`, 1))
	if out := tm.cmd("sudo config replace /tmp/r.json"); !strings.Contains(out, "Failed to replace config") {
		t.Fatalf("replace: %q", out)
	}
	if !bytes.Equal(before, sw.RunningConfig()) {
		t.Fatal("refused patches changed CONFIG_DB")
	}
	// A valid patch lands.
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/DSCP_TO_TC_MAP", "value": {"AZURE": {"3": "3", "0": "0"}}},
{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3"}}},
{"op": "replace", "path": "/PORT/Ethernet4/mtu", "value": "9216"}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.HasSuffix(out, "Patch applied successfully.\n") {
		t.Fatalf("valid patch: %q", out)
	}
	if sw.Patches() != 1 {
		t.Fatalf("patches = %d", sw.Patches())
	}
}

// probe is one CONFIG_DB probe of testdata/constraints.json.
type probe struct {
	Name   string                               `json:"name"`
	Class  string                               `json:"class"`
	Bad    map[string]map[string]map[string]any `json:"bad"`
	Fixed  map[string]map[string]map[string]any `json:"fixed"`
	Reason string                               `json:"reason"`
}

// patchFor is the JSON patch (RFC 6902) that adds fragment's rows to
// the running CONFIG_DB db: a whole table where db has none, else each
// row.
func patchFor(t *testing.T, db map[string]any, fragment map[string]map[string]map[string]any) string {
	t.Helper()
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var ops []map[string]any
	tables := make([]string, 0, len(fragment))
	for tb := range fragment {
		tables = append(tables, tb)
	}
	sort.Strings(tables)
	for _, tb := range tables {
		if _, ok := db[tb]; !ok {
			ops = append(ops, map[string]any{"op": "add", "path": "/" + esc.Replace(tb), "value": fragment[tb]})
			continue
		}
		keys := make([]string, 0, len(fragment[tb]))
		for k := range fragment[tb] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ops = append(ops, map[string]any{"op": "add", "path": "/" + esc.Replace(tb) + "/" + esc.Replace(k), "value": fragment[tb][k]})
		}
	}
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestYANGConstraintProbes: each probe of testdata/constraints.json
// (must: PFC watchdog detection and restoration times against the poll
// interval, WRED max >= min; a leafref), written as `config apply-patch`
// input over the running CONFIG_DB, is refused with the model's own
// message and leaves CONFIG_DB unchanged; the fixed fragment applies.
// The must classes are libyang's alone (goyang evaluates no must), so
// the emulator proves them only in a libyang build. `fabctl render
// --yang-dir` refuses the same fragments (internal/cli
// TestRenderYANGConstraints).
func TestYANGConstraintProbes(t *testing.T) {
	if !libyang.Available {
		testutil.SkipOrFail(t, "this build has no libyang (go test -tags libyang, as make test does with libyang2-dev)")
	}
	b, err := os.ReadFile(filepath.Join("testdata", "constraints.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Probes []probe `json:"probes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Probes) == 0 {
		t.Fatal("no probes")
	}
	dir := testutil.Shared(t, "yang", "sonic")
	for _, p := range doc.Probes {
		t.Run(p.Name, func(t *testing.T) {
			sw, err := Start(Options{Password: "pw", Ports: 4, YANGDir: dir, Profile: &sonic.Descriptor.YANG.Profile})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sw.Close() })
			tm := login(t, sw)
			before := sw.RunningConfig()
			var running map[string]any
			if err := json.Unmarshal(before, &running); err != nil {
				t.Fatal(err)
			}
			tm.write("/tmp/bad.json", patchFor(t, running, p.Bad))
			out := tm.cmd("sudo config apply-patch /tmp/bad.json")
			if !strings.Contains(out, "Given patch will produce invalid config. Error: ") || !strings.Contains(out, p.Reason) {
				t.Errorf("%s probe not refused with %q: %q", p.Class, p.Reason, out)
			}
			if tm.cmd("echo $?") != "2\n" {
				t.Error("exit status of the refused patch")
			}
			if !bytes.Equal(before, sw.RunningConfig()) {
				t.Error("refused patch changed CONFIG_DB")
			}
			tm.write("/tmp/fixed.json", patchFor(t, running, p.Fixed))
			if out := tm.cmd("sudo config apply-patch /tmp/fixed.json"); !strings.HasSuffix(out, "Patch applied successfully.\n") {
				t.Errorf("fixed fragment refused: %q", out)
			}
		})
	}
}
