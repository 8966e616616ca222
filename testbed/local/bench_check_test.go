package local_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
)

// BenchmarkPlanCheck64 is plan --check-on-device's cost on the 64
// switches of BenchmarkPlan64 (SONiC, EOS, NX-OS and Cumulus emulators,
// empty, so every switch has changes): each sub-benchmark plans them
// b.N times, without ("plan") and with the device check ("check"), the
// emulators answering show commands at once ("show=0s") or after 300 ms
// ("show=300ms", the fast end of a real switch). The check runs on the
// 32 SONiC and EOS switches (the others say why they are not checked, at
// no cost); the per-checked-switch figures are the difference from
// "plan" divided by 32, read side by side:
//
//	go test ./testbed/local/ -run '^$' -bench 'PlanCheck64' -benchtime 3x
func BenchmarkPlanCheck64(b *testing.B) {
	b.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	mix := []string{"sonic", "eos", "nxos", "cumulus"}
	platforms := make([]string, 64)
	for j := range platforms {
		platforms[j] = mix[j%len(mix)]
	}
	for _, show := range []time.Duration{0, realisticShow} {
		dir := benchFabric(b, platforms, show)
		for _, check := range []bool{false, true} {
			name := fmt.Sprintf("show=%v/plan", show)
			if check {
				name = fmt.Sprintf("show=%v/check", show)
			}
			b.Run(name, func(b *testing.B) {
				s, f, reg, opts := loadSpec(b, dir, 64)
				opts.CheckOnDevice = check
				b.ResetTimer()
				t0, c0 := time.Now(), testutil.CPUTime()
				checked := 0
				for i := 0; i < b.N; i++ {
					checked = 0
					p := plan.Make(context.Background(), s, f, reg, opts)
					for _, d := range p.Devices {
						if d.Error != "" {
							b.Fatalf("plan %s: %s", d.Address, d.Error)
						}
						if !check {
							continue
						}
						switch {
						case d.Check == nil:
							b.Fatalf("%s: no device check", d.Address)
						case d.Check.Status == drivers.CheckAccepted && d.Check.Unchanged:
							checked++
						case d.Check.Status != drivers.CheckNotChecked:
							b.Fatalf("%s: %+v", d.Address, d.Check)
						}
					}
				}
				wall := float64(time.Since(t0)/time.Duration(b.N)) / 1e6
				cpu := float64((testutil.CPUTime()-c0)/time.Duration(b.N)) / 1e6
				b.ReportMetric(wall, "wall-ms/op")
				b.ReportMetric(cpu, "cpu-ms/op")
				if check {
					b.ReportMetric(float64(checked), "checked")
				}
				b.Logf("%s: wall %.0f ms, cpu %.0f ms for 64 switches (%d checked on the device); %s", name, wall, cpu, checked, loadAverage())
			})
		}
	}
}
