package sonic

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// TestSaveAndSavedState: apply-patch changes the running CONFIG_DB only;
// Read reports config/saved=false until `sudo config save -y`
// (gcu-and-save.txt:19-22), and a reload loses what was not saved.
func TestSaveAndSavedState(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	ctx := context.Background()
	st, err := r.drv.Read(ctx, r.target)
	if err != nil {
		t.Fatal(err)
	}
	if st[drivers.PathSaved] != "true" {
		t.Fatalf("factory switch reads unsaved: %q", st[drivers.PathSaved])
	}
	r.applyAll(t)
	if st, _ = r.drv.Read(ctx, r.target); st[drivers.PathSaved] != "false" {
		t.Fatalf("applied, unsaved switch reads saved=%q", st[drivers.PathSaved])
	}
	if got := r.drv.SaveSteps(); len(got) != 1 || got[0] != "sudo config save -y" {
		t.Fatalf("SaveSteps %v", got)
	}
	if err := r.drv.Save(ctx, r.target); err != nil {
		t.Fatal(err)
	}
	if st, _ = r.drv.Read(ctx, r.target); st[drivers.PathSaved] != "true" {
		t.Fatal("saved switch reads unsaved")
	}
	if string(r.emu.StartupConfig()) == "" || !strings.Contains(string(r.emu.StartupConfig()), "FABCTL") {
		t.Fatal("startup config lacks the applied rows")
	}
	cmds := strings.Join(r.emu.Commands(), "\n")
	if !regexp.MustCompile(`(?m)^sudo config save -y$`).MatchString(cmds) || !strings.Contains(cmds, "sonic-cfggen -j /etc/sonic/config_db.json --print-data") {
		t.Fatalf("save or saved read not sent:\n%s", cmds)
	}
	// Unsaved changes do not survive a reload.
	r.emu.Edit(func(db map[string]any) {
		db["PORT_QOS_MAP"].(map[string]any)["Ethernet0"].(map[string]any)["pfc_enable"] = "3,4"
	})
	if st, _ = r.drv.Read(ctx, r.target); st[drivers.PathSaved] != "false" || st["port/Ethernet0/pfc"] != "3,4" {
		t.Fatalf("edit: saved=%q pfc=%q", st[drivers.PathSaved], st["port/Ethernet0/pfc"])
	}
	r.emu.Reload()
	if st, _ = r.drv.Read(ctx, r.target); st[drivers.PathSaved] != "true" || st["port/Ethernet0/pfc"] != "3" {
		t.Fatalf("reload: saved=%q pfc=%q", st[drivers.PathSaved], st["port/Ethernet0/pfc"])
	}
}

// TestSaveFailureCarriesOutput: a failed `config save` is an error
// carrying what the command printed, and nothing is saved.
func TestSaveFailureCarriesOutput(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	r.applyAll(t)
	before := r.emu.StartupConfig()
	const why = "/bin/sh: 1: cannot create /etc/sonic/config_db.json: Read-only file system"
	r.emu.FailSave(why)
	err := r.drv.Save(context.Background(), r.target)
	if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "config save") {
		t.Fatalf("want save error with the command's output, got %v", err)
	}
	if string(before) != string(r.emu.StartupConfig()) {
		t.Fatal("startup changed by a failed save")
	}
	r.emu.FailSave("")
	if err := r.drv.Save(context.Background(), r.target); err != nil {
		t.Fatal(err)
	}
}

// TestChangesLeaveSavedOut: the driver's change lists never carry
// config/saved (the planner appends the save step).
func TestChangesLeaveSavedOut(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic"})
	_, _, steps := r.plan(t)
	for _, s := range steps {
		for _, p := range s.Paths {
			if p == drivers.PathSaved {
				t.Fatalf("driver change carries %s: %+v", p, s)
			}
		}
	}
}
