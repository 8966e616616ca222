package libyang

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/fabgen"
)

// podPayloads renders the 256-switch pod of internal/fabgen (fabgen.Pod:
// 224 leaves, 32 spines, 4,096 hosts x 8 rails) with every switch on
// platform (as generated when platform is ""), and loads the switches'
// YANG-modelled payloads.
func podPayloads(b *testing.B, platform string) []payload {
	b.Helper()
	spec := fabgen.Generate(fabgen.Pod)
	if platform != "" {
		var out bytes.Buffer
		for _, line := range bytes.SplitAfter(spec, []byte("\n")) {
			if bytes.HasPrefix(bytes.TrimSpace(line), []byte("platform")) {
				line = []byte("  platform    = \"" + platform + "\"\n")
			}
			out.Write(line)
		}
		spec = out.Bytes()
	}
	if platform == "srlinux" {
		spec = srlPortNames(spec)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pod.fab.hcl"), spec, 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	render(b, dir, out, "role:leaf", "role:spine")
	var ps []payload
	for _, pat := range []string{"*/gnmi-setrequest.json", "*/config_db.json"} {
		files, _ := filepath.Glob(filepath.Join(out, pat))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			ps = append(ps, loadPayload(b, strings.TrimPrefix(f, out+"/"), data))
		}
	}
	return ps
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkValidatePod256 validates, per iteration, the payloads of the
// 256-switch pod with libyang, each over its factory state (as
// TestRenderedPayloads does), one context per model set loaded once
// outside the timing. Sub-benchmarks: the pod as fabgen generates it
// (SONiC leaves and spines carry YANG payloads; Cumulus, EOS and NX-OS
// leaves render CLI), and every switch on sonic, openconfig and
// srlinux. The budget is 2 s for the whole pod (ns/op, and
// cpu-s/op, the process CPU time per pod). Payloads are
// validated in parallel, one worker per CPU (a Context pools one libyang
// context per CPU), with MaxErrors 1: a refused payload costs one
// validation (every problem of a refused payload costs one validation
// more each, see TestRenderedPayloads). Reported per pod: payloads
// validated, refused payloads, problems, data nodes, constraints
// evaluated (must expressions and when conditions, one per instance of a
// schema node carrying one, and leafref values: libyang.Stats) and
// process CPU s/op.
//
//	flock /tmp/fabctl-test.lock go test -run '^$' -bench ValidatePod256 -benchtime 3x ./yangval/libyang/
func BenchmarkValidatePod256(b *testing.B) {
	need(b)
	factory := srlFactory(b)
	for _, variant := range []string{"native", "sonic", "openconfig", "srlinux"} {
		b.Run(variant, func(b *testing.B) {
			plat := variant
			if variant == "native" {
				plat = ""
			}
			ps := podPayloads(b, plat)
			if len(ps) == 0 {
				b.Fatal("no YANG payloads rendered")
			}
			ctxs := map[string]*Context{}
			for _, p := range ps {
				ctxs[p.profile] = profile(b, p.profile)
			}
			refused, problemsN := 0, 0
			var total Stats
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				// one worker per CPU, as render validates devices; each
				// Context holds one libyang context per CPU
				var mu sync.Mutex
				var wg sync.WaitGroup
				next := make(chan payload)
				refused, problemsN = 0, 0
				total = Stats{}
				for w := 0; w < runtime.GOMAXPROCS(0); w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var st Stats // one per worker: Stats is not safe for concurrent use
						defer func() {
							mu.Lock()
							total.Validations += st.Validations
							total.Nodes += st.Nodes
							total.Musts += st.Musts
							total.Whens += st.Whens
							total.Leafrefs += st.Leafrefs
							mu.Unlock()
						}()
						for p := range next {
							err := p.validate(b, ctxs[p.profile], factory, 1, &st)
							if err == nil {
								continue
							}
							mu.Lock()
							refused++
							if es, ok := err.(Errors); ok {
								problemsN += len(es)
							}
							mu.Unlock()
						}
					}()
				}
				for _, p := range ps {
					next <- p
				}
				close(next)
				wg.Wait()
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(ps)), "payloads")
			b.ReportMetric(float64(refused), "refused")
			b.ReportMetric(float64(problemsN), "problems")
			b.ReportMetric(float64(total.Nodes), "nodes")
			b.ReportMetric(float64(total.Constraints()), "constraints")
			b.ReportMetric(float64(total.Musts), "musts")
			b.ReportMetric(float64(total.Whens), "whens")
			b.ReportMetric(float64(total.Leafrefs), "leafrefs")
		})
	}
}

// srlPortNames renames fabgen's ports for SR Linux, whose interface names
// are ethernet-<slot>/<connector>/<port> (srl_nokia-interfaces
// interface-all pattern; ports 1..128): a host port numbered N (EthernetN,
// swpN, Ethernet1/N) -> ethernet-1/(N/4+1)/(N%4+1), an uplink numbered
// UplinkBase+N or above -> ethernet-2/(N/4+1)/(N%4+1).
func srlPortNames(spec []byte) []byte {
	return rePodPort.ReplaceAllFunc(spec, func(m []byte) []byte {
		sub := rePodPort.FindSubmatch(m)
		n, _ := strconv.Atoi(string(sub[2]))
		slot := 1
		if n >= fabgen.UplinkBase {
			slot, n = 2, n-fabgen.UplinkBase
		}
		return []byte(fmt.Sprintf("ethernet-%d/%d/%d", slot, n/4+1, n%4+1))
	})
}

var rePodPort = regexp.MustCompile(`\b(Ethernet1/|Ethernet|swp)([0-9]+)\b`)
