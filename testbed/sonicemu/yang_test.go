package sonicemu

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

func TestYANGValidation(t *testing.T) {
	sw, err := Start(Options{Password: "pw", Ports: 4, YANGDir: testutil.Shared(t, "yang", "sonic")})
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
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/PFC_WD", "value": {"Ethernet99": {"action": "drop", "detection_time": "200", "restoration_time": "200"}}}]`)
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
