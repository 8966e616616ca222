package topology

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
	if k := tp.Kubectl(); !strings.Contains(k, "kubectl label node h1 --overwrite fabctl.io/fabric=testbed topology.fabctl.io/leaf=leaf1 topology.fabctl.io/rail=0 topology.fabctl.io/spine-group=spine1\n") {
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

// TestRailOptimized: a host with two NICs on two leaves sits under its
// rail-0 leaf in Slurm and carries a leaf label per rail.
func TestRailOptimized(t *testing.T) {
	s := testutil.LoadSrc(t, `
fabric "r" { transport = "rocev2" }
switch "l0" {
  platform = "sonic"
  address  = "127.0.0.1"
  role     = "leaf"
}
switch "l1" {
  platform = "sonic"
  address  = "127.0.0.2"
  role     = "leaf"
}
switch "s0" {
  platform = "sonic"
  address  = "127.0.0.3"
  role     = "spine"
}
host "g1" {
  connect = "local"
  nic "e0" { addresses = ["10.0.0.1/31"] }
  nic "e1" { addresses = ["10.0.1.1/31"] }
}
link {
  endpoints = ["l0:Ethernet0", "g1:e0"]
  speed     = "400G"
}
link {
  endpoints = ["l1:Ethernet0", "g1:e1"]
  speed     = "400G"
}
link {
  endpoints = ["l0:Ethernet8", "s0:Ethernet0"]
  speed     = "400G"
}
link {
  endpoints = ["l1:Ethernet8", "s0:Ethernet4"]
  speed     = "400G"
}
`)
	tp := FromSpec(s)
	if got := tp.Slurm(); !strings.Contains(got, "SwitchName=l0 Nodes=g1\nSwitchName=s0 Switches=l0\n" /* l1 serves rail 1 only: no node sits under it */) {
		t.Errorf("slurm:\n%s", got)
	}
	l := tp.Labels()["g1"]
	if l[LabelPrefix+"rail0-leaf"] != "l0" || l[LabelPrefix+"rail1-leaf"] != "l1" {
		t.Errorf("labels %v", l)
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
	return shown
}
