package lint

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// lintSrc loads an in-memory spec and runs the named rules.
func lintSrc(t *testing.T, src string, ids ...string) Result {
	t.Helper()
	s := testutil.LoadSrc(t, src)
	var rules []Rule
	for _, r := range Rules() {
		for _, id := range ids {
			if r.ID == id {
				rules = append(rules, r)
			}
		}
	}
	if len(rules) != len(ids) {
		t.Fatalf("rules %v: found %d", ids, len(rules))
	}
	return RunRules(s, rules)
}

const groupSpec = `
fabric "t" { transport = "rocev2" }
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  pfc      = [4]
  %s
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" { device = "mlx5_0" }
  nic "eth2" { device = "mlx5_1" }
  nic "eth3" { device = "mlx5_2" }
}
link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed = "100G"
  %s
}
link {
  endpoints = ["leaf1:Ethernet4", "h1:eth2"]
  speed = "100G"
}
link {
  endpoints = ["leaf1:Ethernet8", "h1:eth3"]
  speed = "100G"
}
`

// A switch-wide setting that breaks three links is one finding at the
// setting, addressed to the switch, naming the other links; a link's own
// lint_ignore takes that link out; the switch's silences the finding.
func TestFindingGroups(t *testing.T) {
	res := lintSrc(t, fmt.Sprintf(groupSpec, "", ""), "QOS-1")
	if len(res.Diagnostics) != 1 {
		t.Fatalf("got %d findings, want 1 grouped finding: %v", len(res.Diagnostics), res.Diagnostics)
	}
	d := res.Diagnostics[0]
	info := spec.Info(d)
	if info.Address != "switch.leaf1" || d.Subject.Start.Line != 6 {
		t.Errorf("grouped finding at %s line %d, want switch.leaf1 at the pfc line 6", info.Address, d.Subject.Start.Line)
	}
	if !strings.Contains(d.Detail, "2 more ports: leaf1:Ethernet4, leaf1:Ethernet8") {
		t.Errorf("detail does not name the other ports: %s", d.Detail)
	}

	res = lintSrc(t, fmt.Sprintf(groupSpec, "", `lint_ignore = { "QOS-1" = "lab link" }`), "QOS-1")
	if len(res.Diagnostics) != 1 || res.Suppressed != 1 || !strings.Contains(res.Diagnostics[0].Detail, "1 more port: leaf1:Ethernet8") {
		t.Errorf("with one link ignored: %d findings, %d suppressed: %v", len(res.Diagnostics), res.Suppressed, res.Diagnostics)
	}

	res = lintSrc(t, fmt.Sprintf(groupSpec, `lint_ignore = { "QOS-1" = "migration" }`, ""), "QOS-1")
	if len(res.Diagnostics) != 0 || res.Suppressed != 3 {
		t.Errorf("with the switch ignored: %d findings, %d suppressed, want 0 and 3", len(res.Diagnostics), res.Suppressed)
	}
}

// Every finding of these rules carries an address and a subject in the file.
func TestRuleFindingsAreAddressed(t *testing.T) {
	ids := []string{"MTU-1", "MTU-2", "MTU-3", "TR-1", "TR-2", "TR-3", "TR-4", "TR-5",
		"QOS-1", "QOS-2", "QOS-3", "QOS-4", "QOS-5", "QOS-6", "QOS-7", "QOS-8", "HOST-1", "HOST-2", "HOST-3"}
	for _, id := range ids {
		files, _ := filepath.Glob(filepath.Join("testdata", "rules", id, "fail*.fab.hcl"))
		if len(files) == 0 {
			t.Errorf("%s: no fail case", id)
		}
		for _, f := range files {
			s := testutil.Load(t, f, spec.LoadOptions{})
			for _, d := range Run(s).Diagnostics {
				info := spec.Info(d)
				if info == nil || info.Rule == "" || info.Address == "" || info.Reference == "" {
					t.Errorf("%s: finding without rule, address or reference: %s", f, d.Summary)
				}
				if d.Subject == nil || d.Subject.Filename != f || d.Subject.Start.Line == 0 {
					t.Errorf("%s: %s finding has no subject in the file", f, d.Summary)
				}
				if !strings.HasSuffix(strings.TrimSpace(d.Detail), ".") {
					t.Errorf("%s: %s detail does not end a sentence: %q", f, d.Summary, d.Detail)
				}
			}
		}
	}
}

// The generated benchmark pod follows the common RoCEv2 recipe: these rules
// must have nothing to say about it.
func TestPodIsClean(t *testing.T) {
	s, diags := spec.LoadFiles([]spec.File{{Name: "pod.fab.hcl", Data: fabgen.Generate(fabgen.Pod.Scale(32))}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var rules []Rule
	rules = append(rules, mtuRules()...)
	rules = append(rules, transportRules()...)
	rules = append(rules, qosRules()...)
	rules = append(rules, hostRules()...)
	for _, d := range RunRules(s, rules).Diagnostics {
		t.Errorf("%s: %s: %s", spec.Info(d).Rule, d.Summary, d.Detail)
	}
}
