package kubetb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/kube"
)

// kubectlBin finds kubectl: FABCTL_KUBECTL, or the one testbed/kube/build.sh
// builds beside kube-apiserver (the same Kubernetes release, from the
// module proxy). Missing, the test skips with what to do (fails under
// CI=true).
func kubectlBin(t *testing.T, apiserver string) string {
	t.Helper()
	k := os.Getenv("FABCTL_KUBECTL")
	if k == "" {
		k = filepath.Join(filepath.Dir(apiserver), "kubectl")
	}
	if _, err := os.Stat(k); err != nil {
		testutil.SkipOrFail(t, "needs kubectl: run testbed/kube/build.sh (it builds kubectl beside kube-apiserver), or set FABCTL_KUBECTL")
	}
	return k
}

// kubectl runs kubectl against the cluster as its admin, with a home of
// its own (its discovery cache), and returns stdout; a failure fails the
// test with kubectl's output.
func (e *env) kubectl(stdin []byte, args ...string) string {
	e.t.Helper()
	out, errOut, err := runKubectl(e.kubectlPath, e.c.Kubeconfig, e.dir, stdin, args...)
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func runKubectl(kubectl, kubeconfig, dir string, stdin []byte, args ...string) (string, string, error) {
	home := filepath.Join(dir, "kubectl-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", "", err
	}
	cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// fabctlOut runs the fabctl CLI without a cluster and returns its stdout.
func fabctlOut(t *testing.T, fabctl, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(fabctl, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_COLOR=1"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("fabctl %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// kubectlInstall is the e2e's Options.Install: what a user does, the
// manifests `fabctl kube manifests` prints, applied with kubectl apply
// --server-side, then the same manifests (and ones with every placement
// flag set) sent through kubectl apply --dry-run=server, which the
// apiserver must accept too.
func kubectlInstall(t *testing.T, kubectl, fabctl, dir string) func(context.Context, *Cluster) error {
	return func(ctx context.Context, c *Cluster) error {
		run := func(stdin []byte, args ...string) (string, error) {
			out, errOut, err := runKubectl(kubectl, c.Kubeconfig, dir, stdin, args...)
			if err != nil {
				return "", fmt.Errorf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
			}
			t.Logf("kubectl %s:\n%s", strings.Join(args, " "), strings.TrimSpace(out))
			return out, nil
		}
		m := fabctlOut(t, fabctl, dir, "kube", "manifests", "--image", "fabctl:e2e")
		out, err := run(m, "apply", "--server-side", "-f", "-")
		if err != nil {
			return err
		}
		if n := strings.Count(out, "serverside-applied"); n != 9 {
			return fmt.Errorf("kubectl apply --server-side applied %d objects, want the 9 fabctl ships:\n%s", n, out)
		}
		if _, err := run(nil, "wait", "--for", "condition=established", "--timeout", "60s", "crd/fabrichostconfigs.fabctl.io"); err != nil {
			return err
		}
		// Client-side apply (kubectl's default) with the server's dry run:
		// every object is validated and admitted, nothing is stored.
		if out, err = run(m, "apply", "--dry-run=server", "-f", "-"); err != nil {
			return err
		}
		if n := strings.Count(out, "(server dry run)"); n != 9 {
			return fmt.Errorf("kubectl apply --dry-run=server: %d objects, want 9:\n%s", n, out)
		}
		variant := fabctlOut(t, fabctl, dir, "kube", "manifests", "--image", "registry.example/fabctl:v9@sha256:"+strings.Repeat("ab", 32),
			"--node-selector", "nvidia.com/gpu.present=true,!node-role.kubernetes.io/control-plane,rack in (r1,r2)",
			"--toleration", "dedicated=gpu:NoSchedule", "--toleration", "maintenance", "--max-unavailable", "3", "--probe-port", "19466")
		for _, args := range [][]string{{"apply", "--server-side", "--dry-run=server", "-f", "-"}, {"apply", "--dry-run=server", "-f", "-"}} {
			if out, err = run(variant, args...); err != nil {
				return err
			}
			if n := strings.Count(out, "(server dry run)"); n != 9 {
				return fmt.Errorf("kubectl %s of the manifests with every placement flag: %d objects, want 9:\n%s", strings.Join(args, " "), n, out)
			}
		}
		return nil
	}
}

// labelTopology runs the kubectl commands `fabctl topology --format
// k8s-labels` prints for the spec: the labels that make a node a fabric
// host.
func (e *env) labelTopology(specDir string) {
	e.t.Helper()
	out := fabctlOut(e.t, e.fabctl, e.dir, "topology", specDir, "--format", "k8s-labels")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "kubectl" || f[1] != "label" || f[2] != "node" {
			e.t.Fatalf("fabctl topology --format k8s-labels printed %q, not a kubectl label command", line)
		}
		e.kubectl(nil, f[1:]...)
		n++
	}
	if n != len(e.nodes) {
		e.t.Fatalf("fabctl topology labelled %d nodes, want %d", n, len(e.nodes))
	}
}

// checkPlacement: the DaemonSet places an agent on exactly the fabric
// hosts (a GPU node among them), not on a control-plane or CPU-only node.
func (e *env) checkPlacement(ctx context.Context, others ...string) {
	e.t.Helper()
	for _, n := range e.nodes {
		if ok, why, err := e.c.Places(ctx, n); err != nil || !ok {
			e.t.Fatalf("the agent DaemonSet does not run on fabric host %s: %s %v", n, why, err)
		}
	}
	for _, n := range others {
		if ok, _, err := e.c.Places(ctx, n); err != nil || ok {
			e.t.Fatalf("the agent DaemonSet runs on %s, which is no fabric host (%v)", n, err)
		}
	}
}

// nodeWrite is one write an agent tries on a Node.
type nodeWrite struct {
	name  string
	node  string
	pt    types.PatchType
	patch string
	// sub is the subresource ("" or "status"); verb "delete" or "update"
	// instead of a patch.
	sub, verb string
	// want: "policy" (422 from the admission policy, with msg in the
	// error), "rbac" (403).
	want, msg string
}

// agentNodeWrites are the writes to its own Node (and another's) that an
// agent's token must be refused: everything but the documented taint.
func agentNodeWrites(own, other string) []nodeWrite {
	merge := types.MergePatchType
	taints := func(extra string) string {
		return `{"spec":{"taints":[` + extra + `]}}`
	}
	// own carries the GPU taint (a GPU node), and no fabctl.io/unconfigured
	// any more: its agent lifted it after a verified apply.
	gpu := `{"key":"nvidia.com/gpu","effect":"NoSchedule"}`
	return []nodeWrite{
		{name: "another node's taint", node: other, pt: merge, patch: taints(""), want: "policy", msg: "may not modify nodes '" + other + "'"},
		{name: "annotation", node: own, pt: merge, patch: `{"metadata":{"annotations":{"x.example/y":"z"}}}`, want: "policy", msg: "metadata"},
		{name: "label added", node: own, pt: merge, patch: `{"metadata":{"labels":{"x.example/y":"z"}}}`, want: "policy", msg: "metadata"},
		{name: "label removed", node: own, pt: merge, patch: `{"metadata":{"labels":{"fabctl.io/fabric":null}}}`, want: "policy", msg: "metadata"},
		{name: "label by JSON patch", node: own, pt: types.JSONPatchType, patch: `[{"op":"add","path":"/metadata/labels/x.example~1y","value":"z"}]`, want: "policy", msg: "metadata"},
		{name: "label by server-side apply", node: own, pt: types.ApplyPatchType, patch: `{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + own + `","labels":{"x.example/y":"z"}}}`, want: "policy", msg: "metadata"},
		{name: "finalizer", node: own, pt: merge, patch: `{"metadata":{"finalizers":["x.example/hold"]}}`, want: "policy", msg: "metadata"},
		{name: "owner reference", node: own, pt: merge, patch: `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"default","uid":"6b0d8f3e-0b1a-4c9e-9a4f-1d2c3b4a5e6f"}]}}`, want: "policy", msg: "metadata"},
		{name: "another taint added", node: own, pt: merge, patch: taints(gpu + `,{"key":"x.example/y","effect":"NoSchedule"}`), want: "policy", msg: "other taints"},
		{name: "another taint removed", node: own, pt: merge, patch: taints(""), want: "policy", msg: "other taints"},
		{name: "another taint's effect", node: own, pt: merge, patch: taints(`{"key":"nvidia.com/gpu","effect":"NoExecute"}`), want: "policy", msg: "other taints"},
		{name: "the taint as NoExecute", node: own, pt: merge, patch: taints(gpu + `,{"key":"fabctl.io/unconfigured","effect":"NoExecute"}`), want: "policy", msg: "effect NoSchedule"},
		{name: "the taint as PreferNoSchedule", node: own, pt: merge, patch: taints(gpu + `,{"key":"fabctl.io/unconfigured","effect":"PreferNoSchedule"}`), want: "policy", msg: "effect NoSchedule"},
		{name: "the taint with a value", node: own, pt: merge, patch: taints(gpu + `,{"key":"fabctl.io/unconfigured","value":"x","effect":"NoSchedule"}`), want: "policy", msg: "no value"},
		{name: "unschedulable", node: own, pt: merge, patch: `{"spec":{"unschedulable":true}}`, want: "policy", msg: "spec"},
		{name: "podCIDR", node: own, pt: merge, patch: `{"spec":{"podCIDR":"10.244.9.0/24","podCIDRs":["10.244.9.0/24"]}}`, want: "policy", msg: "spec"},
		{name: "providerID", node: own, pt: merge, patch: `{"spec":{"providerID":"x://y"}}`, want: "policy", msg: "spec"},
		{name: "status conditions", node: own, pt: merge, sub: "status", patch: `{"status":{"conditions":[{"type":"Ready","status":"False","reason":"x"}]}}`, want: "rbac"},
		{name: "status capacity", node: own, pt: merge, sub: "status", patch: `{"status":{"capacity":{"x.example/nic":"8"}}}`, want: "rbac"},
		{name: "delete", node: own, verb: "delete", want: "rbac"},
		{name: "update (PUT)", node: own, verb: "update", want: "rbac"},
	}
}

// nodeState is what a refused write must leave as it was.
func nodeState(t *testing.T, core corev1client.CoreV1Interface, name string) corev1.Node {
	t.Helper()
	n, err := core.Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.ManagedFields, n.ResourceVersion = nil, ""
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].LastHeartbeatTime = metav1.Time{}
	}
	return *n
}

// checkAgentNodeWrites tries each write with the agent's own token
// (through the apiserver's authentication, RBAC and the admission policy)
// and checks it is refused by the layer it names, with the Node left as
// it was; then that the one documented write passes: the agent removing
// its node's taint, and putting it back as exactly fabctl.io/
// unconfigured:NoSchedule.
func checkAgentNodeWrites(t *testing.T, c *Cluster, token, own, other string) {
	ctx := context.Background()
	agent, err := corev1client.NewForConfig(c.TokenConfig(token))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kube.NewClients(c.TokenConfig(token))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range agentNodeWrites(own, other) {
		t.Run(w.name, func(t *testing.T) {
			before := nodeState(t, c.Core, w.node)
			switch w.verb {
			case "delete":
				err = agent.Nodes().Delete(ctx, w.node, metav1.DeleteOptions{})
			case "update":
				n, gerr := agent.Nodes().Get(ctx, w.node, metav1.GetOptions{})
				if gerr != nil {
					t.Fatal(gerr)
				}
				_, err = agent.Nodes().Update(ctx, n, metav1.UpdateOptions{})
			default:
				opts := metav1.PatchOptions{FieldManager: "fabctl-agent"}
				if w.pt == types.ApplyPatchType {
					force := true
					opts.Force = &force
				}
				var sub []string
				if w.sub != "" {
					sub = []string{w.sub}
				}
				_, err = cl.Dyn.Resource(kube.NodeGVR).Patch(ctx, w.node, w.pt, []byte(w.patch), opts, sub...)
			}
			switch w.want {
			case "policy":
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "fabctl-agent-own-node") || !strings.Contains(err.Error(), w.msg) {
					t.Fatalf("%v; want 422 from the admission policy fabctl-agent-own-node naming %q", err, w.msg)
				}
			case "rbac":
				if !apierrors.IsForbidden(err) {
					t.Fatalf("%v; want 403 from RBAC", err)
				}
			}
			if after := nodeState(t, c.Core, w.node); !reflect.DeepEqual(before, after) {
				b, _ := json.Marshal(before)
				a, _ := json.Marshal(after)
				t.Fatalf("the refused write changed node %s:\nbefore %s\nafter  %s", w.node, b, a)
			}
		})
	}
	t.Run("status through the node itself is not stored", func(t *testing.T) {
		before := nodeState(t, c.Core, own)
		_, err := cl.Dyn.Resource(kube.NodeGVR).Patch(ctx, own, types.MergePatchType, []byte(`{"status":{"capacity":{"x.example/nic":"8"}}}`), metav1.PatchOptions{FieldManager: "fabctl-agent"})
		if err != nil {
			t.Logf("refused: %v", err)
		}
		if after := nodeState(t, c.Core, own); !reflect.DeepEqual(before.Status, after.Status) {
			t.Fatalf("the agent changed its node's status through the node: %+v", after.Status)
		}
	})
	t.Run("the documented taint passes", func(t *testing.T) {
		n := nodeState(t, c.Core, own)
		var keep []corev1.Taint
		for _, tt := range n.Spec.Taints {
			if tt.Key != kube.TaintKey {
				keep = append(keep, tt)
			}
		}
		set := func(ts []corev1.Taint) {
			t.Helper()
			b, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": ts}})
			if _, err := cl.Dyn.Resource(kube.NodeGVR).Patch(ctx, own, types.MergePatchType, b, metav1.PatchOptions{FieldManager: "fabctl-agent"}); err != nil {
				t.Fatalf("the agent setting its node's taints to %v: %v", ts, err)
			}
		}
		gate := corev1.Taint{Key: kube.TaintKey, Effect: corev1.TaintEffectNoSchedule}
		set(append(append([]corev1.Taint(nil), keep...), gate))
		if tainted, err := c.Tainted(ctx, own); err != nil || !tainted {
			t.Fatalf("taint not put back: %v", err)
		}
		set(keep)
		if tainted, err := c.Tainted(ctx, own); err != nil || tainted {
			t.Fatalf("taint not removed: %v", err)
		}
		after := nodeState(t, c.Core, own)
		n.Spec.Taints, after.Spec.Taints = keep, keep
		if !reflect.DeepEqual(n, after) {
			t.Fatalf("the taint writes changed more of the node")
		}
	})
}

// ready is node's agent's readiness probe: the status code of GET
// /readyz and its text.
func (e *env) ready(node string) (int, string) {
	e.mu.Lock()
	port := e.probes[node]
	e.mu.Unlock()
	cl := &http.Client{Timeout: 2 * time.Second}
	r, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
	if err != nil {
		return 0, err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, strings.TrimSpace(string(b))
}

// checkAgentMemory compares the peak RSS (VmHWM) of every running agent
// with the memory request and limit of the installed DaemonSet: the
// limit must hold it, and the figure is logged (docs/kubernetes.md, The
// DaemonSet).
func (e *env) checkAgentMemory(ctx context.Context) {
	e.t.Helper()
	ds, err := e.c.daemonSet(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	res := ds.Spec.Template.Spec.Containers[0].Resources
	limit, request := res.Limits.Memory().Value(), res.Requests.Memory().Value()
	e.mu.Lock()
	defer e.mu.Unlock()
	var most int64
	for node, cmd := range e.agents {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			e.t.Fatalf("agent %s: %v", node, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				most = max(most, kb*1024)
			}
		}
	}
	e.t.Logf("agents' peak RSS: %.1f MiB (DaemonSet request %d MiB, limit %d MiB)", float64(most)/(1<<20), request>>20, limit>>20)
	if most == 0 || most > limit {
		e.t.Fatalf("agents' peak RSS %d bytes, DaemonSet memory limit %d", most, limit)
	}
}
