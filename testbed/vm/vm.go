// Package vm runs the VM testbed: a Debian bookworm guest under qemu TCG with
// a real kernel RDMA stack (rdma_rxe, siw), netdevsim and the testbed's own
// kernel modules, in which shell "sections" run fabctl and Go test binaries
// shared over 9p. The image is built and cached by build.sh; the contract for
// sections, modules and callers is README.md in this directory.
package vm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Status is a section's outcome.
type Status string

const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// skipExit is the exit status by which a section says it was skipped.
const skipExit = 77

// vmMargin is added to the sum of the section timeouts for boot and power-off
// (boot alone took 5.7 min once on a 2-core host at load average 40).
const vmMargin = 10 * time.Minute

// Options configure Run.
type Options struct {
	// Sections to run, in this order; empty means every section, sorted by name.
	Sections []string
	// SectionsDir holds the sections; empty means testbed/vm/sections. The
	// share always gets that directory's files (lib.sh) too.
	SectionsDir string
	// Share is the host directory shared with the guest; empty means a fresh
	// temporary directory, removed afterwards unless Keep is set.
	Share string
	Keep  bool
	// Timeout kills the VM; 0 means the sum of the section timeouts + 10 min.
	Timeout time.Duration
	// Dur is the perftest duration (-D) in seconds passed to sections as FABTB_DUR; 0 means 5.
	Dur int
	// PerfPairs is passed to sections as FABTB_PERF_PAIRS (verbs-perf's paired
	// rounds), Retries as FABTB_RETRIES (fab_pair's extra attempts) and
	// DemoRuns as FABTB_DEMO_RUNS (demo-repeat's runs); 0 leaves the sections'
	// defaults.
	PerfPairs, Retries, DemoRuns int
	// CI makes the guest export CI=true, so Go tests there fail instead of skipping.
	CI bool
	// Repo is the repository root; empty means the nearest directory above the
	// working directory with a go.mod.
	Repo string
	// Log receives build output (and with Verbose the live serial console); nil discards.
	Log     io.Writer
	Verbose bool
}

// SectionResult is one section's outcome, read from the share's results/.
type SectionResult struct {
	Name     string
	Status   Status
	RC       int // -1 when the section never finished
	Reason   string
	Duration time.Duration
	Log      string
}

// Results of a run. Build is the image step (seconds when cached), Boot the
// time from qemu's start to the guest's runner, Total everything including the
// Go builds.
type Results struct {
	Sections  []SectionResult
	Image     string
	Build     time.Duration
	Boot      time.Duration
	VM        time.Duration
	Total     time.Duration
	Share     string // empty when it was removed
	SerialLog string // the serial console (kept in memory too when the share is removed)
	Figures   []string
}

// Failed reports whether any section failed.
func (r Results) Failed() bool {
	for _, s := range r.Sections {
		if s.Status == Fail {
			return true
		}
	}
	return false
}

// Run builds (or reuses) the image, prepares the share, boots the VM with the
// sections on its command line and collects their results. The error says why
// the run itself went wrong (no qemu, a build failed, the VM was killed); the
// sections that did finish are returned with it.
func Run(ctx context.Context, o Options) (Results, error) {
	start := time.Now()
	var res Results
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	repo := o.Repo
	if repo == "" {
		var err error
		if repo, err = findRepo(); err != nil {
			return res, err
		}
	}
	dir := filepath.Join(repo, "testbed", "vm")
	secDir := o.SectionsDir
	if secDir == "" {
		secDir = filepath.Join(dir, "sections")
	}
	all, err := ListSections(secDir)
	if err != nil {
		return res, err
	}
	secs, err := selectSections(all, o.Sections)
	if err != nil {
		return res, err
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return res, errors.New("qemu-system-x86_64 not found: install the host packages with testbed/vm/build.sh --host-deps (root)")
	}

	t0 := time.Now()
	img, err := buildImage(ctx, dir, logw)
	res.Build = time.Since(t0)
	if err != nil {
		return res, err
	}
	res.Image = img

	share := o.Share
	if share == "" {
		if share, err = os.MkdirTemp("", "fabtb-share-"); err != nil {
			return res, err
		}
		if !o.Keep {
			defer os.RemoveAll(share)
		}
	}
	if strings.Contains(share, ",") {
		return res, fmt.Errorf("share directory %q contains a comma, which qemu's -virtfs cannot take", share)
	}
	res.Share = share
	if o.Share == "" && !o.Keep {
		res.Share = ""
	}
	if err := prepareShare(ctx, repo, dir, secDir, share, secs, logw); err != nil {
		return res, err
	}

	timeout := o.Timeout
	if timeout == 0 {
		timeout = vmMargin
		for _, s := range secs {
			timeout += s.Timeout
		}
	}
	dur := o.Dur
	if dur == 0 {
		dur = 5
	}
	serial, bootT, vmTime, runErr := boot(ctx, qemu, img, share, kernelCmdline(secs, o.CI, dur, o), timeout, logw, o.Verbose)
	if bootT == 0 && ctx.Err() == nil {
		// The guest died before its init said FABTB-BOOT: no section ran, so
		// nothing is judged twice. Seen once on a loaded host (qemu gone after
		// 26 s, no boot line); it boots once more and says so, with the
		// console's end, so a guest that never boots still fails.
		fmt.Fprintf(logw, "vm: the guest stopped before it booted (%v); booting once more. Its console ended:\n%s\n", runErr, tail(serial, 30))
		serial, bootT, vmTime, runErr = boot(ctx, qemu, img, share, kernelCmdline(secs, o.CI, dur, o), timeout, logw, o.Verbose)
	}
	res.Boot, res.VM = bootT, vmTime
	res.SerialLog = serial
	res.Sections, res.Figures = collect(filepath.Join(share, "results"), secs, serial)
	res.Total = time.Since(start)
	if runErr == nil && !strings.Contains(serial, "FABTB-DONE") {
		runErr = fmt.Errorf("the guest stopped before running every section (no FABTB-DONE on the serial console); the serial log ends:\n%s", tail(serial, 30))
	}
	return res, runErr
}

// findRepo walks up from the working directory to the module root.
func findRepo() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "testbed", "vm", "build.sh")); err == nil {
				return d, nil
			}
		}
		p := filepath.Dir(d)
		if p == d {
			return "", errors.New("repository root not found above the working directory (no go.mod with testbed/vm/build.sh)")
		}
		d = p
	}
}

// buildImage runs build.sh, which prints the image directory on its last stdout line.
func buildImage(ctx context.Context, dir string, logw io.Writer) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "build.sh"))
	cmd.Stdout = &out
	cmd.Stderr = logw
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("image build (testbed/vm/build.sh) failed: %v (its output is above)", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	img := lines[len(lines)-1]
	for _, f := range []string{"root.img", "vmlinuz", "initrd.img"} {
		if _, err := os.Stat(filepath.Join(img, f)); err != nil {
			return "", fmt.Errorf("build.sh printed %q, which has no %s", img, f)
		}
	}
	return img, nil
}

// prepareShare fills the 9p share: the fabctl binaries, the Go test binaries and
// repository files the sections ask for, the sections and the guest runner.
func prepareShare(ctx context.Context, repo, dir, secDir, share string, secs []Section, logw io.Writer) error {
	bin := filepath.Join(share, "bin")
	// A reused share must not offer the results of an earlier run as this run's.
	if err := os.RemoveAll(filepath.Join(share, "results")); err != nil {
		return err
	}
	for _, d := range []string{bin, filepath.Join(share, "sections"), filepath.Join(share, "guest"), filepath.Join(share, "files"), filepath.Join(share, "results")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	goBin := goTool()
	build := func(env []string, args ...string) error {
		fmt.Fprintf(logw, "vm: go %s\n", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := build([]string{"CGO_ENABLED=0"}, "build", "-trimpath", "-o", filepath.Join(bin, "fabctl"), "./cmd/fabctl"); err != nil {
		return err
	}
	needs, bins, files := map[string]bool{}, map[string]string{}, map[string]bool{}
	for _, s := range secs {
		for _, n := range s.Needs {
			needs[n] = true
		}
		for _, g := range s.GoTests {
			if prev, ok := bins[g.Bin()]; ok && prev != g.Pkg {
				return fmt.Errorf("%s: test binary %s would come from both %s and %s", s.Path, g.Bin(), prev, g.Pkg)
			}
			if _, ok := bins[g.Bin()]; ok {
				continue
			}
			bins[g.Bin()] = g.Pkg
			args := []string{"test", "-c", "-o", filepath.Join(bin, g.Bin())}
			if g.Tags != "" {
				args = append(args, "-tags", g.Tags)
			}
			// cgo stays on: host and guest are both bookworm (glibc, rdma-core 44).
			if err := build(nil, append(args, g.Pkg)...); err != nil {
				return err
			}
		}
		for _, f := range s.Files {
			files[f] = true
		}
	}
	if needs["fabctl-verbs"] {
		if err := build([]string{"CGO_ENABLED=1"}, "build", "-trimpath", "-tags", "verbs", "-o", filepath.Join(bin, "fabctl-verbs"), "./cmd/fabctl"); err != nil {
			return err
		}
	}
	for f := range files {
		src := filepath.Join(repo, filepath.FromSlash(f))
		if err := copyPath(src, filepath.Join(share, "files", filepath.FromSlash(f))); err != nil {
			return fmt.Errorf("fabtb-file %s: %w", f, err)
		}
	}
	for _, d := range []string{filepath.Join(dir, "sections"), secDir} {
		for _, src := range must(filepath.Glob(filepath.Join(d, "*.sh"))) {
			if err := copyPath(src, filepath.Join(share, "sections", filepath.Base(src))); err != nil {
				return err
			}
		}
	}
	return copyPath(filepath.Join(dir, "guest", "runner.sh"), filepath.Join(share, "guest", "runner.sh"))
}

// goTool is the go command on PATH (go test puts its own first), else the CI image's.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

// must drops the error of filepath.Glob, which only reports a malformed pattern.
func must(m []string, _ error) []string { return m }

// copyPath copies a file or a directory tree.
func copyPath(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return os.CopyFS(dst, os.DirFS(src))
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, fi.Mode().Perm())
}

// kernelCmdline is the guest's command line; the runner reads the fabtb_* words.
// Words without a dot are not taken for module parameters by the kernel.
// The knobs come from o (PerfPairs, Retries, DemoRuns), each only when set.
func kernelCmdline(secs []Section, ci bool, dur int, o Options) string {
	names := make([]string, len(secs))
	for i, s := range secs {
		names[i] = s.Name
	}
	civ := 0
	if ci {
		civ = 1
	}
	// mitigations=off: the guest only runs our tests, and page-table isolation is
	// expensive to emulate. tsc=reliable: under TCG the kernel otherwise falls back
	// to the emulated HPET, so every clock read is a trapped MMIO access (no vDSO)
	// and perftest's TSC-vs-gettimeofday calibration fails with r^2 < 0.9.
	cmd := fmt.Sprintf("root=/dev/vda rw console=ttyS0 quiet loglevel=4 panic=-1 mitigations=off tsc=reliable init=/fabtb/init fabtb_sections=%s fabtb_ci=%d fabtb_dur=%d",
		strings.Join(names, ","), civ, dur)
	for _, k := range []struct {
		word string
		n    int
	}{{"perf_pairs", o.PerfPairs}, {"retries", o.Retries}, {"demo_runs", o.DemoRuns}} {
		if k.n > 0 {
			cmd += fmt.Sprintf(" fabtb_%s=%d", k.word, k.n)
		}
	}
	return cmd
}

// qemuArgs: TCG (KVM on these hosts hangs a stock kernel, see the reference),
// two vCPUs in two NUMA nodes, no NIC, the cached image as a throw-away snapshot.
func qemuArgs(img, share, cmdline string) []string {
	return []string{
		"-accel", "tcg,thread=multi", "-cpu", "max",
		"-smp", "2,sockets=2,cores=1,threads=1", "-m", "2048",
		"-object", "memory-backend-ram,id=m0,size=1G", "-object", "memory-backend-ram,id=m1,size=1G",
		"-numa", "node,nodeid=0,cpus=0,memdev=m0", "-numa", "node,nodeid=1,cpus=1,memdev=m1",
		"-nographic", "-no-reboot", "-nic", "none",
		"-kernel", filepath.Join(img, "vmlinuz"), "-initrd", filepath.Join(img, "initrd.img"),
		"-append", cmdline,
		"-drive", "file=" + filepath.Join(img, "root.img") + ",format=raw,if=virtio,snapshot=on",
		"-virtfs", "local,path=" + share + ",mount_tag=fab,security_model=none",
	}
}

// boot runs qemu until the guest powers off or the timeout kills it. It returns
// the serial console, the time to the runner's FABTB-BOOT line and the VM's wall time.
func boot(ctx context.Context, qemu, img, share, cmdline string, timeout time.Duration, logw io.Writer, verbose bool) (string, time.Duration, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	serialPath := filepath.Join(share, "serial.log")
	sf, err := os.Create(serialPath)
	if err != nil {
		return "", 0, 0, err
	}
	defer sf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", 0, 0, err
	}
	cmd := exec.CommandContext(ctx, qemu, qemuArgs(img, share, cmdline)...)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.WaitDelay = 10 * time.Second
	fmt.Fprintf(logw, "vm: booting %s (%s; killed after %s)\n", img, cmdline[strings.Index(cmdline, "fabtb_sections="):], timeout)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return "", 0, 0, fmt.Errorf("starting qemu: %w", err)
	}
	pw.Close()

	var (
		buf      bytes.Buffer
		bootTime time.Duration
		wg       sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := bufio.NewReader(pr)
		for {
			line, err := r.ReadString('\n')
			if len(line) > 0 {
				buf.WriteString(line)
				sf.WriteString(line)
				if bootTime == 0 && strings.HasPrefix(strings.TrimLeft(line, "\r"), "FABTB-BOOT") {
					bootTime = time.Since(start)
				}
				if verbose {
					io.WriteString(logw, line)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	werr := cmd.Wait()
	wg.Wait()
	pr.Close()
	vmTime := time.Since(start)
	switch {
	case ctx.Err() == context.DeadlineExceeded && vmTime < timeout-time.Minute:
		// The caller's deadline came first: go test's -timeout (make
		// e2e-vm's E2E_VM_TIMEOUT), not the sections' own sum.
		werr = fmt.Errorf("the VM was stopped after %s by the caller's deadline (go test -timeout: E2E_VM_TIMEOUT for make e2e-vm), before the sections' own %s; serial log: %s", vmTime.Round(time.Second), timeout.Round(time.Second), serialPath)
	case ctx.Err() == context.DeadlineExceeded:
		werr = fmt.Errorf("the VM was killed after %s (timeout); serial log: %s", timeout.Round(time.Second), serialPath)
	case ctx.Err() != nil:
		werr = fmt.Errorf("the VM was stopped: %w", ctx.Err())
	case werr != nil:
		werr = fmt.Errorf("qemu: %v; last console lines:\n%s", werr, tail(buf.String(), 20))
	}
	return buf.String(), bootTime, vmTime, werr
}

var (
	endRe    = regexp.MustCompile(`FABTB-END (\S+) rc=(-?\d+) secs=([0-9.]+)`)
	figureRe = regexp.MustCompile(`(?m)^FABTB-FIGURE .*$`)
)

// collect reads each section's rc and log from the results directory; a
// section without an rc file never finished.
func collect(results string, secs []Section, serial string) ([]SectionResult, []string) {
	durs := map[string]time.Duration{}
	for _, m := range endRe.FindAllStringSubmatch(serial, -1) {
		if f, err := strconv.ParseFloat(m[3], 64); err == nil {
			durs[m[1]] = time.Duration(f * float64(time.Second))
		}
	}
	var out []SectionResult
	var figures []string
	for _, s := range secs {
		r := SectionResult{Name: s.Name, RC: -1, Duration: durs[s.Name]}
		logb, _ := os.ReadFile(filepath.Join(results, s.Name+".log"))
		r.Log = string(logb)
		rcb, err := os.ReadFile(filepath.Join(results, s.Name+".rc"))
		if err == nil {
			r.RC, err = strconv.Atoi(strings.TrimSpace(string(rcb)))
		}
		switch {
		case err != nil:
			r.Status, r.Reason = Fail, "no result: the VM stopped before this section finished (see the serial log)"
		case r.RC == 0:
			r.Status = Pass
		case r.RC == skipExit:
			r.Status, r.Reason = Skip, lastLine(r.Log, "SKIP: ")
			if r.Reason == "" {
				r.Reason = "skipped (exit 77) without a SKIP: line"
			}
		case r.RC == 124 || r.RC == 137:
			r.Status, r.Reason = Fail, fmt.Sprintf("killed by its %s timeout (exit %d)", s.Timeout, r.RC)
		default:
			r.Status = Fail
			r.Reason = fmt.Sprintf("exit %d", r.RC)
			if l := lastLine(r.Log, "FAIL: "); l != "" {
				r.Reason += ": " + l
			}
		}
		figures = append(figures, figureRe.FindAllString(r.Log, -1)...)
		out = append(out, r)
	}
	return out, figures
}

// lastLine returns the text after prefix on the last line that starts with it.
func lastLine(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), prefix); ok {
			return rest
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Summary is the human report printed by make e2e-vm.
func (r Results) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "VM testbed: image %s, boot %s, VM %s, total %s\n",
		r.Build.Round(100*time.Millisecond), r.Boot.Round(100*time.Millisecond), r.VM.Round(100*time.Millisecond), r.Total.Round(100*time.Millisecond))
	w := 0
	for _, s := range r.Sections {
		w = max(w, len(s.Name))
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "  %s  %-*s %7s", s.Status, w, s.Name, s.Duration.Round(100*time.Millisecond))
		if s.Reason != "" {
			fmt.Fprintf(&b, "  %s", s.Reason)
		}
		b.WriteString("\n")
	}
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}
