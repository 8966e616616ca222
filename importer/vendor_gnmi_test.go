package importer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// TestRoundTripVendorOpenConfig: an OpenConfig switch runs the QoS
// configuration of the OpenConfig working group's own annotated example
// (testdata/vendor/openconfig/qos-overview.json: a DSCP classifier into
// four forwarding groups, four named queues, a scheduler policy with a
// strict policed queue and three weighted ones, both bound to the
// subinterface Ethernet42.0), loaded into a gNMI target that validates
// it against ../shared/yang/openconfig (with libyang in a libyang build).
// The models refuse two members of the example as published, which are
// left out of what the switch runs: the interface's mandatory
// config/type is missing (the target creates Ethernet42 with its type)
// and "classifers" is not a node. Import from an inventory naming the
// switch and Ethernet42 reads no class: the example's queues carry no
// queue-id, and OpenConfig says no more of how a named queue maps to a
// traffic class ("an optional identifier which may be required by some
// hardware to map the named queue to a hardware queue",
// openconfig-qos-elements.yang), so none is invented, and the
// classifier is bound to the subinterface Ethernet42.0, not to a port
// fabctl manages. What the written spec would put on a switch that has
// none of it (the DSCP map, rocev2's default classes, trust and MTU) is
// left out, written as unmanaged, and the plan is empty.
func TestRoundTripVendorOpenConfig(t *testing.T) {
	doc := vendorJSON(t, filepath.Join("..", "testdata", "vendor", "openconfig", "qos-overview.json"))
	dir := t.TempDir()
	pki := fabricPKI(t, dir)
	start := func(ifs, qos any, ports []string) (*gnmitarget.Target, error) {
		top := map[string]any{"openconfig-qos:qos": qos}
		if ifs != nil {
			top["openconfig-interfaces:interfaces"] = ifs
		}
		return vendorTarget(t, pki, "openconfig", top, ports)
	}
	// As published, the models refuse it, naming exactly these two.
	_, err := start(doc["interfaces"], doc["qos"], nil)
	if err == nil {
		t.Fatal("the example as published was accepted; the models refuse its interface without config/type and its \"classifers\"")
	}
	for _, want := range []string{"interface[name=Ethernet42]/config/type", "input/classifers"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	// Without them, libyang refuses the scheduler inputs' queue: the
	// model at this commit holds an input's queue only `when
	// "../input-type = 'QUEUE'"`, a leaf the 2017 example predates (goyang
	// does not evaluate when).
	qos := doc["qos"].(map[string]any)
	for _, e := range qos["interfaces"].(map[string]any)["interface"].([]any) {
		delete(e.(map[string]any)["input"].(map[string]any), "classifers")
	}
	tg, err := start(nil, qos, []string{"Ethernet42"})
	if libyang.Available {
		if err == nil || strings.Count(err.Error(), `When condition "../input-type = 'QUEUE'" not satisfied`) != 4 {
			t.Fatalf("libyang accepted the scheduler inputs' queues without input-type, or refused something else: %v", err)
		}
	} else if err != nil {
		t.Fatalf("the example without its refused members: %v", err)
	} else {
		tg.Close()
	}
	// What the switch runs: the example without the refused members (no
	// input-type is added: the example does not say it).
	for _, sc := range qos["scheduler-policies"].(map[string]any)["scheduler-policy"].([]any)[0].(map[string]any)["schedulers"].(map[string]any)["scheduler"].([]any) {
		for _, in := range sc.(map[string]any)["inputs"].(map[string]any)["input"].([]any) {
			delete(in.(map[string]any)["config"].(map[string]any), "queue")
		}
	}
	tg, err = start(nil, qos, []string{"Ethernet42"})
	if err != nil {
		t.Fatalf("the example without its refused members: %v", err)
	}
	t.Cleanup(func() { tg.Close() })
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	gnmiInventory(t, dir, "openconfig", tg.Addr(), []string{"Ethernet42"})
	// The switch classifies on none of fabctl's objects and has no
	// queue a traffic class can be read from: what the written spec's
	// classes (rocev2's defaults, nothing read) and trust would put on it
	// is left out (unmanaged), and nothing else.
	res := vendorRoundTrip(t, dir, []string{"leaf1"}, "dscp/", "tc/", "trust", "port/Ethernet42/mtu")
	if strings.Contains(string(res.HCL), "class \"") {
		t.Errorf("import wrote a class from queues without a queue-id:\n%s", res.HCL)
	}
}

// TestRoundTripVendorSRLinux: an SR Linux switch runs Nokia's example
// DSCP classifier policy of the SR Linux QoS guide
// (testdata/vendor/srlinux/qos-guide-dscp-policy.txt: policy new-policy,
// DSCP 0 -> fc0 and 8 -> fc1 with drop-probability high) beside the
// system's forwarding classes, loaded into a gNMI target that validates
// it against ../shared/yang/srlinux (v25.3, the 7220 IXR-D5's features;
// libyang in a libyang build): the models accept it as written for
// release 22.6. No Nokia-authored SR Linux RoCE configuration (PFC, ECN
// slopes, schedulers) was found (docs/vendor-sources.md lists the
// searches). The policy is bound to no subinterface, so it classifies
// nothing and import reads no class or trust from it (fabctl reads the
// classifier a port's subinterface uses, srlinux readClassifiers); what
// the written spec would put on the switch is left out (unmanaged) and
// the plan is empty.
func TestRoundTripVendorSRLinux(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vendor", "srlinux", "qos-guide-dscp-policy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	policy := map[string]any{}
	var entries []any
	var entry map[string]any
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "#") || len(f) < 2:
		case f[0] == "dscp-policy":
			policy["name"] = f[1]
		case f[0] == "dscp":
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			entry = map[string]any{"value": n}
			entries = append(entries, entry)
		case f[0] == "forwarding-class" || f[0] == "drop-probability":
			entry[f[0]] = f[1]
		}
	}
	if policy["name"] != "new-policy" || len(entries) != 2 {
		t.Fatalf("qos-guide-dscp-policy.txt read as %v %v", policy, entries)
	}
	policy["dscp"] = entries
	p, _ := builtin.Platform("srlinux")
	var top map[string]any
	if err := json.Unmarshal(p.EmulatorInitial(), &top); err != nil {
		t.Fatal(err)
	}
	top["srl_nokia-qos:qos"].(map[string]any)["classifiers"] = map[string]any{"dscp-policy": []any{policy}}
	dir := t.TempDir()
	tg, err := vendorTarget(t, fabricPKI(t, dir), "srlinux", top, []string{"ethernet-1/1"})
	if err != nil {
		t.Fatalf("Nokia's example classifier: %v", err)
	}
	t.Cleanup(func() { tg.Close() })
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	gnmiInventory(t, dir, "srlinux", tg.Addr(), []string{"ethernet-1/1"})
	res := vendorRoundTrip(t, dir, []string{"leaf1"}, "dscp/", "tc/", "trust", "port/ethernet-1/1/mtu")
	if strings.Contains(string(res.HCL), "class \"") {
		t.Errorf("import wrote a class from a classifier no port uses:\n%s", res.HCL)
	}
}

// vendorTarget starts a gNMI target of platform (its YANG model set and
// features, TLS from pki) whose initial configuration is top, with the
// ports created in the flavor's shape.
func vendorTarget(t *testing.T, pki *gnmitarget.PKI, platform string, top map[string]any, ports []string) (*gnmitarget.Target, error) {
	t.Helper()
	p, ok := builtin.Platform(platform)
	if !ok {
		t.Fatalf("no platform %s", platform)
	}
	init, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	return gnmitarget.Start(context.Background(), gnmitarget.Config{Name: "leaf1", Flavor: p.YANG.Set, TLS: pki.TLS(false),
		Username: "admin", Password: emuPassword, Profile: &p.YANG.Profile, Schema: yangSchema(t, p.YANG.Set),
		Initial: init, Interfaces: ports})
}

// gnmiInventory writes an inventory for one gNMI switch (leaf1: the
// platform, the target's address, TLS verified against the CA
// fabricPKI wrote in dir) and a host per linked port.
func gnmiInventory(t *testing.T, dir, platform, addr string, ports []string) {
	t.Helper()
	writeTest(t, filepath.Join(dir, "inventory.fab.hcl"), inventoryHCL("gnmi", `
  username = "admin"
  password = env("FABCTL_VENDOR_PW")
  ca_file  = ".fabctl/testbed/gnmi-ca.pem"
`, platform, addr, ports, nil))
}

// inventoryHCL is an inventory naming one switch, leaf1 (the platform,
// its address, the credentials block cred with the attributes attrs),
// and a host per linked port, with linkExtra's lines in that port's
// link block.
func inventoryHCL(cred, attrs, platform, addr string, ports []string, linkExtra map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `fabric "vendor" {
  transport = "rocev2"
}

credentials %q {%s}

switch "leaf1" {
  platform    = %q
  address     = %q
  credentials = %q
}
`, cred, attrs, platform, addr, cred)
	for i, p := range ports {
		fmt.Fprintf(&b, `
host "h%d" {
  connect = "none"
  nic "eth1" {}
}

link {
  endpoints = ["leaf1:%s", "h%d:eth1"]
  speed     = "100G"
%s}
`, i+1, p, i+1, linkExtra[p])
	}
	return b.String()
}
