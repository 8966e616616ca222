package kubetb

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/kube"
)

// TestKubeEngine runs the Kubernetes engine end to end against a real
// kube-apiserver and etcd: fabctl's manifests, one fabctl agent --kube
// process per network-namespace host with a DaemonSet pod's environment,
// and the fabctl CLI as the controller. The scenarios share one cluster
// (its start is the expensive part) and run in order. `make e2e-kube`
// runs it (FABCTL_E2E_KUBE=1), and .ci/run runs that; `make test` does
// not, as `make test` does not boot the VM testbed.
func TestKubeEngine(t *testing.T) {
	if os.Getenv("FABCTL_E2E_KUBE") != "1" {
		t.Skip("the Kubernetes e2e runs only under `make e2e-kube` (FABCTL_E2E_KUBE=1): it needs the kube-apiserver build")
	}
	testutil.RequireRoot(t, "creates network namespaces for the hosts the agents configure")
	apiserver, etcd := binaries(t)
	dir := t.TempDir()
	ctx := context.Background()
	e := &env{t: t, dir: dir, prefix: "fkt" + randHex(3), agents: map[string]*exec.Cmd{}, pods: map[string]string{}, probes: map[string]int{}}
	e.kubectlPath = kubectlBin(t, apiserver)
	e.fabctl = buildFabctl(t, dir)
	start := time.Now()
	// fabctl's manifests go in as a user puts them: fabctl kube manifests
	// | kubectl apply --server-side, and kubectl apply --dry-run=server
	// accepts them (kubectlInstall).
	c, err := Start(ctx, Options{APIServer: apiserver, Etcd: etcd, Dir: dir, Image: "fabctl:e2e", Log: t.Logf,
		Install: kubectlInstall(t, e.kubectlPath, e.fabctl, dir)})
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(func() {
		for n := range e.agents {
			e.stopAgent(n)
		}
		c.Stop()
	})
	t.Logf("cluster up with fabctl's manifests in %s", time.Since(start).Round(time.Second))
	const N = 6
	// The nodes register as kubelets would: tainted fabctl.io/unconfigured,
	// h1 a GPU node (nvidia.com/gpu:NoSchedule), and turn Ready; then the
	// labels fabctl topology prints for the spec make them fabric hosts. A
	// control-plane node and a CPU-only node are no fabric hosts.
	for i := 1; i <= N; i++ {
		node := fmt.Sprintf("h%d", i)
		e.nodes = append(e.nodes, node)
		var taints []corev1.Taint
		if i == 1 {
			taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
		if err := c.CreateNode(ctx, node, nil, taints); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CreateNode(ctx, "cp1", map[string]string{"node-role.kubernetes.io/control-plane": ""},
		[]corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNode(ctx, "cpu1", nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string{"cp1", "cpu1"}, e.nodes...) {
		if err := c.NodeReady(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	e.labelTopology(e.spec())
	e.checkPlacement(ctx, "cp1", "cpu1")
	for _, node := range e.nodes {
		testutil.Netns(t, e.netns(node))
		e.addLink(node)
		pod, err := c.CreateAgentPod(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := c.PodToken(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		if e.pods[node], err = c.PodFiles(dir+"/pod-"+node, tok); err != nil {
			t.Fatal(err)
		}
		e.startAgent(node)
	}
	specDir := e.spec()
	kc := c.Kubeconfig
	failed := false
	step := func(name string, fn func(t *testing.T)) {
		if failed {
			t.Run(name, func(t *testing.T) { t.Fatal("not run: an earlier scenario failed") })
			return
		}
		if !t.Run(name, fn) {
			failed = true
			for _, n := range e.nodes {
				t.Logf("agent %s log:\n%s", n, e.agentLog(n))
			}
		}
	}

	step("manifests", func(t *testing.T) {
		ds, err := c.Admin.Dyn.Resource(appsDS).Namespace(kube.Namespace).Get(ctx, "fabctl-agent", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the shipped DaemonSet was not created: %v", err)
		}
		managers := map[string]bool{}
		for _, m := range ds.GetManagedFields() {
			managers[m.Manager+"/"+string(m.Operation)] = true
		}
		if !managers["kubectl/Apply"] {
			t.Fatalf("the DaemonSet's managers %v: want kubectl's server-side apply", managers)
		}
	})
	// 1. Convergence, with the batch limit watched from outside.
	step("converge with max-unavailable 2", func(t *testing.T) {
		w := watchUnavailable(t, e)
		out, errOut, code := e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--max-unavailable", "2", "--host-timeout", "2m", specDir)
		most := w.Max()
		d := decodeApply(t, out, errOut)
		if code != 0 || d.Status != "applied" || d.Counts.Applied != N {
			t.Fatalf("apply: exit %d status %s counts %+v\n%s\n%s", code, d.Status, d.Counts, out, errOut)
		}
		if most > 2 {
			t.Fatalf("%d hosts were released and not yet applied at once; --max-unavailable 2", most)
		}
		if most < 1 {
			t.Fatalf("the watch saw no host in flight (max %d): the invariant was not observed", most)
		}
		for _, n := range e.nodes {
			o := e.get(n)
			if !o.AppliedCurrent() || o.Status.ObservedGeneration != o.Metadata.Generation {
				t.Errorf("%s: not applied for generation %d: %+v", n, o.Metadata.Generation, o.Status)
			}
			if m := e.mtu(n); m != "9000" {
				t.Errorf("%s: MTU in netns %s is %s, want 9000", n, e.netns(n), m)
			}
			if tainted, err := c.Tainted(ctx, n); err != nil || tainted {
				t.Errorf("%s: still tainted %s after a verified apply (%v)", n, kube.TaintKey, err)
			}
			if code, body := e.ready(n); code != http.StatusOK || !strings.Contains(body, "watching FabricHostConfig "+n) {
				t.Errorf("%s: readiness probe %d %q, want 200 while the agent watches", n, code, body)
			}
		}
		out, errOut, code = e.run(kc, "plan", "--engine", "kubernetes", "--json", "--detailed-exitcode", specDir)
		if code != 0 {
			t.Fatalf("plan --engine kubernetes after apply: exit %d (want 0, no changes)\n%s\n%s", code, out, errOut)
		}
	})

	// 5. Security: the pod-bound token of h1's agent.
	step("agent cannot write another node's status or any spec", func(t *testing.T) {
		tok, _ := os.ReadFile(e.pods["h1"] + "/token")
		cl, err := kube.NewClients(c.TokenConfig(string(tok)))
		if err != nil {
			t.Fatal(err)
		}
		st := e.get("h2").Status
		b, _ := kube.StatusPatch(&st)
		_, err = cl.Dyn.Resource(kube.GVR).Patch(ctx, "h2", types.MergePatchType, b, metav1.PatchOptions{}, "status")
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "may not modify") {
			t.Fatalf("h1's agent writing h2's status: %v; want 422 from the admission policy", err)
		}
		own := e.get("h1").Status
		b, _ = kube.StatusPatch(&own)
		if _, err := cl.Dyn.Resource(kube.GVR).Patch(ctx, "h1", types.MergePatchType, b, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("h1's agent writing its own status: %v", err)
		}
		_, err = cl.Dyn.Resource(kube.GVR).Patch(ctx, "h1", types.MergePatchType, []byte(`{"spec":{"hold":true}}`), metav1.PatchOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("h1's agent writing its own spec: %v; want 403 from RBAC", err)
		}
	})

	// 5b. Least privilege on the Node: each write but the documented taint
	// is refused, through h1's agent's own token (h1 is the GPU node).
	step("agent writes only its node's fabctl.io/unconfigured:NoSchedule taint", func(t *testing.T) {
		tok, _ := os.ReadFile(e.pods["h1"] + "/token")
		checkAgentNodeWrites(t, c, string(tok), "h1", "h2")
	})

	// 7. Version skew: an envelope the agent does not speak.
	step("unknown protocol refused, host untouched", func(t *testing.T) {
		before := e.mtu("h6")
		o := e.get("h6")
		var in map[string]any
		_ = json.Unmarshal(o.Spec.Intent, &in)
		nics := in["NICs"].([]any)
		nics[0].(map[string]any)["MTU"] = 4000
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"protocol": 99, "intent": in}})
		if _, err := c.Admin.Dyn.Resource(kube.GVR).Patch(ctx, "h6", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "e2e"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "h6 Applied=False Incompatible", func() bool {
			o := e.get("h6")
			cnd := o.Status.Cond(kube.CondApplied)
			return o.Status.ObservedGeneration == o.Metadata.Generation && cnd != nil && cnd.Status == "False" && cnd.Reason == kube.ReasonIncompatible
		})
		if after := e.mtu("h6"); after != before {
			t.Fatalf("h6's MTU changed from %s to %s under an unknown protocol", before, after)
		}
		// plan shows it failed; apply publishes it again (protocol 1) and fixes it.
		if _, _, code := e.run(kc, "plan", "--engine", "kubernetes", "--json", specDir); code != 1 {
			t.Fatalf("plan with an Incompatible host: exit %d, want 1", code)
		}
		out, errOut, code := e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", specDir)
		if code != 0 {
			t.Fatalf("apply to repair h6: exit %d\n%s\n%s", code, out, errOut)
		}
		if o := e.get("h6"); !o.AppliedCurrent() || o.Spec.Protocol != kube.Protocol {
			t.Fatalf("h6 after repair: %+v", o.Status)
		}
	})

	// 2. Failure budget: h3 loses its NIC; --on-failure stop.
	step("failing host stops the rollout at the failure budget", func(t *testing.T) {
		testutil.Run(t, "ip", "-n", e.netns("h3"), "link", "del", "v0a")
		out, errOut, code := e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--max-unavailable", "1", "--canary", "0",
			"--on-failure", "stop", "--var", "mtu=8000", specDir)
		d := decodeApply(t, out, errOut)
		if code != 1 || d.Status != "failed" {
			t.Fatalf("apply with a failing host: exit %d status %s\n%s\n%s", code, d.Status, out, errOut)
		}
		if d.Counts.Applied != 2 || d.Counts.Failed != 1 || d.Counts.NotAttempted != 3 {
			t.Fatalf("counts %+v: want h1, h2 applied, h3 failed, h4-h6 not attempted (hosts go in name order, one at a time)", d.Counts)
		}
		if o := e.get("h3"); o.Status.Cond(kube.CondApplied).Status != "False" || !o.Status.IsTrue(kube.CondDegraded) {
			t.Fatalf("h3 status: %+v", o.Status)
		}
		for _, n := range []string{"h4", "h5", "h6"} {
			if m := e.mtu(n); m != "9000" {
				t.Errorf("%s was changed (MTU %s) after the budget was spent", n, m)
			}
		}
		e.addLink("h3")
		out, errOut, code = e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--max-unavailable", "50%", "--var", "mtu=8000", specDir)
		if d := decodeApply(t, out, errOut); code != 0 || d.Counts.Applied != 4 {
			t.Fatalf("apply after repairing h3: exit %d counts %+v\n%s\n%s", code, d.Counts, out, errOut)
		}
	})

	// 4. Reboot: the agent restarts, the link is back at defaults, the node
	// re-registers tainted; the agent re-applies and lifts the taint only
	// once verified.
	step("reboot re-applies, taint lifted only after verify", func(t *testing.T) {
		before := e.get("h2")
		e.stopAgent("h2")
		testutil.Run(t, "ip", "-n", e.netns("h2"), "link", "set", "v0a", "mtu", "1500")
		if err := c.Taint(ctx, "h2"); err != nil {
			t.Fatal(err)
		}
		e.startAgent("h2")
		waitFor(t, 60*time.Second, "h2's taint lifted", func() bool {
			tainted, err := c.Tainted(ctx, "h2")
			if err != nil || tainted {
				return false
			}
			// The taint is gone: the host must already be configured and
			// its verified state recorded.
			if m := e.mtu("h2"); m != "8000" {
				t.Fatalf("taint lifted while the MTU is %s (not yet applied)", m)
			}
			if o := e.get("h2"); !o.AppliedCurrent() || o.Status.Changes == 0 {
				t.Fatalf("taint lifted before the agent recorded a verified apply: %+v", o.Status)
			}
			return true
		})
		if o := e.get("h2"); o.Metadata.Generation != before.Metadata.Generation {
			t.Fatalf("the spec changed (generation %d -> %d): the re-apply must need none", before.Metadata.Generation, o.Metadata.Generation)
		}
	})

	// 3. Drift: someone changes a NIC on h5; its agent reports it within a
	// second, plan shows it without SSH, apply corrects it.
	step("drift reported within a second, plan shows it, apply corrects it", func(t *testing.T) {
		if o := e.get("h5"); o.Status.IsTrue(kube.CondDrifted) {
			t.Fatalf("h5 drifted before the change: %+v", o.Status)
		}
		changed := time.Now()
		testutil.Run(t, "ip", "-n", e.netns("h5"), "link", "set", "v0a", "mtu", "1500")
		waitFor(t, 5*time.Second, "h5 Drifted=True", func() bool { return e.get("h5").Status.IsTrue(kube.CondDrifted) })
		took := time.Since(changed)
		t.Logf("drift reported in %s", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("drift took %s to reach the status, want within a second", took)
		}
		o := e.get("h5")
		if len(o.Status.Drift) != 1 || o.Status.Drift[0].Path != "nic/v0a/mtu" || o.Status.Drift[0].Live != "1500" || o.Status.Drift[0].Applied != "8000" {
			t.Fatalf("h5 drift: %+v", o.Status.Drift)
		}
		out, errOut, code := e.run(kc, "drift", "--engine", "kubernetes", "--json", "--var", "mtu=8000", specDir)
		if code != 2 || !strings.Contains(out, `"drift"`) || !strings.Contains(out, "nic/v0a/mtu") {
			t.Fatalf("drift --engine kubernetes: exit %d (want 2)\n%s\n%s", code, out, errOut)
		}
		out, errOut, code = e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--var", "mtu=8000", specDir)
		if d := decodeApply(t, out, errOut); code != 0 || d.Counts.Applied != 1 {
			t.Fatalf("apply to correct h5: exit %d counts %+v\n%s\n%s", code, d.Counts, out, errOut)
		}
		if m := e.mtu("h5"); m != "8000" {
			t.Fatalf("h5 MTU %s after the correcting apply", m)
		}
		if o := e.get("h5"); o.Status.IsTrue(kube.CondDrifted) {
			t.Fatalf("h5 still drifted after the correcting apply: %+v", o.Status)
		}
	})

	// 6. API server restart mid-rollout: watches resume, no double apply.
	step("apiserver restart mid-rollout", func(t *testing.T) {
		type res struct {
			out, errOut string
			code        int
		}
		done := make(chan res, 1)
		go func() {
			o, eo, c := e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--max-unavailable", "1", "--canary", "0", "--var", "mtu=7000", specDir)
			done <- res{o, eo, c}
		}()
		waitFor(t, 60*time.Second, "the first host of the rollout applied", func() bool {
			return e.mtu("h1") == "7000"
		})
		c.StopAPIServer()
		// The agents' watches end with the apiserver: their readiness
		// probes say so (the DaemonSet would count them unavailable).
		waitFor(t, 30*time.Second, "every agent not ready without the apiserver", func() bool {
			for _, n := range e.nodes {
				if code, _ := e.ready(n); code != http.StatusServiceUnavailable {
					return false
				}
			}
			return true
		})
		if code, body := e.ready("h6"); !strings.Contains(body, "FabricHostConfig h6") {
			t.Errorf("h6's readiness without the apiserver: %d %q, want the reason", code, body)
		}
		if err := c.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		var r res
		select {
		case r = <-done:
		case <-time.After(4 * time.Minute):
			t.Fatal("apply did not finish after the apiserver restart")
		}
		if d := decodeApply(t, r.out, r.errOut); r.code != 0 || d.Counts.Applied != N {
			t.Fatalf("apply across the restart: exit %d counts %+v\n%s\n%s", r.code, d.Counts, r.out, r.errOut)
		}
		waitFor(t, 60*time.Second, "every agent ready again", func() bool {
			for _, n := range e.nodes {
				if code, _ := e.ready(n); code != http.StatusOK {
					return false
				}
			}
			return true
		})
		for _, n := range e.nodes {
			if m := e.mtu(n); m != "7000" {
				t.Errorf("%s: MTU %s, want 7000", n, m)
			}
			// Each agent logs one line per generation it converges; this
			// revision must have been converged exactly once per host, with
			// its changes (a re-list after the restart converges nothing).
			log := e.agentLogAll(n)
			rev := e.get(n).Spec.Revision
			if k := strings.Count(log, "revision "+rev+": "); k != 1 {
				t.Errorf("%s converged revision %s %d times, want 1 (no double apply after the restart)", n, rev, k)
			}
			if !strings.Contains(log, "revision "+rev+": Applied") {
				t.Errorf("%s: no verified apply of revision %s in its agent's log", n, rev)
			}
		}
	})

	// Two pipelines on two machines: the Lease excludes the second.
	step("two applies exclude each other through the Lease", func(t *testing.T) {
		e.stopAgent("h4") // the first run waits for h4's agent and holds the lock
		type res struct {
			out, errOut string
			code        int
		}
		done := make(chan res, 1)
		go func() {
			o, eo, c := e.run(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--host-timeout", "3m", "--var", "mtu=6000", specDir)
			done <- res{o, eo, c}
		}()
		waitFor(t, 60*time.Second, "the first apply holds the Lease", func() bool {
			h, err := kube.LeaseHolder(ctx, c.Admin, "kt")
			return err == nil && h != ""
		})
		kc2, err := c.WriteKubeconfig("machine-b", c.AdminToken())
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := e.run(kc2, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--host-timeout", "20s", "--var", "mtu=6000", specDir)
		d := decodeApply(t, out, errOut)
		if code != 4 || d.Status != "locked" || d.Lock == nil || d.Lock.Who == "" {
			t.Fatalf("second apply while the first holds the Lease: exit %d status %s\n%s\n%s", code, d.Status, out, errOut)
		}
		e.startAgent("h4")
		r := <-done
		if d := decodeApply(t, r.out, r.errOut); r.code != 0 || d.Status != "applied" {
			t.Fatalf("first apply: exit %d %+v\n%s\n%s", r.code, d, r.out, r.errOut)
		}
		out, errOut, code = e.run(kc2, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--var", "mtu=6000", specDir)
		if d := decodeApply(t, out, errOut); code != 0 || d.Status != "no_changes" {
			t.Fatalf("second apply after the first released the Lease: exit %d %s\n%s\n%s", code, d.Status, out, errOut)
		}
	})

	moreScenarios(e, step, specDir, kc) // scenarios2_test.go
	waveScenarios(e, step, kc)          // waves_test.go

	// The resources the DaemonSet asks for hold what the agents used
	// through every scenario above (peak RSS of each agent process).
	step("agents within the DaemonSet's memory limit", func(t *testing.T) {
		e.checkAgentMemory(ctx)
	})
}
