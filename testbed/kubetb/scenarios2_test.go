package kubetb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/plan"
)

// journalLine is one journal entry as the e2e reads it.
type journalLine = apply.Entry

// readJournal reads a run's journal file.
func readJournal(t *testing.T, path string) []journalLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := apply.ParseJournal(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// events are a journal's lines for one device, in order.
func events(lines []journalLine, device string) []journalLine {
	var out []journalLine
	for _, l := range lines {
		if l.Device == device {
			out = append(out, l)
		}
	}
	return out
}

func eventNames(ls []journalLine) string {
	var s []string
	for _, l := range ls {
		s = append(s, l.Event)
	}
	return strings.Join(s, ",")
}

// applyJSON runs apply --engine kubernetes --auto-approve --json and
// decodes the document (status, counts, journal, devices).
type applyFull struct {
	Status  string `json:"status"`
	Journal string `json:"journal"`
	Error   string `json:"error"`
	Counts  struct {
		Applied      int `json:"applied"`
		Failed       int `json:"failed"`
		RolledBack   int `json:"rolled_back"`
		NotAttempted int `json:"not_attempted"`
		Unchanged    int `json:"unchanged"`
	} `json:"counts"`
}

func (e *env) applyKube(kc string, args ...string) (applyFull, string, string, int) {
	e.t.Helper()
	out, errOut, code := e.run(kc, append([]string{"apply", "--engine", "kubernetes", "--auto-approve", "--json"}, args...)...)
	var d applyFull
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		e.t.Fatalf("apply --json output: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	return d, out, errOut, code
}

var (
	ncoTemplates = schema.GroupVersionResource{Group: "configuration.net.nvidia.com", Version: "v1alpha1", Resource: "nicconfigurationtemplates"}
	ncoDevices   = schema.GroupVersionResource{Group: "configuration.net.nvidia.com", Version: "v1alpha1", Resource: "nicdevices"}
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// installNCOCRDs creates nic-configuration-operator's CRDs from the
// excerpt of NVIDIA's published YAML (testdata/nco-crds.yaml) and waits
// until they are served.
func installNCOCRDs(t *testing.T, ctx context.Context, c *Cluster) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "nco-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("testdata/nco-crds.yaml: %v", err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if _, err := c.Admin.Dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating CRD %s: %v", u.GetName(), err)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{ncoTemplates, ncoDevices} {
		waitFor(t, 60*time.Second, gvr.Resource+" served", func() bool {
			_, err := c.Admin.Dyn.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
			return err == nil
		})
	}
}

// moreScenarios continue TestKubeEngine on its cluster (after the
// scenarios of scenarios_test.go; every host at MTU 6000): the journal
// and applied record of a Kubernetes-engine run, --on-failure rollback,
// a nic-configuration-operator overlap, and etcd stopped mid-rollout.
func moreScenarios(e *env, step func(string, func(*testing.T)), specDir, kc string) {
	ctx := context.Background()
	c := e.c
	state := filepath.Join(specDir, ".fabctl")

	// The journal and applied record, as the SSH engine writes them; a
	// later SSH plan diffs the record against the live host (drift).
	step("journal and applied record of a kube apply", func(t *testing.T) {
		prev := map[string]string{}
		for _, n := range e.nodes {
			prev[n] = e.get(n).Spec.Revision
		}
		d, out, errOut, code := e.applyKube(kc, "--max-unavailable", "3", "--canary", "1", "--var", "mtu=5000", specDir)
		if code != 0 || d.Status != "applied" || d.Counts.Applied != len(e.nodes) {
			t.Fatalf("apply: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
		if d.Journal == "" || !strings.HasPrefix(d.Journal, filepath.Join(state, "journal")+"/") {
			t.Fatalf("apply --json journal %q, want a file under %s/journal", d.Journal, state)
		}
		lines := readJournal(t, d.Journal)
		first, last := lines[0], lines[len(lines)-1]
		if first.Event != apply.EventRunStart || first.FormatVersion != apply.JournalFormatVersion || first.Fabric != "kt" ||
			first.Engine != "kubernetes" || first.MaxUnavailable != "3" || first.Canary != 1 || first.Devices != len(e.nodes) {
			t.Fatalf("run_start: %+v", first)
		}
		if last.Event != apply.EventRunEnd || last.Status != "ok" || last.Counts == nil || last.Counts.Applied != len(e.nodes) {
			t.Fatalf("run_end: %+v", last)
		}
		for _, n := range e.nodes {
			o := e.get(n)
			ev := events(lines, "host."+n)
			if got := eventNames(ev); got != "device_start,device_applied,device_verified" {
				t.Fatalf("host.%s journal events %s, want device_start,device_applied,device_verified", n, got)
			}
			st, pub, ver := ev[0], ev[1], ev[2]
			if st.Revision != o.Spec.Revision || st.PreviousRevision != prev[n] || st.Changes != 1 || st.Batch == 0 {
				t.Errorf("host.%s device_start %+v: want revision %s, previous %s, 1 change, a batch", n, st, o.Spec.Revision, prev[n])
			}
			if pub.Generation != o.Metadata.Generation || pub.Revision != o.Spec.Revision {
				t.Errorf("host.%s device_applied %+v: want generation %d", n, pub, o.Metadata.Generation)
			}
			if ver.ObservedGeneration != o.Metadata.Generation || ver.Generation != o.Metadata.Generation || ver.Reason != kube.ReasonApplied {
				t.Errorf("host.%s device_verified %+v: want observed_generation %d, reason Applied", n, ver, o.Metadata.Generation)
			}
		}
		if ev := events(lines, "host.h1"); ev[0].Batch != 1 {
			t.Errorf("host.h1 (the canary) in batch %d, want 1", ev[0].Batch)
		}
		rec, err := plan.LoadApplied(state, "kt")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range e.nodes {
			if v := rec.Devices["host."+n]["nic/v0a/mtu"]; v != "5000" {
				t.Errorf("applied record host.%s nic/v0a/mtu = %q, want 5000 (%v)", n, v, rec.Devices["host."+n])
			}
		}
		// The record is the SSH engine's drift baseline: change h1 by hand,
		// plan over the host driver (netns) reports it against the record.
		testutil.Run(t, "ip", "-n", e.netns("h1"), "link", "set", "v0a", "mtu", "1500")
		out, errOut, code = e.run(kc, "plan", "--json", "--var", "mtu=5000", "--target", "h1", specDir)
		var p struct {
			Devices []struct {
				Address string `json:"address"`
				Drift   []struct {
					Path    string `json:"path"`
					Applied string `json:"applied"`
					Live    string `json:"live"`
				} `json:"drift"`
			} `json:"devices"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Devices) != 1 {
			t.Fatalf("ssh plan after the kube apply: exit %d %v\n%s\n%s", code, err, out, errOut)
		}
		dr := p.Devices[0].Drift
		if len(dr) != 1 || dr[0].Path != "nic/v0a/mtu" || dr[0].Applied != "5000" || dr[0].Live != "1500" {
			t.Fatalf("ssh plan after the kube apply: drift %+v, want nic/v0a/mtu 5000 -> 1500 from the applied record\n%s", dr, out)
		}
		// apply --engine kubernetes corrects it (the agent reported the drift).
		waitFor(t, 10*time.Second, "h1 Drifted=True", func() bool { return e.get("h1").Status.IsTrue(kube.CondDrifted) })
		d, out, errOut, code = e.applyKube(kc, "--var", "mtu=5000", specDir)
		if code != 0 || d.Counts.Applied != 1 || e.mtu("h1") != "5000" {
			t.Fatalf("apply to correct h1: exit %d %+v MTU %s\n%s\n%s", code, d, e.mtu("h1"), out, errOut)
		}
	})

	// --on-failure rollback: h4 loses its NIC; h1-h3 (released one at a
	// time, in name order) applied the new revision and are returned to
	// the previous one, Applied at it, read back in their netns.
	step("on-failure rollback returns the changed hosts to their previous revision", func(t *testing.T) {
		prev := map[string]*kube.FabricHostConfig{}
		for _, n := range e.nodes {
			prev[n] = e.get(n)
		}
		testutil.Run(t, "ip", "-n", e.netns("h4"), "link", "del", "v0a")
		d, out, errOut, code := e.applyKube(kc, "--max-unavailable", "1", "--canary", "0", "--on-failure", "rollback",
			"--host-timeout", "90s", "--var", "mtu=4000", specDir)
		if code != 1 || d.Status != "failed" {
			t.Fatalf("apply with a failing host under rollback: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
		if d.Counts.RolledBack != 3 || d.Counts.NotAttempted != 2 || d.Counts.Applied != 0 {
			t.Fatalf("counts %+v: want h1-h3 rolled back, h4 failed, h5-h6 not attempted\n%s", d.Counts, out)
		}
		for _, n := range []string{"h1", "h2", "h3"} {
			o := e.get(n)
			if o.Spec.Revision != prev[n].Spec.Revision {
				t.Errorf("%s: revision %s after the rollback, want the previous %s", n, o.Spec.Revision, prev[n].Spec.Revision)
			}
			if !o.AppliedCurrent() || o.Status.ObservedGeneration != o.Metadata.Generation || o.Metadata.Generation <= prev[n].Metadata.Generation+1 {
				t.Errorf("%s: not Applied at the rollback's generation (generation %d, before %d): %+v", n, o.Metadata.Generation, prev[n].Metadata.Generation, o.Status)
			}
			if m := e.mtu(n); m != "5000" {
				t.Errorf("%s: MTU %s in netns %s after the rollback, want 5000", n, m, e.netns(n))
			}
		}
		for _, n := range []string{"h5", "h6"} {
			if o := e.get(n); o.Metadata.Generation != prev[n].Metadata.Generation || e.mtu(n) != "5000" {
				t.Errorf("%s was touched (generation %d -> %d, MTU %s) after the budget was spent", n, prev[n].Metadata.Generation, o.Metadata.Generation, e.mtu(n))
			}
		}
		lines := readJournal(t, d.Journal)
		for _, n := range []string{"h1", "h2", "h3"} {
			ev := events(lines, "host."+n)
			if got := eventNames(ev); got != "device_start,device_applied,device_verified,device_rolled_back" {
				t.Errorf("host.%s journal %s", n, got)
			} else if rb := ev[3]; rb.Revision != prev[n].Spec.Revision || rb.ObservedGeneration != e.get(n).Metadata.Generation {
				t.Errorf("host.%s device_rolled_back %+v: want revision %s at generation %d", n, rb, prev[n].Spec.Revision, e.get(n).Metadata.Generation)
			}
		}
		if got := eventNames(events(lines, "host.h4")); !strings.HasPrefix(got, "device_start,device_applied,device_failed") {
			t.Errorf("host.h4 journal %s", got)
		}
		for _, n := range []string{"h5", "h6"} {
			if got := eventNames(events(lines, "host."+n)); got != "device_skipped" {
				t.Errorf("host.%s journal %s, want device_skipped", n, got)
			}
		}
		rec, err := plan.LoadApplied(state, "kt")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range e.nodes {
			if v := rec.Devices["host."+n]["nic/v0a/mtu"]; v != "5000" {
				t.Errorf("applied record host.%s nic/v0a/mtu = %q after the rollback, want 5000", n, v)
			}
		}
		// Repair h4 for the next scenarios.
		e.addLink("h4")
		if d, out, errOut, code := e.applyKube(kc, "--var", "mtu=5000", specDir); code != 0 || e.mtu("h4") != "5000" {
			t.Fatalf("apply after repairing h4: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
	})

	// nic-configuration-operator manages h2's NIC with roceOptimized: plan
	// warns, apply refuses, both naming the node and the operator's
	// objects, and nothing is published.
	step("nic-configuration-operator overlap: plan warns, apply refuses", func(t *testing.T) {
		installNCOCRDs(t, ctx, c)
		const ns = "nic-configuration-operator"
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := c.Admin.Dyn.Resource(nsGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Shaped as the operator's samples (config/samples, docs/examples):
		// the daemon creates the NicDevice and writes its status; the
		// operator lists the matched devices in the template's status.
		dev := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "configuration.net.nvidia.com/v1alpha1", "kind": "NicDevice",
			"metadata": map[string]any{"name": "h2-101d-0000-3b-00", "namespace": ns}}}
		if _, err := c.Admin.Dyn.Resource(ncoDevices).Namespace(ns).Create(ctx, dev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		devStatus := map[string]any{"status": map[string]any{"node": "h2", "type": "101d", "modelName": "ConnectX-7", "partNumber": "mcx75310aas-neat",
			"psid": "mt_0000000838", "serialNumber": "mt2232t13210", "firmwareVersion": "28.39.1002", "dpu": false, "superNIC": false,
			"ports": []any{map[string]any{"pci": "0000:3b:00.0", "networkInterface": "v0a", "rdmaInterface": "mlx5_0"}}}}
		patchStatus(t, ctx, c, ncoDevices, ns, "h2-101d-0000-3b-00", devStatus)
		tmpl := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "configuration.net.nvidia.com/v1alpha1", "kind": "NicConfigurationTemplate",
			"metadata": map[string]any{"name": "roce-h2", "namespace": ns},
			"spec": map[string]any{
				"nodeSelector": map[string]any{"kubernetes.io/hostname": "h2"},
				"nicSelector":  map[string]any{"nicType": "101d"},
				"template": map[string]any{"numVfs": int64(0), "linkType": "Ethernet",
					"roceOptimized": map[string]any{"enabled": true, "qos": map[string]any{"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0"}}}}}}
		if _, err := c.Admin.Dyn.Resource(ncoTemplates).Namespace(ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		patchStatus(t, ctx, c, ncoTemplates, ns, "roce-h2", map[string]any{"status": map[string]any{"nicDevices": []any{"h2-101d-0000-3b-00"}}})
		defer func() {
			_ = c.Admin.Dyn.Resource(ncoTemplates).Namespace(ns).Delete(ctx, "roce-h2", metav1.DeleteOptions{})
		}()

		gens := map[string]int64{}
		for _, n := range e.nodes {
			gens[n] = e.get(n).Metadata.Generation
		}
		names := []string{"host h2", "NicConfigurationTemplate " + ns + "/roce-h2", "NicDevice h2-101d-0000-3b-00"}
		out, errOut, code := e.run(kc, "plan", "--engine", "kubernetes", "--json", "--var", "mtu=4500", specDir)
		var p struct {
			Devices []struct {
				Address  string `json:"address"`
				Findings []struct {
					Severity string `json:"severity"`
					Message  string `json:"message"`
				} `json:"findings"`
			} `json:"devices"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("plan: exit %d %v\n%s\n%s", code, err, out, errOut)
		}
		warned := false
		for _, d := range p.Devices {
			for _, f := range d.Findings {
				if d.Address == "host.h2" && f.Severity == "warning" && containsAll(f.Message, names) {
					warned = true
				} else if strings.Contains(f.Message, "nic-configuration-operator") {
					t.Errorf("%s: an overlap finding on a host the operator does not manage: %s", d.Address, f.Message)
				}
			}
		}
		if !warned {
			t.Fatalf("plan --engine kubernetes: no warning on host.h2 naming %v\n%s", names, out)
		}
		d, out, errOut, code := e.applyKube(kc, "--var", "mtu=4500", specDir)
		if code != 1 || d.Status != "refused" || !containsAll(d.Error, names) {
			t.Fatalf("apply with an overlapping owner: exit %d status %s error %q; want 1, refused, naming %v\n%s", code, d.Status, d.Error, names, errOut)
		}
		for _, n := range e.nodes {
			if g := e.get(n).Metadata.Generation; g != gens[n] {
				t.Errorf("%s was published (generation %d -> %d) although apply refused", n, gens[n], g)
			}
		}
	})

	// etcd stops mid-rollout for longer than the apiserver waits for it
	// (its requests then fail with 5xx), with both writers of a rollout
	// caught in it: h1's agent has applied and writes its status, and the
	// publisher, told that h2 applied, publishes h3. Agents and publisher
	// are frozen (SIGSTOP) at the right points so that each write lands
	// in the outage every run. The rollout waits and completes, every
	// host converges its revision exactly once, the journal holds one
	// start and one verification per host, and the agents' watches
	// resume (a later change reaches all of them).
	step("etcd stopped mid-rollout and restarted", func(t *testing.T) {
		const down = 75 * time.Second
		e.signalAgent("h1", syscall.SIGSTOP)
		e.signalAgent("h2", syscall.SIGSTOP)
		defer e.signalAgent("h1", syscall.SIGCONT)
		defer e.signalAgent("h2", syscall.SIGCONT)
		gen := map[string]int64{}
		for _, n := range e.nodes {
			gen[n] = e.get(n).Metadata.Generation
		}
		pub := e.startCLI(kc, "apply", "--engine", "kubernetes", "--auto-approve", "--json", "--max-unavailable", "2", "--canary", "0",
			"--host-timeout", "4m", "--var", "mtu=4200", specDir)
		waitFor(t, 60*time.Second, "h1 and h2 published", func() bool {
			return e.get("h1").Metadata.Generation > gen["h1"] && e.get("h2").Metadata.Generation > gen["h2"]
		})
		_ = pub.cmd.Process.Signal(syscall.SIGSTOP)
		e.signalAgent("h2", syscall.SIGCONT)
		waitFor(t, 30*time.Second, "h2 applied (reported before the outage)", func() bool { return e.get("h2").AppliedCurrent() })
		c.StopEtcd()
		stopped := time.Now()
		e.signalAgent("h1", syscall.SIGCONT)
		waitFor(t, 30*time.Second, "h1's agent applied during the outage", func() bool { return e.mtu("h1") == "4200" })
		_ = pub.cmd.Process.Signal(syscall.SIGCONT)
		time.Sleep(time.Until(stopped.Add(down)))
		if err := c.StartEtcd(); err != nil {
			t.Fatal(err)
		}
		restarted := time.Now()
		t.Logf("etcd was down %s", restarted.Sub(stopped).Round(100*time.Millisecond))
		code := pub.wait(t, 5*time.Minute)
		var d applyFull
		if err := json.Unmarshal(pub.out.Bytes(), &d); err != nil || code != 0 || d.Status != "applied" || d.Counts.Applied != len(e.nodes) {
			t.Fatalf("apply across the etcd outage: exit %d %+v (%v)\n%s\n%s", code, d, err, pub.out.String(), pub.errb.String())
		}
		lines := readJournal(t, d.Journal)
		for _, n := range e.nodes {
			if m := e.mtu(n); m != "4200" {
				t.Errorf("%s: MTU %s, want 4200", n, m)
			}
			rev := e.get(n).Spec.Revision
			if k := strings.Count(e.agentLogAll(n), "revision "+rev+": "); k != 1 {
				t.Errorf("%s converged revision %s %d times, want 1 (no double apply across the etcd outage)", n, rev, k)
			}
			if got := eventNames(events(lines, "host."+n)); got != "device_start,device_applied,device_verified" {
				t.Errorf("host.%s journal %s: want one publish and one verification", n, got)
			}
		}
		// The two writes were in the outage and succeeded after it.
		if h3 := events(lines, "host.h3"); len(h3) == 3 && !(h3[0].Time.After(stopped) && h3[0].Time.Before(restarted) && h3[1].Time.After(restarted)) {
			t.Errorf("host.h3 published at %s (started %s); etcd down %s..%s: the publish was not caught in the outage",
				h3[1].Time.Format(time.StampMilli), h3[0].Time.Format(time.StampMilli), stopped.Format(time.StampMilli), restarted.Format(time.StampMilli))
		}
		if h1 := events(lines, "host.h1"); len(h1) == 3 && !h1[2].Time.After(restarted) {
			t.Errorf("host.h1 verified at %s, before etcd came back at %s", h1[2].Time.Format(time.StampMilli), restarted.Format(time.StampMilli))
		}
		retried := 0
		for _, l := range strings.Split(e.agentLogAll("h1"), "\n") {
			if strings.Contains(l, "status write:") && strings.Contains(l, "retrying") {
				retried++
			}
		}
		t.Logf("h1's agent retried its status write %d times", retried)
		if retried == 0 {
			t.Errorf("h1's agent never retried its status write: the outage did not reach it\n%s", e.agentLog("h1"))
		}
		d2, out, errOut, code := e.applyKube(kc, "--max-unavailable", "100%", "--var", "mtu=5000", specDir)
		if code != 0 || d2.Counts.Applied != len(e.nodes) {
			t.Fatalf("apply after etcd came back (agents' watches must have resumed): exit %d %+v\n%s\n%s", code, d2, out, errOut)
		}
		for _, n := range e.nodes {
			if m := e.mtu(n); m != "5000" {
				t.Errorf("%s: MTU %s after the change following the outage, want 5000", n, m)
			}
		}
	})
}

// signalAgent sends sig to node's agent process.
func (e *env) signalAgent(node string, sig syscall.Signal) {
	e.mu.Lock()
	cmd := e.agents[node]
	e.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// cli is a fabctl CLI process started in the background.
type cli struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
}

// startCLI starts the fabctl CLI as e.run does, without waiting.
func (e *env) startCLI(kubeconfig string, args ...string) *cli {
	e.t.Helper()
	c := &cli{cmd: exec.Command(e.fabctl, args...), done: make(chan struct{})}
	c.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "KUBECONFIG=" + kubeconfig, "NO_COLOR=1"}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.errb
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	return c
}

// wait waits for the process's exit code (killing it after d).
func (c *cli) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("fabctl did not finish within %s\n%s\n%s", d, c.out.String(), c.errb.String())
	}
	return c.cmd.ProcessState.ExitCode()
}

func patchStatus(t *testing.T, ctx context.Context, c *Cluster, gvr schema.GroupVersionResource, ns, name string, body map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	if _, err := c.Admin.Dyn.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status of %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
