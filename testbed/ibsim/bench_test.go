package ibsim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
)

// fatTree is a 2-level fat tree: every leaf has hcas/leaves adapters and
// one cable to every spine, 4x EDR.
func fatTree(leaves, spines, hcas int) *ibfabric.Topology {
	per := hcas / leaves
	t := &ibfabric.Topology{}
	for s := 1; s <= spines; s++ {
		t.Switches = append(t.Switches, ibfabric.SwitchSpec{Name: fmt.Sprintf("spine%02d", s), Ports: leaves})
	}
	for l := 1; l <= leaves; l++ {
		leaf := fmt.Sprintf("leaf%02d", l)
		t.Switches = append(t.Switches, ibfabric.SwitchSpec{Name: leaf, Ports: per + spines})
		for h := 1; h <= per; h++ {
			name := fmt.Sprintf("cn%03d", (l-1)*per+h)
			t.HCAs = append(t.HCAs, ibfabric.HCASpec{Name: name, Host: name, Desc: name + " mlx5_0"})
			t.Links = append(t.Links, ibfabric.LinkSpec{A: ibfabric.PortRef{Node: name, Port: 1}, B: ibfabric.PortRef{Node: leaf, Port: h}, Width: 4, Speed: ibfabric.EDR})
		}
		for s := 1; s <= spines; s++ {
			t.Links = append(t.Links, ibfabric.LinkSpec{A: ibfabric.PortRef{Node: leaf, Port: per + s}, B: ibfabric.PortRef{Node: fmt.Sprintf("spine%02d", s), Port: l}, Width: 4, Speed: ibfabric.EDR})
		}
	}
	return t
}

// BenchmarkFatTree brings 2-level fat trees of three sizes to SUBNET UP
// (opensm with two partitions of half the adapters each, and QoS) and
// times ibnetdiscover alone, then the full discovery (ibnetdiscover, then
// smpquery portinfo/pkeys/sl2vl/vlarb per cabled port) with 4 and with 8
// smpquery processes in flight, and with 4 in one batch (one shell
// running them with xargs -P, as the opensm driver does over SSH),
// and the comparison. It prints one line per size and mode:
//
//	make bench-ib
//	flock /tmp/fabctl-test.lock go test ./testbed/ibsim/ -run '^$' -bench FatTree -benchtime 1x
func BenchmarkFatTree(b *testing.B) {
	requireSim(b)
	for _, size := range []struct{ leaves, spines, hcas int }{{4, 2, 16}, {8, 8, 64}, {16, 8, 128}} {
		topo := fatTree(size.leaves, size.spines, size.hcas)
		parts := []partitionPlan{
			{name: "even", pkey: 0x0010, sl: 1, members: map[string]bool{}},
			{name: "odd", pkey: 0x0011, sl: 2, members: map[string]bool{}},
		}
		for i, h := range topo.HCAs {
			parts[i%2].members[h.Name] = true
		}
		files := renderFiles(b, subnetManager(topo, parts))
		in := fabricIntent(topo, parts)
		var s *Sim
		var up time.Duration
		for _, mode := range []struct {
			par   int
			batch bool
		}{{4, false}, {8, false}, {4, true}} {
			par := mode.par
			name := fmt.Sprintf("switches=%d,hcas=%d,parallel=%d", size.leaves+size.spines, size.hcas, par)
			if mode.batch {
				name += ",batch"
			}
			b.Run(name, func(b *testing.B) {
				if s == nil {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					start := time.Now()
					sim, err := Start(ctx, Config{Topology: topo, SMNode: topo.HCAs[0].Name, Files: files})
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					s, up = sim, time.Since(start)
				}
				var r ibfabric.Runner = s.Runner()
				if mode.batch {
					br, err := s.BatchRunner()
					if err != nil {
						b.Fatal(err)
					}
					r = br
				}
				b.ResetTimer()
				var topoT, discT, cmpT time.Duration
				var fab *ibfabric.Fabric
				var findings []ibfabric.Finding
				for i := 0; i < b.N; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					t0 := time.Now()
					if _, err := ibfabric.Discover(ctx, s.Runner(), ibfabric.Options{}); err != nil {
						cancel()
						b.Fatal(err)
					}
					t1 := time.Now()
					o := ibfabric.All
					o.Parallel = par
					f, err := ibfabric.Discover(ctx, r, o)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					fs, err := ibfabric.Compare(in, f)
					if err != nil {
						b.Fatal(err)
					}
					t3 := time.Now()
					topoT += t1.Sub(t0)
					discT += t2.Sub(t1)
					cmpT += t3.Sub(t2)
					fab, findings = f, fs
				}
				b.StopTimer()
				n := time.Duration(b.N)
				ports := 2 * len(fab.Links)
				b.ReportMetric(up.Seconds(), "up-s")
				b.ReportMetric((discT / n).Seconds(), "discover-s")
				b.ReportMetric((cmpT/n).Seconds()*1000, "compare-ms")
				b.ReportMetric(float64(ports), "ports")
				fmt.Printf("ibsim fat tree %s: %d switches, %d adapters, %d cabled ports: SUBNET UP in %s; ibnetdiscover %s; full discovery %s (%.1f ms/port); compare %s; %d findings\n",
					name, len(topo.Switches), len(topo.HCAs), ports, up.Round(time.Millisecond), (topoT / n).Round(time.Millisecond),
					(discT / n).Round(time.Millisecond), float64((discT/n).Microseconds())/1000/float64(ports), (cmpT / n).Round(time.Microsecond), len(findings))
				if len(findings) != 0 {
					b.Errorf("a clean fat tree has findings: %v", findings)
				}
			})
		}
		if s != nil {
			if err := s.Stop(); err != nil {
				b.Error(err)
			}
		}
	}
}
