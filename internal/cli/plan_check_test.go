package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// TestPlanCheckOnDevice: plan --check-on-device against two EOS
// emulators. A line leaf2 refuses (EOS's own error text) is caught
// before anything is applied: plan exits 7 (refused-by-device), names
// the device, the step and the switch's words in every view (human,
// JSON, markdown, JUnit), saves no plan, and both switches' running and
// startup configurations are byte-identical; the check's transcript
// holds no password. Without the refusal both are accepted and plan
// exits 0 (2 with --detailed-exitcode). The check runs under the fabric
// lock: a held lock is exit 4 and nothing is asked. (apply's pre-flight:
// testbed/local TestTransportsCheckCatchesRefusal.)
func TestPlanCheckOnDevice(t *testing.T) {
	const pw = "Cli-check-Pa55"
	dir, emus := eosLab(t, pw)
	state := filepath.Join(dir, "state")
	var before, startup [][]byte
	for _, e := range emus {
		before, startup = append(before, e.RunningConfig()), append(startup, e.StartupConfig())
	}
	same := func(when string) {
		t.Helper()
		for i, e := range emus {
			if !bytes.Equal(before[i], e.RunningConfig()) || !bytes.Equal(startup[i], e.StartupConfig()) {
				t.Fatalf("%s: leaf%d's configuration changed", when, i+1)
			}
		}
	}
	const refusal = "   ^\n% Invalid input detected at '^' marker.\n"
	emus[1].Inject(sshemu.Fault{Match: regexp.MustCompile(`^mtu `), Kind: sshemu.Reject, Output: refusal})

	logFile := filepath.Join(dir, "ssh.log")
	junit := filepath.Join(dir, "check.xml")
	out := filepath.Join(dir, "plan.fab")
	f, _, stdout, errOut := testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "plan", "--check-on-device", "--debug-file", logFile, "--junit", junit, "-out", out, "--state-dir", state, dir); code != ExitRefusedByDevice {
		t.Fatalf("plan exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitRefusedByDevice, stdout, errOut)
	}
	same("after the refused check")
	human := stdout.String()
	t.Logf("%s", human)
	for _, want := range []string{"Checked on the devices", "✔ switch.leaf1 (eos): accepted by the device",
		"✘ switch.leaf2 (eos): refused at step", `"mtu 9000" → % Invalid input detected at '^' marker.`, "1 device refused the planned change"} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a plan a device refused was saved")
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "leaf2 > configure session fabctl-") || !strings.Contains(string(log), " abort") || strings.Contains(string(log), pw) {
		t.Errorf("transcript: no session, no abort, or the password in it:\n%s", log)
	}
	if strings.Contains(string(log), "> commit") || strings.Contains(string(log), "copy running-config") {
		t.Error("the check committed or saved")
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(x, &doc); err != nil || doc.Tests != 2 || doc.Fails != 1 || !strings.Contains(string(x), "Invalid input detected") {
		t.Errorf("junit (%v): %s", err, x)
	}

	f, _, stdout, errOut = testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "plan", "--check-on-device", "--json", "--state-dir", state, dir); code != ExitRefusedByDevice {
		t.Fatalf("plan --json exit %d\nstderr: %s", code, errOut)
	}
	var js struct {
		Refused []string `json:"refused_by_device"`
		Devices []struct {
			Address string
			Check   *struct {
				Status, Line, Message string
				Step                  int
				Unchanged             bool
			} `json:"device_check"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Refused) != 1 || js.Refused[0] != "switch.leaf2" || len(js.Devices) != 2 {
		t.Fatalf("json: %s", stdout)
	}
	for _, d := range js.Devices {
		c := d.Check
		switch {
		case c == nil:
			t.Errorf("%s: no device_check", d.Address)
		case d.Address == "switch.leaf1" && (c.Status != "accepted" || !c.Unchanged):
			t.Errorf("leaf1: %+v", c)
		case d.Address == "switch.leaf2" && (c.Status != "refused" || c.Step == 0 || c.Line != "mtu 9000" || !strings.Contains(c.Message, "% Invalid input") || !c.Unchanged):
			t.Errorf("leaf2: %+v", c)
		}
	}
	f, _, stdout, errOut = testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "plan", "--check-on-device", "--format", "markdown", "--state-dir", state, dir); code != ExitRefusedByDevice ||
		!strings.Contains(stdout.String(), "| `switch.leaf2 (eos)` | refused at step") || !strings.Contains(stdout.String(), "[!CAUTION]") {
		t.Errorf("markdown exit %d:\n%s\n%s", code, stdout, errOut)
	}
	same("after the JSON and markdown checks")

	emus[1].ClearFaults()
	f, _, stdout, errOut = testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "plan", "--check-on-device", "--detailed-exitcode", "--state-dir", state, dir); code != ExitChanges ||
		strings.Count(stdout.String(), "accepted by the device") != 2 {
		t.Fatalf("clean check exit %d\nstdout: %s\nstderr: %s", code, stdout, errOut)
	}
	same("after a clean check")

	l, err := apply.Acquire(t.Context(), state, "lab", apply.LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	f, _, stdout, errOut = testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "plan", "--check-on-device", "--state-dir", state, dir); code != ExitLocked || !strings.Contains(errOut.String(), "locked") {
		t.Fatalf("with the lock held: exit %d\nstderr: %s", code, errOut)
	}
}

// drift --check-on-device asks the switches about the repair as plan does:
// a refusal is exit 7 (before 2), and the switches are left as they were.
func TestDriftCheckOnDevice(t *testing.T) {
	const pw = "Cli-drift-Pa55"
	dir, emus := eosLab(t, pw)
	before := emus[1].RunningConfig()
	emus[1].Inject(sshemu.Fault{Match: regexp.MustCompile(`^mtu `), Kind: sshemu.Reject, Output: "   ^\n% Invalid input detected at '^' marker.\n"})
	f, _, stdout, errOut := testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "drift", "--check-on-device", "--state-dir", filepath.Join(dir, "state"), dir); code != ExitRefusedByDevice {
		t.Fatalf("drift exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitRefusedByDevice, stdout, errOut)
	}
	if !strings.Contains(stdout.String(), "✘ switch.leaf2 (eos): refused at step") {
		t.Errorf("drift's view lacks the refusal:\n%s", stdout)
	}
	if !bytes.Equal(before, emus[1].RunningConfig()) {
		t.Error("the check changed leaf2")
	}
}
