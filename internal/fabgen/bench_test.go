package fabgen

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

func loadOrFail(tb testing.TB, src []byte) *spec.Spec {
	tb.Helper()
	s, diags := spec.LoadFiles([]spec.File{{Name: "bench.fab.hcl", Data: src}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		tb.Fatalf("generated spec does not load: %v", diags)
	}
	return s
}

// TestGeneratedSpecIsValid keeps the benchmark honest: the generated pod
// loads and lints without errors, at a small scale.
func TestGeneratedSpecIsValid(t *testing.T) {
	p := Pod.Scale(16)
	s := loadOrFail(t, Generate(p))
	if len(s.Hosts) != p.Hosts || len(s.Links) != p.Links() || len(s.Switches) != p.Leaves+p.Spines {
		t.Fatalf("got %d hosts, %d links, %d switches", len(s.Hosts), len(s.Links), len(s.Switches))
	}
	res := lint.Run(s)
	for _, d := range res.Diagnostics {
		if d.Severity == lint.Error {
			t.Errorf("lint error on generated spec: %s: %s", d.Summary, d.Detail)
		}
	}
}

// peakRSS reads the process's peak resident set (VmHWM) in MB.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkLoadLint is the foundation benchmark: load and lint the
// 4,096-host x 8-NIC, 256-switch pod (and 1/8, 1/4, 1/2 of it to show the
// growth). Reported: ns/op for load+lint, MB of spec source, peak heap.
func BenchmarkLoadLint(b *testing.B) {
	for _, div := range []int{8, 4, 2, 1} {
		p := Pod.Scale(div)
		src := Generate(p)
		b.Run(fmt.Sprintf("hosts=%d/links=%d", p.Hosts, p.Links()), func(b *testing.B) {
			runtime.GC()
			debug.FreeOSMemory()
			var peak uint64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := loadOrFail(b, src)
				res := lint.Run(s)
				if res.Diagnostics.HasErrors() {
					b.Fatalf("lint errors: %v", res.Diagnostics[0])
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak {
					peak = ms.HeapInuse
				}
			}
			b.ReportMetric(float64(len(src))/1e6, "spec-MB")
			b.ReportMetric(float64(peak)/1e6, "heap-MB")
			b.ReportMetric(peakRSS(), "peak-RSS-MB")
		})
	}
}

// BenchmarkLoad and BenchmarkLint split the pod benchmark into its stages.
func BenchmarkLoad(b *testing.B) {
	src := Generate(Pod)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		loadOrFail(b, src)
	}
}

func BenchmarkLint(b *testing.B) {
	s := loadOrFail(b, Generate(Pod))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lint.Run(s)
	}
}

// TestTenThousandHosts: the foundation issue asks that a spec with 10,000
// hosts validates. 10,000 hosts x 8 NICs, 448 switches, ~94k links.
func TestTenThousandHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("large spec; runs without -short")
	}
	p := Params{Hosts: 10000, Rails: 8, Leaves: 384, Spines: 64, Uplinks: 1}
	src := Generate(p)
	s := loadOrFail(t, src)
	if len(s.Hosts) != p.Hosts || len(s.Links) != p.Links() {
		t.Fatalf("got %d hosts, %d links", len(s.Hosts), len(s.Links))
	}
	res := lint.Run(s)
	if res.Diagnostics.HasErrors() {
		t.Fatalf("lint errors: %v", res.Diagnostics[0])
	}
	t.Logf("%d hosts, %d links, %.1f MB spec: valid", p.Hosts, p.Links(), float64(len(src))/1e6)
}
