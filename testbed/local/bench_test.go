package local_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// commitLatency is the emulator commit time.
const commitLatency = 200 * time.Millisecond

// realisticShow is the show latency of the second benchmark run: a real
// switch answers `show running-config` in 0.3-1 s (the emulators answer
// at once unless told otherwise); 300 ms is the fast end.
const realisticShow = 300 * time.Millisecond

const benchPassword = "bench-Pa55-word"

type benchEmu interface {
	Addr() string
	KnownHostsLine() string
	Close() error
}

// firstPort is each platform's first front-panel port name.
var firstPort = map[string]string{"sonic": "Ethernet0", "eos": "Ethernet1", "nxos": "Ethernet1/1", "cumulus": "swp1"}

// benchFabric starts one emulator per platform name (each on
// 127.0.0.1:0, commits taking commitLatency, show commands show) and
// writes a spec with a switch per emulator, switch 2k linked to 2k+1,
// its known_hosts holding every emulator's key. It returns the spec
// directory.
func benchFabric(b testing.TB, platforms []string, show time.Duration) string {
	dir, _ := benchEmulators(b, platforms, show)
	return dir
}

// benchEmulators is benchFabric that also returns the emulators.
func benchEmulators(b testing.TB, platforms []string, show time.Duration) (dir string, emus []benchEmu) {
	b.Helper()
	dir = b.TempDir()
	var hcl, kh strings.Builder
	fmt.Fprintf(&hcl, `fabric "bench" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 4096
}

credentials "ssh" {
  username    = "admin"
  password    = env("FABCTL_BENCH_PASSWORD")
  known_hosts = "known_hosts"
}
`)
	// Each switch's cabling, filled once the spec is written (below): the
	// spec's links as it draws them, as the local testbed cables them.
	links := map[string]portlink.Static{}
	for i, p := range platforms {
		var e benchEmu
		var err error
		name := fmt.Sprintf("sw%02d", i)
		links[name] = portlink.Static{}
		// "eos@<model>": an EOS emulator of that model (eosemu.Options.Model).
		p, model, _ := strings.Cut(p, "@")
		platforms[i] = p
		switch p {
		case "sonic":
			e, err = sonicemu.Start(sonicemu.Options{Hostname: name, Password: benchPassword, Ports: 4, CommitLatency: commitLatency, ShowLatency: show})
		case "eos":
			e, err = eosemu.Start(eosemu.Options{Hostname: name, Password: benchPassword, Ports: 4, CommitLatency: commitLatency, ShowLatency: show, Model: model, Links: links[name]})
		case "nxos":
			e, err = nxosemu.Start(nxosemu.Options{Hostname: name, Password: benchPassword, Ports: 4, CommitLatency: commitLatency, ShowLatency: show, Links: links[name]})
		case "cumulus":
			e, err = cumulusemu.Start(cumulusemu.Options{Hostname: name, User: "admin", Password: benchPassword, Ports: 4, ApplyLatency: commitLatency, ShowLatency: show, Links: links[name]})
		}
		if err != nil {
			b.Fatalf("%s (%s): %v", name, p, err)
		}
		b.Cleanup(func() { e.Close() })
		kh.WriteString(e.KnownHostsLine() + "\n")
		emus = append(emus, e)
		fmt.Fprintf(&hcl, "\nswitch %q {\n  platform    = %q\n  address     = %q\n  credentials = \"ssh\"\n  role        = \"leaf\"\n}\n", name, p, e.Addr())
	}
	for i := 0; i+1 < len(platforms); i += 2 {
		fmt.Fprintf(&hcl, "\nlink {\n  endpoints    = [\"sw%02d:%s\", \"sw%02d:%s\"]\n  speed        = \"100G\"\n  cable_length = \"3m\"\n}\n",
			i, firstPort[platforms[i]], i+1, firstPort[platforms[i+1]])
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.fab.hcl"), []byte(hcl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(kh.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	cabled := testutil.Load(b, dir, spec.LoadOptions{Env: []string{"FABCTL_BENCH_PASSWORD=" + benchPassword}})
	for name, st := range links {
		maps.Copy(st, portlink.FromSpec(cabled, name))
	}
	return dir, emus
}

// loadSpec loads and compiles the spec in dir, and returns what planning
// it takes: the builtin drivers, and plan options at parallelism n with
// the spec's credentials (SSH host keys verified against its
// known_hosts).
func loadSpec(t testing.TB, dir string, n int) (*spec.Spec, *intent.Fabric, *drivers.Registry, plan.Options) {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{})
	return s, intent.Compile(s), builtin.Registry(), plan.Options{Parallelism: n, Credentials: s.CredentialsByName}
}

// figures are one plan + apply run: wall and CPU time of each. CPU is
// the whole process's: fabctl and the emulators it talks to.
type figures struct{ plan, planCPU, apply, applyCPU time.Duration }

// planApply is planApplyFigures' wall times.
func planApply(b *testing.B, dir string, n int, targets ...string) (planT, applyT time.Duration) {
	f := planApplyFigures(b, dir, n, targets...)
	return f.plan, f.apply
}

// planApplyFigures plans then applies every switch of the spec in dir
// at parallelism 64 with the builtin drivers, over SSH with host keys
// verified, and returns the wall and CPU time of each. targets (globs)
// limit the devices planned; n is how many must be planned.
func planApplyFigures(b *testing.B, dir string, n int, targets ...string) (fig figures) {
	b.Helper()
	s, f, reg, opts := loadSpec(b, dir, 64)
	opts.Targets = targets
	t0, c0 := time.Now(), testutil.CPUTime()
	p := plan.Make(context.Background(), s, f, reg, opts)
	fig.plan, fig.planCPU = time.Since(t0), testutil.CPUTime()-c0
	var devs []apply.Device
	for _, u := range plan.Units(f) {
		dp := p.Device(u.Device.Addr())
		if dp == nil {
			continue
		}
		if dp.Error != "" {
			b.Fatalf("plan %s: %s", dp.Address, dp.Error)
		}
		if !dp.HasChanges() {
			b.Fatalf("plan %s: no changes on a factory-default emulator", dp.Address)
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	if len(devs) != n {
		b.Fatalf("planned %d devices, want %d", len(devs), n)
	}
	t0, c0 = time.Now(), testutil.CPUTime()
	res, err := apply.Run(context.Background(), devs, reg, apply.Options{Parallelism: 64})
	fig.apply, fig.applyCPU = time.Since(t0), testutil.CPUTime()-c0
	if err != nil || !res.OK() {
		for _, d := range res.Devices {
			if d.Status != apply.StatusApplied {
				b.Logf("%s: %s %s", d.Address, d.Status, d.Error)
			}
		}
		b.Fatalf("apply of %d: %v", n, err)
	}
	return fig
}

// BenchmarkPlanApply64 is issue 4's target: with emulators taking 200 ms
// per commit, apply to 64 switches (SONiC, EOS, NX-OS and Cumulus in
// turn, each its own emulator) at parallelism 64 within 3x the wall time
// of applying one switch, and plan of 64 within 3x of planning one. The
// single-switch baseline is the slowest platform's (the 64 include every
// platform).
//
// It runs twice: show-latency=0s with emulators that answer show
// commands at once (the plan is then pure CPU: 64 SSH handshakes, reads
// and diffs of fabctl and of the 64 emulators on the same machine), and
// show-latency=300ms where every show command takes 300 ms, the fast end
// of a real switch's 0.3-1 s for `show running-config`. Both report wall
// time and CPU time (fabctl and emulators: one process).
//
//	go test ./testbed/local/ -run '^$' -bench PlanApply64 -benchtime 1x
func BenchmarkPlanApply64(b *testing.B) {
	for _, show := range []time.Duration{0, realisticShow} {
		b.Run(fmt.Sprintf("show-latency=%v", show), func(b *testing.B) { benchPlanApply64(b, show) })
	}
}

func benchPlanApply64(b *testing.B, show time.Duration) {
	b.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	mix := []string{"sonic", "eos", "nxos", "cumulus"}
	var one, all figures
	var logins, loginsCPU time.Duration // 64 SSH logins alone (show == 0)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var m figures
		for _, p := range mix {
			// Two linked switches (a switch without a link has no port to
			// carry PFC and its watchdog), only the first planned and applied.
			f := planApplyFigures(b, benchFabric(b, []string{p, p}, show), 1, "sw00")
			if i == 0 {
				b.Logf("one %-7s switch: plan %v (cpu %v), apply %v (cpu %v)", p, f.plan.Round(time.Millisecond),
					f.planCPU.Round(time.Millisecond), f.apply.Round(time.Millisecond), f.applyCPU.Round(time.Millisecond))
			}
			m.plan, m.planCPU = max(m.plan, f.plan), max(m.planCPU, f.planCPU)
			m.apply, m.applyCPU = max(m.apply, f.apply), max(m.applyCPU, f.applyCPU)
		}
		platforms := make([]string, 64)
		for j := range platforms {
			platforms[j] = mix[j%len(mix)]
		}
		dir, emus := benchEmulators(b, platforms, show)
		if show == 0 {
			lw, lc := sshLogins(b, dir, emus)
			logins, loginsCPU = logins+lw, loginsCPU+lc
		}
		b.StartTimer()
		f := planApplyFigures(b, dir, 64)
		one.plan, one.apply = one.plan+m.plan, one.apply+m.apply
		one.planCPU, one.applyCPU = one.planCPU+m.planCPU, one.applyCPU+m.applyCPU
		all.plan, all.apply = all.plan+f.plan, all.apply+f.apply
		all.planCPU, all.applyCPU = all.planCPU+f.planCPU, all.applyCPU+f.applyCPU
	}
	n := time.Duration(b.N)
	ms := func(d time.Duration) float64 { return float64((d / n).Microseconds()) / 1000 }
	planRatio := float64(all.plan) / float64(one.plan)
	applyRatio := float64(all.apply) / float64(one.apply)
	b.ReportMetric(ms(one.plan), "plan1-ms")
	b.ReportMetric(ms(all.plan), "plan64-ms")
	b.ReportMetric(ms(all.planCPU), "plan64-cpu-ms")
	b.ReportMetric(ms(all.planCPU)/64, "plan64-cpu-ms/switch")
	b.ReportMetric(ms(one.planCPU), "plan1-cpu-ms")
	b.ReportMetric(planRatio, "plan-ratio")
	b.ReportMetric(ms(one.apply), "apply1-ms")
	b.ReportMetric(ms(all.apply), "apply64-ms")
	b.ReportMetric(ms(all.applyCPU), "apply64-cpu-ms")
	b.ReportMetric(applyRatio, "apply-ratio")
	b.Logf("emulators: commit 200 ms, show commands %v; plan: 1 switch %.0f ms (cpu %.1f ms), 64 switches %.0f ms (%.2fx, cpu %.0f ms, %.2f ms per switch); apply: 1 switch %.0f ms, 64 switches %.0f ms (%.2fx, cpu %.0f ms); target <= 3x; %s",
		show, ms(one.plan), ms(one.planCPU), ms(all.plan), planRatio, ms(all.planCPU), ms(all.planCPU)/64,
		ms(one.apply), ms(all.apply), applyRatio, ms(all.applyCPU), loadAverage())
	if show == 0 {
		// What the 64 SSH logins cost without fabctl: the bound under the
		// plan's wall time on this machine, and what fabctl adds per switch.
		b.ReportMetric(ms(logins), "logins64-ms")
		b.ReportMetric(ms(loginsCPU)/64, "login-cpu-ms/switch")
		b.ReportMetric(float64(logins)/float64(one.plan), "logins-ratio")
		b.Logf("64 SSH logins alone (x/crypto client, the emulators' servers, host keys verified, no command): %.0f ms (%.2fx of one switch's plan), cpu %.2f ms per login; fabctl's plan adds %.2f ms of cpu per switch",
			ms(logins), float64(logins)/float64(one.plan), ms(loginsCPU)/64, (ms(all.planCPU)-ms(loginsCPU))/64)
	}
	// A benchmark reports; it does not fail on a busy machine. The ratios
	// are read against the target in the issue notes.
	if planRatio > 3 || applyRatio > 3 {
		b.Logf("over the issue's target (<= 3x of one switch): plan %.2fx, apply %.2fx", planRatio, applyRatio)
	}
}

// BenchmarkPlan64 plans the same 64 switches (SONiC, EOS, NX-OS and
// Cumulus emulators answering at once) b.N times and reports the CPU
// time of one plan: fabctl's and the emulators' (one process), the
// figure to profile (-cpuprofile) when the plan ratio above is off.
//
//	go test ./testbed/local/ -run '^$' -bench 'Plan64$' -benchtime 20x -cpuprofile cpu.prof
func BenchmarkPlan64(b *testing.B) {
	b.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	mix := []string{"sonic", "eos", "nxos", "cumulus"}
	platforms := make([]string, 64)
	for j := range platforms {
		platforms[j] = mix[j%len(mix)]
	}
	s, f, reg, opts := loadSpec(b, benchFabric(b, platforms, 0), 64)
	b.ResetTimer()
	t0, c0 := time.Now(), testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		p := plan.Make(context.Background(), s, f, reg, opts)
		for _, d := range p.Devices {
			if d.Error != "" {
				b.Fatalf("plan %s: %s", d.Address, d.Error)
			}
		}
	}
	cpu := float64((testutil.CPUTime()-c0)/time.Duration(b.N)) / 1e6
	b.ReportMetric(cpu, "cpu-ms/op")
	b.ReportMetric(cpu/64, "cpu-ms/switch")
	b.Logf("plan of 64 switches: wall %.0f ms, cpu %.0f ms (%.2f ms per switch, fabctl and emulator); %s",
		float64(time.Since(t0)/time.Duration(b.N))/1e6, cpu, cpu/64, loadAverage())
}

// sshLogins logs in to every emulator at once as fabctl's transport
// does (password, the spec's known_hosts, a pty and a shell, read up to
// the first prompt) and logs out, running no command: the SSH sessions
// alone, both ends' key exchange, authentication and channel set-up, on
// the same cores. It returns the wall and CPU time of the 64.
func sshLogins(b *testing.B, dir string, emus []benchEmu) (wall, cpu time.Duration) {
	b.Helper()
	hostKeys, err := knownhosts.New(filepath.Join(dir, "known_hosts"))
	if err != nil {
		b.Fatal(err)
	}
	cfg := &gossh.ClientConfig{
		User: "admin", Auth: []gossh.AuthMethod{gossh.Password(benchPassword)},
		HostKeyCallback: hostKeys, HostKeyAlgorithms: []string{gossh.KeyAlgoED25519},
	}
	login := func(addr string) error {
		c, err := gossh.Dial("tcp", addr, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		sess, err := c.NewSession()
		if err != nil {
			return err
		}
		defer sess.Close()
		out, err := sess.StdoutPipe()
		if err != nil {
			return err
		}
		if err := sess.RequestPty("xterm", 24, 511, gossh.TerminalModes{gossh.ECHO: 1}); err != nil {
			return err
		}
		if err := sess.Shell(); err != nil {
			return err
		}
		// Every emulated prompt ends in '#', '$' or '>' and a space or not.
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			got = append(got, buf[:n]...)
			if t := bytes.TrimRight(got, " "); len(t) > 0 && bytes.ContainsAny(t[len(t)-1:], "#$>") {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: no prompt in %q: %w", addr, got, err)
			}
		}
	}
	errs := make([]error, len(emus))
	var wg sync.WaitGroup
	t0, c0 := time.Now(), testutil.CPUTime()
	for i, e := range emus {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = login(e.Addr()) }()
	}
	wg.Wait()
	wall, cpu = time.Since(t0), testutil.CPUTime()-c0
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return wall, cpu
}

// loadAverage is the machine's load as /proc/loadavg gives it: the plan
// of 64 is CPU-bound, so its wall time and ratio depend on it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return "load average " + strings.Join(f[:3], " ")
}

// BenchmarkRead1 reads one switch of each platform b.N times in a row
// (one emulator answering at once, two linked switches in the spec) and
// reports the wall and CPU time of one Read: the connection, its
// commands and the parse, the one-switch latency that
// BenchmarkPlanApply64's ratio divides by.
//
//	go test ./testbed/local/ -run '^$' -bench 'Read1$' -benchtime 200x
func BenchmarkRead1(b *testing.B) {
	b.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	for _, p := range []string{"sonic", "eos", "nxos", "cumulus"} {
		b.Run(p, func(b *testing.B) {
			_, f, reg, opts := loadSpec(b, benchFabric(b, []string{p, p}, 0), 0)
			u := plan.Units(f)[0]
			drv, err := reg.New(drivers.For(u.Device))
			if err != nil {
				b.Fatal(err)
			}
			t := plan.Target(u, opts)
			b.ResetTimer()
			c0 := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				if _, err := drv.Read(context.Background(), t); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((testutil.CPUTime()-c0)/time.Duration(b.N))/1e6, "cpu-ms/op")
		})
	}
}
