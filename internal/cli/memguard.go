package cli

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// The memory guard is the last bound on what an input can make fabctl
// do. The spec loader bounds nesting, collection sizes and evaluation
// work (spec/limits.go), and file reads are size-limited; should some
// input still make a run grow without bound (a case those limits do not
// see is a bug), the guard ends it with the documented internal error
// (exit 70) and a request to report it, instead of the kernel's OOM
// killer or a Go "out of memory" fatal error. It samples the heap every
// 100 ms; the limit is FABCTL_MAX_MEMORY (bytes, or with a K/M/G suffix),
// else three quarters of the machine's memory, at least 2 GiB.

// EnvMaxMemory sets the memory guard's limit.
const EnvMaxMemory = "FABCTL_MAX_MEMORY"

// memGuardExit ends the process (tests replace it).
var memGuardExit = os.Exit

// startMemoryGuard starts the guard for one run; the returned func stops
// it.
func startMemoryGuard(f *Factory) func() {
	limit := memoryLimit(f.Env)
	if limit <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			if used := sample[0].Value.Uint64(); used > uint64(limit) {
				b := readBuildInfo()
				fmt.Fprintf(f.IOStreams.ErrOut, "internal error: fabctl holds %d MiB of memory, above its limit of %d MiB: an input made it grow without bound.\n\n", used>>20, limit>>20)
				fmt.Fprintf(f.IOStreams.ErrOut, "This is a bug in fabctl %s (%s, %s): every input should be bounded with a clear error. Please report it at %s\n", b.Version, b.Platform, b.GoVersion, issuesURL)
				fmt.Fprintf(f.IOStreams.ErrOut, "with the command you ran. If the input is meant to be this large, raise the limit with %s=BYTES (K, M, G suffixes).\n", EnvMaxMemory)
				f.IOStreams.Flush()
				memGuardExit(int(ExitInternal))
				return
			}
		}
	}()
	return func() { close(done) }
}

// memoryLimit is the guard's limit in bytes (0: off).
func memoryLimit(env []string) int64 {
	if v, ok := lookupEnv(env, EnvMaxMemory); ok {
		if n, ok := parseBytes(v); ok {
			return n
		}
	}
	total := physicalMemory()
	if total <= 0 {
		return 8 << 30
	}
	return max(total/4*3, 2<<30)
}

// parseBytes reads "123", "512M", "4G".
func parseBytes(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mul, true
}

// physicalMemory is MemTotal from /proc/meminfo in bytes (0: unknown).
func physicalMemory() int64 {
	fh, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
