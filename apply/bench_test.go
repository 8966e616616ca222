package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabctl/fabctl/intent"
)

// BenchmarkApplySchedule measures the engine's scheduling overhead: 10,000
// devices (half switches, half hosts: two waves) whose apply takes 10 ms,
// at parallelism 64, with read-back verification (instant reads), the
// journal written to a file and, in the "record" case, the applied record
// kept up to date. The ideal is 10,000 x 10 ms / 64 = 1.5625 s; the
// target is within 1.3x. Reported: ratio (mean wall time / ideal) and
// worst_ratio (the slowest iteration).
func BenchmarkApplySchedule(b *testing.B) {
	const (
		n       = 10000
		latency = 10 * time.Millisecond
		par     = 64
	)
	ideal := time.Duration(n) * latency / par
	var tds []testDev
	for i := 0; i < n; i++ {
		live := intent.State{"trust": "dscp", "tc/3/lossless": "true"}
		if i%2 == 0 {
			live["port/Ethernet0/mtu"] = "1500"
			want := intent.State{"trust": "dscp", "tc/3/lossless": "true", "port/Ethernet0/mtu": "9100"}
			tds = append(tds, sw(fmt.Sprintf("leaf%05d", i), live, want))
		} else {
			live["nic/eth0/mtu"] = "1500"
			want := intent.State{"trust": "dscp", "tc/3/lossless": "true", "nic/eth0/mtu": "9000"}
			tds = append(tds, host(fmt.Sprintf("gpu%05d", i), live, want))
		}
	}
	for _, record := range []bool{false, true} {
		name := "journal"
		if record {
			name = "journal+record"
		}
		b.Run(name, func(b *testing.B) {
			fx := newFixture(b, tds, nil)
			fx.store.ApplyLatency = latency
			var worst, sum float64
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				for _, td := range tds {
					fx.store.Set(td.name, td.live)
				}
				dir := b.TempDir()
				j, err := CreateJournal(filepath.Join(dir, "journal.jsonl"), "bench", nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				var rec *Recorder
				if record {
					rec, _ = OpenRecorder(dir, "bench")
				}
				b.StartTimer()
				start := time.Now()
				res, err := Run(context.Background(), fx.devs, fx.reg, Options{Parallelism: par, Journal: j, Record: rec})
				if err := rec.Close(); err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start)
				b.StopTimer()
				j.Close()
				if err != nil || res.Counts.Applied != n {
					b.Fatalf("%v %+v", err, res.Counts)
				}
				ratio := float64(wall) / float64(ideal)
				worst, sum = max(worst, ratio), sum+ratio
				b.StartTimer()
			}
			mean := sum / float64(b.N)
			b.ReportMetric(mean, "ratio")
			b.ReportMetric(worst, "worst_ratio")
			if mean > 1.3 {
				b.Errorf("wall time %.2fx the ideal %v on average (target 1.3x; worst run %.2fx)", mean, ideal, worst)
			}
		})
	}
}
