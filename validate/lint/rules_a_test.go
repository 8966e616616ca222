package lint

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

func TestRoCEWireOverhead(t *testing.T) {
	for _, tc := range []struct {
		tr   spec.Transport
		ipv6 bool
		want int
	}{
		{spec.RoCEv2, false, 20 + 8 + 12 + 16 + 4}, // 60
		{spec.RoCEv2, true, 40 + 8 + 12 + 16 + 4},  // 80
		{spec.RoCEv1, false, 40 + 12 + 16 + 4},     // 72: GRH instead of IP+UDP
		{spec.RoCEv1, true, 72},                    // no IP header: family does not matter
	} {
		if got := roceWireOverhead(tc.tr, tc.ipv6); got != tc.want {
			t.Errorf("roceWireOverhead(%s, ipv6=%v) = %d, want %d", tc.tr, tc.ipv6, got, tc.want)
		}
	}
}

// The active MTU the kernel picks, as in the reference's table
// (host-and-verbs.md: 4200 -> 4096, 2200 -> 2048, 1500 -> 1024) and at the
// exact boundaries.
func TestActiveRoCEMTU(t *testing.T) {
	for _, tc := range []struct {
		model string
		mtu   int
		want  int
	}{
		{"connectx-7", 9000, 4096},
		{"connectx-7", 4200, 4096},
		{"connectx-7", 4192, 4096}, // 4096 + 96
		{"connectx-7", 4191, 2048},
		{"connectx-7", 4150, 2048},
		{"connectx-7", 2200, 2048},
		{"connectx-7", 2144, 2048},
		{"connectx-7", 2143, 1024},
		{"connectx-7", 1500, 1024},
		{"connectx-7", 351, 0}, // 351 - 96 < 256: no IB MTU fits
		{"", 4192, 4096},       // unknown model: the kernel's 96
		{"rxe", 4176, 4096},    // 4096 + RXE_MAX_HDR_LENGTH 80
		{"rxe", 4175, 2048},
		{"rxe", 1500, 1024},
	} {
		reserve, _ := roceReserve(tc.model)
		if got := activeRoCEMTU(tc.mtu, reserve); got != tc.want {
			t.Errorf("active MTU of %q at netdev MTU %d = %d, want %d", tc.model, tc.mtu, got, tc.want)
		}
	}
}

func TestIBMTU(t *testing.T) {
	for _, m := range []int{256, 512, 1024, 2048, 4096} {
		if !ibMTUValid(m) {
			t.Errorf("%d should be a valid IB MTU", m)
		}
	}
	for _, m := range []int{0, 255, 1000, 1500, 3000, 9000} {
		if ibMTUValid(m) {
			t.Errorf("%d should not be a valid IB MTU", m)
		}
	}
	for _, tc := range []struct{ in, want int }{{3000, 2048}, {2000, 1024}, {4096, 4096}, {100, 256}} {
		if got := floorIBMTU(tc.in); got != tc.want {
			t.Errorf("floorIBMTU(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestNICIPv6(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	for _, tc := range []struct {
		addrs []netip.Prefix
		want  bool
	}{
		{nil, false},
		{pfx("10.0.0.1/31"), false},
		{pfx("2001:db8::1/127"), true},
		{pfx("2001:db8::1/127", "10.0.0.1/31"), false}, // dual stack: IPv4 GIDs are used
		{pfx("::ffff:10.0.0.1/128"), false},
	} {
		if got := nicIPv6(&spec.NIC{Addresses: tc.addrs}); got != tc.want {
			t.Errorf("nicIPv6(%v) = %v, want %v", tc.addrs, got, tc.want)
		}
	}
}

func TestPrioSets(t *testing.T) {
	if got := prioSetMinus([]int{3, 4}, []int{4}); fmt.Sprint(got) != "[3]" {
		t.Errorf("prioSetMinus = %v", got)
	}
	if got := prioSetMinus([]int{3}, nil); fmt.Sprint(got) != "[3]" {
		t.Errorf("prioSetMinus against nothing = %v", got)
	}
	if !prioSetEqual([]int{3, 4}, []int{3, 4}) || prioSetEqual([]int{3}, []int{3, 4}) || prioSetEqual([]int{}, []int{3}) {
		t.Error("prioSetEqual is wrong")
	}
	if got := prioSetString(nil); got != "{}" {
		t.Errorf("prioSetString(nil) = %q", got)
	}
	if got := hclIntList([]int{3, 4}); got != "[3, 4]" {
		t.Errorf("hclIntList = %q", got)
	}
}

func TestACLMatchesRoCE(t *testing.T) {
	for _, tc := range []struct {
		acl  spec.ACL
		want bool
	}{
		{spec.ACL{Protocol: "udp", DstPorts: []spec.PortRange{{From: 4791, To: 4791}}}, true},
		{spec.ACL{Protocol: "udp", DstPorts: []spec.PortRange{{From: 4000, To: 5000}}}, true},
		{spec.ACL{Protocol: "udp", DstPorts: []spec.PortRange{{From: 4792, To: 5000}}}, false},
		{spec.ACL{Protocol: "any"}, true}, // no port list: every port
		{spec.ACL{Protocol: "udp"}, true},
		{spec.ACL{Protocol: "tcp", DstPorts: []spec.PortRange{{From: 4791, To: 4791}}}, false},
	} {
		if got := aclMatchesRoCE(&tc.acl); got != tc.want {
			t.Errorf("aclMatchesRoCE(%+v) = %v, want %v", tc.acl, got, tc.want)
		}
	}
}

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

// The rules of this file must stay near-linear: run them on the benchmark
// pod (4,096 hosts x 8 NICs, 256 switches, ~40k links).
func BenchmarkRulesA(b *testing.B) {
	s, diags := spec.LoadFiles([]spec.File{{Name: "pod.fab.hcl", Data: fabgen.Generate(fabgen.Pod)}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	var rules []Rule
	rules = append(rules, mtuRules()...)
	rules = append(rules, transportRules()...)
	rules = append(rules, qosRules()...)
	rules = append(rules, hostRules()...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		RunRules(s, rules)
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
