package host

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/vishvananda/netns"
)

func mountinfo(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNetnsSysfs: the root namespace's /sys does not show a namespace's
// NICs; inside hostFS the namespace's own sysfs does (the NIC's MTU as
// set through netlink), the root namespace's NICs are gone from it, and
// the host's mount table is the same afterwards.
func TestNetnsSysfs(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	const ns = "fabctl-host-sysns"
	newNS(t, ns, 1)
	testutil.Run(t, "ip", "-n", ns, "link", "set", "v0a", "mtu", "1234")
	if _, err := os.Stat("/sys/class/net/v0a"); err == nil {
		t.Skip("a v0a exists in the root namespace too; cannot tell the views apart")
	}
	rootNICs, _ := os.ReadDir("/sys/class/net")
	before := mountinfo(t)
	s, err := open(&intent.Host{Connect: spec.Connect{Kind: "netns", Netns: ns}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var mtu string
	var seen []string
	err = s.hostFS(false, func() error {
		mtu, _ = readTrim(filepath.Join(sysRoot, "class/net/v0a/mtu"))
		ents, err := os.ReadDir(filepath.Join(sysRoot, "class/net"))
		for _, e := range ents {
			seen = append(seen, e.Name())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if mtu != "1234" {
		t.Fatalf("v0a's MTU in the namespace's sysfs: %q, want 1234", mtu)
	}
	sort.Strings(seen)
	if strings.Join(seen, " ") != "lo v0a v0b" {
		t.Fatalf("namespace sysfs lists %v, want lo v0a v0b", seen)
	}
	for _, e := range rootNICs {
		if e.Name() != "lo" && slices.Contains(seen, e.Name()) {
			t.Errorf("root namespace NIC %s visible in the namespace's sysfs", e.Name())
		}
	}
	if after := mountinfo(t); after != before {
		t.Fatalf("host mount table changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, err := os.Stat("/sys/class/net/v0a"); err == nil {
		t.Fatal("the host's /sys now shows the namespace")
	}
}

// TestConfigfsPrivateMount: when configfs is not mounted, hostFS mounts
// it for fabctl alone; the host's mount table does not change.
func TestConfigfsPrivateMount(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	if cfgMounted() {
		t.Skip("configfs is mounted on this host: nothing to mount privately")
	}
	b, _ := os.ReadFile("/proc/filesystems")
	if !strings.Contains(string(b), "configfs") {
		t.Skip("this kernel has no configfs (/proc/filesystems)")
	}
	before := mountinfo(t)
	s := &session{ns: netns.None()}
	inside := false
	if err := s.hostFS(true, func() error { inside = cfgMounted(); return nil }); err != nil {
		t.Fatal(err)
	}
	if !inside {
		t.Fatal("configfs not mounted inside hostFS")
	}
	if cfgMounted() || mountinfo(t) != before {
		t.Fatal("configfs mount leaked into the host's mount namespace")
	}
}

// TestStopIRQBalanceWithoutSystemd stops a real process named
// irqbalance (a copy of sleep) the way a host without systemd, or the
// agent's image without systemctl (PATH emptied here), needs it.
func TestStopIRQBalanceWithoutSystemd(t *testing.T) {
	if irqbalanceRunning() {
		t.Skip("a real irqbalance runs here; not touching it")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	t.Setenv("PATH", t.TempDir())
	if systemctl() {
		t.Fatal("systemctl found with an empty PATH")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "irqbalance")
	if err := os.WriteFile(fake, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fake, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	for i := 0; i < 100 && !irqbalanceRunning(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !irqbalanceRunning() {
		t.Fatal("fake irqbalance not seen in /proc")
	}
	stopped, err := stopIRQBalance()
	if err != nil || !stopped {
		t.Fatalf("stopped %v, %v", stopped, err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("irqbalance still running")
	}
	if stopped, err := stopIRQBalance(); stopped || err != nil {
		t.Fatalf("second stop: %v %v", stopped, err)
	}
	want := "start it by hand" // no systemd
	if systemdRunning() {
		want = "start it on the node with systemctl" // systemd, but no systemctl (the agent's image)
	}
	if err := startIRQBalance(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("restart: %v, want %q", err, want)
	}
}

// TestRealPCINetdevIRQs reads the IRQs of this machine's PCI network
// devices (read-only) and checks them against /proc/interrupts, which
// names MSI vectors by PCI address.
func TestRealPCINetdevIRQs(t *testing.T) {
	ents, _ := os.ReadDir("/sys/class/net")
	checked := 0
	for _, e := range ents {
		pci := nicPCI(e.Name())
		if pci == "" {
			continue
		}
		bdf := filepath.Base(pci)
		want := procInterruptsFor(t, bdf)
		got := deviceIRQs(pci)
		if len(want) > 0 && intsKey(got) != intsKey(want) {
			t.Errorf("%s (%s): msi_irqs %v, /proc/interrupts %v", e.Name(), bdf, got, want)
		}
		if len(got) > 0 {
			if _, ok := readIRQCPUs(pci, false); !ok {
				t.Errorf("%s: IRQ affinities unreadable", e.Name())
			}
		}
		checked++
	}
	if checked == 0 {
		t.Skip("no PCI network device on this machine (the VM testbed section host.sh covers real IRQs)")
	}
}

func procInterruptsFor(t *testing.T, bdf string) []int {
	f, err := os.Open("/proc/interrupts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "-"+bdf+" ") && !strings.Contains(line, "-"+bdf+"\t") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(line)[0], ":"))
		if err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

func intsKey(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
