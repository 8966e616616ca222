package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTestbedContainerlab(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lab")
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "testbed", "containerlab", "../../examples/testbed", "-o", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"testbed.clab.yml", "keyscan.sh", "spec/testbed.fab.hcl", "spec/fabctl-clab_override.fab.hcl", "configs/leaf2/eos.partial.cfg"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	if !strings.Contains(stdout.String(), "lab testbed written to") || !strings.Contains(stderr.String(), "Warning: 1 link(s) left out of the lab, leaf6") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}

	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "testbed", "containerlab", "../../examples/testbed", "-o", out, "--json", "--name", "tb2"); code != ExitOK {
		t.Fatalf("--json exit %d", code)
	}
	var doc struct {
		Lab      string            `json:"lab"`
		Nodes    map[string]string `json:"nodes"`
		Warnings []string          `json:"warnings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Lab != "tb2" || doc.Nodes["switch.leaf1"] != "172.100.100.11" || len(doc.Warnings) != 1 {
		t.Fatalf("--json: %v %s", err, stdout)
	}

	for _, tt := range []struct {
		args []string
		code ExitCode
		want string
	}{
		{[]string{"testbed", "containerlab", "../../examples/testbed"}, ExitUsage, "needs -o DIR"},
		{[]string{"testbed", "containerlab", "../../examples/testbed", "-o", out, "--kind", "eos"}, ExitUsage, "want NAME=VALUE"},
		{[]string{"testbed", "containerlab", "../../examples/testbed", "-o", out, "--strict"}, ExitError, "leaf6:Ethernet0"},
		{[]string{"testbed", "containerlab", "../../examples/infiniband", "-o", out}, ExitError, "InfiniBand"},
	} {
		f, _, _, stderr := testFactory()
		if code := runCLI(f, tt.args...); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}
