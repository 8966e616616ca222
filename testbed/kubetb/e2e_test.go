package kubetb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/kube"
)

// binaries finds kube-apiserver (FABCTL_KUBE_APISERVER, or the cache
// testbed/kube/build.sh fills) and etcd (PATH): missing, the test skips
// with what to do, and fails under CI=true.
func binaries(t *testing.T) (apiserver, etcd string) {
	t.Helper()
	root := testutil.RepoRoot(t)
	apiserver = os.Getenv("FABCTL_KUBE_APISERVER")
	if apiserver == "" {
		out, err := exec.Command(filepath.Join(root, "testbed/kube/build.sh"), "--key").Output()
		if err == nil {
			apiserver = filepath.Join(strings.TrimSpace(string(out)), "kube-apiserver")
		}
	}
	if _, err := os.Stat(apiserver); apiserver == "" || err != nil {
		testutil.SkipOrFail(t, "needs kube-apiserver: run testbed/kube/build.sh (or make e2e-kube), or set FABCTL_KUBE_APISERVER")
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		testutil.SkipOrFail(t, "needs etcd: apt-get install etcd-server")
	}
	return apiserver, etcd
}

// buildFabctl builds the fabctl binary the agents and the CLI run.
func buildFabctl(t *testing.T, dir string) string {
	t.Helper()
	exe := filepath.Join(dir, "fabctl")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/fabctl")
	cmd.Dir = testutil.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/fabctl: %v\n%s", err, out)
	}
	return exe
}

// env is one test run: the cluster, the hosts and their agents.
type env struct {
	t      *testing.T
	c      *Cluster
	fabctl string
	dir    string
	prefix string // netns names: <prefix>h<i>; unique per run
	nodes  []string
	mu     sync.Mutex
	agents map[string]*exec.Cmd
	pods   map[string]string // node -> token dir
	probes map[string]int    // node -> the port of its agent's readiness probe
	cliEnv []string          // more environment for the CLI (a switch's password)
	// kubectlPath is kubectl (testbed/kube/build.sh builds it).
	kubectlPath string
}

func (e *env) netns(node string) string { return e.prefix + node }

// startAgent starts node's agent as the DaemonSet pod would run it, its
// readiness probe on a loopback port of its own (the DaemonSet's port is
// the same on every node; here every agent shares one machine).
func (e *env) startAgent(node string) {
	e.t.Helper()
	e.mu.Lock()
	port := e.probes[node]
	e.mu.Unlock()
	if port == 0 {
		var err error
		if port, err = FreePort(); err != nil {
			e.t.Fatal(err)
		}
		e.mu.Lock()
		e.probes[node] = port
		e.mu.Unlock()
	}
	cmd := exec.Command(e.fabctl, "agent", "--kube", "--kube-netns", e.netns(node), "--kube-token-dir", e.pods[node],
		"--kube-probe-addr", "127.0.0.1:"+strconv.Itoa(port))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir}, e.c.PodEnv(node)...)
	f, err := os.OpenFile(filepath.Join(e.dir, "agent-"+node+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); f.Close() }()
	e.mu.Lock()
	e.agents[node] = cmd
	e.mu.Unlock()
}

func (e *env) stopAgent(node string) {
	e.mu.Lock()
	cmd := e.agents[node]
	delete(e.agents, node)
	e.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			for !exited(cmd) {
				time.Sleep(50 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
}

func (e *env) agentLog(node string) string { return tail(filepath.Join(e.dir, "agent-"+node+".log")) }

// addLink gives node's netns its NIC: veth v0a (the NIC fabctl
// configures) and v0b, both inside the namespace.
func (e *env) addLink(node string) {
	testutil.Run(e.t, "ip", "-n", e.netns(node), "link", "add", "v0a", "type", "veth", "peer", "name", "v0b")
}

// spec writes the fabric spec for the nodes (host name = node name).
func (e *env) spec() string {
	var b strings.Builder
	b.WriteString(`variable "mtu" {
  type    = number
  default = 9000
}
fabric "kt" {
  transport = "iwarp"
  mtu       = var.mtu
}
`)
	for i, n := range e.nodes {
		fmt.Fprintf(&b, `host %q {
  connect = "netns:%s"
  nic "v0a" {
    device    = "siw0"
    addresses = ["198.18.%d.1/31"]
  }
}
`, n, e.netns(n), i)
	}
	p := filepath.Join(e.dir, "spec", "fabric.fab.hcl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return filepath.Dir(p)
}

// run runs the fabctl CLI (a controller machine) and returns its stdout,
// stderr and exit code.
func (e *env) run(kubeconfig string, args ...string) (string, string, int) {
	cmd := exec.Command(e.fabctl, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "KUBECONFIG=" + kubeconfig, "NO_COLOR=1"}, e.cliEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("fabctl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

func (e *env) get(name string) *kube.FabricHostConfig {
	e.t.Helper()
	u, err := e.c.Admin.Dyn.Resource(kube.GVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get %s: %v", name, err)
	}
	o, err := kube.FromUnstructured(u)
	if err != nil {
		e.t.Fatal(err)
	}
	return o
}

func (e *env) mtu(node string) string {
	out := testutil.Run(e.t, "ip", "-n", e.netns(node), "-o", "link", "show", "v0a")
	f := strings.Fields(out)
	for i := range f {
		if f[i] == "mtu" && i+1 < len(f) {
			return f[i+1]
		}
	}
	return "?"
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unavailable watches the fabric's objects during a rollout and records
// the most hosts at once whose current generation is released but not
// yet Applied (the --max-unavailable invariant).
type unavailable struct {
	mu   sync.Mutex
	max  int
	stop func()
	done chan struct{}
}

func watchUnavailable(t *testing.T, e *env) *unavailable {
	ctx, cancel := context.WithCancel(context.Background())
	u := &unavailable{stop: cancel, done: make(chan struct{})}
	objs, rv, err := kube.ListFabric(ctx, e.c.Admin, "kt")
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.c.Admin.Dyn.Resource(kube.GVR).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(u.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			uo, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			o, err := kube.FromUnstructured(uo)
			if err != nil {
				continue
			}
			objs[o.Metadata.Name] = o
			n := 0
			for _, x := range objs {
				if !x.AppliedCurrent() && !x.FailedCurrent() {
					n++
				}
			}
			u.mu.Lock()
			u.max = max(u.max, n)
			u.mu.Unlock()
		}
	}()
	return u
}

func (u *unavailable) Max() int {
	u.stop()
	<-u.done
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.max
}

type applyDoc struct {
	Status string `json:"status"`
	Counts struct {
		Applied      int `json:"applied"`
		Failed       int `json:"failed"`
		NotAttempted int `json:"not_attempted"`
		Unchanged    int `json:"unchanged"`
	} `json:"counts"`
	Lock *struct {
		Who string `json:"who"`
	} `json:"lock"`
}

func decodeApply(t *testing.T, out, errOut string) applyDoc {
	t.Helper()
	var d applyDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("apply --json output: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	return d
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var appsDS = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}

// agentLogAll is a node's whole agent log (every process it ran).
func (e *env) agentLogAll(node string) string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "agent-"+node+".log"))
	return string(b)
}
