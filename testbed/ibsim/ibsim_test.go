package ibsim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/opensm"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// requireSim skips (or, under CI=true, fails) when the simulator cannot
// run here.
func requireSim(t testing.TB) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (opensm and the diags run as root on the SM host; the tests mirror that)"
	} else if err := Available(); err != nil {
		why = err.Error()
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("ibsim testbed unavailable under CI=true: %s", why)
	}
	t.Skipf("ibsim testbed unavailable: %s", why)
}

// twoSwitches is the test fabric: sw1 and sw2 joined by two cables
// (ports 7 and 8), cn01/cn02 on sw1, cn03/cn04 on sw2, all 4x QDR.
func twoSwitches() *ibfabric.Topology {
	t := &ibfabric.Topology{
		Switches: []ibfabric.SwitchSpec{{Name: "sw1", Ports: 8}, {Name: "sw2", Ports: 8}},
	}
	for i, sw := range []string{"sw1", "sw1", "sw2", "sw2"} {
		name := fmt.Sprintf("cn%02d", i+1)
		t.HCAs = append(t.HCAs, ibfabric.HCASpec{Name: name, Host: name, Desc: name + " mlx5_0"})
		t.Links = append(t.Links, ibfabric.LinkSpec{A: ibfabric.PortRef{Node: name, Port: 1}, B: ibfabric.PortRef{Node: sw, Port: i%2 + 1}, Width: 4, Speed: ibfabric.QDR})
	}
	for _, p := range []int{7, 8} {
		t.Links = append(t.Links, ibfabric.LinkSpec{A: ibfabric.PortRef{Node: "sw1", Port: p}, B: ibfabric.PortRef{Node: "sw2", Port: p}, Width: 4, Speed: ibfabric.QDR})
	}
	return t
}

// qos is the QoS of the tests' subnet manager.
var (
	qosSL2VL  = []int{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}
	qosHigh   = []spec.VLWeight{{VL: 0, Weight: 64}, {VL: 1, Weight: 64}}
	qosLow    = []spec.VLWeight{{VL: 0, Weight: 32}, {VL: 1, Weight: 32}, {VL: 2, Weight: 64}, {VL: 3, Weight: 64}}
	highLimit = 4
)

// partitionPlan is a partition by member adapter names (port 1).
type partitionPlan struct {
	name    string
	pkey    int
	sl      int
	members map[string]bool // adapter -> full
}

func testPartitions() []partitionPlan {
	return []partitionPlan{
		{name: "storage", pkey: 0x0001, sl: 1, members: map[string]bool{"cn01": true, "cn02": false}},
		{name: "compute", pkey: 0x0002, sl: 2, members: map[string]bool{"cn03": true, "cn04": true}},
	}
}

// subnetManager is the intent drivers/sm/opensm renders from.
func subnetManager(topo *ibfabric.Topology, parts []partitionPlan) *intent.SubnetManager {
	hcas := map[string]ibfabric.HCASpec{}
	for _, h := range topo.HCAs {
		hcas[h.Name] = h
	}
	sm := &intent.SubnetManager{
		Device: intent.Device{Kind: intent.KindSM, Name: "sm", Platform: intent.PlatformOpenSM},
		Fabric: "ibsim-test", QoS: true, DefaultSL: 0,
		SL2VL: qosSL2VL, VLArbHigh: qosHigh, VLArbLow: qosLow, MaxVLs: 4, HighLimit: &highLimit,
	}
	sm.Partitions = append(sm.Partitions, intent.Partition{Name: "Default", PKey: 0x7fff, IPoIB: true, Implicit: true,
		Members: []intent.PartitionMember{{ID: "ALL", Full: true}}})
	for _, p := range parts {
		ip := intent.Partition{Name: p.name, PKey: p.pkey, SL: p.sl}
		names := make([]string, 0, len(p.members))
		for n := range p.members {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ip.Members = append(ip.Members, intent.PartitionMember{ID: ibfabric.GUID(hcas[n].PortGUID(1)), Endpoint: n + ":ib0", Full: p.members[n]})
		}
		sm.Partitions = append(sm.Partitions, ip)
	}
	return sm
}

// renderFiles renders opensm's files with the opensm driver, the way
// `fabctl apply` writes them on a real subnet manager.
func renderFiles(t testing.TB, sm *intent.SubnetManager) SMFiles {
	t.Helper()
	files, err := opensm.New().(drivers.Renderer).Render(drivers.Target{Device: sm.Device, Intent: sm})
	if err != nil {
		t.Fatal(err)
	}
	var out SMFiles
	for _, f := range files {
		switch f.Name {
		case "partitions.conf":
			out.Partitions = f.Data
		case "qos-policy.conf":
			out.QoSPolicy = f.Data
		case "opensm.conf":
			out.OpenSMConf = f.Data
		default:
			t.Fatalf("unexpected rendered file %s", f.Name)
		}
	}
	return out
}

// fabricIntent is what Compare checks against.
func fabricIntent(topo *ibfabric.Topology, parts []partitionPlan) ibfabric.Intent {
	in := ibfabric.Intent{Topology: topo, Enforce: true, SL2VL: qosSL2VL,
		// ibsim fixes every port's MTU cap at 2048 (see NetFile).
		MTU: 2048}
	for _, w := range qosHigh {
		in.VLArbHigh = append(in.VLArbHigh, ibfabric.VLWeight{VL: w.VL, Weight: w.Weight})
	}
	for _, w := range qosLow {
		in.VLArbLow = append(in.VLArbLow, ibfabric.VLWeight{VL: w.VL, Weight: w.Weight})
	}
	for _, p := range parts {
		ip := ibfabric.Partition{Name: p.name, PKey: uint16(p.pkey)}
		for n, full := range p.members {
			ip.Members = append(ip.Members, ibfabric.Member{Port: ibfabric.PortRef{Node: n, Port: 1}, Full: full})
		}
		in.Partitions = append(in.Partitions, ip)
	}
	return in
}

type testLog struct{ t testing.TB }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func startSim(t testing.TB, topo *ibfabric.Topology, files SMFiles) *Sim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Config{Topology: topo, SMNode: topo.HCAs[0].Name, Files: files, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s
}

// check discovers the fabric and compares it with the intent; it wants
// exactly the findings of the kinds, nodes and ports listed.
func check(t *testing.T, s *Sim, in ibfabric.Intent, want ...string) []ibfabric.Finding {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := ibfabric.Discover(ctx, s.Runner(), ibfabric.All)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ibfabric.Compare(in, f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range fs {
		got = append(got, fmt.Sprintf("%s %s:%d", x.Kind, x.Node, x.Port))
		t.Logf("finding: %s", x)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n  %s\nwant:\n  %s\nfabric:\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), f.Describe())
	}
	return fs
}

// afterSweep runs a fault and waits for the heavy sweep opensm runs on
// the trap ibsim sends, so the discovery sees a settled fabric.
func afterSweep(t *testing.T, s *Sim, fault func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := s.SubnetUps()
	if err := fault(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitSubnetUp(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// TestFabric brings the 2-switch, 4-adapter fabric up with two
// partitions and QoS, reads it back clean, then injects faults at run
// time (a link at lower width, a link down, a host dropped from a
// partition by a reloaded partitions.conf) and wants each named by port.
func TestFabric(t *testing.T) {
	requireSim(t)
	topo := twoSwitches()
	parts := testPartitions()
	sm := subnetManager(topo, parts)
	files := renderFiles(t, sm)
	s := startSim(t, topo, files)
	in := fabricIntent(topo, parts)

	t.Run("clean", func(t *testing.T) { check(t, s, in) })

	t.Run("mad-and-diags", func(t *testing.T) {
		// The same fabric read by fabctl's MAD client (one process),
		// by infiniband-diags (one smpquery per attribute), and by the
		// diags in one batch (ibfabric.ShellBatch over the wrappers).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		fm, err := ibfabric.Discover(ctx, s.Runner(), ibfabric.All)
		if err != nil {
			t.Fatal(err)
		}
		if fm.Via != "fabctl ibmad" || fm.Note != "" {
			t.Fatalf("read via %q: %s", fm.Via, fm.Note)
		}
		diags := ibfabric.All
		diags.Diags = true
		fo, err := ibfabric.Discover(ctx, s.Runner(), diags)
		if err != nil {
			t.Fatal(err)
		}
		br, err := s.BatchRunner()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := br.(ibfabric.BatchRunner); !ok {
			t.Fatal("Sim.BatchRunner is not an ibfabric.BatchRunner")
		}
		fb, err := ibfabric.Discover(ctx, br, diags)
		if err != nil {
			t.Fatal(err)
		}
		dm, do, db := fm.Describe(), fo.Describe(), fb.Describe()
		if dm != do || db != do {
			t.Errorf("the reads differ:\nfabctl ibmad:\n%s\ninfiniband-diags:\n%s\nbatched:\n%s", dm, do, db)
		}
		for _, f := range []*ibfabric.Fabric{fm, fo, fb} {
			if fs, err := ibfabric.Compare(in, f); err != nil || len(fs) != 0 {
				t.Errorf("read via %s: %v %v", f.Via, fs, err)
			}
		}
	})

	t.Run("lower-width", func(t *testing.T) {
		sw1 := topo.Switches[0].SwitchGUID()
		isl := ibfabric.PortRef{Node: "sw1", Port: 7}
		afterSweep(t, s, func(ctx context.Context) error { return s.SetWidth(ctx, isl, sw1, 1) })
		fs := check(t, s, in, "width sw1:7")
		if len(fs) == 1 && !strings.Contains(fs[0].Message, "trained at 1x, lower than the spec's 4x") {
			t.Errorf("message: %s", fs[0].Message)
		}
		afterSweep(t, s, func(ctx context.Context) error { return s.SetWidth(ctx, isl, sw1, 4) })
		check(t, s, in)
	})

	t.Run("link-down", func(t *testing.T) {
		port := ibfabric.PortRef{Node: "sw2", Port: 2} // cn04's cable
		afterSweep(t, s, func(ctx context.Context) error { return s.LinkDown(ctx, port) })
		check(t, s, in, "link-down sw2:2", "unreachable cn04:0")
		afterSweep(t, s, func(ctx context.Context) error { return s.LinkUp(ctx, port) })
		check(t, s, in)
	})

	t.Run("host-missing-from-partition", func(t *testing.T) {
		// The spec keeps cn02 in storage; the subnet manager's
		// partitions.conf (drift, or an old render) does not.
		drift := testPartitions()
		delete(drift[0].members, "cn02")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Reload(ctx, renderFiles(t, subnetManager(topo, drift))); err != nil {
			t.Fatal(err)
		}
		// cn02's port and the switch port facing it (opensm copies the
		// adapter's P_Keys there) both lack the P_Key.
		fs := check(t, s, in, "pkey-missing cn02:1", "switch-pkey sw1:2")
		if len(fs) == 2 && !strings.Contains(fs[0].Message, "lacks P_Key 0x0001 of partition storage") {
			t.Errorf("message: %s", fs[0].Message)
		}
		if err := s.Reload(ctx, files); err != nil {
			t.Fatal(err)
		}
		check(t, s, in)
	})

	t.Run("sl2vl-and-vlarb", func(t *testing.T) {
		// Another SL2VL and VL arbitration in the intent than opensm
		// programs: every cabled port differs.
		other := in
		other.SL2VL = []int{0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3}
		other.VLArbLow = []ibfabric.VLWeight{{VL: 0, Weight: 64}}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		f, err := ibfabric.Discover(ctx, s.Runner(), ibfabric.All)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := ibfabric.Compare(other, f)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[ibfabric.Kind]int{}
		for _, x := range fs {
			kinds[x.Kind]++
		}
		// 6 cables, 12 cabled ports.
		if kinds[ibfabric.KindSL2VL] != 12 || kinds[ibfabric.KindVLArb] != 12 || len(fs) != 24 {
			t.Errorf("findings by kind %v, want 12 sl2vl and 12 vlarb", kinds)
		}
	})
}

// TestMiswired simulates a fabric cabled unlike the spec: cn02's and
// cn03's cables swapped between the switches, and cn04's cable training
// at 1x.
func TestMiswired(t *testing.T) {
	requireSim(t)
	topo := twoSwitches()
	actual, err := Miswire(topo, ibfabric.PortRef{Node: "sw1", Port: 2}, ibfabric.PortRef{Node: "sw2", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	if actual, err = Degrade(actual, ibfabric.PortRef{Node: "sw2", Port: 2}, 1); err != nil {
		t.Fatal(err)
	}
	parts := testPartitions()
	s := startSim(t, actual, renderFiles(t, subnetManager(topo, parts)))
	fs := check(t, s, fabricIntent(topo, parts),
		"miswired sw1:2", "miswired cn02:1", "miswired sw2:1", "miswired cn03:1", "width sw2:2")
	for _, f := range fs {
		if f.Node == "sw1" && f.Port == 2 && !strings.Contains(f.Message, "cabled to cn03 port 1; the spec cables it to cn02 port 1") {
			t.Errorf("message: %s", f.Message)
		}
	}
}

// TestDown stops a fabric through its state file, as `fabctl testbed
// down` would from another process.
func TestDown(t *testing.T) {
	requireSim(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topo := twoSwitches()
	s, err := Start(ctx, Config{Topology: topo, Dir: dir, Files: renderFiles(t, subnetManager(topo, testPartitions()))})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{s.IBSimPID, s.OpenSMPID}
	a, err := Attach(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Console(ctx, "Attached")
	if err != nil || !strings.Contains(out, "SM") {
		t.Fatalf("console Attached: %q, %v", out, err)
	}
	if err := Down(dir); err != nil {
		t.Fatal(err)
	}
	// The processes are this test's children: reap them.
	_ = s.Stop()
	for _, p := range pids {
		if alive(p) {
			t.Errorf("pid %d still running after Down", p)
		}
	}
	if _, err := os.Stat(dir + "/" + StateFile); !os.IsNotExist(err) {
		t.Errorf("state file left behind: %v", err)
	}
	if b, _ := os.ReadFile(dir + "/" + OpenSMLog); !bytes.Contains(b, []byte("SUBNET UP")) {
		t.Errorf("opensm log not kept in a caller's directory")
	}
}

func TestNetFile(t *testing.T) {
	topo := twoSwitches()
	b, err := NetFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		fmt.Sprintf("switchguid=%s\nSwitch 8 \"sw1\" # \"sw1\"\n", ibfabric.GUID(topo.Switches[0].SwitchGUID())),
		"[1] \"cn01\"[1] w=3 s=7 e=0\n",
		"[7] \"sw2\"[7] w=3 s=7 e=0\n",
		"Hca 1 \"cn04\" # \"cn04 mlx5_0\"\n[1] \"sw2\"[2] w=3 s=7 e=0\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("net file lacks %q:\n%s", want, s)
		}
	}
	bad := topo.Clone()
	bad.Links[0].Speed = ibfabric.NDR
	if _, err := NetFile(bad); err == nil || !strings.Contains(err.Error(), "NDR") {
		t.Errorf("NDR: %v", err)
	}
	bad = topo.Clone()
	bad.Links[1].B = ibfabric.PortRef{Node: "sw1", Port: 1}
	if _, err := NetFile(bad); err == nil || !strings.Contains(err.Error(), "already cabled") {
		t.Errorf("double-cabled port: %v", err)
	}
}
