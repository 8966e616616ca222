package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// commitLatency is the emulator commit time.
const commitLatency = 200 * time.Millisecond

const benchPassword = "bench-Pa55-word"

type benchEmu interface {
	Addr() string
	KnownHostsLine() string
	Close() error
}

// firstPort is each platform's first front-panel port name.
var firstPort = map[string]string{"sonic": "Ethernet0", "eos": "Ethernet1", "nxos": "Ethernet1/1"}

// benchFabric starts one emulator per platform name (each on
// 127.0.0.1:0, commits taking commitLatency) and writes a spec with a
// switch per emulator, switch 2k linked to 2k+1, its known_hosts holding
// every emulator's key. It returns the spec directory.
func benchFabric(b *testing.B, platforms []string) string {
	b.Helper()
	dir := b.TempDir()
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
	for i, p := range platforms {
		var e benchEmu
		var err error
		name := fmt.Sprintf("sw%02d", i)
		switch p {
		case "sonic":
			e, err = sonicemu.Start(sonicemu.Options{Hostname: name, Password: benchPassword, Ports: 4, CommitLatency: commitLatency})
		case "eos":
			e, err = eosemu.Start(eosemu.Options{Hostname: name, Password: benchPassword, Ports: 4, CommitLatency: commitLatency})
		case "nxos":
			e, err = nxosemu.Start(nxosemu.Options{Hostname: name, Password: benchPassword, Ports: 4, CommitLatency: commitLatency})
		}
		if err != nil {
			b.Fatalf("%s (%s): %v", name, p, err)
		}
		b.Cleanup(func() { e.Close() })
		kh.WriteString(e.KnownHostsLine() + "\n")
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
	return dir
}

// planApply plans then applies every switch of the spec in dir at
// parallelism 64 with the builtin drivers, over SSH with host keys
// verified, and returns the wall time of each. targets (globs) limit the
// devices planned; n is how many must be planned.
func planApply(b *testing.B, dir string, n int, targets ...string) (planT, applyT time.Duration) {
	b.Helper()
	s, diags := spec.Load(dir, spec.LoadOptions{})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	f := intent.Compile(s)
	reg := builtin.Registry()
	opts := plan.Options{Parallelism: 64, Credentials: s.CredentialsByName, Targets: targets}
	t0 := time.Now()
	p := plan.Make(context.Background(), s, f, reg, opts)
	planT = time.Since(t0)
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
	t0 = time.Now()
	res, err := apply.Run(context.Background(), devs, reg, apply.Options{Parallelism: 64})
	applyT = time.Since(t0)
	if err != nil || !res.OK() {
		for _, d := range res.Devices {
			if d.Status != apply.StatusApplied {
				b.Logf("%s: %s %s", d.Address, d.Status, d.Error)
			}
		}
		b.Fatalf("apply of %d: %v", n, err)
	}
	return planT, applyT
}

// BenchmarkPlanApply64 is issue 4's target: with emulators taking 200 ms
// per commit, apply to 64 switches (sonic, eos and nxos in turn, each its
// own emulator) at parallelism 64 within 3x the wall time of applying one
// switch, and plan of 64 within 3x of planning one. The single-switch
// baseline is the slowest platform's (the 64 include every platform).
//
//	go test ./testbed/local/ -run '^$' -bench PlanApply64 -benchtime 1x
func BenchmarkPlanApply64(b *testing.B) {
	b.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	mix := []string{"sonic", "eos", "nxos"}
	var plan1, apply1, plan64, apply64 time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var p1max, a1max time.Duration
		for _, p := range mix {
			// Two linked switches (a switch without a link has no port to
			// carry PFC and its watchdog), only the first planned and applied.
			pt, at := planApply(b, benchFabric(b, []string{p, p}), 1, "sw00")
			if i == 0 {
				b.Logf("one %-5s switch: plan %v, apply %v", p, pt.Round(time.Millisecond), at.Round(time.Millisecond))
			}
			p1max, a1max = max(p1max, pt), max(a1max, at)
		}
		platforms := make([]string, 64)
		for j := range platforms {
			platforms[j] = mix[j%len(mix)]
		}
		dir := benchFabric(b, platforms)
		b.StartTimer()
		pt, at := planApply(b, dir, 64)
		plan1, apply1, plan64, apply64 = plan1+p1max, apply1+a1max, plan64+pt, apply64+at
	}
	n := time.Duration(b.N)
	plan1, apply1, plan64, apply64 = plan1/n, apply1/n, plan64/n, apply64/n
	planRatio := float64(plan64) / float64(plan1)
	applyRatio := float64(apply64) / float64(apply1)
	b.ReportMetric(float64(plan1.Milliseconds()), "plan1-ms")
	b.ReportMetric(float64(plan64.Milliseconds()), "plan64-ms")
	b.ReportMetric(planRatio, "plan-ratio")
	b.ReportMetric(float64(apply1.Milliseconds()), "apply1-ms")
	b.ReportMetric(float64(apply64.Milliseconds()), "apply64-ms")
	b.ReportMetric(applyRatio, "apply-ratio")
	b.Logf("plan: 1 switch %v, 64 switches %v (%.2fx); apply: 1 switch %v, 64 switches %v (%.2fx); target <= 3x",
		plan1.Round(time.Millisecond), plan64.Round(time.Millisecond), planRatio,
		apply1.Round(time.Millisecond), apply64.Round(time.Millisecond), applyRatio)
	// A benchmark reports; it does not fail on a busy machine. The ratios
	// are read against the target in the issue notes.
	if planRatio > 3 || applyRatio > 3 {
		b.Logf("over the issue's target (<= 3x of one switch): plan %.2fx, apply %.2fx", planRatio, applyRatio)
	}
}
