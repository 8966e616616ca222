package kube

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

func TestEncodeIntentRoundTripAndRevision(t *testing.T) {
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "gpu1", Address: "10.0.0.1", Credentials: "ops", Driver: "ssh"},
		Connect: spec.Connect{Kind: "ssh"}, Sudo: true,
		NICs: []intent.NIC{{Name: "eth1", MTU: 9000, Trust: "dscp", PFC: []int{3}}}}
	raw, rev, err := EncodeIntent(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(rev) != 16 {
		t.Fatalf("revision %q: want 16 hex digits", rev)
	}
	for _, leak := range []string{"10.0.0.1", `"ops"`, `"ssh"`} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("published intent carries the controller's connection detail %s: %s", leak, raw)
		}
	}
	back, err := DecodeIntent(raw)
	if err != nil {
		t.Fatal(err)
	}
	if back.NICs[0].MTU != 9000 || back.Name != "gpu1" {
		t.Fatalf("round trip lost data: %+v", back)
	}
	_, rev2, _ := EncodeIntent(h)
	if rev2 != rev {
		t.Fatalf("revision not stable: %s then %s", rev, rev2)
	}
	h.QP.Src.Block.Filename = "/elsewhere/fabric.fab.hcl" // the spec's path on another controller
	if _, rev4, _ := EncodeIntent(h); rev4 != rev {
		t.Fatal("the spec's file path changed the revision")
	}
	h.NICs[0].MTU = 4200
	if _, rev3, _ := EncodeIntent(h); rev3 == rev {
		t.Fatal("a changed intent kept its revision")
	}
}

func TestDecodeIntentRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"empty":   ``,
		"null":    `null`,
		"unknown": `{"Name":"h","FutureField":1}`,
		"type":    `{"NICs":"eth0"}`,
	} {
		if _, err := DecodeIntent(json.RawMessage(raw)); err == nil {
			t.Errorf("%s: decoded %q without error", name, raw)
		}
	}
}

func TestManifestsParse(t *testing.T) {
	objs, err := Objects(ManifestOptions{Image: "registry.example/fabctl:v1"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if _, ok := shipped[o.GroupVersionKind()]; !ok {
			t.Errorf("%s %s: kind missing from the shipped map", o.GetKind(), o.GetName())
		}
	}
	for _, k := range []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "DaemonSet"} {
		if kinds[k] == 0 {
			t.Errorf("manifests lack a %s", k)
		}
	}
	ms, _ := Manifests(ManifestOptions{Image: "registry.example/fabctl:v1"})
	var all strings.Builder
	for _, m := range ms {
		all.WriteString(m.YAML)
	}
	for _, want := range []string{"registry.example/fabctl:v1", "fieldPath: spec.nodeName", "selectableFields", "authentication.kubernetes.io/node-name", "maxUnavailable",
		"hostPID: true"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if strings.Contains(all.String(), "{{") {
		t.Error("a placeholder left in the manifests")
	}
	if _, err := Manifests(ManifestOptions{Image: "bad image"}); err == nil {
		t.Error("an image with a space was accepted")
	}
}

// TestLeaseName: the Lease of a fabric is named as it always was (the
// lock file's safe name, '_' as '-', lower case), so a newer fabctl
// finds the Lease an older one holds.
func TestLeaseName(t *testing.T) {
	for in, want := range map[string]string{
		"pod1":        "fabctl-lock-pod1",
		"Pod_1":       "fabctl-lock-pod-1",
		"ai pod.2":    "fabctl-lock-ai-pod.2",
		"":            "fabctl-lock-fabric",
		"..":          "fabctl-lock-fabric",
		"rack/é":      "fabctl-lock-rack--",
		"GPU-Cluster": "fabctl-lock-gpu-cluster",
	} {
		if got := LeaseName(in); got != want {
			t.Errorf("LeaseName(%q) = %q, want %q", in, got, want)
		}
	}
}
