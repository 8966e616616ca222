package importer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
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
// configdb-qos.txt: AZURE maps bound by one PORT_QOS_MAP row keyed by
// the list "Ethernet50,Ethernet52,Ethernet54,Ethernet56", a lossless
// queue with its WRED/ECN profile, STRICT and WRR schedulers, pfc_enable
// 3,4), loaded into the emulator as its running and startup CONFIG_DB;
// import from an inventory naming the switch and two of the listed ports
// writes a spec that plans empty (nothing left out: the list row is read
// as each listed port's trust, DSCP map and PFC), and one class changed
// in it plans exactly that change.
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
		// The documentation's second queue (Ethernet56|4, its WRED
		// profile and scheduler) on the other linked port too: the
		// class is read from every port the spec manages.
		q := db["QUEUE"].(map[string]any)
		q["Ethernet50|4"], q["Ethernet50|5"] = q["Ethernet56|4"], q["Ethernet56|5"]
	})
	sw.Save() // the switch booted with it
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
  endpoints    = ["leaf1:Ethernet50", "h2:eth1"]
  speed        = "40G"
  cable_length = "40m" # the cable CABLE_LENGTH|AZURE names (link blocks are the inventory's)
}
`, sw.Addr())
	writeTest(t, filepath.Join(dir, "known_hosts"), sw.KnownHostsLine()+"\n")
	writeTest(t, filepath.Join(dir, "inventory.fab.hcl"), inv)
	vendorRoundTrip(t, dir, []string{"leaf1"}, nil)
}

// vendorRoundTrip imports the targets of the inventory in dir, then
// plans the written spec: no change on any target, and nothing left out
// but the paths of leftOut (each the vendor configuration's setting
// fabctl cannot write, listed by import and shown by plan); then one
// class changed in the spec plans exactly that change on every target.
func vendorRoundTrip(t *testing.T, dir string, names []string, leftOut map[string]bool) *importer.Result {
	t.Helper()
	res := importDir(t, dir, names)
	for _, l := range res.Report.LeftOut {
		t.Logf("left out: %s %s (device %q, spec %q): %s", l.Device, l.Path, l.Live, l.Desired, l.Reason)
		if !leftOut[l.Path] {
			t.Errorf("import left out %s on %s (device %q, spec %q): %s", l.Path, l.Device, l.Live, l.Desired, l.Reason)
		}
	}
	if res.Report.Read != len(names) {
		t.Errorf("read %d devices, want %d", res.Report.Read, len(names))
	}
	replaceSpec(t, dir, res.HCL)
	p := planDir(t, dir, names)
	for _, n := range names {
		dp := p.Device(n)
		if dp == nil || dp.Error != "" {
			t.Fatalf("plan of the imported spec on %s: %+v\n%s", n, dp, res.HCL)
		}
		for _, c := range dp.Changes {
			if !leftOut[c.Path] {
				t.Errorf("%s: plan of the imported spec changes %s (%q -> %q)\n%s", n, c.Path, c.Before, c.After, res.HCL)
			}
		}
	}
	changed, path, want := changeOneClass(t, res.HCL)
	replaceSpec(t, dir, changed)
	p = planDir(t, dir, names)
	for _, n := range names {
		var cs []intent.AttrChange
		for _, c := range changesOf(p, n) {
			if !leftOut[c.Path] {
				cs = append(cs, c)
			}
		}
		if len(cs) != 1 || cs[0].Path != path || cs[0].After != want {
			t.Errorf("%s: changes %+v, want exactly %s -> %s", n, cs, path, want)
		}
	}
	return res
}

func writeTest(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
