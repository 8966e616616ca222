package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 36: a setting the spec leaves unmanaged is never reported ✔:
// validate's read-back says "unmanaged, not checked" for its device, in
// the human view, the verdict and the JUnit report, and does not fail on
// it.
func TestValidateUnmanagedNeverValid(t *testing.T) {
	fx := loadPlanFixture(t, "unmanaged")
	f, out, errOut := fx.factory()
	junit := filepath.Join(t.TempDir(), "report.xml")
	code := validateCmd(f, "--skip-traffic", "--junit", junit, fx.spec)
	if code != ExitOK {
		t.Errorf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	got := out.String()
	for _, want := range []string{
		"○ switch.leaf1: matches; 4 settings unmanaged, not checked",
		"unmanaged, not checked: trust (the device runs both): the switch trusts PCP and DSCP",
		`unmanaged, not checked: port/Ethernet0/pfc (the device runs ""): storage port`,
		"○ host.h1: matches; 1 setting unmanaged, not checked",
		"(2 with unmanaged settings, not checked)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("validate does not say %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"✔ switch.leaf1", "✔ host.h1"} {
		if strings.Contains(got, bad) {
			t.Errorf("validate says %q for a device with unmanaged settings:\n%s", bad, got)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "unmanaged, not checked: nic/eth1/tos (the device runs 0): the job launcher") {
		t.Errorf("JUnit report lacks the unmanaged setting:\n%s", b)
	}
}

// Issue 36: render leaves the unmanaged settings out of the desired state
// it prints, lists them, and says the native payload (the device's whole
// configuration from its intent) still holds them.
func TestRenderUnmanaged(t *testing.T) {
	f, out, errOut := renderFactory(t, &renderDriver{})
	if code := runCLI(f, "render", "--json", "--device", "leaf1", "testdata/plan/unmanaged/spec"); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc struct {
		Devices []renderedDevice `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Devices) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	d := doc.Devices[0]
	for _, p := range []string{"trust", "port/Ethernet0/pfc"} {
		if _, ok := d.State[p]; ok {
			t.Errorf("render's state has unmanaged %s", p)
		}
	}
	if _, ok := d.State["port/Ethernet0/mtu"]; !ok {
		t.Errorf("render's state lacks a managed setting: %v", d.State)
	}
	if len(d.Unmanaged) != 2 || d.Unmanaged[0].Path != "port/Ethernet0/pfc" || d.Unmanaged[1].Path != "trust" {
		t.Errorf("unmanaged %+v", d.Unmanaged)
	}
	if !strings.Contains(d.UnmanagedNote, "2 settings the spec leaves unmanaged included") {
		t.Errorf("note %q", d.UnmanagedNote)
	}
}
