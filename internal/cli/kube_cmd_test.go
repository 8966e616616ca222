package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/topology"
)

type kubeManifestsDoc struct {
	Image    string           `json:"image"`
	Warnings []string         `json:"warnings"`
	Objects  []map[string]any `json:"objects"`
}

func (d kubeManifestsDoc) podSpec(t *testing.T) map[string]any {
	t.Helper()
	for _, o := range d.Objects {
		if o["kind"] == "DaemonSet" {
			return o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		}
	}
	t.Fatal("no DaemonSet")
	return nil
}

// TestKubeManifestsDefaultImageWarns: without --image the DaemonSet names
// an image no registry serves; the command says so (first-run audit
// defect 20), on stderr and in --json's warnings, and not when --image
// is given.
func TestKubeManifestsDefaultImageWarns(t *testing.T) {
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "kube", "manifests"); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "Warning: no --image") || !strings.Contains(stderr.String(), "pass --image") {
		t.Errorf("no warning about the default image on stderr:\n%s", stderr)
	}
	if !strings.Contains(stdout.String(), "kind: DaemonSet") || strings.Contains(stdout.String(), "Warning") {
		t.Errorf("stdout must hold the manifests only:\n%s", stdout)
	}

	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "--json", "kube", "manifests"); code != ExitOK {
		t.Fatal(code)
	}
	var d kubeManifestsDoc
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], d.Image) {
		t.Errorf("--json warnings %q (image %s)", d.Warnings, d.Image)
	}

	f, _, stdout, stderr = testFactory()
	if code := runCLI(f, "--json", "kube", "manifests", "--image", "registry.example/fabctl:v1"); code != ExitOK {
		t.Fatal(code)
	}
	d = kubeManifestsDoc{}
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Warnings == nil || len(d.Warnings) != 0 || stderr.Len() != 0 {
		t.Errorf("--image given: warnings %q, stderr %q", d.Warnings, stderr)
	}
}

// TestKubeManifestsPlacementFlags: the node selection, tolerations and
// rollout bound come from flags, not from editing the YAML (defect 20).
func TestKubeManifestsPlacementFlags(t *testing.T) {
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "--json", "kube", "manifests", "--image", "r/f:1", "--node-selector", "nvidia.com/gpu.present=true",
		"--toleration", "dedicated=gpu:NoSchedule", "--toleration", "maint", "--max-unavailable", "2", "--probe-port", "19466"); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var d kubeManifestsDoc
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	ps := d.podSpec(t)
	b, _ := json.Marshal(ps)
	for _, want := range []string{`"key":"nvidia.com/gpu.present","operator":"In","values":["true"]`, `"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"gpu"`,
		`{"key":"maint","operator":"Exists"}`, `"port":19466`, `"127.0.0.1:19466"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("pod spec lacks %s:\n%s", want, b)
		}
	}
	for _, args := range [][]string{
		{"--node-selector", "a=b=c"}, {"--toleration", "x:Sometimes"}, {"--max-unavailable", "0"}, {"--probe-port", "0x"}, {"--image", "a b"},
	} {
		f, _, _, stderr := testFactory()
		if code := runCLI(f, append([]string{"kube", "manifests"}, args...)...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (usage)\n%s", args, code, ExitUsage, stderr)
		}
	}
}

// TestFabricLabelAgrees: the label fabctl topology sets is the one the
// DaemonSet selects by default.
func TestFabricLabelAgrees(t *testing.T) {
	if topology.FabricLabel != kube.FabricLabel || kube.DefaultNodeSelector != kube.FabricLabel {
		t.Fatalf("topology labels %q, the DaemonSet selects %q", topology.FabricLabel, kube.DefaultNodeSelector)
	}
}
