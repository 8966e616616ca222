package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/drivers/switch/nxos"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/nxosemu"
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
	sw := bootConfigurationMD(t)
	dir := t.TempDir()
	vendorInventory(t, dir, "sonic", sw, []string{"Ethernet56", "Ethernet50"}, map[string]string{
		// the cable CABLE_LENGTH|AZURE names (link blocks are the inventory's)
		"Ethernet50": "  cable_length = \"40m\"\n",
	})
	vendorRoundTrip(t, dir, []string{"leaf1"})
}

// bootConfigurationMD starts a SONiC switch (leaf1) whose running and
// startup CONFIG_DB hold the QoS tables of configdb-qos.txt.
func bootConfigurationMD(t *testing.T) *sonicemu.Switch {
	t.Helper()
	doc := vendorJSON(t, filepath.Join("..", "testdata", "vendor", "sonic", "configdb-qos.txt"))
	// every port the tables name (CABLE_LENGTH names Ethernet8): GCU
	// validates the whole CONFIG_DB against the YANG on each patch
	sw, err := sonicemu.Start(sonicemu.Options{Hostname: "leaf1", Password: emuPassword, Ports: 1,
		ExtraPorts: []string{"Ethernet8", "Ethernet50", "Ethernet52", "Ethernet54", "Ethernet56"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
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
	return sw
}

// vendorRoundTrip imports the targets of the inventory in dir, then
// plans the written spec: no target has a change. What import left out
// are only what leftOut allows (exact paths, or prefixes ending in "/"):
// each a setting of the vendor configuration the spec language cannot
// say, listed by import, written into its block's unmanaged map (so the
// spec leaves it as the device runs it), and named by the plan's
// unmanaged list. Then, when the written spec has a class with ECN or an
// ETS share, one class changed in it plans exactly that change on every
// target.
func vendorRoundTrip(t *testing.T, dir string, names []string, leftOut ...string) *importer.Result {
	t.Helper()
	return roundTrip(t, dir, names, false, leftOut)
}

// vendorRoundTripApplied is vendorRoundTrip where the one-class change
// must apply (no refusal by the unmanaged verification) and re-plan
// empty.
func vendorRoundTripApplied(t *testing.T, dir string, names []string, leftOut ...string) *importer.Result {
	t.Helper()
	return roundTrip(t, dir, names, true, leftOut)
}

func roundTrip(t *testing.T, dir string, names []string, mustApply bool, leftOut []string) *importer.Result {
	t.Helper()
	allowed := func(path string) bool {
		for _, l := range leftOut {
			if path == l || (strings.HasSuffix(l, "/") && strings.HasPrefix(path, l)) {
				return true
			}
		}
		return false
	}
	res := importDir(t, dir, names)
	for _, l := range res.Report.LeftOut {
		t.Logf("left out: %s %s (device %q, spec %q): %s", l.Device, l.Path, l.Live, l.Desired, l.Reason)
		if !allowed(l.Path) {
			t.Errorf("import left out %s on %s (device %q, spec %q): %s", l.Path, l.Device, l.Live, l.Desired, l.Reason)
		}
		if !l.Unmanaged {
			t.Errorf("import left out %s on %s without writing it as unmanaged", l.Path, l.Device)
		}
	}
	if res.Report.Read != len(names) {
		t.Errorf("read %d devices, want %d", res.Report.Read, len(names))
	}
	replaceSpec(t, dir, res.HCL)
	// Every left-out setting is in the written spec's unmanaged maps.
	fab := intent.Compile(testutil.Load(t, dir, spec.LoadOptions{}))
	leaves := map[string]func(string) (string, bool){}
	for _, sw := range fab.Switches {
		leaves[sw.Addr()] = sw.Leaves
	}
	for _, h := range fab.Hosts {
		leaves[h.Addr()] = h.Leaves
	}
	for _, l := range res.Report.LeftOut {
		if _, ok := leaves[l.Device](l.Path); !ok {
			t.Errorf("the written spec does not leave %s unmanaged on %s\n%s", l.Path, l.Device, res.HCL)
		}
	}
	p := planDir(t, dir, names)
	for _, n := range names {
		dp := p.Device(n)
		if dp == nil || dp.Error != "" {
			t.Fatalf("plan of the imported spec on %s: %+v\n%s", n, dp, res.HCL)
		}
		for _, c := range dp.Changes {
			t.Errorf("%s: plan of the imported spec changes %s (%q -> %q)\n%s", n, c.Path, c.Before, c.After, res.HCL)
		}
		named := map[string]bool{}
		for _, u := range dp.UnmanagedDiffering() {
			named[u.Path] = true
		}
		for _, l := range res.Report.LeftOut {
			if l.Device == dp.Address && !named[l.Path] {
				t.Errorf("%s: the plan's unmanaged list does not name %s: %+v", n, l.Path, dp.Unmanaged)
			}
		}
	}
	if !hasTunableClass(res.HCL) {
		t.Logf("no class with ECN or an ETS share was imported: no class to change")
		return res
	}
	before := map[string][]plan.Unmanaged{}
	for _, n := range names {
		before[n] = p.Device(n).Unmanaged
	}
	changed, path, want := changeOneClass(t, res.HCL)
	replaceSpec(t, dir, changed)
	p = planDir(t, dir, names)
	for _, n := range names {
		if cs := changesOf(p, n); len(cs) != 1 || cs[0].Path != path || cs[0].After != want {
			t.Errorf("%s: changes %+v, want exactly %s -> %s", n, cs, path, want)
		}
	}
	// Applied, the change leaves every unmanaged setting as it ran: the
	// apply keeps it, or (a driver step that rewrites a whole object, as
	// NX-OS's queuing policy does, dropping a queue the spec leaves
	// unmanaged) its verification names what moved and restores the
	// device.
	applied := true
	if err := tryApply(t, dir, names); err != nil {
		applied = false
		t.Logf("apply refused: %v", err)
		if mustApply {
			t.Errorf("apply of the one-class change refused: %v", err)
		}
		if !strings.Contains(err.Error(), "the apply changed settings the spec leaves unmanaged") || !strings.Contains(err.Error(), "(restored)") {
			t.Errorf("apply failed otherwise: %v", err)
		}
	}
	p = planDir(t, dir, names)
	for _, n := range names {
		if cs := changesOf(p, n); applied && len(cs) != 0 {
			t.Errorf("%s: after apply, plan changes %+v", n, cs)
		}
		got := map[string]plan.Unmanaged{}
		for _, u := range p.Device(n).Unmanaged {
			got[u.Path] = u
		}
		for _, u := range before[n] {
			if g, ok := got[u.Path]; !ok || g.Live != u.Live || g.Absent != u.Absent {
				t.Errorf("%s: apply touched unmanaged %s: ran %q (absent %v), now %+v", n, u.Path, u.Live, u.Absent, g)
			}
		}
	}
	return res
}

// tryApply plans and applies the spec in dir on the targets, returning
// why a device could not be planned or apply's error.
func tryApply(t *testing.T, dir string, targets []string) error {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{})
	f := intent.Compile(s)
	opts := planOpts(s, targets)
	p := plan.Make(context.Background(), s, f, builtin.Registry(), opts)
	var devs []apply.Device
	for _, u := range plan.Units(f) {
		dp := p.Device(u.Device.Addr())
		if dp == nil {
			continue
		}
		if dp.Error != "" {
			return fmt.Errorf("plan %s: %s", dp.Address, dp.Error)
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	res, err := apply.Run(context.Background(), devs, builtin.Registry(), apply.Options{Parallelism: 8})
	if err == nil && !res.OK() {
		err = fmt.Errorf("apply not OK: %+v", res.Counts)
	}
	return err
}

// hasTunableClass reports whether a written spec has a class
// changeOneClass can change.
func hasTunableClass(src []byte) bool {
	return regexp.MustCompile(`(?m)^\s*(ecn \{|bandwidth\s*=\s*([2-9]\d|100))`).Match(src)
}

// vendorInventory writes an inventory for one switch (platform, the
// emulator's address and host key) and a host per linked port, with
// linkExtra's lines in that port's link block.
func vendorInventory(t *testing.T, dir, platform string, sw emulator, ports []string, linkExtra map[string]string) {
	t.Helper()
	writeTest(t, filepath.Join(dir, "known_hosts"), sw.KnownHostsLine()+"\n")
	writeTest(t, filepath.Join(dir, "inventory.fab.hcl"), inventoryHCL("ssh", `
  username    = "admin"
  password    = env("FABCTL_VENDOR_PW")
  known_hosts = "known_hosts"
`, platform, sw.Addr(), ports, linkExtra))
}

// eosUnmodelled are the lines of avd-intended-qos.cfg the EOS emulator
// does not model (docs/import.md lists them): a profile's and a port's
// shape rate, a guaranteed bandwidth, a qos service-policy (a policy-map
// the configuration does not hold), the per-port watchdog timer, routed
// port addressing, DSCP rewrite, a DSCP map entry with drop precedence,
// the global PFC off. The port's and profile's `qos trust` and `qos
// dscp` are modelled (testbed/eosemu portQoS, avd-qos-trust.txt).
var eosUnmodelled = []string{
	"shape rate 80 percent",
	"bandwidth guaranteed percent 10",
	"service-policy type qos input pmap_test1",
	"priority-flow-control pause watchdog port timer timeout 0.05 polling-interval auto recovery-time 1.11 forced",
	"no switchport",
	"ip address 172.31.255.1/31",
	"service-policy type qos input pmap_test1",
	"qos rewrite dscp",
	"qos map dscp 18 20 22 26 28 30 34 36 38 to traffic-class 4 drop-precedence 2",
	"priority-flow-control all off",
}

// TestRoundTripVendorEOS: an EOS switch booted with an intended
// configuration of Arista's AVD (testdata/vendor/eos/avd-intended-qos.cfg:
// qos profiles with ECN, strict and round-robin queues and PFC, the DSCP
// map, the global PFC watchdog); the lines the emulator does not model
// are listed (it refuses them); import, plan empty, one class changed.
func TestRoundTripVendorEOS(t *testing.T) {
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	sw, err := eosemu.Start(eosemu.Options{Hostname: "leaf1", Password: emuPassword, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	bootVendor(t, sw, "eos/avd-intended-qos.cfg", eosUnmodelled)
	dir := t.TempDir()
	vendorInventory(t, dir, "eos", sw, []string{"Ethernet1"}, nil)
	// What the spec cannot write, listed by import and planned: the
	// profile's queues, trust and the DSCP entries the profile's trust
	// reads (fabctl's EOS driver manages its own qos profile, FABCTL;
	// the AVD profile "test" the port uses reads as another profile),
	// and the watchdog's no-drop action (the spec's actions are drop,
	// forward and alert; no source equates no-drop with one of them).
	vendorRoundTrip(t, dir, []string{"leaf1"}, "tc/", "dscp/", "trust", "port/Ethernet1/trust", "pfcwd/action")
}

// TestRoundTripVendorNVUE: a Cumulus Linux switch configured with
// NVIDIA's RoCE baseline as the Cumulus Linux 5.14 manual types it
// (testdata/vendor/cumulus/roce-514.txt: `nv set qos roce`, `nv config
// apply`): its classes (lossless priority 3 with ECN, strict CNP
// priority 6, the DWRR shares), PFC and watchdog come back as the spec's;
// only its trust (PCP and DSCP) is left out.
func TestRoundTripVendorNVUE(t *testing.T) {
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	sw, err := cumulusemu.Start(cumulusemu.Options{Hostname: "leaf1", User: "admin", Password: emuPassword, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	if refused := sw.Boot("nv set qos roce\nnv config apply\n"); len(refused) != 0 {
		t.Fatalf("the emulator refused %q", refused)
	}
	dir := t.TempDir()
	vendorInventory(t, dir, "cumulus", sw, []string{"swp1", "swp2"}, nil)
	// The baseline trusts both PCP and DSCP (roce-514.txt: trust-mode
	// pcp,dscp); the spec's trust is dscp or pcp: left out, planned.
	vendorRoundTrip(t, dir, []string{"leaf1"}, "trust")
}

// TestRoundTripVendorNXOS: an NX-OS switch booted with Microsoft's
// reference Nexus ToR QoS configuration for Azure Local (testdata/vendor/
// nxos/azure-local-tor-qos.cfg: network-qos with pfc-cos 3 and mtu 9216,
// CoS classification, a queuing policy with a WRED/ECN queue and ETS
// shares, PFC and mtu 9216 on a layer-2 trunk port): the queues (lossless
// CoS 3 with ECN and its ETS share, the default queue's share), the
// switch's trust (pcp), PFC and the port's MTU come back as the spec's.
func TestRoundTripVendorNXOS(t *testing.T) {
	t.Setenv("FABCTL_VENDOR_PW", emuPassword)
	sw, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf1", Password: emuPassword, Ports: 1, ExtraPorts: []string{"Ethernet1/17"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	// The interface lines the emulator does not model: VLANs, spanning
	// tree, logging.
	bootVendor(t, sw, "nxos/azure-local-tor-qos.cfg", []string{"switchport mode trunk", "switchport trunk native vlan 99",
		"switchport trunk allowed vlan 711", "spanning-tree port type edge trunk", "no logging event port link-status"})
	dir := t.TempDir()
	vendorInventory(t, dir, "nxos", sw, []string{"Ethernet1/17"}, nil)
	// The switch's only managed port is classified by CoS through
	// another policy, AZLocal_SERVICES, and the switch has no DSCP
	// classification: it reads as trusting pcp. Left out and planned:
	// queue 7, whose `bandwidth percent 1` (a share of the whole port,
	// not `bandwidth remaining percent`) is no scheduling the driver
	// reads (no Cisco text says how the two kinds of share combine:
	// drivers/switch/nxos/read.go), so no class is written for it;
	// therefore the port's classification differs from the spec's
	// classes by CoS 7 -> qos-group 7 (plan binds FABCTL-QOS-COS instead).
	// The one-class change applies: the driver's rewritten queuing and
	// network-qos policies carry queue 7's lines as the switch ran them
	// (drivers/switch/nxos/carry.go), so the unmanaged verification
	// passes and the re-plan is empty.
	vendorRoundTripApplied(t, dir, []string{"leaf1"}, "port/Ethernet1/17/trust", "tc/7/")
	run := string(sw.RunningConfig())
	for _, want := range []string{
		"policy-map type queuing " + nxos.QueuingPolicy + "\n",
		"  class type queuing c-out-8q-q7\n    bandwidth percent 1\n",
		"  class type network-qos c-8q-nq7\n    mtu 9216\n",
		"service-policy type queuing output " + nxos.QueuingPolicy + "\n",
	} {
		if !strings.Contains(run, want) {
			t.Errorf("after apply the switch does not run %q:\n%s", want, run)
		}
	}
}

// bootVendor boots an emulator with a vendor configuration of
// testdata/vendor (file) and checks that it refused exactly unmodelled:
// the lines it does not model (it refuses them, as the NOS refuses what
// it does not know), which the switch then runs without, so import
// cannot see them.
func bootVendor(t *testing.T, sw interface{ Boot(string) []string }, file string, unmodelled []string) {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join("..", "testdata", "vendor", file))
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, l := range sw.Boot(string(cfg)) {
		refused = append(refused, strings.TrimSpace(l))
	}
	if got, want := strings.Join(refused, "\n"), strings.Join(unmodelled, "\n"); got != want {
		t.Errorf("the emulator refused:\n%s\nwant:\n%s", got, want)
	}
}

func writeTest(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
