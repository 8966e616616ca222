package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// BenchmarkImport64 is issue 36's 64-switch figure: 64 emulated switches
// (SONiC, EOS, NX-OS and Cumulus in turn, answering at once) run the
// bench spec (applied once, outside the timer); one op is fabctl import
// of that spec as inventory, end to end: every switch read through its
// driver at parallelism 64 (plan.Observe), the probe and class reads,
// the inference, and the written spec loaded and diffed as plan would.
// The written spec must leave nothing out.
//
//	go test ./testbed/local/ -run '^$' -bench 'Import64$' -benchtime 5x
func BenchmarkImport64(b *testing.B) {
	b.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	mix := []string{"sonic", "eos", "nxos", "cumulus"}
	platforms := make([]string, 64)
	for j := range platforms {
		platforms[j] = mix[j%len(mix)]
	}
	dir := benchFabric(b, platforms, 0)
	planApply(b, dir, 64)
	files, diags := spec.ReadFiles(dir)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	_, f, reg, opts := loadSpec(b, dir, 64)
	iopts := importer.Options{Parallelism: 64, Name: filepath.Join(dir, "imported.fab.hcl"), Load: func(fs []spec.File) (*spec.Spec, hcl.Diagnostics) {
		return spec.LoadFiles(fs, spec.LoadOptions{Env: os.Environ(), Platforms: builtin.SpecPlatforms()})
	}}
	b.ResetTimer()
	t0, c0 := time.Now(), testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		tObs := time.Now()
		obs := map[string]*importer.Observed{}
		for _, o := range plan.Observe(context.Background(), f, reg, opts) {
			if o.Err != "" {
				b.Fatalf("%s: %s", o.Address, o.Err)
			}
			obs[o.Address] = &importer.Observed{Live: o.Live, Fields: o.Fields, Unexpressible: o.Unexpressible, Read: o.Read}
		}
		tImp := time.Now()
		res, err := importer.Import(files, obs, iopts)
		if os.Getenv("FABCTL_BENCH_DEBUG") != "" {
			b.Logf("observe %v, import %v", tImp.Sub(tObs), time.Since(tImp))
		}
		if err != nil {
			b.Fatal(err)
		}
		if res.Report.Read != 64 || len(res.Report.LeftOut) != 0 {
			b.Fatalf("import read %d, left out %+v", res.Report.Read, res.Report.LeftOut)
		}
	}
	wall := float64(time.Since(t0)/time.Duration(b.N)) / 1e6
	cpu := float64((testutil.CPUTime()-c0)/time.Duration(b.N)) / 1e6
	b.ReportMetric(wall, "wall-ms/op")
	b.ReportMetric(cpu, "cpu-ms/op")
	b.Logf("import of 64 switches: wall %.0f ms, cpu %.0f ms (fabctl and emulators); %s", wall, cpu, loadAverage())
}
