package kubetb

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

const waveSwitchPassword = "e2e-Sw1tch-pw"

// waveSpec writes the hosts' spec with a SONiC leaf (sw, an emulator on a
// loopback port) cabled to every host's NIC, and returns its directory.
func (e *env) waveSpec(sw *sonicemu.Switch) string {
	e.t.Helper()
	dir := filepath.Join(e.dir, "spec-waves")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.spec(), "fabric.fab.hcl"))
	if err != nil {
		e.t.Fatal(err)
	}
	var s strings.Builder
	s.Write(b)
	fmt.Fprintf(&s, `
credentials "leaf" {
  username    = "admin"
  password    = env("FABCTL_E2E_SWITCH_PASSWORD")
  known_hosts = "known_hosts"
}

# mtu set exactly: the scenarios need leaf1's ports to follow the hosts' MTU
# (a port without one only keeps at least it, and SONiC's 9100 stays).
switch "leaf1" {
  platform    = "sonic"
  address     = %q
  credentials = "leaf"
  role        = "leaf"
  mtu         = var.mtu
}
`, sw.Addr())
	for i, n := range e.nodes {
		fmt.Fprintf(&s, "\nlink {\n  endpoints = [\"leaf1:Ethernet%d\", \"%s:v0a\"]\n  speed     = \"100G\"\n}\n", 4*i, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "fabric.fab.hcl"), []byte(s.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(sw.KnownHostsLine()+"\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return dir
}

// portMTU is leaf1's CONFIG_DB PORT mtu of port (the SAI MTU less the
// 22 bytes orchagent adds).
func portMTU(sw *sonicemu.Switch, port string) string {
	return strconv.Itoa(sw.SAIPortMTU(port) - 22)
}

// waveScenarios continue TestKubeEngine (every host at MTU 5000) with a
// switch in the fabric: apply --engine kubernetes then runs two waves,
// the switch through its driver over SSH and the hosts through their
// agents, and --on-failure rollback must undo both, as one SSH run
// rolls back every device it applied: a host failing in the second wave
// rolls back the switch of the first, a switch failing in the second
// wave rolls back the hosts of the first.
func waveScenarios(e *env, step func(string, func(*testing.T)), kc string) {
	sw, err := sonicemu.Start(sonicemu.Options{Hostname: "leaf1", Password: waveSwitchPassword, Ports: len(e.nodes)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { sw.Close() })
	e.cliEnv = append(e.cliEnv, "FABCTL_E2E_SWITCH_PASSWORD="+waveSwitchPassword)
	dir := e.waveSpec(sw)
	// The wave each device ran in, from the journal's device_start.
	wave := func(lines []journalLine, dev string) int {
		for _, l := range events(lines, dev) {
			if l.Event == apply.EventDeviceStart {
				return l.Wave
			}
		}
		return 0
	}

	step("switch and hosts converge in two waves", func(t *testing.T) {
		d, out, errOut, code := e.applyKube(kc, "--max-unavailable", "100%", "--var", "mtu=5000", dir)
		if code != 0 || d.Status != "applied" {
			t.Fatalf("apply with leaf1: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
		if m := portMTU(sw, "Ethernet0"); m == "9100" || m == "-22" {
			t.Fatalf("leaf1 Ethernet0 MTU %s after the apply: the switch wave did not run\n%s", m, out)
		}
	})

	step("on-failure rollback: a failed host wave rolls back the switch wave before it", func(t *testing.T) {
		before := portMTU(sw, "Ethernet0")
		prev := map[string]*kube.FabricHostConfig{}
		for _, n := range e.nodes {
			prev[n] = e.get(n)
		}
		testutil.Run(t, "ip", "-n", e.netns("h4"), "link", "del", "v0a")
		d, out, errOut, code := e.applyKube(kc, "--max-unavailable", "1", "--canary", "0", "--on-failure", "rollback",
			"--host-timeout", "90s", "--var", "mtu=6000", dir)
		if code != 1 || d.Status != "failed" {
			t.Fatalf("apply with a failing host under rollback: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
		lines := readJournal(t, d.Journal)
		if ws, wh := wave(lines, "switch.leaf1"), wave(lines, "host.h1"); ws != 1 || wh != 2 {
			t.Fatalf("an MTU increase ran leaf1 in wave %d and the hosts in wave %d; this scenario needs the switch first", ws, wh)
		}
		if ev := events(lines, "switch.leaf1"); !strings.HasSuffix(eventNames(ev), ",device_rolled_back") {
			t.Errorf("switch.leaf1 journal %s: want it rolled back after the host wave failed\n%s", eventNames(ev), errOut)
		}
		if m := portMTU(sw, "Ethernet0"); m != before {
			t.Errorf("leaf1 Ethernet0 MTU %s after the rollback, want %s as before the run", m, before)
		}
		// The run saved leaf1 after applying it; the rollback must not
		// leave the change in /etc/sonic/config_db.json for a reload.
		sw.Reload()
		if m := portMTU(sw, "Ethernet0"); m != before {
			t.Errorf("leaf1 Ethernet0 MTU %s after a reload (config reload): the startup configuration kept the rolled-back change (want %s)", m, before)
		}
		if d.Counts.RolledBack != 4 || d.Counts.Applied != 0 {
			t.Errorf("counts %+v: want leaf1 and h1-h3 rolled back, h4 failed, h5-h6 not attempted\n%s", d.Counts, out)
		}
		for _, n := range []string{"h1", "h2", "h3"} {
			if o := e.get(n); o.Spec.Revision != prev[n].Spec.Revision || e.mtu(n) != "5000" {
				t.Errorf("%s: revision %s MTU %s after the rollback, want %s and 5000", n, o.Spec.Revision, e.mtu(n), prev[n].Spec.Revision)
			}
		}
		e.addLink("h4")
		if d, out, errOut, code := e.applyKube(kc, "--max-unavailable", "100%", "--var", "mtu=5000", dir); code != 0 || e.mtu("h4") != "5000" {
			t.Fatalf("apply after repairing h4: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
	})

	step("on-failure rollback: a failed switch wave rolls back the hosts before it", func(t *testing.T) {
		before := portMTU(sw, "Ethernet0")
		prev := map[string]*kube.FabricHostConfig{}
		for _, n := range e.nodes {
			prev[n] = e.get(n)
		}
		// GCU refuses the patch: the emulator's fault answers every
		// apply-patch with the IllegalPatchOperationError text of GCU's
		// field-operation validators (sonic-utilities
		// generic_config_updater/gu_common.py validate_field_operation:
		// "Modification of {} table is illegal- validating function {}
		// returned False"), as drivers/switch/sonic's suite does.
		sw.RejectPatches("Modification of PFC_WD table is illegal- validating function generic_config_updater.field_operation_validators.rdma_config_update_validator returned False")
		d, out, errOut, code := e.applyKube(kc, "--max-unavailable", "100%", "--on-failure", "rollback",
			"--host-timeout", "90s", "--var", "mtu=4000", dir)
		sw.RejectPatches("")
		if code != 1 || d.Status != "failed" {
			t.Fatalf("apply with a failing switch under rollback: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
		lines := readJournal(t, d.Journal)
		if ws, wh := wave(lines, "switch.leaf1"), wave(lines, "host.h1"); wh != 1 || ws != 2 {
			t.Fatalf("an MTU decrease ran the hosts in wave %d and leaf1 in wave %d; this scenario needs the hosts first", wh, ws)
		}
		if d.Counts.RolledBack != len(e.nodes) || d.Counts.Failed != 1 || d.Counts.Applied != 0 {
			t.Errorf("counts %+v: want every host rolled back and leaf1 failed\n%s", d.Counts, out)
		}
		for _, n := range e.nodes {
			o := e.get(n)
			if o.Spec.Revision != prev[n].Spec.Revision || !o.AppliedCurrent() || e.mtu(n) != "5000" {
				t.Errorf("%s: revision %s (applied %v) MTU %s after the switch failed, want %s and 5000", n, o.Spec.Revision, o.AppliedCurrent(), e.mtu(n), prev[n].Spec.Revision)
			}
			if got := eventNames(events(lines, "host."+n)); got != "device_start,device_applied,device_verified,device_rolled_back" {
				t.Errorf("host.%s journal %s", n, got)
			}
		}
		if m := portMTU(sw, "Ethernet0"); m != before {
			t.Errorf("leaf1 Ethernet0 MTU %s after its failed apply, want %s", m, before)
		}
		if d, out, errOut, code := e.applyKube(kc, "--var", "mtu=5000", dir); code != 0 {
			t.Fatalf("apply after the switch accepts patches again: exit %d %+v\n%s\n%s", code, d, out, errOut)
		}
	})
}
