package topology

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

func testbed(t testing.TB) *spec.Spec {
	return testutil.Load(t, filepath.Join(testutil.RepoRoot(t), "examples/testbed"), spec.LoadOptions{Platforms: testutil.Platforms()})
}

func ibTestbed(t testing.TB) *spec.Spec {
	return testutil.Load(t, filepath.Join(testutil.RepoRoot(t), "examples/ib-testbed"), spec.LoadOptions{Platforms: testutil.Platforms()})
}

// TestIBTopology: the InfiniBand cabling (platform "infiniband"
// switches, numbered ports) gives the same tree and labels: hosts under
// their leaf, both spines above both leaves.
func TestIBTopology(t *testing.T) {
	tp := FromSpec(ibTestbed(t))
	got := tp.Slurm()
	for _, want := range []string{
		"SwitchName=spine1 Switches=leaf1,leaf2\n",
		"SwitchName=spine2 Switches=leaf1,leaf2\n",
		"SwitchName=leaf1 Nodes=cn01,cn02,sm01\n",
		"SwitchName=leaf2 Nodes=cn03,cn04\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("topology.conf lacks %q:\n%s", want, got)
		}
	}
	l := tp.Labels()["cn03"]
	if l[LabelPrefix+"leaf"] != "leaf2" || l[LabelPrefix+"spine-group"] != "spine1.spine2" || l[LabelPrefix+"rail"] != "0" {
		t.Errorf("cn03 labels: %v", l)
	}
}

func TestTestbedTopology(t *testing.T) {
	tp := FromSpec(testbed(t))
	got := tp.Slurm()
	for _, want := range []string{
		"SwitchName=leaf1 Nodes=h1,h2\n",
		"SwitchName=leaf2 Nodes=h3,h4\n",
		"SwitchName=spine1 Switches=leaf1,leaf2\n", // leaf3..6 carry no host: not in the tree
	} {
		if !strings.Contains(got, want) {
			t.Errorf("topology.conf lacks %q:\n%s", want, got)
		}
	}
	l := tp.Labels()["h3"]
	if l[LabelPrefix+"leaf"] != "leaf2" || l[LabelPrefix+"spine-group"] != "spine1" || l[LabelPrefix+"rail"] != "0" {
		t.Errorf("h3 labels: %v", l)
	}
	if k := tp.Kubectl(); !strings.Contains(k, "kubectl label node h1 --overwrite fabctl.io/fabric=testbed topology.fabctl.io/leaf=leaf1 topology.fabctl.io/rail-group=leaf1 topology.fabctl.io/rail=0 topology.fabctl.io/spine-group=spine1\n") {
		t.Errorf("kubectl:\n%s", k)
	}
}

// TestFabricLabel: every host of the spec, cabled or not, is labelled
// as a host of the fabric (the agent DaemonSet's default node selection);
// names Kubernetes would refuse are an error naming the host.
func TestFabricLabel(t *testing.T) {
	s := testutil.LoadSrc(t, `
fabric "pod-1" { transport = "rocev2" }
host "gpu01" {
  connect = "local"
  nic "eth0" { device = "mlx5_0" }
}
`)
	tp := FromSpec(s)
	if l := tp.Labels()["gpu01"]; len(l) != 1 || l[FabricLabel] != "pod-1" {
		t.Errorf("uncabled host's labels %v, want only %s=pod-1", l, FabricLabel)
	}
	if err := tp.CheckLabels(); err != nil {
		t.Error(err)
	}
	if k := tp.Kubectl(); k != "kubectl label node gpu01 --overwrite fabctl.io/fabric=pod-1\n" {
		t.Errorf("kubectl: %q", k)
	}
	for _, c := range []struct{ fabric, host, want string }{
		{strings.Repeat("f", 64), "gpu01", "label fabctl.io/fabric"},
		{"pod_1-", "gpu01", "label fabctl.io/fabric"},
		{"pod1", "GPU01", "not a valid Kubernetes node name"},
	} {
		tp := &Topology{Fabric: c.fabric, Hosts: []Host{{Name: c.host}}}
		if err := tp.CheckLabels(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fabric %q host %q: %v, want an error with %q", c.fabric, c.host, err, c.want)
		}
	}
}

// TestRailOptimized: in a rail-optimised pod (each host's NIC n on its
// unit's rail-n leaf) the hosts of one scalable unit form a rail group:
// one leaf switch of Slurm's tree and one block, named after its leaves,
// with every spine above one of its leaves above it; a host on one leaf
// stays under that leaf. Each host carries a leaf label per rail.
func TestRailOptimized(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, c := range []struct{ name, dir string }{
		{"rail-pod", "topology/testdata/rail-pod"},
		{"ai-pod", "examples/ai-pod"},
	} {
		tp := FromSpec(testutil.Load(t, filepath.Join(root, c.dir), spec.LoadOptions{}))
		testutil.Golden(t, filepath.Join("testdata", c.name+".slurm.conf"), []byte(tp.Slurm()))
		testutil.Golden(t, filepath.Join("testdata", c.name+".block.conf"), []byte(tp.SlurmBlock()))
		if err := checkBlockRules(tp.SlurmBlock(), tp); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	tp := FromSpec(testutil.Load(t, filepath.Join(root, "topology/testdata/rail-pod"), spec.LoadOptions{}))
	l := tp.Labels()["g4"]
	if l[LabelPrefix+"rail0-leaf"] != "l2" || l[LabelPrefix+"rail1-leaf"] != "l3" || l[LabelPrefix+"leaf"] != "l2" || l[LabelPrefix+"rail-group"] != "l2.l3" {
		t.Errorf("labels %v", l)
	}
	if err := tp.CheckLabels(); err != nil {
		t.Error(err)
	}
	for _, h := range tp.Hosts {
		if want := map[string]string{"g1": "l0+l1", "g4": "l2+l3", "h9": "l0"}[h.Name]; want != "" && h.RailGroup != want {
			t.Errorf("%s: rail group %q, want %q", h.Name, h.RailGroup, want)
		}
	}
}

// TestRailGroupName: a group's name is its leaves joined by "+" up to
// Slurm's 64 characters, else the first leaf and a hash of the cabling;
// two groups of other cabling never share a name.
func TestRailGroupName(t *testing.T) {
	if n := RailGroupName([]string{"leaf1", "leaf2"}); n != "leaf1+leaf2" {
		t.Errorf("got %q", n)
	}
	long := []string{strings.Repeat("a", 30), strings.Repeat("b", 30), strings.Repeat("c", 30)}
	if n := RailGroupName(long); len(n) > MaxSlurmName || !strings.HasPrefix(n, long[0]+"+") {
		t.Errorf("long group: %q", n)
	}
	// 63 characters joined is the longest name kept whole (a Kubernetes
	// label value's limit).
	if n := RailGroupName([]string{strings.Repeat("a", 31), strings.Repeat("b", 31)}); len(n) != 63 || !strings.Contains(n, "+b") {
		t.Errorf("63-character group: %q", n)
	}
	// h1: rail 0 on l0, rails 1 and 2 on l1; h2: rails 0 and 1 on l0,
	// rail 2 on l1: both reach l0 and l1, but a rail-1 packet between
	// them crosses the spine, so they are two groups.
	s := testutil.LoadSrc(t, `
fabric "r" { transport = "rocev2" }
switch "l0" {
  platform = "sonic"
  address  = "127.0.0.1"
}
switch "l1" {
  platform = "sonic"
  address  = "127.0.0.2"
}
host "h1" {
  connect = "local"
  nic "e0" {}
  nic "e1" {}
  nic "e2" {}
}
host "h2" {
  connect = "local"
  nic "e0" {}
  nic "e1" {}
  nic "e2" {}
}
link {
  endpoints = ["l0:Ethernet0", "h1:e0"]
  speed     = "400G"
}
link {
  endpoints = ["l1:Ethernet0", "h1:e1"]
  speed     = "400G"
}
link {
  endpoints = ["l1:Ethernet4", "h1:e2"]
  speed     = "400G"
}
link {
  endpoints = ["l0:Ethernet4", "h2:e0"]
  speed     = "400G"
}
link {
  endpoints = ["l0:Ethernet8", "h2:e1"]
  speed     = "400G"
}
link {
  endpoints = ["l1:Ethernet8", "h2:e2"]
  speed     = "400G"
}
`)
	tp := FromSpec(s)
	if g1, g2 := tp.Hosts[0].RailGroup, tp.Hosts[1].RailGroup; g1 == g2 || len(tp.Blocks) != 2 {
		t.Errorf("rail groups %q and %q, blocks %+v: want two", g1, g2, tp.Blocks)
	}
	if err := checkBlockRules(tp.SlurmBlock(), tp); err != nil {
		t.Error(err)
	}
}

// checkBlockRules checks a topology.conf for topology/block against the
// rules Slurm's block plugin enforces when it reads one. Debian 12's
// slurmctld (22.05) has no topology/block plugin (SchedMD added it in
// 23.11, commit 71c4762ed9), so this is what checks the file here, not
// Slurm. The rules, from SchedMD/slurm (fetched): slurm-23-11-0-1
// src/plugins/topology/block/topology_block.c block_record_validate and
// slurm-24-11-0-1 src/plugins/topology/block/block_record.c
// _read_topo_file, block_record_validate:
//   - only BlockName (with Nodes=) and BlockSizes lines ("Parsing error
//     at unrecognized key" otherwise: s_p_parse_file);
//   - block names unique ("Block (%s) has already been defined");
//   - every block has nodes, each one a node slurm.conf defines ("lacks
//     children", "Invalid node name");
//   - without BlockSizes every block has the first block's node count
//     (23.11: "children count no equal bblock_node_cnt"); with it
//     (24.05+) every block has at least the first size, and each size is
//     that base times a power of two up to 2^15 ("Invalid BlockSizes
//     value", "children count lower than bblock_node_cnt").
//
// fabctl's own rule on top: no node in two blocks.
func checkBlockRules(conf string, tp *Topology) error {
	nodes := map[string]bool{}
	for _, h := range tp.Hosts {
		nodes[h.Name] = true
	}
	names, inBlock := map[string]bool{}, map[string]string{}
	var counts, sizes []int
	for i, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		key, val, _ := strings.Cut(fields[0], "=")
		switch strings.ToLower(key) {
		case "blockname":
			if len(fields) != 2 || !strings.HasPrefix(strings.ToLower(fields[1]), "nodes=") {
				return fmt.Errorf("line %d: %q: a block needs Nodes= and nothing else", i+1, line)
			}
			if names[val] {
				return fmt.Errorf("line %d: Block (%s) has already been defined", i+1, val)
			}
			names[val] = true
			list := strings.Split(fields[1][len("nodes="):], ",")
			for _, n := range list {
				if !nodes[n] {
					return fmt.Errorf("line %d: Invalid node name (%s) in block config (%s)", i+1, n, val)
				}
				if b, ok := inBlock[n]; ok {
					return fmt.Errorf("line %d: node %s is in blocks %s and %s", i+1, n, b, val)
				}
				inBlock[n] = val
			}
			counts = append(counts, len(list))
		case "blocksizes":
			for _, f := range strings.Split(val, ",") {
				n, err := strconv.Atoi(f)
				if err != nil || n <= 0 {
					return fmt.Errorf("line %d: Invalid BlockSizes value: %s", i+1, f)
				}
				sizes = append(sizes, n)
			}
		default:
			return fmt.Errorf("line %d: Parsing error at unrecognized key: %s", i+1, key)
		}
	}
	if len(counts) == 0 {
		return nil // "No blocks configured": an error Slurm logs, not a fatal one
	}
	if len(sizes) == 0 {
		for _, c := range counts {
			if c != counts[0] {
				return fmt.Errorf("blocks of %v nodes without BlockSizes: Slurm 23.11 refuses (children count no equal bblock_node_cnt) and 24.05 takes the first as the base", counts)
			}
		}
		return nil
	}
	base := sizes[0]
	for _, sz := range sizes {
		if q := sz / base; sz%base != 0 || q&(q-1) != 0 || q > 1<<15 {
			return fmt.Errorf("Invalid BlockSizes value: %d (base %d)", sz, base)
		}
	}
	for _, c := range counts {
		if c < base {
			return fmt.Errorf("a block of %d nodes: children count lower than bblock_node_cnt %d", c, base)
		}
	}
	return nil
}

// TestBlockRulesRefuse: the rule check refuses what Slurm's block plugin
// refuses, so TestRailOptimized's check can fail.
func TestBlockRulesRefuse(t *testing.T) {
	tp := &Topology{Hosts: []Host{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	for _, bad := range []string{
		"BlockName=x Nodes=a\nBlockName=x Nodes=b\n",
		"BlockName=x Nodes=a\nBlockName=y Nodes=b,c\n",
		"BlockName=x Nodes=a,b\nBlockName=y Nodes=c\nBlockSizes=2\n",
		"BlockName=x Nodes=a\nBlockSizes=1,3\n",
		"BlockName=x Nodes=z\n",
		"BlockName=x\n",
		"SwitchName=x Nodes=a\n",
		"BlockName=x Nodes=a,b\nBlockName=y Nodes=b,c\n",
	} {
		if checkBlockRules(bad, tp) == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
	if err := checkBlockRules("BlockName=x Nodes=a,b\nBlockName=y Nodes=c\nBlockSizes=1,2,4\n", tp); err != nil {
		t.Error(err)
	}
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// slurmConf writes a minimal slurm.conf (tree plugin, the hosts as nodes
// on loopback, no auth) beside topology.conf in dir.
func slurmConf(t testing.TB, dir string, hosts []string, topo string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	var nodes strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&nodes, "NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n", h)
	}
	conf := fmt.Sprintf(`ClusterName=fabctltest
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
StateSaveLocation=%s/state
SlurmctldPidFile=%s/slurmctld.pid
SlurmctldLogFile=%s/slurmctld.log
AuthType=auth/none
CredType=cred/none
TopologyPlugin=topology/tree
%sPartitionName=all Nodes=ALL Default=YES
`, freePort(t), freePort(t), dir, dir, dir, nodes.String())
	p := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "topology.conf"), []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSlurmAcceptsTopology runs Debian's slurmctld (22.05) in the
// foreground on loopback with a minimal slurm.conf that points the tree
// plugin at the generated topology.conf, and asks it back with
// scontrol show topology: Slurm's own parser read every switch. A
// topology.conf with a dangling child is rejected by the same parser
// (slurmctld exits: "invalid child"), so the check can fail.
func TestSlurmAcceptsTopology(t *testing.T) {
	if _, err := exec.LookPath("slurmctld"); err != nil {
		if _, err := os.Stat("/usr/sbin/slurmctld"); err != nil {
			testutil.SkipOrFail(t, "slurmctld not installed (apt-get install slurmctld)")
		}
	}
	testutil.RequireRoot(t, "slurmctld runs as SlurmUser=root")
	s := testbed(t)
	tp := FromSpec(s)
	shown := slurmShow(t, s, tp)
	if !strings.Contains(shown, "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=h1,h2") || !strings.Contains(shown, "SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=h[1-4] Switches=leaf1,leaf2") {
		t.Errorf("slurm's tree differs from the spec's:\n%s", shown)
	}
	var hosts []string
	for _, h := range s.Hosts {
		hosts = append(hosts, h.Name)
	}

	// The same parser rejects a broken file.
	bad := t.TempDir()
	badConf := slurmConf(t, bad, hosts, tp.Slurm()+"SwitchName=top Switches=spine1,nosuchswitch\n")
	b, err := exec.Command("timeout", "20", "/usr/sbin/slurmctld", "-D", "-i", "-f", badConf).CombinedOutput()
	if err == nil || !strings.Contains(string(b), "invalid child (nosuchswitch)") {
		t.Errorf("slurmctld did not reject a dangling switch (%v):\n%s", err, b)
	}
}

// TestSlurmAcceptsIBTopology: the InfiniBand fat tree of
// examples/ib-testbed (platform "infiniband" switches, HDR cabling, two
// spines above two leaves) becomes a topology.conf Slurm's own parser
// reads back whole: each leaf with its hosts, each spine with both
// leaves and so every host.
func TestSlurmAcceptsIBTopology(t *testing.T) {
	if _, err := exec.LookPath("slurmctld"); err != nil {
		if _, err := os.Stat("/usr/sbin/slurmctld"); err != nil {
			testutil.SkipOrFail(t, "slurmctld not installed (apt-get install slurmctld)")
		}
	}
	testutil.RequireRoot(t, "slurmctld runs as SlurmUser=root")
	s := ibTestbed(t)
	shown := slurmShow(t, s, FromSpec(s))
	for _, want := range []string{
		"SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=cn01,cn02,sm01",
		"SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=cn03,cn04",
		"SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=cn[01-04],sm01 Switches=leaf1,leaf2",
		"SwitchName=spine2 Level=1 LinkSpeed=1 Nodes=cn[01-04],sm01 Switches=leaf1,leaf2",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("slurm's tree lacks %q:\n%s", want, shown)
		}
	}
}

// slurmShow starts slurmctld with the topology.conf of tp beside a
// minimal slurm.conf naming s's hosts, and returns scontrol show
// topology (the test fails when slurmctld rejects the file).
func slurmShow(t *testing.T, s *spec.Spec, tp *Topology) string {
	shown, _ := slurmShowLog(t, s, tp)
	return shown
}

// slurmShowLog is slurmShow that also returns slurmctld's log up to the
// answer.
func slurmShowLog(t *testing.T, s *spec.Spec, tp *Topology) (string, string) {
	t.Helper()
	var hosts []string
	for _, h := range s.Hosts {
		hosts = append(hosts, h.Name)
	}
	dir := t.TempDir()
	conf := slurmConf(t, dir, hosts, tp.Slurm())
	cmd := exec.Command("/usr/sbin/slurmctld", "-D", "-i", "-f", conf)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	var shown string
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("slurmctld exited (%v): it rejected the configuration:\n%s\n%s", err, out, tp.Slurm())
		default:
		}
		sc := exec.Command("scontrol", "show", "topology")
		sc.Env = append(os.Environ(), "SLURM_CONF="+conf)
		b, err := sc.CombinedOutput()
		if err == nil && strings.Contains(string(b), "SwitchName=") {
			shown = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scontrol show topology: %v\n%s\nslurmctld:\n%s", err, b, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("scontrol show topology:\n%s", shown)
	for _, sw := range tp.Switches {
		if !strings.Contains(shown, "SwitchName="+sw.Name+" ") {
			t.Errorf("slurm does not know switch %s", sw.Name)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
	return shown, string(log)
}

// TestSlurmAcceptsRailTopology: Debian's slurmctld reads the tree of the
// rail-optimised pods whole (each rail group one leaf switch with its
// hosts, the spines above it) and does not log "Multiple leaf switches
// contain nodes", which it does when a host is listed under each of its
// rail leaves.
func TestSlurmAcceptsRailTopology(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/slurmctld"); err != nil {
		testutil.SkipOrFail(t, "slurmctld not installed (apt-get install slurmctld)")
	}
	testutil.RequireRoot(t, "slurmctld runs as SlurmUser=root")
	root := testutil.RepoRoot(t)
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"topology/testdata/rail-pod", []string{
			"SwitchName=l0 Level=0 LinkSpeed=1 Nodes=h9",
			"SwitchName=l0+l1 Level=0 LinkSpeed=1 Nodes=g1,g2,g3\n",
			"SwitchName=l2+l3 Level=0 LinkSpeed=1 Nodes=g4,g5\n",
			"SwitchName=s0 Level=1 LinkSpeed=1 Nodes=g[1-5],h9 Switches=l0,l0+l1,l2+l3",
		}},
		{"examples/ai-pod", []string{
			"SwitchName=leaf1+leaf2+leaf3+leaf4 Level=0 LinkSpeed=1 Nodes=gpu01,gpu02,gpu03,",
			"SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=gpu[01-32] Switches=leaf1+leaf2+leaf3+leaf4",
		}},
	} {
		s := testutil.Load(t, filepath.Join(root, c.dir), spec.LoadOptions{})
		shown, log := slurmShowLog(t, s, FromSpec(s))
		for _, want := range c.want {
			if !strings.Contains(shown, want) {
				t.Errorf("%s: slurm's tree lacks %q:\n%s", c.dir, want, shown)
			}
		}
		if strings.Contains(log, "Multiple leaf switches") {
			t.Errorf("%s: slurmctld: %s", c.dir, log)
		}
	}
}
