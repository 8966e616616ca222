package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeEngineResolvesNoHostCredentials: under --engine kubernetes the
// hosts are reached through the cluster, so plan and apply do not ask
// for their SSH keys (examples/rocev1-storage's hosts name a key file
// that is not on this machine): the run goes on to the kubeconfig. Over
// SSH the same spec is refused up front, before any device is
// contacted.
func TestKubeEngineResolvesNoHostCredentials(t *testing.T) {
	specDir := filepath.Join("..", "..", "examples", "rocev1-storage")
	kubeconfig := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--engine", "kubernetes", "--kubeconfig", kubeconfig, "--exclude", "switch.*", specDir}, "kubeconfig"},
		{[]string{"drift", "--engine", "kubernetes", "--kubeconfig", kubeconfig, "--exclude", "switch.*", specDir}, "kubeconfig"},
		{[]string{"apply", "--engine", "kubernetes", "--kubeconfig", kubeconfig, "--exclude", "switch.*", "--auto-approve",
			"--state-dir", t.TempDir(), specDir}, "kubeconfig"},
		{[]string{"plan", "--exclude", "switch.*", specDir}, `secret file("/etc/fabctl/id_ed25519") cannot be read`},
	} {
		f, _, out, errOut := testFactory()
		code := runCLI(f, c.args...)
		got := out.String() + errOut.String()
		if code != ExitError || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, want 1 with %q:\n%s", c.args, code, c.want, got)
		}
		if c.want == "kubeconfig" && strings.Contains(got, "id_ed25519") {
			t.Errorf("%v: the hosts' SSH key was asked for under --engine kubernetes:\n%s", c.args, got)
		}
	}
}
