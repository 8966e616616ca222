package kubetb

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/kube/kubelock"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// patchErrors counts the agents' failed status writes (the first few
// are logged).
var patchErrors atomic.Int64

// lightAgent is the control-plane half of fabctl agent --kube without a
// host: it watches only its node's object (field selector) and reports
// each new generation Applied, so the benchmark measures the engine
// (publish, watch fan-out, status writes, the publisher's wait), not the
// host driver.
func lightAgent(ctx context.Context, cl *kube.Clients, node string, ready *sync.WaitGroup) {
	sel := "metadata.name=" + node
	ri := cl.Dyn.Resource(kube.GVR)
	var last int64
	once := sync.Once{}
	handle := func(u *unstructured.Unstructured) {
		gen := u.GetGeneration()
		if gen == last {
			return
		}
		last = gen
		rev, _, _ := unstructured.NestedString(u.Object, "spec", "revision")
		now := time.Now().UTC().Format(time.RFC3339)
		st := kube.HostStatus{ObservedGeneration: gen, ObservedRevision: rev, Changes: 1, Conditions: []kube.Condition{
			{Type: kube.CondApplied, Status: "True", ObservedGeneration: gen, LastTransitionTime: now, Reason: kube.ReasonApplied, Message: "bench"}}}
		b, _ := kube.StatusPatch(&st)
		for ctx.Err() == nil { // as the real agent: retried until written
			_, err := ri.Patch(ctx, node, types.MergePatchType, b, metav1.PatchOptions{}, "status")
			if err == nil {
				return
			}
			if patchErrors.Add(1) <= 5 {
				fmt.Fprintf(os.Stderr, "%s: status write: %v (retried)\n", node, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for ctx.Err() == nil {
		l, err := ri.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for i := range l.Items {
			handle(&l.Items[i])
		}
		w, err := ri.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: l.GetResourceVersion()})
		once.Do(ready.Done)
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				handle(u)
			}
		}
	}
}

// rss is a process's resident set (VmRSS) and peak (VmHWM) in MiB.
func rss(pid int) (cur, peak float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			cur = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return cur, peak
}

// procCPU is a process's user+system CPU time (/proc/PID/stat utime and
// stime, in clock ticks of 1/100 s: USER_HZ on Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 { // the command name may hold spaces
		s = s[i+1:]
	}
	f := strings.Fields(s) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// selfCPU is this process's user+system CPU time (getrusage).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// agentsEnv names the agents' configuration file: set, the test binary
// runs the light agents (TestMain) instead of the tests, so the
// publisher's process holds the publisher alone and its CPU time is the
// publisher's.
const agentsEnv = "FABCTL_BENCH_AGENTS"

// agentsConfig is what the agents' process needs: the apiserver, its CA
// and each node's pod-bound service-account token.
type agentsConfig struct {
	Host   string
	CAFile string
	Tokens map[string]string
}

func TestMain(m *testing.M) {
	if p := os.Getenv(agentsEnv); p != "" {
		if err := runAgents(p); err != nil {
			fmt.Fprintln(os.Stderr, "bench agents:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runAgents starts one light agent per node, each with its node's own
// token (as the DaemonSet's pods: the agents' status writes pass the
// service-account authenticator, RBAC and the per-node admission
// policy), prints "ready" once every agent watches, and runs until its
// standard input closes.
func runAgents(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg agentsConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ready sync.WaitGroup
	ready.Add(len(cfg.Tokens))
	for node, tok := range cfg.Tokens {
		// QPS -1: the agents stand for as many machines, each with its own
		// client; they share the TLS connections (client-go's transport
		// cache), each request carries its node's token.
		cl, err := kube.NewClients(&rest.Config{Host: cfg.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAFile: cfg.CAFile}, QPS: -1})
		if err != nil {
			return err
		}
		go lightAgent(ctx, cl, node, &ready)
	}
	ready.Wait()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// benchFabric is n GPU hosts of 8 NICs each.
func benchFabric(n int) *intent.Fabric {
	f := &intent.Fabric{Name: "bench"}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("gpu%05d", i)
		h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: name, Platform: "linux"}, RDMATos: 106}
		for j := 0; j < 8; j++ { // 8 NICs' worth of intent, as a GPU node
			h.NICs = append(h.NICs, intent.NIC{Name: fmt.Sprintf("ens%df0", j), Device: fmt.Sprintf("mlx5_%d", j), MTU: 9000,
				Addresses: []string{fmt.Sprintf("10.%d.%d.%d/31", j, i/128, (i%128)*2)}, Trust: "dscp", PFC: []int{3},
				TCs: []intent.TC{{TC: 0, Bandwidth: 50}, {TC: 3, Bandwidth: 50, Lossless: true}}, ECN: true, ECNPrios: []int{3}, RoCEMode: "v2"})
		}
		f.Hosts = append(f.Hosts, h)
	}
	return f
}

// publishRun is one measured rollout of n hosts.
type publishRun struct {
	hosts                  int
	wall, list             time.Duration
	publisherCPU           time.Duration
	apiserverCPU, etcdCPU  time.Duration
	agentsCPU              time.Duration
	apiserverRSS, etcdRSS  float64 // MiB after the rollout
	apiserverPeak, etcdHWM float64
}

// runPublish starts a cluster, registers n nodes with their agents' pods
// and tokens, starts the light agents' process, and times the apply of
// n host intents through the Kubernetes engine's host driver until every one is Applied with its current generation.
func runPublish(b *testing.B, apiserver, etcd, etcdDir string, n int) publishRun {
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, Options{APIServer: apiserver, Etcd: etcd, Dir: dir, EtcdDataDir: etcdDir, Image: "fabctl:bench", Log: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	f := benchFabric(n)
	// Setup, not timed: each node's Node, its agent's Pod and the pod's
	// bound token, as the kubelet and the DaemonSet controller make them.
	cfg := agentsConfig{Host: "https://127.0.0.1:" + strconv.Itoa(c.Port), CAFile: c.CAFile, Tokens: make(map[string]string, n)}
	var mu sync.Mutex
	var setupErr error
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, h := range f.Hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func(node string) {
			defer wg.Done()
			defer func() { <-sem }()
			pod, err := c.AddNode(ctx, node)
			var tok string
			if err == nil {
				tok, err = c.PodToken(ctx, pod)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && setupErr == nil {
				setupErr = err
			}
			cfg.Tokens[node] = tok
		}(h.Name)
	}
	wg.Wait()
	if setupErr != nil {
		b.Fatal(setupErr)
	}
	cfgPath := filepath.Join(dir, "agents.json")
	cb, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, cb, 0o600); err != nil {
		b.Fatal(err)
	}
	agents := exec.Command(os.Args[0])
	agents.Env = append(os.Environ(), agentsEnv+"="+cfgPath)
	stdin, _ := agents.StdinPipe()
	stdout, _ := agents.StdoutPipe()
	agentsLog, _ := os.Create(filepath.Join(dir, "agents.log"))
	agents.Stderr = agentsLog
	agents.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := agents.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = agents.Wait()
		agentsLog.Close()
	}()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case line <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-line:
		if l != "ready" {
			b.Fatalf("agents: %q", l)
		}
	case <-time.After(10 * time.Minute):
		b.Fatalf("agents not watching after 10 minutes: %s", tail(filepath.Join(dir, "agents.log")))
	}
	b.Logf("%d hosts: cluster, nodes, pods, tokens and agents up in %s", n, time.Since(start).Round(time.Second))
	pub, err := kube.NewClients(c.TokenConfigDefault()) // client-go limits as the CLI has them
	if err != nil {
		b.Fatal(err)
	}
	var applied, released atomic.Int64
	stopProgress := make(chan struct{})
	t0 := time.Now()
	go func() {
		for {
			select {
			case <-stopProgress:
				return
			case <-time.After(5 * time.Second):
				b.Logf("%5.1fs: %d released, %d applied", time.Since(t0).Seconds(), released.Load(), applied.Load())
			}
		}
	}()
	profDone := make(chan struct{})
	if d := os.Getenv("FABCTL_BENCH_PPROF"); d != "" {
		go func() {
			defer close(profDone)
			if err := c.apiserverProfile(ctx, filepath.Join(d, fmt.Sprintf("kube-apiserver-%d.pprof", n)), 20); err != nil {
				b.Logf("apiserver profile: %v", err)
			}
		}()
	} else {
		close(profDone)
	}
	defer func() { <-profDone }()
	aPid, ePid, gPid := c.apiserver.Process.Pid, c.etcd.Process.Pid, agents.Process.Pid
	cpu0, a0, e0, g0 := selfCPU(), procCPU(aPid), procCPU(ePid), procCPU(gPid)
	t0 = time.Now()
	hosts := kube.NewHosts(pub, f.Name, kube.HostsOptions{HostTimeout: 5 * time.Minute, Publishers: 64})
	defer hosts.Close()
	reg := drivers.NewRegistry()
	if err := reg.Register(kube.DriverName, hosts.Driver); err != nil {
		b.Fatal(err)
	}
	out, err := apply.RunFabric(ctx, apply.RunOptions{Spec: &spec.Spec{}, Fabric: f, StateDir: filepath.Join(dir, "state"),
		Plan: plan.Options{Parallelism: 64, HostDriver: kube.DriverName}, Registry: reg, Locker: kubelock.Locker{Clients: pub},
		Parallelism: 64, OnFailure: apply.Stop, Engine: kube.DriverName, Version: "bench",
		HostBatches: apply.BatchPolicy{MaxUnavailable: apply.MaxUnavailable{N: 100, Percent: true}},
		Hooks: apply.Hooks{Progress: func(e apply.ProgressEvent) {
			switch {
			case e.Phase == apply.PhaseVerify:
				released.Add(1) // published: its agent applies it
			case e.Phase == apply.PhaseDone && e.Result != nil && e.Result.Status == apply.StatusApplied:
				applied.Add(1)
			}
		}}})
	r := publishRun{hosts: n, wall: time.Since(t0)}
	r.publisherCPU, r.apiserverCPU, r.etcdCPU, r.agentsCPU = selfCPU()-cpu0, procCPU(aPid)-a0, procCPU(ePid)-e0, procCPU(gPid)-g0
	close(stopProgress)
	if err != nil {
		b.Fatalf("apply: %v (%s)", err, out.Status)
	}
	if out.Result == nil || out.Result.Counts.Applied != n {
		b.Fatalf("applied %+v of %d", out.Result, n)
	}
	r.apiserverRSS, r.apiserverPeak = rss(aPid)
	r.etcdRSS, r.etcdHWM = rss(ePid)
	t1 := time.Now()
	objs, _, err := kube.ListFabric(ctx, pub, "bench")
	if err != nil || len(objs) != n {
		b.Fatalf("list: %v (%d)", err, len(objs))
	}
	r.list = time.Since(t1)
	if l := tail(filepath.Join(dir, "agents.log")); l != "" {
		b.Logf("agents' log:\n%s", l)
	}
	for name, o := range objs { // every object Applied for its current generation
		if !o.AppliedCurrent() {
			b.Fatalf("%s: not Applied for generation %d: %+v", name, o.Metadata.Generation, o.Status)
		}
	}
	fmt.Printf("kube publish %5d hosts: %5.1f s wall, %4.0f objects/s; CPU: publisher %5.2f s (%.2f ms/host), kube-apiserver %5.1f s, etcd %4.1f s, agents %4.1f s; RSS kube-apiserver %4.0f MiB, etcd %3.0f MiB; LIST of all (plan) %.2f s\n",
		n, r.wall.Seconds(), float64(n)/r.wall.Seconds(), r.publisherCPU.Seconds(), 1e3*r.publisherCPU.Seconds()/float64(n),
		r.apiserverCPU.Seconds(), r.etcdCPU.Seconds(), r.agentsCPU.Seconds(), r.apiserverRSS, r.etcdRSS, r.list.Seconds())
	return r
}

// apiserverProfile writes a CPU profile of kube-apiserver (its
// /debug/pprof/profile, --profiling defaults to on; the admin is
// system:masters) over the next secs seconds to path.
func (c *Cluster) apiserverProfile(ctx context.Context, path string, secs int) error {
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.caPool()}}}
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("https://127.0.0.1:%d/debug/pprof/profile?seconds=%d", c.Port, secs), nil)
	req.Header.Set("Authorization", "Bearer "+c.adminToken)
	r, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		return fmt.Errorf("%s", r.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, r.Body)
	return err
}

// BenchmarkPublish4096 publishes host intents through the one fabric
// operation with the Kubernetes engine's host driver (apply.RunFabric:
// Lease, paginated LIST, plan from status, create, wait for Applied
// with the current generation, journal and applied record) to light agents (one watch each,
// each node's own pod-bound token, in a process of their own) for 1,024,
// 2,048 and 4,096 hosts, each on a fresh cluster, and prints a line per
// size and the figure: wall time, objects/s, the publisher's CPU and its
// growth with the hosts, the apiserver's and etcd's CPU and memory. Run
// it with make bench-kube. FABCTL_BENCH_HOSTS=N[,N...] picks the sizes;
// FABCTL_BENCH_ETCD=tmpfs puts etcd's data on /dev/shm instead of the
// temporary directory's disk; FABCTL_BENCH_PPROF=DIR writes a CPU
// profile of kube-apiserver over each rollout's first 20 s there.
func BenchmarkPublish4096(b *testing.B) {
	if os.Getenv("FABCTL_E2E_KUBE") != "1" {
		b.Skip("runs under `make bench-kube` (FABCTL_E2E_KUBE=1): it needs the kube-apiserver build")
	}
	sizes := []int{1024, 2048, 4096}
	if v := os.Getenv("FABCTL_BENCH_HOSTS"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				b.Fatalf("FABCTL_BENCH_HOSTS=%q: want host counts, e.g. 1024,2048,4096", v)
			}
			sizes = append(sizes, n)
		}
	}
	apiserver := os.Getenv("FABCTL_KUBE_APISERVER")
	etcd := "/usr/bin/etcd"
	// etcd's data on the temporary directory's disk, as in a cluster.
	// FABCTL_BENCH_ETCD=tmpfs puts it on /dev/shm, so its fsyncs cost
	// nothing (4.8 ms each on this machine's disk, etcd's wal_fsync
	// histogram); Kubernetes' own storage tests turn fsync off instead
	// (UnsafeNoFsync: k8s.io/apiserver v0.37.2
	// pkg/storage/etcd3/testserver/test_server.go, NewTestConfig), which
	// Debian's etcd 3.4.23 has no flag for (etcd --help). Measured: no
	// faster on tmpfs (docs/kubernetes.md, "Scale").
	etcdOn, etcdBase := "disk ("+os.TempDir()+")", ""
	if os.Getenv("FABCTL_BENCH_ETCD") == "tmpfs" {
		etcdOn, etcdBase = "tmpfs (/dev/shm)", "/dev/shm"
	}
	var runs []publishRun
	b.ResetTimer()
	for _, n := range sizes {
		var etcdDir string
		if etcdBase != "" {
			d, err := os.MkdirTemp(etcdBase, "fabctl-bench-etcd-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(d)
			etcdDir = d
		}
		runs = append(runs, runPublish(b, apiserver, etcd, etcdDir, n))
	}
	b.StopTimer()
	last := runs[len(runs)-1]
	var growth []string
	for i := 1; i < len(runs); i++ {
		hostRatio := float64(runs[i].hosts) / float64(runs[i-1].hosts)
		cpuRatio := runs[i].publisherCPU.Seconds() / runs[i-1].publisherCPU.Seconds()
		growth = append(growth, fmt.Sprintf("%d->%d hosts x%.2f (hosts x%.0f)", runs[i-1].hosts, runs[i].hosts, cpuRatio, hostRatio))
	}
	g := "one size only"
	if len(growth) > 0 {
		g = strings.Join(growth, ", ")
	}
	fmt.Printf("kube publish figure: %d hosts (8 NICs each) all Applied in %.1f s (%.0f objects/s; all released at once, 64 publishers); "+
		"publisher CPU %.2f s (%.2f ms/host), growth %s; kube-apiserver RSS %.0f MiB (peak %.0f), etcd RSS %.0f MiB (peak %.0f); etcd data on %s\n",
		last.hosts, last.wall.Seconds(), float64(last.hosts)/last.wall.Seconds(), last.publisherCPU.Seconds(),
		1e3*last.publisherCPU.Seconds()/float64(last.hosts), g, last.apiserverRSS, last.apiserverPeak, last.etcdRSS, last.etcdHWM, etcdOn)
	b.ReportMetric(last.wall.Seconds(), "s/all-applied")
	b.ReportMetric(float64(last.hosts)/last.wall.Seconds(), "hosts/s")
	b.ReportMetric(1e3*last.publisherCPU.Seconds()/float64(last.hosts), "publisher-ms/host")
	b.ReportMetric(last.apiserverPeak, "MiB-apiserver-peak")
	b.ReportMetric(last.etcdHWM, "MiB-etcd-peak")
}
