package host

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/sshdtest"
	"github.com/fabctl/fabctl/internal/testutil"
)

// TestSSHApplyRoundTrips: `fabctl apply` of one change to a host whose
// agent is in place logs in once and starts the agent twice: the plan's
// read, then one run that checks the plan's fingerprint, applies and
// reads back (sshd's verbose log counts logins and command sessions).
// Before, it was five runs: a version check, the plan read, the
// staleness re-read, the transaction and the read-back.
func TestSSHApplyRoundTrips(t *testing.T) {
	sshdtest.Require(t)
	fx := &sshFixture{srv: sshdtest.Start(t, sshdtest.Options{Verbose: true}), bin: sshdtest.Fabctl(t)}
	key := sshdtest.NewKey(t)
	fx.srv.Authorize(t, "root", key)
	dir := t.TempDir()
	fx.keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(fx.keyFile, key.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	fx.save, fx.remote = filepath.Join(dir, "saved"), filepath.Join(dir, "agent")
	newNS(t, "fabctl-ssh-rt1", 1)
	specDir := fx.specDir(t, "iwarp", "siw0", "", "fabctl-ssh-rt1")
	apply := func() {
		t.Helper()
		cmd := exec.Command(fx.bin, "apply", "--auto-approve", "--json", specDir)
		cmd.Env = append(os.Environ(), "FABCTL_AGENT_DIR="+fx.remote, "FABCTL_AGENT_SAVE_DIR="+fx.save, "NO_COLOR=1")
		out, err := cmd.Output()
		var doc struct {
			Status string `json:"status"`
		}
		if jerr := json.Unmarshal(out, &doc); err != nil || jerr != nil || doc.Status != "applied" {
			t.Fatalf("fabctl apply: %v %v\n%s", err, jerr, out)
		}
	}
	apply() // the agent copied, the address and MTU set
	testutil.Run(t, "ip", "-n", "fabctl-ssh-rt1", "link", "set", "v0a", "mtu", "1500")
	l0, c0 := fx.srv.Sessions()
	apply()
	l1, c1 := fx.srv.Sessions()
	if logins, runs := l1-l0, c1-c0; logins != 1 || runs != 2 {
		t.Errorf("one change to one host: %d SSH logins and %d agent runs, want 1 and 2", logins, runs)
	}
	if out := testutil.Run(t, "ip", "-n", "fabctl-ssh-rt1", "link", "show", "v0a"); !strings.Contains(out, "mtu 9000") {
		t.Fatalf("MTU not applied: %s", out)
	}
}
