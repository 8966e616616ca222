package kubetb

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/spec"
)

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
			if _, err := ri.Patch(ctx, node, types.MergePatchType, b, metav1.PatchOptions{}, "status"); err == nil {
				return
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

// BenchmarkPublish4096 publishes 4,096 host intents with the engine's
// publisher (kube.Apply: Lease, paginated LIST, plan from status,
// server-side apply, wait for Applied with the current generation) to
// 4,096 light in-process agents, one watch each, and reports the time
// until all are Applied and the apiserver's and etcd's memory. Run it
// with make bench-kube.
func BenchmarkPublish4096(b *testing.B) {
	if os.Getenv("FABCTL_E2E_KUBE") != "1" {
		b.Skip("runs under `make bench-kube` (FABCTL_E2E_KUBE=1): it needs the kube-apiserver build")
	}
	n := 4096
	if v, err := strconv.Atoi(os.Getenv("FABCTL_BENCH_HOSTS")); err == nil && v > 0 {
		n = v
	}
	apiserver := os.Getenv("FABCTL_KUBE_APISERVER")
	etcd := "/usr/bin/etcd"
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, Options{APIServer: apiserver, Etcd: etcd, Dir: dir, Image: "fabctl:bench", Log: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	b.Logf("cluster up in %s", time.Since(start).Round(time.Second))
	acfg := c.AdminConfig()
	acfg.QPS, acfg.Burst = -1, 0 // the agents stand for n machines: no client-side limit
	agents, err := kube.NewClients(acfg)
	if err != nil {
		b.Fatal(err)
	}
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
	var ready sync.WaitGroup
	ready.Add(n)
	for _, h := range f.Hosts {
		go lightAgent(ctx, agents, h.Name, &ready)
	}
	ready.Wait()
	b.Logf("%d agents watching", n)
	pub, err := kube.NewClients(c.TokenConfigDefault())
	if err != nil {
		b.Fatal(err)
	}
	var applied, released atomic.Int64
	b.ResetTimer()
	t0 := time.Now()
	stopProgress := make(chan struct{})
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
	out, err := kube.Apply(ctx, kube.ApplyOptions{Clients: pub, Spec: &spec.Spec{}, Fabric: f, Parallelism: 64, OnFailure: apply.Stop,
		MaxUnavailable: kube.MaxUnavailable{N: 100, Percent: true}, Canary: 0, HostTimeout: 5 * time.Minute, Version: "bench",
		Rollout: func(e kube.RolloutEvent) {
			switch e.Phase {
			case "released":
				released.Add(1)
			case string(apply.StatusApplied), string(apply.StatusUnchanged):
				applied.Add(1)
			}
		}})
	close(stopProgress)
	elapsed := time.Since(t0)
	b.StopTimer()
	if err != nil {
		b.Fatalf("apply: %v (%s)", err, out.Status)
	}
	if out.Rollout == nil || out.Rollout.Applied != n {
		b.Fatalf("applied %v of %d", out.Rollout, n)
	}
	aCur, aPeak := rss(c.apiserver.Process.Pid)
	eCur, ePeak := rss(c.etcd.Process.Pid)
	t1 := time.Now()
	objs, _, err := kube.ListFabric(ctx, pub, "bench")
	if err != nil || len(objs) != n {
		b.Fatalf("list: %v (%d)", err, len(objs))
	}
	listDur := time.Since(t1)
	b.ReportMetric(elapsed.Seconds(), "s/all-applied")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "hosts/s")
	b.ReportMetric(aPeak, "MiB-apiserver-peak")
	b.ReportMetric(ePeak, "MiB-etcd-peak")
	fmt.Printf("kube publish: %d hosts (8 NICs each) published and Applied in %.1f s (%.0f hosts/s; all released at once, 64 publishers)\n", n, elapsed.Seconds(), float64(n)/elapsed.Seconds())
	fmt.Printf("kube-apiserver RSS %.0f MiB (peak %.0f), etcd RSS %.0f MiB (peak %.0f); paginated LIST of %d objects (plan) %.2f s\n", aCur, aPeak, eCur, ePeak, n, listDur.Seconds())
}
