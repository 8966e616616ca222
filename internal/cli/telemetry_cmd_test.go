package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

func TestTopologyCommand(t *testing.T) {
	tb := filepath.Join(testutil.RepoRoot(t), "examples/testbed")
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "topology", tb, "--format", "slurm"); code != ExitOK || !strings.Contains(stdout.String(), "SwitchName=leaf1 Nodes=h1,h2\n") {
		t.Errorf("topology slurm: exit %d\n%s%s", code, stdout, stderr)
	}
	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "--json", "topology", tb, "--format", "k8s-labels"); code != ExitOK {
		t.Fatalf("topology --json: exit %d", code)
	}
	var doc struct {
		FormatVersion string                       `json:"format_version"`
		Labels        map[string]map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.FormatVersion == "" || doc.Labels["h1"]["topology.fabctl.io/leaf"] != "leaf1" {
		t.Errorf("topology --json: %v\n%s", err, stdout)
	}
	// A rail-optimised pod: its rail group (32 hosts on leaf1-4) is one
	// block for Slurm's topology/block plugin.
	pod := filepath.Join(testutil.RepoRoot(t), "examples/ai-pod")
	f, _, stdout, stderr = testFactory()
	if code := runCLI(f, "topology", pod, "--format", "slurm-block"); code != ExitOK || !strings.Contains(stdout.String(), "\nBlockName=leaf1+leaf2+leaf3+leaf4 Nodes=gpu01,gpu02,") {
		t.Errorf("topology slurm-block: exit %d\n%s%s", code, stdout, stderr)
	}
	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "topology", pod, "--format", "json"); code != ExitOK || !strings.Contains(stdout.String(), `"topology.fabctl.io/rail-group": "leaf1.leaf2.leaf3.leaf4"`) {
		t.Errorf("topology --format json: exit %d\n%s", code, stdout)
	}
	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "--json", "topology", pod); code != ExitOK || !strings.Contains(stdout.String(), `"slurm_block_topology_conf": "# topology.conf`) || !strings.Contains(stdout.String(), `"rail_group": "leaf1+leaf2+leaf3+leaf4"`) {
		t.Errorf("topology --json: exit %d\n%s", code, stdout)
	}
	// A spec with errors: topology reads no device, and says what it
	// did not do.
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "t.fab.hcl"), "fabric \"t\" {}\nlink {\n  endpoints = [\"nosuch:Ethernet0\", \"h1:eth0\"]\n}\n")
	for _, args := range [][]string{{"topology", bad}, {"telemetry", "rules", bad}} {
		f, _, stdout, stderr = testFactory()
		if code := runCLI(f, args...); code != ExitError || strings.Contains(stderr.String(), "no device was read") ||
			!strings.Contains(stderr.String(), map[string]string{"topology": "no topology was written", "telemetry": "no rules were written"}[args[0]]) {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	f, _, _, _ = testFactory()
	if code := runCLI(f, "topology", tb, "--format", "block"); code != ExitUsage {
		t.Errorf("--format block: exit %d, want %d", code, ExitUsage)
	}
}

func TestTelemetryRulesCommand(t *testing.T) {
	tb := filepath.Join(testutil.RepoRoot(t), "examples/testbed")
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "telemetry", "rules", tb); code != ExitOK || !strings.Contains(stdout.String(), "alert: FabricPFCPauseStorm") ||
		!strings.Contains(stdout.String(), `priority=~"3"`) {
		t.Errorf("telemetry rules: exit %d\n%s%s", code, stdout, stderr)
	}
	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "--json", "telemetry", "rules", tb); code != ExitOK || !strings.Contains(stdout.String(), `"alert": "FabricDCBDrift"`) {
		t.Errorf("telemetry rules --json: exit %d\n%s", code, stdout)
	}
	f, _, _, _ = testFactory()
	if code := runCLI(f, "agent", "--metrics", "127.0.0.1:0"); code != ExitUsage {
		t.Errorf("agent --metrics without --metrics-spec: exit %d, want %d", code, ExitUsage)
	}
}
