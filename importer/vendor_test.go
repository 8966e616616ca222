package importer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// vendorJSON is the JSON document of a testdata/vendor file: the lines
// after its source header ('#' lines), up to the first line after the
// document's closing brace.
func vendorJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	depth, started := 0, false
	for _, l := range strings.Split(string(b), "\n") {
		if !started && (strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "") {
			continue
		}
		started = true
		body.WriteString(l + "\n")
		depth += strings.Count(l, "{") - strings.Count(l, "}")
		if depth == 0 {
			break
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(body.Bytes(), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestRoundTripVendorSONiC: a SONiC switch runs the CONFIG_DB QoS tables
// of sonic-buildimage's own documentation (testdata/vendor/sonic/
// configdb-qos.txt: AZURE maps, a lossless queue with its WRED/ECN
// profile, STRICT and WRR schedulers, pfc_enable 3,4), loaded into the
// emulator as a running CONFIG_DB; import from an inventory naming the
// switch and its ports writes a spec whose plan shows no change but the
// settings import lists as left out, each with its reason: the queues
// (WRR and STRICT schedulers, the lossless queue's ECN profile) are in
// the spec; the ports' "trust none" (the sonic driver does not read the
// documentation's PORT_QOS_MAP row keyed by a list of ports) and the
// unsaved CONFIG_DB are listed.
func TestRoundTripVendorSONiC(t *testing.T) {
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	doc := vendorJSON(t, filepath.Join("..", "testdata", "vendor", "sonic", "configdb-qos.txt"))
	sw, err := sonicemu.Start(sonicemu.Options{Hostname: "leaf1", Password: emuPassword, Ports: 1,
		ExtraPorts: []string{"Ethernet50", "Ethernet52", "Ethernet54", "Ethernet56"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	sw.Edit(func(db map[string]any) {
		for table, rows := range doc {
			have, _ := db[table].(map[string]any)
			if have == nil {
				have = map[string]any{}
				db[table] = have
			}
			for k, v := range rows.(map[string]any) {
				if old, ok := have[k].(map[string]any); ok {
					for f, fv := range v.(map[string]any) {
						old[f] = fv
					}
					continue
				}
				have[k] = v
			}
		}
	})
	dir := t.TempDir()
	inv := fmt.Sprintf(`fabric "vendor" {
  transport = "rocev2"
}

credentials "ssh" {
  username    = "admin"
  password    = env("FABCTL_VENDOR_PW")
  known_hosts = "known_hosts"
}

switch "leaf1" {
  platform    = "sonic"
  address     = %q
  credentials = "ssh"
}

host "h1" {
  connect = "none"
  nic "eth1" {}
}

host "h2" {
  connect = "none"
  nic "eth1" {}
}

link {
  endpoints = ["leaf1:Ethernet56", "h1:eth1"]
  speed     = "40G"
}

link {
  endpoints = ["leaf1:Ethernet0", "h2:eth1"]
  speed     = "40G"
}
`, sw.Addr())
	writeTest(t, filepath.Join(dir, "known_hosts"), sw.KnownHostsLine()+"\n")
	writeTest(t, filepath.Join(dir, "inventory.fab.hcl"), inv)
	res := importDir(t, dir, []string{"leaf1"})
	replaceSpec(t, dir, res.HCL)
	p := planDir(t, dir, []string{"leaf1"})
	dp := p.Device("leaf1")
	if dp == nil || dp.Error != "" {
		t.Fatalf("plan of the imported spec: %+v\n%s", dp, res.HCL)
	}
	left := map[string]bool{}
	for _, l := range res.Report.LeftOut {
		left[l.Path] = true
		t.Logf("left out: %s (device %q, spec %q): %s", l.Path, l.Live, l.Desired, l.Reason)
		if strings.Contains(l.Path, "ecn") || strings.HasPrefix(l.Path, "tc/") {
			t.Errorf("the vendor config's queue settings are left out: %+v", l)
		}
	}
	for _, c := range dp.Changes {
		if !left[c.Path] {
			t.Errorf("plan changes %s (%q -> %q), which import did not list as left out\n%s", c.Path, c.Before, c.After, res.HCL)
		}
	}
	if len(dp.Changes) != len(res.Report.LeftOut) {
		t.Errorf("plan has %d changes, import left out %d", len(dp.Changes), len(res.Report.LeftOut))
	}
}

func writeTest(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
