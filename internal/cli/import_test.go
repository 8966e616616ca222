package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// importInventory is a three-switch inventory (two SONiC, one EOS):
// devices, credentials and links, no QoS.
const importInventory = `fabric "lab" {
  transport = "rocev2"
}

credentials "ssh" {
  username    = "admin"
  password    = env("FABCTL_TEST_SWITCH_PW")
  known_hosts = "known_hosts"
}

switch "leaf1" {
  platform    = "sonic"
  address     = %q
  credentials = "ssh"
}

switch "leaf2" {
  platform    = "sonic"
  address     = %q
  credentials = "ssh"
}

switch "leaf3" {
  platform    = "eos"
  address     = %q
  credentials = "ssh"
}

link {
  endpoints = ["leaf1:Ethernet0", "leaf2:Ethernet0"]
  speed     = "100G"
}

link {
  endpoints = ["leaf2:Ethernet4", "leaf3:Ethernet1"]
  speed     = "100G"
}
`

// importQoS is what the lab runs: not fabctl's defaults.
const importQoS = `
class "storage" {
  role      = "rdma"
  priority  = 4
  dscp      = ["24-31"]
  lossless  = true
  bandwidth = 70
  ecn {
    min         = "300KB"
    max         = "3MB"
    probability = "20%"
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}

class "rest" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 30
}
`

// TestImportCommand: fabctl import reads a running lab (applied with a
// QoS unlike the defaults) from an inventory without it, writes the spec
// with -o, and plan of that spec has no changes; the JSON report names
// the fabric's choices and keeps the password out; -o refuses an
// existing file and the inventory's own directory.
func TestImportCommand(t *testing.T) {
	const pw = "Cli-import-Pa55"
	t.Setenv("FABCTL_TEST_SWITCH_PW", pw)
	var kh strings.Builder
	var addrs []any
	links := map[string]portlink.Static{"leaf1": {}, "leaf2": {}, "leaf3": {}}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("leaf%d", i+1)
		var addr, line string
		if i < 2 {
			sw, err := sonicemu.Start(sonicemu.Options{Hostname: name, Password: pw, Ports: 4, Links: links[name]})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sw.Close() })
			addr, line = sw.Addr(), sw.KnownHostsLine()
		} else {
			sw, err := eosemu.Start(eosemu.Options{Hostname: name, Password: pw, Ports: 4, Links: links[name]})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sw.Close() })
			addr, line = sw.Addr(), sw.KnownHostsLine()
		}
		addrs = append(addrs, addr)
		kh.WriteString(line + "\n")
	}
	inv := fmt.Sprintf(importInventory, addrs...)
	env := "FABCTL_TEST_SWITCH_PW=" + pw
	root := t.TempDir()
	for _, d := range []string{"applied", "inventory", "out"} {
		writeFile(t, filepath.Join(root, d, "known_hosts"), kh.String())
	}
	writeFile(t, filepath.Join(root, "applied", "lab.fab.hcl"), inv+importQoS)
	cable(t, filepath.Join(root, "applied"), []string{env}, links)
	// Applied through the engine: it sets up the fabric to import; the
	// command under test is import.
	engineApply(t, filepath.Join(root, "applied"))
	var f *Factory
	var out, errOut *bytes.Buffer

	writeFile(t, filepath.Join(root, "inventory", "lab.fab.hcl"), inv)
	written := filepath.Join(root, "out", "lab.fab.hcl")
	f, _, out, errOut = testFactory(env)
	if code := runCLI(f, "import", "--json", "-o", written, filepath.Join(root, "inventory")); code != ExitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out.String()+errOut.String(), pw) {
		t.Fatal("the import output holds the password")
	}
	var doc struct {
		FormatVersion string `json:"format_version"`
		Output        string `json:"output"`
		Read          int    `json:"read"`
		Choices       []struct {
			Setting, Value string
			Agree, Of      int
		} `json:"choices"`
		LeftOut []json.RawMessage `json:"left_out"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	if doc.Output != written || doc.Read != 3 || len(doc.LeftOut) != 0 {
		t.Errorf("import --json: output %q read %d left out %d:\n%s", doc.Output, doc.Read, len(doc.LeftOut), out)
	}
	found := false
	for _, c := range doc.Choices {
		if c.Setting == "class on priority 4 ecn" && c.Value == "min 300000 max 3000000 probability 20%" && c.Agree == 3 && c.Of == 3 {
			found = true
		}
	}
	if !found {
		t.Errorf("no choice of the storage class's ECN (3 of 3): %+v", doc.Choices)
	}
	src, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), pw) || !strings.Contains(string(src), `env("FABCTL_TEST_SWITCH_PW")`) {
		t.Errorf("the written spec does not keep the env() reference:\n%s", src)
	}
	f, _, out, errOut = testFactory(env)
	if code := runCLI(f, "plan", "--detailed-exitcode", filepath.Join(root, "out")); code != ExitOK {
		t.Errorf("plan of the imported spec: exit %d (want 0, no changes)\n%s\n%s\n%s", code, out, errOut, src)
	}

	// Without -o: the spec on stdout, the report on stderr.
	f, _, out, errOut = testFactory(env)
	if code := runCLI(f, "import", filepath.Join(root, "inventory")); code != ExitOK ||
		!strings.Contains(out.String(), "[24, 25, 26, 27, 28, 29, 30, 31]") || !strings.Contains(errOut.String(), "Read 3 of 3 devices.") {
		t.Errorf("import to stdout: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// -o never overwrites, and never writes beside the inventory's files.
	f, _, out, errOut = testFactory(env)
	if code := runCLI(f, "import", "-o", written, filepath.Join(root, "inventory")); code != ExitError || !strings.Contains(errOut.String(), "exists") {
		t.Errorf("import -o over an existing file: exit %d\n%s", code, errOut)
	}
	f, _, out, errOut = testFactory(env)
	if code := runCLI(f, "import", "-o", filepath.Join(root, "inventory", "x.fab.hcl"), filepath.Join(root, "inventory")); code != ExitUsage {
		t.Errorf("import -o into the inventory's directory: exit %d\n%s", code, errOut)
	}
}

// engineApply plans and applies the spec in dir with the builtin drivers.
func engineApply(t *testing.T, dir string) {
	t.Helper()
	s, diags := spec.Load(dir, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	fab := intent.Compile(s)
	opts := plan.Options{Parallelism: 4, Credentials: s.CredentialsByName}
	p := plan.Make(context.Background(), s, fab, builtin.Registry(), opts)
	var devs []apply.Device
	for _, u := range plan.Units(fab) {
		dp := p.Device(u.Device.Addr())
		if dp.Error != "" {
			t.Fatalf("plan %s: %s", dp.Address, dp.Error)
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	if res, err := apply.Run(context.Background(), devs, builtin.Registry(), apply.Options{Parallelism: 4}); err != nil || !res.OK() {
		t.Fatalf("apply: %v", err)
	}
}
