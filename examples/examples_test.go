// Package examples_test keeps the example specs honest: every directory
// under examples/ must load with spec.Load, lint clean (no errors, and no
// warnings unless allowed below with a reason) and be formatted the way
// `fabctl fmt` writes HCL.
package examples_test

import (
	"bytes"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

// allowedWarnings lists lint warnings an example may produce, by example
// directory and rule id, each with the reason it is acceptable there. Keep
// it short: an example that needs a warning is usually an example to fix.
var allowedWarnings = map[string]map[string]string{
	// "rocev1-storage": {"QOS-8": "reason"},
}

// exampleDirs returns every directory under examples/ holding spec files.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := spec.ReadFiles(e.Name())
		if err == nil && len(files) > 0 {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	for _, want := range []string{"ai-pod", "infiniband", "iwarp-storage", "rocev1-storage", "testbed"} {
		if i := sort.SearchStrings(dirs, want); i == len(dirs) || dirs[i] != want {
			t.Errorf("example %s is missing", want)
		}
	}
	return dirs
}

// load loads an example the way `fabctl validate` does, with an empty
// environment so FAB_VAR_ variables of the test process cannot change it.
func load(t *testing.T, dir string) *spec.Spec {
	t.Helper()
	s, diags := spec.Load(dir, spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{}})
	if diags.HasErrors() || s == nil || s.Fabric == nil {
		var files map[string]*hcl.File
		if s != nil {
			files = s.Files
		}
		t.Fatalf("%s does not load:\n%s", dir, render(diags, files))
	}
	if len(diags) > 0 {
		t.Errorf("%s loads with warnings:\n%s", dir, render(diags, s.Files))
	}
	return s
}

func render(diags hcl.Diagnostics, files map[string]*hcl.File) string {
	var b strings.Builder
	if err := spec.WriteText(&b, diags, files, 120, false); err != nil {
		return err.Error()
	}
	return b.String()
}

func TestExamplesLoadAndLint(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		t.Run(dir, func(t *testing.T) {
			s := load(t, dir)
			res := lint.Run(s)
			var bad hcl.Diagnostics
			for _, d := range res.Diagnostics {
				if d.Severity == hcl.DiagWarning {
					if info := spec.Info(d); info != nil {
						if reason := allowedWarnings[dir][info.Rule]; reason != "" {
							t.Logf("allowed %s warning: %s (%s)", info.Rule, d.Summary, reason)
							continue
						}
					}
				}
				bad = append(bad, d)
			}
			if len(bad) > 0 {
				t.Errorf("%s: %d lint finding(s):\n%s", dir, len(bad), render(bad, s.Files))
			}
			if res.Suppressed > 0 {
				t.Logf("%s: %d finding(s) silenced by lint_ignore", dir, res.Suppressed)
			}
		})
	}
}

// TestAllowListIsUsed fails on allow-list entries for examples that do not
// exist, so the list cannot rot.
func TestAllowListIsUsed(t *testing.T) {
	dirs := map[string]bool{}
	for _, d := range exampleDirs(t) {
		dirs[d] = true
	}
	for dir, rules := range allowedWarnings {
		if !dirs[dir] {
			t.Errorf("allowedWarnings names example %q, which does not exist", dir)
		}
		for rule, reason := range rules {
			if strings.TrimSpace(reason) == "" {
				t.Errorf("allowedWarnings[%q][%q] needs a reason", dir, rule)
			}
		}
	}
}

// TestExamplesFormatted keeps the examples in canonical HCL layout, so
// `fabctl fmt -check examples/...` passes and diffs stay about content.
func TestExamplesFormatted(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		files, diags := spec.ReadFiles(dir)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", dir, diags.Error())
		}
		for _, f := range files {
			if strings.HasSuffix(f.Name, ".json") {
				continue
			}
			if got := hclwrite.Format(f.Data); !bytes.Equal(got, f.Data) {
				t.Errorf("%s is not formatted (run fabctl fmt %s)", f.Name, f.Name)
			}
		}
	}
}

// TestAIPodShape pins the AI pod's size: if a locals change drops a rail or
// an uplink, the counts say so before a switch does.
func TestAIPodShape(t *testing.T) {
	s := load(t, "ai-pod")

	roles := map[string]int{}
	platforms := map[string]bool{}
	for _, sw := range s.Switches {
		roles[sw.Role]++
		platforms[sw.Platform] = true
	}
	if roles["spine"] != 2 || roles["leaf"] != 4 || len(s.Switches) != 6 {
		t.Errorf("switches: got %d (%v), want 2 spines and 4 leaves", len(s.Switches), roles)
	}
	for _, p := range []string{"sonic", "cumulus", "eos", "nxos", "srlinux"} {
		if !platforms[p] {
			t.Errorf("no switch on platform %s", p)
		}
	}

	if len(s.Hosts) != 32 {
		t.Errorf("hosts: got %d, want 32", len(s.Hosts))
	}
	nics := 0
	for _, h := range s.Hosts {
		nics += len(h.NICs)
		for _, n := range h.NICs {
			if n.Model != "connectx-7" || n.Speed != 400e9 || len(n.Addresses) != 1 {
				t.Errorf("%s:%s: model %q speed %s addresses %v, want connectx-7 at 400G with one address", h.Name, n.Name, n.Model, n.Speed, n.Addresses)
			}
		}
	}
	if nics != 256 {
		t.Errorf("NICs: got %d, want 256 (32 hosts x 8 rails)", nics)
	}

	// 256 host links (64 per leaf) + 256 uplinks (64 per leaf, 128 per spine).
	if len(s.Links) != 512 {
		t.Errorf("links: got %d, want 512", len(s.Links))
	}
	perSwitch := map[string]int{}
	for _, l := range s.Links {
		for _, ep := range []spec.Endpoint{l.A, l.B} {
			if ep.Kind == spec.KindSwitch {
				perSwitch[ep.Node]++
			}
		}
		if l.Speed != 400e9 {
			t.Errorf("%s runs at %s, want 400G", l.Address(), l.Speed)
		}
	}
	for _, sw := range s.Switches {
		if perSwitch[sw.Name] != 128 {
			t.Errorf("%s has %d links, want 128 (64 cages x 2 x 400G)", sw.Name, perSwitch[sw.Name])
		}
	}

	// Rail r of every node lands on leaf r/2: rail-optimised.
	for _, l := range s.Links {
		if l.B.Kind != spec.KindHost {
			continue
		}
		r, err := strconv.Atoi(strings.TrimPrefix(l.B.Port, "rdma"))
		if err != nil || r < 0 || r > 7 {
			t.Fatalf("%s: NIC name %q is not rdma<N>", l.Address(), l.B.Port)
		}
		if want := []string{"leaf1", "leaf2", "leaf3", "leaf4"}[r/2]; l.A.Node != want {
			t.Errorf("%s: rail %d lands on %s, want %s", l.Address(), r, l.A.Node, want)
		}
	}

	// Node addresses are unique across the pod.
	seen := map[string]string{}
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			a := n.Addresses[0].Addr().String()
			if prev, ok := seen[a]; ok {
				t.Errorf("%s:%s reuses %s of %s", h.Name, n.Name, a, prev)
			}
			seen[a] = h.Name + ":" + n.Name
		}
	}

	if len(s.Validations) != 2 {
		t.Errorf("validations: got %d, want 2", len(s.Validations))
	}
}

// TestAIPodVariables checks that the pod shrinks cleanly with gpu_nodes and
// that the variable's validation rejects a pod the leaves cannot hold.
func TestAIPodVariables(t *testing.T) {
	s, diags := spec.Load("ai-pod", spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Vars: []string{"gpu_nodes=8"}, Env: []string{}})
	if diags.HasErrors() {
		t.Fatalf("gpu_nodes=8 does not load:\n%s", render(diags, s.Files))
	}
	if len(s.Hosts) != 8 || len(s.Links) != 8*8+4*16 {
		t.Errorf("gpu_nodes=8: got %d hosts and %d links, want 8 and %d", len(s.Hosts), len(s.Links), 8*8+4*16)
	}
	if res := lint.Run(s); res.Diagnostics.HasErrors() {
		t.Errorf("gpu_nodes=8 has lint errors:\n%s", render(res.Diagnostics, s.Files))
	}

	_, diags = spec.Load("ai-pod", spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{"FAB_VAR_gpu_nodes=33"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "gpu_nodes must be a whole number from 1 to 32") {
		t.Errorf("FAB_VAR_gpu_nodes=33: want the variable's validation error, got %v", diags)
	}
}
