package lint

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/spec"
)

// closOpts sizes a generated rail-optimised two-tier Clos.
type closOpts struct {
	Hosts, NICs    int // hosts and RDMA NICs per host (NIC i goes to rail i)
	Leaves, Spines int
	Uplinks        int // per leaf, spread over the spines
	PeerLinks      int // leaf pairs joined by a lossless lateral link (deadlock cycles)
}

func (o closOpts) links() int {
	return o.Hosts*o.NICs + o.Leaves*o.Uplinks + o.PeerLinks
}

// closHCL renders the fabric as a spec, the way a user would write it
// without for_each (the worst case for the loader and the rules).
func closHCL(o closOpts) []byte {
	var b strings.Builder
	b.Grow(o.links() * 150)
	b.WriteString("fabric \"bench\" {\n  transport = \"rocev2\"\n}\n")
	for s := 0; s < o.Spines; s++ {
		fmt.Fprintf(&b, "switch \"spine%d\" {\n  platform = \"sonic\"\n  role = \"spine\"\n  address = \"10.254.%d.%d\"\n"+
			"  buffer {\n    total = \"128MB\"\n    headroom = \"200KB\"\n  }\n}\n", s, s/256, s%256)
	}
	for l := 0; l < o.Leaves; l++ {
		fmt.Fprintf(&b, "switch \"leaf%d\" {\n  platform = \"sonic\"\n  address = \"10.255.%d.%d\"\n"+
			"  buffer {\n    total = \"128MB\"\n    headroom = \"200KB\"\n  }\n}\n", l, l/256, l%256)
	}
	link := func(a, z string) {
		fmt.Fprintf(&b, "link {\n  endpoints = [%q, %q]\n  speed = \"400G\"\n  cable_length = \"3m\"\n}\n", a, z)
	}
	leafPort := make([]int, o.Leaves)
	perRail := o.Leaves / o.NICs
	if perRail == 0 {
		perRail = 1
	}
	n := 0
	for h := 0; h < o.Hosts; h++ {
		fmt.Fprintf(&b, "host \"h%d\" {\n  address = \"10.253.%d.%d\"\n", h, h/256, h%256)
		for i := 0; i < o.NICs; i++ {
			ip := 2*n + 1
			fmt.Fprintf(&b, "  nic \"n%d\" {\n    device = \"mlx5_%d\"\n    addresses = [\"10.%d.%d.%d/31\"]\n  }\n", i, i, ip>>16, ip>>8&255, ip&255)
			n++
		}
		b.WriteString("}\n")
		for i := 0; i < o.NICs; i++ {
			leaf := (i*perRail + h%perRail) % o.Leaves
			link(fmt.Sprintf("leaf%d:Ethernet%d", leaf, leafPort[leaf]), fmt.Sprintf("h%d:n%d", h, i))
			leafPort[leaf]++
		}
	}
	spinePort := make([]int, o.Spines)
	for l := 0; l < o.Leaves; l++ {
		for k := 0; k < o.Uplinks; k++ {
			s := (l*o.Uplinks + k) % o.Spines
			link(fmt.Sprintf("leaf%d:Up%d", l, k), fmt.Sprintf("spine%d:Ethernet%d", s, spinePort[s]))
			spinePort[s]++
		}
	}
	for p := 0; p < o.PeerLinks; p++ {
		link(fmt.Sprintf("leaf%d:Peer", 2*p), fmt.Sprintf("leaf%d:Peer", 2*p+1))
	}
	return []byte(b.String())
}

var benchSpecs sync.Map // closOpts -> *spec.Spec

func benchSpec(b *testing.B, o closOpts) *spec.Spec {
	b.Helper()
	// Collect the previous benchmark's garbage (and the loader's) first:
	// with a live spec of several hundred MB a concurrent GC cycle would
	// otherwise land in the timed loop.
	defer runtime.GC()
	if s, ok := benchSpecs.Load(o); ok {
		return s.(*spec.Spec)
	}
	s, diags := spec.LoadFiles([]spec.File{{Name: "bench.fab.hcl", Data: closHCL(o)}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		b.Fatalf("generated spec does not load: %s", diags.Error())
	}
	if len(s.Links) != o.links() {
		b.Fatalf("generated %d links, want %d", len(s.Links), o.links())
	}
	benchSpecs.Store(o, s)
	return s
}

// bigClos is the target size: 4,096 hosts x 8 NICs, 128 leaves and 128
// spines (256 switches), 32 uplinks per leaf: 36,864 links.
var bigClos = closOpts{Hosts: 4096, NICs: 8, Leaves: 128, Spines: 128, Uplinks: 32}

func reportPerLink(b *testing.B, links int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(links), "ns/link")
}

// BenchmarkDeadlock runs the SAFE-2 analysis on the target-size Clos.
func BenchmarkDeadlock(b *testing.B) {
	s := benchSpec(b, bigClos)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := findDeadlocks(s, maxDeadlockReports); len(res.Cycles) != 0 {
			b.Fatalf("unexpected cycle")
		}
	}
	reportPerLink(b, bigClos.links())
}

// BenchmarkDeadlockCyclic adds 64 lossless leaf-leaf links: every one is a
// cycle, so the analysis extracts and reports up to its limit.
func BenchmarkDeadlockCyclic(b *testing.B) {
	o := bigClos
	o.PeerLinks = 64
	s := benchSpec(b, o)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := findDeadlocks(s, maxDeadlockReports)
		if len(res.Cycles) != maxDeadlockReports || len(res.Unreported) != 1 {
			b.Fatalf("got %d cycles, %d unreported groups", len(res.Cycles), len(res.Unreported))
		}
	}
	reportPerLink(b, o.links())
}

// BenchmarkDeadlockScaling grows the fabric 1x..8x (x8: 4,096 hosts x 8
// NICs, 256 switches, 34,816 links). Near-linear time keeps ns/link flat.
func BenchmarkDeadlockScaling(b *testing.B) {
	for _, k := range []int{1, 2, 4, 8} {
		o := closOpts{Hosts: 512 * k, NICs: 8, Leaves: 16 * k, Spines: 16 * k, Uplinks: 16}
		b.Run(fmt.Sprintf("x%d_links%d", k, o.links()), func(b *testing.B) {
			s := benchSpec(b, o)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				findDeadlocks(s, maxDeadlockReports)
			}
			reportPerLink(b, o.links())
		})
	}
}

// BenchmarkRulesBufECNSafe runs BUF-*, ECN-* and SAFE-* on the target size.
func BenchmarkRulesBufECNSafe(b *testing.B) {
	s := benchSpec(b, bigClos)
	var rules []Rule
	rules = append(rules, bufferRules()...)
	rules = append(rules, ecnRules()...)
	rules = append(rules, safetyRules()...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := RunRules(s, rules); len(res.Diagnostics) != 0 {
			b.Fatalf("generated fabric has findings: %s", res.Diagnostics[0].Error())
		}
	}
	reportPerLink(b, bigClos.links())
}

// BenchmarkLintAll runs every rule (Run) on the target size: whole lint
// must stay well under a second.
func BenchmarkLintAll(b *testing.B) {
	s := benchSpec(b, bigClos)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Run(s)
	}
	reportPerLink(b, bigClos.links())
}

// BenchmarkRulesMTUTRQOSHOST runs MTU-*, TR-*, QOS-* and HOST-*, which must
// stay near-linear, on the benchmark pod (4,096 hosts x 8 NICs, 256
// switches, ~40k links).
func BenchmarkRulesMTUTRQOSHOST(b *testing.B) {
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
