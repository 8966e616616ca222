package cumulusemu

import (
	"bytes"
	"strings"
	"testing"
)

func newShell(t *testing.T) (*Switch, *shell) {
	t.Helper()
	// The shell without the SSH server (the driver tests cover SSH).
	sw := newSwitch(Options{Hostname: "leaf", Password: "pw", Ports: 4, ECNQuantum: 4096})
	return sw, &shell{sw: sw, user: "cumulus"}
}

func run(t *testing.T, sh *shell, line string) string {
	t.Helper()
	out, _ := sh.Handle(line)
	return out
}

func TestPromptMatchesScrapligoCumulus(t *testing.T) {
	_, sh := newShell(t)
	if p := sh.Prompt(); p != "cumulus@leaf:mgmt:~$ " {
		t.Fatalf("prompt %q", p)
	}
}

func TestStageDiffApplyHistoryRollback(t *testing.T) {
	sw, sh := newShell(t)
	before := string(sw.AppliedJSON())
	for _, l := range []string{
		"nv set qos roce",
		"nv set qos congestion-control default-global traffic-class 3 min-threshold 150000",
		"nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000",
		"nv set qos congestion-control default-global traffic-class 3 probability 100",
		"nv set interface swp1 link mtu 9000",
		"nv set interface swp1 qos pfc-watchdog",
	} {
		if out := run(t, sh, l); out != "" {
			t.Fatalf("%s: %q", l, out)
		}
	}
	if string(sw.AppliedJSON()) != before {
		t.Fatal("nv set changed the applied config")
	}
	d := run(t, sh, "nv config diff")
	for _, want := range []string{"- set:\n", "    qos:\n", "mode: lossless", "min-threshold: 150000", "pfc-watchdog: {}", "mtu: 9000"} {
		if !strings.Contains(d, want) {
			t.Fatalf("diff lacks %q:\n%s", want, d)
		}
	}
	if out := run(t, sh, "nv config apply --assume-yes"); !strings.Contains(out, "applied [rev_id: 2]") {
		t.Fatalf("apply: %q", out)
	}
	js := string(sw.AppliedJSON())
	if !strings.Contains(js, `"min-threshold": 147456`) || !strings.Contains(js, `"mtu": 9000`) {
		t.Fatalf("applied JSON (quantised threshold expected):\n%s", js)
	}
	if h := run(t, sh, "nv config history --output json"); !strings.Contains(h, `"rev_2_apply_1": {`) || !strings.Contains(h, `"rev-id": "1"`) {
		t.Fatalf("history:\n%s", h)
	}
	if r := run(t, sh, "nv show qos roce"); !strings.Contains(r, "min-threshold 144.00 KB") {
		t.Fatalf("show qos roce:\n%s", r)
	}
	if out := run(t, sh, "nv config apply 1 --assume-yes"); !strings.Contains(out, "applied [rev_id: 1]") {
		t.Fatalf("rollback: %q", out)
	}
	if string(sw.AppliedJSON()) != before {
		t.Fatal("rollback to revision 1 is not byte-identical")
	}
}

func TestErrors(t *testing.T) {
	sw, sh := newShell(t)
	before := string(sw.AppliedJSON())
	for line, want := range map[string]string{
		"nv set qos bogus 1":                          "Error: Invalid Command",
		"nv set interface swp1 link mtu 9300":         "Error: Invalid value for mtu: 9300 is not in the range 552-9216",
		"nv set qos pfc default-global switch-prio 3": "Invalid Command",
		"nv set interface eth0x link mtu 9000":        "Error: 'eth0x' is not a valid interface name",
		"nv set qos roce mode fast":                   "Error: Invalid value for mode",
		"nv frobnicate":                               "Invalid Command",
		"ls":                                          "-bash: ls: command not found",
		"nv config apply 99 --assume-yes":             "Error: revision '99' does not exist",
		// One attribute and one value per nv set (schema.go).
		"nv set qos pfc default-global tx enable rx enable":                                  "Error: Invalid Command: nv set qos pfc default-global tx enable rx",
		"nv set qos pfc-watchdog polling-interval 100 robustness 2":                          "Error: Invalid Command",
		"nv set qos egress-scheduler default-global traffic-class 0 mode dwrr bw-percent 50": "Error: Invalid Command",
		// CL 5.14 spelling; only default-global egress-queue mapping.
		"nv set qos congestion-control default-global traffic-class 3 ecn enabled": "Error: Invalid value for ecn",
		"nv set qos egress-queue-mapping other switch-priority 1 traffic-class 0":  "NVUE only supports default-global",
		"nv config apply -y": "Error: Invalid Command",
	} {
		if out := run(t, sh, line); !strings.Contains(out, want) {
			t.Errorf("%s: %q, want %q", line, out, want)
		}
	}
	// Apply-time validation: all or nothing, pending kept until detach.
	run(t, sh, "nv set interface swp1 link mtu 9000")
	run(t, sh, "nv set qos congestion-control default-global traffic-class 3 min-threshold 2000000")
	run(t, sh, "nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000")
	if out := run(t, sh, "nv config apply --assume-yes"); !strings.HasPrefix(out, "Error: Config invalid at qos.congestion-control") {
		t.Fatalf("apply: %q", out)
	}
	run(t, sh, "nv set interface swp9 link mtu 9000")
	if string(sw.AppliedJSON()) != before || !sw.Pending() {
		t.Fatal("rejected apply changed the config or dropped the pending revision")
	}
	run(t, sh, "nv config detach")
	if sw.Pending() || run(t, sh, "nv config diff") != "" {
		t.Fatal("detach left a pending revision")
	}
	if out := run(t, sh, "nv config apply --assume-yes"); !strings.Contains(out, "nothing to apply") {
		t.Fatalf("empty apply: %q", out)
	}
}

// TestSaveStartupReload: auto-save (default enabled) saves every apply;
// disabled, only nv config save does, nv config diff applied startup shows
// the difference, a failed save prints its error, Reload boots startup.
func TestSaveStartupReload(t *testing.T) {
	sw, sh := newShell(t)
	run(t, sh, "nv set interface swp1 link mtu 9000")
	run(t, sh, "nv config apply --assume-yes")
	if !bytes.Equal(sw.RunningConfig(), sw.StartupConfig()) || run(t, sh, "nv config diff applied startup") != "" {
		t.Fatal("auto-save (default enabled) did not save the apply")
	}
	sw2 := newSwitch(Options{Ports: 4, AutoSave: "disabled"})
	sh2 := &shell{sw: sw2, user: "cumulus"}
	factory := sw2.StartupConfig()
	run(t, sh2, "nv set interface swp1 link mtu 9000")
	run(t, sh2, "nv config apply --assume-yes")
	if bytes.Equal(sw2.RunningConfig(), sw2.StartupConfig()) || !strings.Contains(run(t, sh2, "nv config diff applied startup"), "mtu") {
		t.Fatal("auto-save disabled, but the apply was saved")
	}
	sw2.FailSave("Error: flash: No space left on device")
	if out := run(t, sh2, "nv config save"); !strings.Contains(out, "No space left") || !bytes.Equal(factory, sw2.StartupConfig()) {
		t.Fatalf("failed save: %q", out)
	}
	sw2.Reload()
	if !bytes.Equal(factory, sw2.RunningConfig()) {
		t.Fatal("reload did not boot the startup configuration")
	}
	run(t, sh2, "nv set interface swp1 link mtu 9000")
	run(t, sh2, "nv config apply --assume-yes")
	sw2.FailSave("")
	if out := run(t, sh2, "nv config save"); out != "" || !bytes.Equal(sw2.RunningConfig(), sw2.StartupConfig()) {
		t.Fatalf("save: %q", out)
	}
}

// TestDetachUsesUpRevision: a detached pending revision keeps its number
// (nvue-cli-514.txt:17-18), so the next apply has a higher one.
func TestDetachUsesUpRevision(t *testing.T) {
	_, sh := newShell(t)
	run(t, sh, "nv set interface swp1 link mtu 9000")
	run(t, sh, "nv config detach")
	run(t, sh, "nv set interface swp2 link mtu 9000")
	if out := run(t, sh, "nv config apply --assume-yes"); !strings.Contains(out, "rev_id: 3") {
		t.Fatalf("apply after detach: %q", out)
	}
	if d := run(t, sh, "nv config diff 2 applied"); !strings.Contains(d, "swp2") {
		t.Fatalf("detached revision 2 vs applied: %q", d)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("qos roce")
	f.Add("qos congestion-control default-global traffic-class 3 min-threshold 1 max-threshold")
	f.Add("system config auto-save state disabled")
	f.Add("interface swp1s0 qos pfc-watchdog")
	f.Fuzz(func(t *testing.T, s string) {
		toks := strings.Fields(s)
		_, _ = parse(toks, true)
		_, _ = parse(toks, false)
	})
}
