package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

func TestTestbedContainerlab(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lab")
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "testbed", "containerlab", "../../examples/testbed", "-o", out, "--allow-incomplete"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"testbed.clab.yml", "keyscan.sh", "spec/testbed.fab.hcl", "spec/fabctl-clab_override.fab.hcl", "configs/leaf2/eos.partial.cfg"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	if !strings.Contains(stdout.String(), "incomplete lab testbed written to") || !strings.Contains(stderr.String(), "Warning: 1 link(s) left out of the lab, leaf6") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
	// The next steps: deploy, host keys, one export per kind the lab's
	// credentials read a password from, plan.
	testutil.Golden(t, filepath.Join("testdata", "testbed-containerlab.golden"), []byte(strings.ReplaceAll(stdout.String(), out, "LAB")))

	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "testbed", "containerlab", "../../examples/testbed", "-o", out, "--json", "--name", "tb2", "--allow-incomplete"); code != ExitOK {
		t.Fatalf("--json exit %d", code)
	}
	var doc struct {
		Lab          string            `json:"lab"`
		Nodes        map[string]string `json:"nodes"`
		Complete     bool              `json:"complete"`
		LinksWritten int               `json:"links_written"`
		LinksLeftOut int               `json:"links_left_out"`
		Warnings     []string          `json:"warnings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Lab != "tb2" || doc.Nodes["switch.leaf1"] != "172.100.100.11" || len(doc.Warnings) != 1 ||
		doc.Complete || doc.LinksWritten != 9 || doc.LinksLeftOut != 1 {
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

// Issue 21: an incomplete lab (ai-pod: breakout links the VM kinds cannot
// wire, 96 of sonic-vs's ports beyond its 32) is an error, nothing
// written, unless --allow-incomplete; then the success line carries the
// counts, not a bare ✔.
func TestTestbedContainerlabIncomplete(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lab")
	const counts = "256 of 512 links written, 256 left out, 96 port(s) beyond their images' data ports"
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "testbed", "containerlab", "../../examples/ai-pod", "-o", out); code != ExitError {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr.String(), "would be incomplete ("+counts+"): nothing written") || !strings.Contains(stderr.String(), "--allow-incomplete") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an incomplete lab was written: %v", err)
	}
	f, _, stdout, stderr = testFactory()
	if code := runCLI(f, "testbed", "containerlab", "../../examples/ai-pod", "-o", out, "--allow-incomplete"); code != ExitOK {
		t.Fatalf("--allow-incomplete: exit %d\n%s", code, stderr)
	}
	first, _, _ := strings.Cut(stdout.String(), "\n")
	if strings.Contains(first, "✔") || !strings.Contains(first, "incomplete lab ai_pod written") || !strings.Contains(first, counts) {
		t.Errorf("success line %q, want the counts %q", first, counts)
	}
	// A complete lab: the success line counts its links too.
	f, _, stdout, stderr = testFactory()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f.fab.hcl"), `
fabric "small" {
  transport = "rocev2"
  mtu       = 9000
}
credentials "c" {
  username = "admin"
  password = env("P")
}
switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  credentials = "c"
}
host "h1" {
  address = "192.0.2.10"
  credentials = "c"
  nic "eth1" {
    device    = "rxe_eth1"
    addresses = ["198.18.0.1/31"]
  }
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "1m"
}
`)
	if code := runCLI(f, "testbed", "containerlab", dir, "-o", filepath.Join(dir, "lab")); code != ExitOK {
		t.Fatalf("complete lab: exit %d\n%s%s", code, stdout, stderr)
	}
	if first, _, _ := strings.Cut(stdout.String(), "\n"); !strings.Contains(first, "✔ lab small written") || !strings.Contains(first, "1 of 1 links written)") {
		t.Errorf("complete lab line %q", first)
	}
}
