package plan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

func TestSourceHashMatchesSpec(t *testing.T) {
	files, diags := spec.ReadFiles("../examples/ai-pod")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s, diags := spec.LoadFiles(files, spec.LoadOptions{Platforms: testutil.Platforms()})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := SourceHash(files); got != s.SourceHash {
		t.Errorf("SourceHash %s, spec %s", got, s.SourceHash)
	}
}

func TestStaleness(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "a.fab.hcl")
	varFile := filepath.Join(dir, "v.fabvars")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(specFile, "fabric \"a\" {}\n")
	write(varFile, "x = 1\n")
	files, _ := spec.ReadFiles(dir)
	sp := &SavedPlan{FormatVersion: FormatVersion, SpecPath: dir, Sources: files,
		VarFiles: []spec.File{{Name: varFile, Data: []byte("x = 1\n")}}, Plan: &Plan{SpecHash: SourceHash(files)}}
	if w := sp.Staleness(); len(w) != 0 {
		t.Errorf("fresh plan stale: %q", w)
	}
	write(filepath.Join(dir, "b.fab.hcl"), "")
	write(varFile, "x = 2\n")
	w := sp.Staleness()
	if len(w) != 2 || !strings.Contains(w[0], "b.fab.hcl added") || !strings.Contains(w[1], "var file "+varFile+" changed") {
		t.Errorf("stale reasons %q", w)
	}
	old := *sp
	old.FormatVersion = major(FormatVersion) + ".0"
	if minor(FormatVersion) > 0 && len(old.Staleness()) != 3 {
		t.Errorf("older format not reported")
	}
	if minor("1.10") != 10 || minor("1") != 0 {
		t.Error("minor")
	}
}

func TestSavedPlanRoundTripAndSeal(t *testing.T) {
	s, f, store, reg := setup(t)
	_ = store
	p := Make(context.Background(), s, f, reg, Options{Targets: []string{"leaf1"}})
	sp := &SavedPlan{FabctlVersion: "v1", SpecPath: "t.fab.hcl", Sources: []spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, Env: []string{"FAB_VAR_x=1"}, Plan: p}
	b, err := sp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.fab")
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan.Targets[0] != "leaf1" || got.Env[0] != "FAB_VAR_x=1" || got.Plan.Device("leaf1") == nil || got.Plan.FabricDevices != 3 {
		t.Errorf("round trip lost fields: %+v", got.Plan)
	}
	// Any edit breaks the seal, including one to the embedded sources.
	edited := bytes.Replace(b, []byte(`"FAB_VAR_x=1"`), []byte(`"FAB_VAR_x=2"`), 1)
	if _, err := Decode(edited, "p.fab"); err == nil || !strings.Contains(err.Error(), "modified") {
		t.Errorf("edited plan accepted: %v", err)
	}
}

// Issue 37: show's staleness check reads a plan's var files from disk: a
// FIFO or a link to /dev/zero there is reported, never read.
func TestStalenessPlantedVarFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "vars.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	zero := filepath.Join(dir, "vars.zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sp := &SavedPlan{FormatVersion: FormatVersion, Plan: &Plan{}, VarFiles: []spec.File{{Name: fifo}, {Name: zero}}}
	done := make(chan []string, 1)
	go func() { done <- sp.Staleness() }()
	select {
	case got := <-done:
		all := strings.Join(got, "\n")
		for _, want := range []string{fifo, "FIFO", zero, "device"} {
			if !strings.Contains(all, want) {
				t.Errorf("staleness does not say %q:\n%s", want, all)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Staleness blocked on a var file")
	}
}
