// Command podbench measures the foundation benchmark the way a user meets
// it: one fresh process loads and lints the generated pod once, and prints
// wall time, CPU time and peak resident memory (VmHWM) per stage.
//
// BenchmarkLoadLint reports VmHWM too, but that is process-wide: it holds
// the peak of every earlier sub-benchmark and of the test binary. Here the
// peak is reset (/proc/self/clear_refs) after the spec is generated, so it
// is the peak of load+lint alone, with the 8 MB source already resident.
//
//	go run ./internal/fabgen/cmd/podbench            # the 4,096-host pod
//	go run ./internal/fabgen/cmd/podbench -div 8     # 1/8 of it
//	go run ./internal/fabgen/cmd/podbench -mul 4     # 16,384 hosts (896 leaves, 128 spines)
//	go run ./internal/fabgen/cmd/podbench -mul 4 -spines 32   # 16,384 hosts on 32 spines
//	go run ./internal/fabgen/cmd/podbench -all       # 1/8 ... 1 ... x4: each in its own process
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

func main() {
	div := flag.Int("div", 1, "divide the pod's hosts and switches by this")
	mul := flag.Int("mul", 1, "multiply the pod's hosts and switches by this (2: 8,192 hosts, 4: 16,384)")
	spines := flag.Int("spines", 0, "spine count (default: the pod's 32, scaled with the leaves)")
	all := flag.Bool("all", false, "run 1/8, 1/4, 1/2, 1, x2 and x4 of the pod, each in a fresh process, and print the growth per doubling")
	runs := flag.Int("runs", 1, "fresh-process runs per scale with -all (the fastest is kept)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of load+lint to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of load+lint to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "podbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "podbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		memProfile = *memprofile
	}
	if *all {
		runAll(*runs, *spines)
		return
	}
	r, err := measure(*div, *mul, *spines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "podbench:", err)
		os.Exit(1) //nolint:gocritic // profiles are not needed on failure
	}
	fmt.Println(r)
}

type result struct {
	hosts, links            int
	specMB                  float64
	load, lint              time.Duration // wall
	loadCPU, lintCPU        time.Duration // user+system, all threads
	peakLoadMB, peakTotalMB float64       // VmHWM after load, after lint
}

func (r result) String() string {
	return fmt.Sprintf("hosts=%d links=%d spec=%.1fMB load=%.0fms (cpu %.0fms) lint=%.0fms (cpu %.0fms) load+lint=%.0fms peak-RSS: load %.0fMB, load+lint %.0fMB",
		r.hosts, r.links, r.specMB, ms(r.load), ms(r.loadCPU), ms(r.lint), ms(r.lintCPU), ms(r.load+r.lint), r.peakLoadMB, r.peakTotalMB)
}

// memProfile is where -memprofile writes, after lint with the model alive.
var memProfile string

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func measure(div, mul, spines int) (result, error) {
	p := fabgen.Sized(mul, div).WithSpines(spines)
	src := fabgen.Generate(p)
	r := result{hosts: p.Hosts, links: p.Links(), specMB: float64(len(src)) / 1e6}
	runtime.GC()
	debug.FreeOSMemory()
	if err := resetPeak(); err != nil {
		return r, err
	}

	c0, t0 := cpuTime(), time.Now()
	s, diags := spec.LoadFiles([]spec.File{{Name: "pod.fab.hcl", Data: src}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	r.load, r.loadCPU = time.Since(t0), cpuTime()-c0
	if diags.HasErrors() {
		return r, fmt.Errorf("generated spec does not load: %v", diags)
	}
	r.peakLoadMB = peakRSS()

	c0, t0 = cpuTime(), time.Now()
	res := lint.Run(s)
	r.lint, r.lintCPU = time.Since(t0), cpuTime()-c0
	if res.Diagnostics.HasErrors() {
		return r, fmt.Errorf("lint errors: %v", res.Diagnostics[0])
	}
	r.peakTotalMB = peakRSS()
	if memProfile != "" {
		// Written while the model is alive: inuse_space is what it holds.
		runtime.GC()
		if f, err := os.Create(memProfile); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(src)
	return r, nil
}

// runAll measures each scale in a fresh process (so no scale inherits
// another's heap or peak) and prints the growth from one to the next.
func runAll(runs, spines int) {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "podbench:", err)
		os.Exit(1)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average (1, 5, 15 min): %s\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
	var prev *result
	for _, sc := range [][2]int{{1, 8}, {1, 4}, {1, 2}, {1, 1}, {2, 1}, {4, 1}} {
		var best *result
		for i := 0; i < max(1, runs); i++ {
			args := []string{"-mul", strconv.Itoa(sc[0]), "-div", strconv.Itoa(sc[1]), "-spines", strconv.Itoa(spines)}
			out, err := exec.Command(exe, args...).CombinedOutput()
			if err != nil {
				fmt.Fprintf(os.Stderr, "podbench %v: %v\n%s", args, err, out)
				os.Exit(1)
			}
			r, err := parse(string(out))
			if err != nil {
				fmt.Fprintf(os.Stderr, "podbench %v: %v\n%s", args, err, out)
				os.Exit(1)
			}
			if best == nil || r.load+r.lint < best.load+best.lint {
				best = &r
			}
		}
		growth := ""
		if prev != nil {
			growth = fmt.Sprintf("  x%.2f time, x%.2f cpu, x%.2f peak for x%.2f links", float64(best.load+best.lint)/float64(prev.load+prev.lint),
				float64(best.loadCPU+best.lintCPU)/float64(prev.loadCPU+prev.lintCPU),
				best.peakTotalMB/prev.peakTotalMB, float64(best.links)/float64(prev.links))
		}
		fmt.Printf("%s%s\n", best, growth)
		prev = best
	}
}

// parse reads back the line String prints (only the fields runAll needs).
func parse(line string) (result, error) {
	var r result
	var specMB, load, loadCPU, lint, lintCPU, total, peakLoad, peakTotal float64
	_, err := fmt.Sscanf(strings.TrimSpace(line), "hosts=%d links=%d spec=%fMB load=%fms (cpu %fms) lint=%fms (cpu %fms) load+lint=%fms peak-RSS: load %fMB, load+lint %fMB",
		&r.hosts, &r.links, &specMB, &load, &loadCPU, &lint, &lintCPU, &total, &peakLoad, &peakTotal)
	r.specMB, r.peakLoadMB, r.peakTotalMB = specMB, peakLoad, peakTotal
	r.load, r.loadCPU = time.Duration(load*1e6), time.Duration(loadCPU*1e6)
	r.lint, r.lintCPU = time.Duration(lint*1e6), time.Duration(lintCPU*1e6)
	return r, err
}

// resetPeak sets VmHWM back to the current resident size (Linux 4.0+).
func resetPeak() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is VmHWM in MB.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) < 2 {
				return 0
			}
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
