package importer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// BenchmarkImportPod is issue 36's 256-host figure, and the pod at 1,024
// hosts: fabgen's pod (8 NICs a host, its leaves and spines) as the
// inventory, every device's live State what the pod's spec flattens to
// (as the drivers read it: the same paths and values), so one op is
// import's own work: the majority inference over every switch and NIC,
// the written spec loaded, compiled and diffed against every device as
// plan does. The device reads are BenchmarkImport64's (testbed/local).
//
//	go test ./importer/ -run '^$' -bench ImportPod -benchtime 3x
func BenchmarkImportPod(b *testing.B) {
	for _, div := range []int{16, 4} {
		p := fabgen.Pod.Scale(div)
		b.Run(fmt.Sprintf("hosts=%d/switches=%d", p.Hosts, p.Leaves+p.Spines), func(b *testing.B) {
			src := fabgen.Generate(p)
			files := []spec.File{{Name: "pod.fab.hcl", Data: src}}
			live := states(b, string(src))
			obs := observed(live)
			b.ResetTimer()
			t0, c0 := time.Now(), testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				res, err := importer.Import(files, obs, importer.Options{Load: load(b), Name: "/tmp/pod.fab.hcl"})
				if err != nil {
					b.Fatal(err)
				}
				if res.Report.Read != len(live) || len(res.Report.LeftOut) != 0 {
					b.Fatalf("read %d of %d, left out %d", res.Report.Read, len(live), len(res.Report.LeftOut))
				}
			}
			b.ReportMetric(float64(time.Since(t0)/time.Duration(b.N))/1e6, "wall-ms/op")
			b.ReportMetric(float64((testutil.CPUTime()-c0)/time.Duration(b.N))/1e6, "cpu-ms/op")
			b.ReportMetric(float64(len(live)), "devices")
		})
	}
}
