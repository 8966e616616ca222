package sonicemu

import (
	"bytes"
	"strings"
	"testing"
)

// TestGCUFieldOperation: apply-patch, replace and rollback refuse what
// sonic-utilities' validate_field_operation refuses (gcu.go): removing
// PFC_WD|GLOBAL or its POLL_INTERVAL, any PFC_WD change on a HWSKU in no
// ASIC list or on a branch older than the ASIC's, and creating the
// PFC_WD table or its GLOBAL row (the row's field names are matched as
// written, "global/POLL_INTERVAL", against "global/poll_interval").
func TestGCUFieldOperation(t *testing.T) {
	const illegal = "Modification of PFC_WD table is illegal- validating function generic_config_updater.field_operation_validators.rdma_config_update_validator returned False"
	setHWSKU := func(s string) func(db map[string]any) {
		return func(db map[string]any) { rowOf(db, "DEVICE_METADATA", "localhost")["hwsku"] = s }
	}
	withPortRow := func(db map[string]any) { // and GLOBAL unless NoDefaultPFCWD
		wd, _ := db["PFC_WD"].(map[string]any)
		if wd == nil {
			wd = map[string]any{}
			db["PFC_WD"] = wd
		}
		wd["Ethernet0"] = map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		edit  func(db map[string]any)
		patch string
		want  string // "" accepted
	}{
		{name: "remove POLL_INTERVAL", patch: `[{"op":"remove","path":"/PFC_WD/GLOBAL/POLL_INTERVAL"}]`,
			want: "Operation: remove is illegal on field: /PFC_WD/GLOBAL/POLL_INTERVAL"},
		{name: "remove GLOBAL", patch: `[{"op":"remove","path":"/PFC_WD/GLOBAL"}]`,
			want: "Operation: remove is illegal on field: /PFC_WD/GLOBAL"},
		{name: "replace POLL_INTERVAL on td2", patch: `[{"op":"replace","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"300"}]`},
		{name: "add a port row on td2", patch: `[{"op":"add","path":"/PFC_WD/Ethernet0","value":{"action":"drop","detection_time":"200","restoration_time":"200"}}]`},
		{name: "unknown HWSKU", edit: setHWSKU("DellEMC-Z9864f-O64"),
			patch: `[{"op":"replace","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"300"}]`, want: illegal},
		{name: "th5 HWSKU by substring", opts: Options{ASICType: "broadcom"}, edit: setHWSKU("Arista-7060X6-64PE-B-O128"),
			patch: `[{"op":"replace","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"300"}]`},
		{name: "mellanox HWSKU on a broadcom image", opts: Options{ASICType: "broadcom"}, edit: setHWSKU("ACS-SN5600"),
			patch: `[{"op":"replace","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"300"}]`, want: illegal},
		{name: "cisco-8000 takes any HWSKU", opts: Options{ASICType: "cisco-8000"}, edit: setHWSKU("any"),
			patch: `[{"op":"replace","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"300"}]`},
		{name: "branch older than the ASIC's", opts: Options{BuildVersion: "20180330.12"},
			patch: `[{"op":"replace","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"300"}]`, want: illegal},
		{name: "create the PFC_WD table", opts: Options{NoDefaultPFCWD: true},
			patch: `[{"op":"add","path":"/PFC_WD","value":{"Ethernet0":{"action":"drop","detection_time":"200","restoration_time":"200"}}}]`, want: illegal},
		{name: "create GLOBAL", opts: Options{NoDefaultPFCWD: true}, edit: withPortRow,
			patch: `[{"op":"add","path":"/PFC_WD/GLOBAL","value":{"POLL_INTERVAL":"100"}}]`, want: illegal},
		{name: "create GLOBAL field by field", opts: Options{NoDefaultPFCWD: true}, edit: withPortRow,
			patch: `[{"op":"add","path":"/PFC_WD/GLOBAL","value":{}},{"op":"add","path":"/PFC_WD/GLOBAL/POLL_INTERVAL","value":"100"}]`, want: illegal},
		{name: "remove a port row", edit: withPortRow,
			patch: `[{"op":"remove","path":"/PFC_WD/Ethernet0"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Password = "pw"
			tc.opts.Ports = 4
			sw, err := Start(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer sw.Close()
			if tc.edit != nil {
				sw.Edit(tc.edit)
			}
			tm := login(t, sw)
			before := sw.RunningConfig()
			tm.write("/tmp/p.json", tc.patch)
			out := tm.cmd("sudo config apply-patch /tmp/p.json")
			if tc.want == "" {
				if !strings.Contains(out, "Patch applied successfully.") {
					t.Fatalf("refused: %q", out)
				}
				return
			}
			if !strings.Contains(out, "Failed to apply patch due to: ") || !strings.Contains(out, tc.want+"\n") || !strings.Contains(out, "\nError: ") {
				t.Fatalf("want refusal %q, got %q", tc.want, out)
			}
			if !bytes.Equal(before, sw.RunningConfig()) {
				t.Fatal("a refused patch changed the config")
			}
		})
	}
}

// TestGCURollbackReplace: `config rollback` and `config replace` to a
// CONFIG_DB without PFC_WD|GLOBAL are refused (generic_updater.py
// rollback -> replace -> PatchApplier.apply -> validate_field_operation).
func TestGCURollbackReplace(t *testing.T) {
	sw, err := Start(Options{Password: "pw", Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	tm := login(t, sw)
	// A CONFIG_DB whose PFC_WD holds a port row but no GLOBAL.
	sw.Edit(func(db map[string]any) {
		db["PFC_WD"] = map[string]any{"Ethernet0": map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}}
	})
	if out := tm.cmd("sudo config checkpoint cp"); !strings.Contains(out, "Checkpoint created successfully.") {
		t.Fatal(out)
	}
	tm.write("/tmp/prior.json", string(sw.RunningConfig()))
	sw.Edit(func(db map[string]any) {
		db["PFC_WD"].(map[string]any)["GLOBAL"] = map[string]any{"POLL_INTERVAL": "100"}
	})
	const want = "Given patch operation is invalid. Operation: remove is illegal on field: /PFC_WD/GLOBAL"
	for _, c := range []struct{ line, fail string }{
		{"sudo config rollback cp", "Failed to rollback config"},
		{"sudo config replace /tmp/prior.json", "Failed to replace config"},
	} {
		before := sw.RunningConfig()
		out := tm.cmd(c.line)
		if !strings.HasPrefix(out, c.fail+"\n") || !strings.Contains(out, "Error: "+want) {
			t.Fatalf("%s: %q", c.line, out)
		}
		if !bytes.Equal(before, sw.RunningConfig()) {
			t.Fatalf("%s: refused, yet the config changed", c.line)
		}
	}
}
