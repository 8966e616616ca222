package kube

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// daemonSet is the DaemonSet of the rendered manifests.
func daemonSet(t testing.TB, o ManifestOptions) *unstructured.Unstructured {
	t.Helper()
	objs, err := Objects(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetKind() == "DaemonSet" {
			return u
		}
	}
	t.Fatal("no DaemonSet in the manifests")
	return nil
}

func podSpec(t testing.TB, ds *unstructured.Unstructured) map[string]any {
	t.Helper()
	ps, ok, err := unstructured.NestedMap(ds.Object, "spec", "template", "spec")
	if !ok || err != nil {
		t.Fatalf("DaemonSet without a pod spec: %v", err)
	}
	return ps
}

// TestManifestDefaults: the defaults the first-run audit found rough
// (defect 20): no tolerate-everything, a node selection, requests and
// limits, a priority class, a readiness probe, a rolling update bound.
func TestManifestDefaults(t *testing.T) {
	ds := daemonSet(t, ManifestOptions{Image: "registry.example/fabctl:v1"})
	ps := podSpec(t, ds)
	tols, _ := ps["tolerations"].([]any)
	want := []any{
		map[string]any{"key": "fabctl.io/unconfigured", "operator": "Exists", "effect": "NoSchedule"},
		map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
	}
	if !reflect.DeepEqual(tols, want) {
		t.Errorf("tolerations %v, want exactly %v (no key-less Exists: that tolerates every taint)", tols, want)
	}
	terms, _, _ := unstructured.NestedSlice(ps, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	wantTerms := []any{map[string]any{"matchExpressions": []any{map[string]any{"key": FabricLabel, "operator": "Exists"}}}}
	if !reflect.DeepEqual(terms, wantTerms) {
		t.Errorf("node affinity terms %v, want %v", terms, wantTerms)
	}
	if pc := ps["priorityClassName"]; pc != "system-node-critical" {
		t.Errorf("priorityClassName %v", pc)
	}
	c := ps["containers"].([]any)[0].(map[string]any)
	for _, path := range [][]string{{"resources", "requests", "cpu"}, {"resources", "requests", "memory"}, {"resources", "limits", "cpu"}, {"resources", "limits", "memory"}} {
		if v, ok, _ := unstructured.NestedString(c, path...); !ok || v == "" {
			t.Errorf("container has no %s", strings.Join(path, "."))
		}
	}
	if p, _, _ := unstructured.NestedMap(c, "readinessProbe", "httpGet"); p["path"] != "/readyz" || p["host"] != "127.0.0.1" || p["port"] != int64(DefaultProbePort) {
		t.Errorf("readiness probe %v", p)
	}
	if cmd, _, _ := unstructured.NestedStringSlice(c, "command"); !reflect.DeepEqual(cmd, []string{"fabctl", "agent", "--kube", "--kube-probe-addr", "127.0.0.1:9466"}) {
		t.Errorf("command %q", cmd)
	}
	ru, _, _ := unstructured.NestedMap(ds.Object, "spec", "updateStrategy", "rollingUpdate")
	if ru["maxUnavailable"] != "10%" || ru["maxSurge"] != int64(0) {
		t.Errorf("rollingUpdate %v: want maxUnavailable 10%%, maxSurge 0", ru)
	}
}

func TestManifestOptions(t *testing.T) {
	o := ManifestOptions{Image: "registry.example/fabctl@sha256:0123", NodeSelector: "nvidia.com/gpu.present=true,!node-role.kubernetes.io/control-plane,rack in (r2,r1)",
		Tolerations: []string{"dedicated=gpu:NoSchedule", "maintenance", "net:NoExecute"}, MaxUnavailable: "3", ProbePort: 19466}
	ds := daemonSet(t, o)
	ps := podSpec(t, ds)
	exprs, _, _ := unstructured.NestedSlice(ps, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	want := []any{map[string]any{"matchExpressions": []any{
		map[string]any{"key": "nvidia.com/gpu.present", "operator": "In", "values": []any{"true"}},
		map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"},
		map[string]any{"key": "rack", "operator": "In", "values": []any{"r1", "r2"}},
	}}}
	// labels.Parse sorts the requirements by key.
	got := exprs[0].(map[string]any)["matchExpressions"].([]any)
	if len(got) != 3 {
		t.Fatalf("match expressions %v", got)
	}
	for _, w := range want[0].(map[string]any)["matchExpressions"].([]any) {
		found := false
		for _, g := range got {
			found = found || reflect.DeepEqual(g, w)
		}
		if !found {
			t.Errorf("missing match expression %v in %v", w, got)
		}
	}
	tols, _ := ps["tolerations"].([]any)
	wantTols := []any{
		map[string]any{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
		map[string]any{"key": "maintenance", "operator": "Exists"},
		map[string]any{"key": "net", "operator": "Exists", "effect": "NoExecute"},
	}
	if len(tols) != 5 || !reflect.DeepEqual(tols[2:], wantTols) {
		t.Errorf("tolerations %v: want the two shipped ones and %v", tols, wantTols)
	}
	c := ps["containers"].([]any)[0].(map[string]any)
	if c["image"] != o.Image {
		t.Errorf("image %v", c["image"])
	}
	if p, _, _ := unstructured.NestedInt64(c, "readinessProbe", "httpGet", "port"); p != 19466 {
		t.Errorf("probe port %d", p)
	}
	if mu, _, _ := unstructured.NestedFieldNoCopy(ds.Object, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable"); mu != int64(3) {
		t.Errorf("maxUnavailable %v (%T), want the integer 3", mu, mu)
	}
}

func TestManifestOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		o    ManifestOptions
		want string
	}{
		{"no image", ManifestOptions{}, "invalid agent image"},
		{"image with a newline", ManifestOptions{Image: "x\nkind: Secret"}, "invalid agent image"},
		{"image with a quote", ManifestOptions{Image: `x"y`}, "invalid agent image"},
		{"selector syntax", ManifestOptions{Image: "i", NodeSelector: "a=b=c"}, "node selector"},
		{"selector injection", ManifestOptions{Image: "i", NodeSelector: "a\n  hostIPC: true"}, "node selector"},
		{"toleration effect", ManifestOptions{Image: "i", Tolerations: []string{"a:Evict"}}, "effect must be"},
		{"toleration key", ManifestOptions{Image: "i", Tolerations: []string{"a b"}}, "toleration"},
		{"toleration value", ManifestOptions{Image: "i", Tolerations: []string{"a=x\ny"}}, "toleration"},
		{"toleration empty", ManifestOptions{Image: "i", Tolerations: []string{""}}, "toleration"},
		{"max unavailable 0", ManifestOptions{Image: "i", MaxUnavailable: "0"}, "max unavailable"},
		{"max unavailable 0%", ManifestOptions{Image: "i", MaxUnavailable: "0%"}, "max unavailable"},
		{"max unavailable 101%", ManifestOptions{Image: "i", MaxUnavailable: "101%"}, "max unavailable"},
		{"max unavailable word", ManifestOptions{Image: "i", MaxUnavailable: "all"}, "max unavailable"},
		{"probe port", ManifestOptions{Image: "i", ProbePort: 70000}, "probe port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Manifests(c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %q", err, c.want)
			}
		})
	}
}

// FuzzManifestOptions: whatever the options, the manifests either are
// refused or decode to exactly the shipped objects, with the image as
// given and no key an option could have added.
func FuzzManifestOptions(f *testing.F) {
	f.Add("registry.example/fabctl:v1", "", "dedicated=gpu:NoSchedule", "10%", 0)
	f.Add("i", "a in (b,c),!d", "k", "1", 1)
	f.Add("i:1@sha256:00", "a=b\nc: d", "x=y\n- key: z", "5", 65535)
	f.Add("i", "x", "key=v:NoExecute", "100%", 9466)
	base, err := Objects(ManifestOptions{Image: "i"})
	if err != nil {
		f.Fatal(err)
	}
	keys := func(u *unstructured.Unstructured) []string {
		ps, _, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
		var k []string
		for key := range ps {
			k = append(k, key)
		}
		return k
	}
	var baseDS *unstructured.Unstructured
	for _, u := range base {
		if u.GetKind() == "DaemonSet" {
			baseDS = u
		}
	}
	f.Fuzz(func(t *testing.T, image, selector, toleration, maxUnavailable string, port int) {
		o := ManifestOptions{Image: image, NodeSelector: selector, Tolerations: []string{toleration}, MaxUnavailable: maxUnavailable, ProbePort: port}
		objs, err := Objects(o)
		if err != nil {
			return
		}
		if len(objs) != len(base) {
			t.Fatalf("%d objects, want %d", len(objs), len(base))
		}
		for i, u := range objs {
			if u.GetKind() != base[i].GetKind() || u.GetName() != base[i].GetName() || u.GetNamespace() != base[i].GetNamespace() {
				t.Fatalf("object %d is %s %s/%s, want %s %s/%s", i, u.GetKind(), u.GetNamespace(), u.GetName(), base[i].GetKind(), base[i].GetNamespace(), base[i].GetName())
			}
			if u.GetKind() != "DaemonSet" && !reflect.DeepEqual(u.Object, base[i].Object) {
				t.Fatalf("%s %s changed with the DaemonSet's options", u.GetKind(), u.GetName())
			}
			if u.GetKind() == "DaemonSet" {
				if g, w := len(keys(u)), len(keys(baseDS)); g != w {
					t.Fatalf("pod spec keys %v, want %v", keys(u), keys(baseDS))
				}
				img, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				if len(img) != 1 || img[0].(map[string]any)["image"] != image {
					t.Fatalf("containers %v, want one running %q", img, image)
				}
			}
		}
	})
}
