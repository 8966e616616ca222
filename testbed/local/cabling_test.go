package local_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/local"
)

// The cabling spec: two leaves and a spine on their own addresses and
// namespaces (never a running demo's), two hosts, one per leaf.
var cablingSpec = strings.NewReplacer("fabtb-h", "fabtb3-h", "127.0.31.", "127.0.33.").Replace(testSpec)

// TestEthernetCabling: testbed up cables every spec link as a real veth
// pair (host NIC <-> switch port, switch <-> switch) and runs an lldpd
// per switch and per host namespace; each switch's live link source
// reads its ports' state, the veth's 10G and the neighbour its lldpd
// heard, and plan reads them through the EOS and NX-OS emulators, with
// the hosts' own (host driver, lldpcli). Each Ethernet fault is then met
// for real: a miswire (renamed veth ends) is miswired at both ends, each
// naming the port it landed on, a pulled cable a down host end with the
// switch port configured up, a lowered speed the switch port's. Healing
// each reads clean; down leaves no agent.
func TestEthernetCabling(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	if _, err := exec.LookPath("lldpd"); err != nil {
		testutil.SkipOrFail(t, "lldpd is not installed (Debian package lldpd): the testbed's LLDP is not tested")
	}
	specDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(specDir, "tb.fab.hcl"), []byte(cablingSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FABCTL_TBTEST_PASSWORD", "tb-test-Pa55")
	dir := local.DefaultDir(specDir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, err = local.Up(specDir, dir, local.Options{Exe: exe, Args: []string{"testbed", "serve", "--dir", dir}, FabricNetns: "fabtb3-fabric"})
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, local.RecordFile)); err == nil {
			_ = local.Down(dir, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := local.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for _, p := range rec.Ports {
		table = append(table, p.Switch+":"+p.Port+"="+p.Veth)
	}
	slices.Sort(table)
	if got := strings.Join(table, " "); got != "leaf1:Ethernet0=leaf1-Ethernet0 leaf1:Ethernet124=leaf1-e124 leaf2:Ethernet1=leaf2-Ethernet1 leaf2:Ethernet3=leaf2-Ethernet3 leaf3:Ethernet1/12=leaf3-e1_12 spine1:ethernet-1/1=spine1-e1_1 spine1:ethernet-1/2=spine1-e1_2 spine1:ethernet-1/3=spine1-e1_3" {
		t.Fatalf("port table %s", got)
	}
	if len(rec.Trunks) != 3 || len(rec.LLDP) != 6 {
		t.Fatalf("trunks %+v, agents %+v", rec.Trunks, rec.LLDP)
	}
	ctx := context.Background()
	t0 := time.Now()
	mark := func(what string) { t.Logf("%6.2fs %s", time.Since(t0).Seconds(), what) }
	ports := func(sw string) map[string]linktruth.Observation {
		t.Helper()
		m, err := local.LinkSource{Dir: dir, Switch: sw}.Ports(ctx)
		if err != nil {
			t.Fatalf("%s: %v", sw, err)
		}
		return m
	}
	// wait polls until ok holds of sw's port (LLDP: 500ms transmit
	// interval, about 1-2 s after a port comes up).
	wait := func(sw, port string, ok func(linktruth.Observation) bool) linktruth.Observation {
		t.Helper()
		var o linktruth.Observation
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if o = ports(sw)[port]; ok(o) {
				return o
			}
		}
		t.Fatalf("%s:%s: %+v", sw, port, o)
		return o
	}
	heard := func(sys, port string) func(linktruth.Observation) bool {
		return func(o linktruth.Observation) bool {
			return o.Oper == linktruth.Up && slices.ContainsFunc(o.Neighbors, func(n linktruth.Neighbor) bool {
				return n.SystemName == sys && (n.PortID == port || n.PortDesc == port)
			})
		}
	}
	o := wait("leaf1", "Ethernet124", heard("spine1", "ethernet-1/1"))
	if o.SpeedMbps != 10000 || o.AdminDown || o.Counters == nil {
		t.Fatalf("leaf1:Ethernet124 %+v", o)
	}
	mark("trunks heard")
	wait("spine1", "ethernet-1/3", heard("leaf3", "Ethernet1/12"))
	// The hosts' NICs are down until apply brings them up.
	if o := ports("leaf1")["Ethernet0"]; o.Oper != linktruth.Down || o.AdminDown {
		t.Fatalf("leaf1:Ethernet0 facing a NIC not brought up: %+v", o)
	}
	for _, ns := range []string{"fabtb3-h1", "fabtb3-h2"} {
		testutil.Run(t, "ip", "-n", ns, "link", "set", "eth1", "up")
	}
	wait("leaf1", "Ethernet0", heard("h1", "eth1"))
	mark("hosts up")
	wait("leaf2", "Ethernet1", heard("h2", "eth1"))

	s := testutil.Load(t, specDir, spec.LoadOptions{})
	f := intent.Compile(s)
	reg := builtin.Registry()
	// The hosts (lldpcli) and the EOS and NX-OS leaves (their emulators
	// answer from this cabling: show interfaces | json, show lldp
	// neighbors detail | json).
	hostPlan := func() *plan.Plan {
		return plan.Make(ctx, s, f, reg, plan.Options{Credentials: s.CredentialsByName, Targets: []string{"host.*", "switch.leaf2", "switch.leaf3"}})
	}
	hostFindings := func() string {
		var out []string
		for _, fd := range hostPlan().Links.Findings {
			out = append(out, fd.End+" "+fd.Kind+" "+fd.Verdict+" have "+fd.Have)
		}
		return strings.Join(out, "; ")
	}
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got = hostFindings(); got == "" {
			break
		}
	}
	if got != "" {
		t.Fatalf("clean testbed, hosts: %s", got)
	}
	if p := hostPlan(); p.Links.Ends != 5 || len(p.Links.NoLLDP) != 0 {
		t.Fatalf("hosts read %d ends, no LLDP %+v", p.Links.Ends, p.Links.NoLLDP)
	}

	inject := func(kind string, args ...string) string {
		t.Helper()
		msg, err := local.InjectEth(ctx, dir, kind, args)
		if err != nil {
			t.Fatalf("%s %v: %v", kind, args, err)
		}
		return msg
	}
	// miswire: h1's NIC lands on leaf2:Ethernet1, h2's on leaf1:Ethernet0.
	if msg := inject("miswire", "h1:eth1", "h2:eth1"); msg != "h1:eth1 is now on leaf2:Ethernet1 and h2:eth1 now on leaf1:Ethernet0" {
		t.Fatalf("miswire: %s", msg)
	}
	wait("leaf1", "Ethernet0", heard("h2", "eth1"))
	if got := hostFindings(); got != "h1:eth1 miswired mismatch have leaf2:Ethernet1; leaf2:Ethernet1 miswired mismatch have h1:eth1; h2:eth1 miswired mismatch have leaf1:Ethernet0" {
		t.Fatalf("miswired: %s", got)
	}
	mark("miswired")
	inject("miswire", "h2:eth1", "h1:eth1")
	wait("leaf1", "Ethernet0", heard("h1", "eth1"))
	if got := hostFindings(); got != "" {
		t.Fatalf("cables back: %s", got)
	}
	// link-down: the switch end is down, its configuration up; the host
	// sees no carrier.
	mark("cables back")
	inject("link-down", "leaf1:Ethernet0")
	if o := ports("leaf1")["Ethernet0"]; o.Oper != linktruth.Down || o.AdminDown || len(o.Neighbors) != 0 {
		t.Fatalf("pulled: %+v", o)
	}
	if got := hostFindings(); got != "h1:eth1 link-down mismatch have down" {
		t.Fatalf("pulled: %s", got)
	}
	mark("pulled")
	inject("link-up", "h1:eth1")
	wait("leaf1", "Ethernet0", heard("h1", "eth1"))
	// speed: the switch port reports 1G, the host's veth still 10G.
	inject("speed", "h2:eth1", "1G")
	if o := ports("leaf2")["Ethernet1"]; o.SpeedMbps != 1000 {
		t.Fatalf("speed: %+v", o)
	}
	if got := hostFindings(); got != "leaf2:Ethernet1 speed mismatch have 1G" {
		t.Fatalf("slowed: %s", got)
	}
	inject("speed", "leaf2:Ethernet1", "10G")
	if o := ports("leaf2")["Ethernet1"]; o.SpeedMbps != 10000 {
		t.Fatalf("speed healed: %+v", o)
	}
	if _, err := local.InjectEth(ctx, dir, "link-down", []string{"leaf9:Ethernet0"}); err == nil || !strings.Contains(err.Error(), "not a cabled port") {
		t.Fatalf("unknown port: %v", err)
	}

	mark("speed")
	agents := rec.LLDP
	if err := local.Down(dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if procAlive(a.PID) {
			t.Errorf("lldpd of %s (pid %d) still running", a.Device, a.PID)
		}
		for _, f := range []string{a.Socket, a.Config} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s left behind", f)
			}
		}
	}
}
