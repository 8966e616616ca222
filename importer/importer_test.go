package importer_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// hostsInventory is a leaf and three hosts: what an inventory states.
const hostsInventory = `fabric "pod" {
  transport = "rocev2"
}

credentials "nodes" {
  username    = "fabctl"
  private_key = file("/etc/fabctl/id_ed25519")
}

switch "leaf1" {
  platform = "sonic"
  address  = "10.0.0.11"
}

host "h1" {
  address     = "10.0.1.1"
  credentials = "nodes"
  nic "eth1" {
    addresses = ["10.128.0.1/31"]
  }
}

host "h2" {
  address     = "10.0.1.2"
  credentials = "nodes"
  nic "eth1" {
    addresses = ["10.128.0.3/31"]
  }
}

host "h3" {
  address     = "10.0.1.3"
  credentials = "nodes"
  nic "eth1" {
    addresses = ["10.128.0.5/31"]
  }
}

link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed     = "100G"
}

link {
  endpoints = ["leaf1:Ethernet4", "h2:eth1"]
  speed     = "100G"
}

link {
  endpoints = ["leaf1:Ethernet8", "h3:eth1"]
  speed     = "100G"
}
`

func load(t testing.TB) func([]spec.File) (*spec.Spec, hcl.Diagnostics) {
	return func(files []spec.File) (*spec.Spec, hcl.Diagnostics) {
		return spec.LoadFiles(files, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	}
}

// states flattens a spec the way the devices would read if they ran it.
func states(t testing.TB, src string) map[string]intent.State {
	t.Helper()
	s, diags := load(t)([]spec.File{{Name: "running.fab.hcl", Data: []byte(src)}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f := intent.Compile(s)
	out := map[string]intent.State{}
	for _, sw := range f.Switches {
		out[sw.Addr()] = sw.Flatten()
	}
	for _, h := range f.Hosts {
		out[h.Addr()] = h.Flatten()
	}
	return out
}

func observed(live map[string]intent.State) map[string]*importer.Observed {
	obs := map[string]*importer.Observed{}
	for a, st := range live {
		obs[a] = &importer.Observed{Live: st}
	}
	return obs
}

// residual diffs the written spec's desired states against live.
func residual(t *testing.T, src []byte, live map[string]intent.State) []string {
	t.Helper()
	want := states(t, string(src))
	var out []string
	for a, st := range live {
		for _, c := range intent.Diff(want[a], st, nil) {
			out = append(out, a+" "+c.Path+" "+string(c.Action))
		}
	}
	return out
}

// TestImportHostsAndNICs: the hosts run an MTU of 4200 (the fabric's
// choice), h3's NIC has PFC on priorities 3 and 4, h2's maps DSCP 10 to
// priority 3 and its rdma_cm ToS is 104: import writes the majority at
// fabric level, the rest as nic and host overrides, and the written spec
// flattens to exactly what runs. Secrets stay file() references.
func TestImportHostsAndNICs(t *testing.T) {
	running := strings.Replace(hostsInventory, "transport = \"rocev2\"", "transport = \"rocev2\"\n  mtu = 4200", 1)
	running = strings.Replace(running, "addresses = [\"10.128.0.5/31\"]", "addresses = [\"10.128.0.5/31\"]\n    pfc = [3, 4]", 1)
	running = strings.Replace(running, "addresses = [\"10.128.0.3/31\"]", "addresses = [\"10.128.0.3/31\"]\n    dscp_map = { 10 = 3 }", 1)
	running = strings.Replace(running, "host \"h2\" {", "host \"h2\" {\n  rdma_tos = 104", 1)
	live := states(t, running)
	res, err := importer.Import([]spec.File{{Name: "inv.fab.hcl", Data: []byte(hostsInventory)}}, observed(live),
		importer.Options{Load: load(t), Name: filepath.Join(t.TempDir(), "pod.fab.hcl")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.LeftOut) != 0 {
		t.Errorf("left out: %+v", res.Report.LeftOut)
	}
	if r := residual(t, res.HCL, live); len(r) != 0 {
		t.Errorf("the written spec differs from what runs: %v\n%s", r, res.HCL)
	}
	got := map[string]string{}
	for _, o := range res.Report.Overrides {
		got[o.Device+" "+o.Block+" "+o.Attribute] = strings.Join(strings.Fields(o.Value), " ")
	}
	for k, v := range map[string]string{
		`host.h3 nic "eth1" pfc`:      "[3, 4]",
		`host.h2 nic "eth1" dscp_map`: `{ "10" = 3 }`,
		`host.h2  rdma_tos`:           "104",
	} {
		if got[k] != v {
			t.Errorf("override %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	var mtu *importer.Choice
	for i, c := range res.Report.Choices {
		if c.Setting == "fabric mtu" {
			mtu = &res.Report.Choices[i]
		}
	}
	if mtu == nil || mtu.Value != "4200" || mtu.Agree != 3 {
		t.Errorf("fabric mtu choice %+v, want 4200 by 3 of 3", mtu)
	}
	if !strings.Contains(string(res.HCL), `file("/etc/fabctl/id_ed25519")`) {
		t.Errorf("the private key reference is gone:\n%s", res.HCL)
	}
}

// TestImportHostileLive: device output is hostile. Values that are not
// what a setting takes (a multi-line MTU, a quote in a trust, an address
// list with HCL in it, a huge DSCP priority) are never written into the
// spec: each is listed as left out, and import neither fails nor panics.
func TestImportHostileLive(t *testing.T) {
	live := states(t, hostsInventory)
	sw := live["switch.leaf1"]
	sw["port/Ethernet0/mtu"] = "9000\n}\nswitch \"evil\" {"
	sw["trust"] = `dscp" ; x = "`
	sw["dscp/5"] = "99"
	h := live["host.h1"]
	h["nic/eth1/addresses"] = `10.0.0.1/31,${file("/etc/shadow")}`
	h["nic/eth1/pfc"] = "3,9"
	res, err := importer.Import([]spec.File{{Name: "inv.fab.hcl", Data: []byte(hostsInventory)}}, observed(live),
		importer.Options{Load: load(t), Name: filepath.Join(t.TempDir(), "pod.fab.hcl")})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"evil", "/etc/shadow", `x = "`, "99"} {
		if strings.Contains(string(res.HCL), bad) {
			t.Errorf("the written spec holds device output %q:\n%s", bad, res.HCL)
		}
	}
	left := map[string]bool{}
	for _, l := range res.Report.LeftOut {
		left[l.Device+" "+l.Path] = true
	}
	for _, k := range []string{"switch.leaf1 port/Ethernet0/mtu", "switch.leaf1 trust", "host.h1 nic/eth1/addresses", "host.h1 nic/eth1/pfc"} {
		if !left[k] {
			t.Errorf("%s is not listed as left out: %v", k, res.Report.LeftOut)
		}
	}
	// Issue 36: each is left as the device runs it, in the unmanaged map
	// of the switch's block or the NIC's ("addresses", not
	// "nic/eth1/addresses"), and the written spec plans clean.
	s, diags := load(t)([]spec.File{{Name: "pod.fab.hcl", Data: res.HCL}})
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, res.HCL)
	}
	if _, ok := s.Switch("leaf1").Unmanaged["trust"]; !ok {
		t.Errorf("switch leaf1 unmanaged %v", s.Switch("leaf1").Unmanaged)
	}
	if n := s.Host("h1").NIC("eth1"); n.Unmanaged["addresses"] == "" || n.Unmanaged["pfc"] == "" {
		t.Errorf("nic eth1 unmanaged %v\n%s", n.Unmanaged, res.HCL)
	}
	for _, l := range res.Report.LeftOut {
		if !l.Unmanaged {
			t.Errorf("%s %s left out without unmanaged", l.Device, l.Path)
		}
	}
	f := intent.Compile(s)
	leaves := map[string]func(string) (string, bool){}
	for _, sw := range f.Switches {
		leaves[sw.Addr()] = sw.Leaves
	}
	for _, h := range f.Hosts {
		leaves[h.Addr()] = h.Leaves
	}
	for _, r := range residual(t, res.HCL, live) {
		dev, path, _ := strings.Cut(r, " ")
		path, _, _ = strings.Cut(path, " ")
		if _, ok := leaves[dev](path); !ok {
			t.Errorf("the written spec still changes %s", r)
		}
	}
}

// TestImportPauseWithPFC: a NIC (and a switch port) left with 802.3x
// global pause on after PFC was turned on by hand (a fresh mlx5 port runs
// pause; mlnx_qos --pfc does not turn it off). The spec compiles pause
// off wherever PFC runs and lint QOS-6 refuses the pair, so import writes
// no `pause = true` (it would change nothing and fail lint): both are
// listed as left out with the reason.
func TestImportPauseWithPFC(t *testing.T) {
	live := states(t, hostsInventory)
	h := live["host.h1"]
	if h["nic/eth1/pfc"] == "" {
		t.Fatalf("the inventory's NIC runs no PFC: %v", h)
	}
	h["nic/eth1/pause"] = "true"
	sw := live["switch.leaf1"]
	sw["port/Ethernet0/pause"] = "true"
	if sw["port/Ethernet0/pfc"] == "" {
		t.Fatalf("the inventory's switch port runs no PFC: %v", sw)
	}
	res, err := importer.Import([]spec.File{{Name: "inv.fab.hcl", Data: []byte(hostsInventory)}}, observed(live),
		importer.Options{Load: load(t), Name: filepath.Join(t.TempDir(), "pod.fab.hcl")})
	if err != nil {
		t.Fatal(err)
	}
	// No pause attribute (an unmanaged entry "pause" leaves the device's
	// as it runs: issue 36).
	if regexp.MustCompile(`(?m)^\s*pause\s*=\s*(true|false)`).Match(res.HCL) {
		t.Errorf("the written spec says pause where PFC runs:\n%s", res.HCL)
	}
	left := map[string]string{}
	for _, l := range res.Report.LeftOut {
		left[l.Device+" "+l.Path] = l.Reason
	}
	for _, k := range []string{"host.h1 nic/eth1/pause", "switch.leaf1 port/Ethernet0/pause"} {
		if !strings.Contains(left[k], "QOS-6") {
			t.Errorf("%s: left out with %q, want the QOS-6 reason (all: %v)", k, left[k], res.Report.LeftOut)
		}
	}
}

// FuzzImportLive: any value a device reports for any path is either
// written as what its setting takes or listed as left out; the written
// spec always loads (Import fails only when it does not).
func FuzzImportLive(f *testing.F) {
	for _, s := range [][2]string{
		{"port/Ethernet0/mtu", "9100"}, {"trust", "pcp"}, {"dscp/26", "4"}, {"dscp/default", "7"},
		{"tc/3/ecn/min", "1"}, {"pfcwd/detect", "5ms"}, {"nic/eth1/pfc", ""}, {"nic/eth1/irq_cpus", "0-3,8"},
		{"nic/eth1/ecn", "0,1"}, {"nic/eth1/tos", "255"}, {"buffer/headroom", "1"}, {"tc/9/sched", "strict"},
		{"port/Ethernet0/pfc", "3,4"}, {"nic/eth1/addresses", "fe80::1/64"}, {"irqbalance", "stop"},
	} {
		f.Add(s[0], s[1])
	}
	base := states(f, hostsInventory)
	f.Fuzz(func(t *testing.T, key, val string) {
		live := map[string]intent.State{}
		for a, st := range base {
			c := make(intent.State, len(st)+1)
			for k, v := range st {
				c[k] = v
			}
			c[key] = val
			live[a] = c
		}
		_, err := importer.Import([]spec.File{{Name: "inv.fab.hcl", Data: []byte(hostsInventory)}}, observed(live),
			importer.Options{Load: load(t), Name: "/tmp/pod.fab.hcl"})
		if err != nil {
			t.Fatalf("%s = %q: %v", key, val, err)
		}
	})
}
