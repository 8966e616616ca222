package host

// Host-feature tests on the VM testbed's real kernel (section host.sh sets
// FABCTL_VM=1): NUMA discovery with qemu's two nodes, IRQ affinity on a
// real interrupt, PCIe and device-limit reads on real devices.

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

func needVM(t *testing.T) {
	t.Helper()
	if os.Getenv("FABCTL_VM") != "1" {
		t.Skip("runs in the VM testbed guest (make e2e-vm FABTB_SECTIONS=host)")
	}
}

// TestVMNUMATopology: the guest has qemu's two NUMA nodes, one CPU each,
// and fabctl reads them as such; its PCI devices report no node (-1: qemu
// gives the PCI host bridge no proximity domain), which fabctl reports as
// a finding on a two-node host.
func TestVMNUMATopology(t *testing.T) {
	needVM(t)
	topo := nodeTopology()
	if len(topo) != 2 || topo[0].String() != "0" || topo[1].String() != "1" {
		t.Fatalf("NUMA topology %v, want node 0 = CPU 0, node 1 = CPU 1", topo)
	}
	if c := onlineCPUs(); c.String() != "0-1" {
		t.Fatalf("online CPUs %s", c)
	}
	h := &intent.Host{NUMANodes: map[int]spec.CPUSet{0: {0}, 1: {1}}}
	if fs := topologyFindings(h, topo); len(fs) != 0 {
		t.Fatalf("declared topology matches, findings %v", fs)
	}
	h.NUMANodes[1] = spec.CPUSet{1, 2}
	if fs := topologyFindings(h, topo); len(fs) != 1 || !strings.Contains(fs[0].Message, "node 1 = 1-2, sysfs says 1") {
		t.Fatalf("wrong declared topology: %v", fs)
	}
	pci := settablePCI(t)
	node, local, ok := readNUMA(pci)
	if !ok {
		t.Fatalf("%s: no numa_node/local_cpulist", pci)
	}
	t.Logf("%s: numa_node %d, local_cpulist %s", filepath.Base(pci), node, local)
	if node >= 0 {
		if !local.SubsetOf(topo[node]) {
			t.Fatalf("local CPUs %s not on node %d (%s)", local, node, topo[node])
		}
		return
	}
	fs := numaFindings(&intent.NIC{Name: "virtio"}, pci, topo)
	if len(fs) == 0 || !strings.Contains(fs[0].Message, "no NUMA node for the device (numa_node -1) on a host with 2 nodes") {
		t.Fatalf("findings %v", fs)
	}
}

// settablePCI returns a PCI device of the guest all of whose interrupts
// take an affinity (kernel-managed queue vectors, as virtio-blk's, refuse
// it with EIO).
func settablePCI(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob("/sys/bus/pci/devices/*")
	// MSI-X first: what a NIC has; legacy INTx lines (the ACPI SCI) last.
	sort.SliceStable(dirs, func(i, j int) bool { return hasMSI(dirs[i]) && !hasMSI(dirs[j]) })
	for _, d := range dirs {
		irqs := deviceIRQs(d)
		if len(irqs) == 0 {
			continue
		}
		ok := true
		for _, irq := range irqs {
			cur, err := irqAffinity(irq)
			if err != nil || writeSys(irqAffinityFile(irq), cur.String()) != nil {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
	t.Fatal("no PCI device whose interrupts take an affinity")
	return ""
}

func hasMSI(dir string) bool {
	ents, err := os.ReadDir(filepath.Join(dir, "msi_irqs"))
	return err == nil && len(ents) > 0
}

// TestVMIRQAffinityOnVirtioDevice pins real interrupts. The guest's NICs
// (veth, fabdcb) have none, so the test uses a virtio PCI device's MSI-X
// vectors through the same code the driver runs for a NIC's device:
// an explicit CPU list, then numa = "auto" (round-robin over the local
// CPUs), each read back from /proc/irq/N/smp_affinity_list and the
// kernel's effective affinity, then restored.
func TestVMIRQAffinityOnVirtioDevice(t *testing.T) {
	needVM(t)
	pci := settablePCI(t)
	drv, err := filepath.EvalSymlinks(filepath.Join(pci, "driver"))
	if err != nil {
		drv = "none"
	}
	irqs := deviceIRQs(pci)
	t.Logf("the guest's NICs have no IRQs; pinning the %d MSI-X vectors %v of PCI device %s (driver %s) instead",
		len(irqs), irqs, filepath.Base(pci), filepath.Base(drv))
	prior, err := snapIRQs(irqs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := restoreIRQs(prior); err != nil {
			t.Error(err)
		}
	})
	n := &intent.NIC{Name: "virtio", NUMA: spec.NUMAPolicy{CPUs: spec.CPUSet{1}}}
	if _, err := applyIRQs(n, pci); err != nil {
		t.Fatal(err)
	}
	for _, irq := range irqs {
		if got, _ := irqAffinity(irq); got.String() != "1" {
			t.Errorf("IRQ %d affinity %s, want 1", irq, got)
		}
		// x86 without interrupt remapping may defer a vector's move to
		// its next interrupt (an idle MSI-X vector keeps its old CPU), so
		// give it a few interrupts' chance: disk and 9p I/O, up to 3 s.
		eff, ok := waitEffective(irq, "1", 3*time.Second)
		switch {
		case ok && eff != "1" && hasMSI(pci):
			t.Errorf("IRQ %d effective affinity %s: the kernel did not move it", irq, eff)
		case ok:
			t.Logf("IRQ %d: smp_affinity_list 1, effective_affinity_list %s", irq, eff)
		}
	}
	if v, ok := readIRQCPUs(pci, false); !ok || v != "1" {
		t.Errorf("read back %q %v, want 1", v, ok)
	}
	n.NUMA = spec.NUMAPolicy{Auto: true}
	if _, err := applyIRQs(n, pci); err != nil {
		t.Fatal(err)
	}
	local := localCPUs(pci)
	for i, irq := range irqs {
		want := local[i%len(local)]
		if got, _ := irqAffinity(irq); got.String() != itoa(want) {
			t.Errorf("auto: IRQ %d on %s, want CPU %d (local CPUs %s)", irq, got, want, local)
		}
	}
	if v, ok := readIRQCPUs(pci, true); !ok || v != "auto" {
		t.Errorf("auto read back %q", v)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestVMPCIeAndLimits reads a real PCI device's link and request sizes,
// and a real RDMA device's limits through ibv_devinfo.
func TestVMPCIeAndLimits(t *testing.T) {
	needVM(t)
	pci := settablePCI(t)
	info, ok := readPCIe(pci)
	if !ok {
		t.Fatalf("%s: not read as a PCI device", pci)
	}
	t.Logf("%s: PCIe link files %v (%s x%d of %s x%d), MaxReadReq %d, MaxPayload %d",
		info.BDF, info.HasLink, info.CurSpeed, info.CurWidth, info.MaxSpeed, info.MaxWidth, info.MRRS, info.MPS)
	cfg, err := os.ReadFile(filepath.Join(pci, "config"))
	if err != nil || len(cfg) < 256 {
		t.Fatalf("config space: %d bytes, %v (root reads 256 or more)", len(cfg), err)
	}
	if info.HasLink != (info.MRRS > 0) {
		t.Errorf("link files %v but PCI Express capability MRRS %d", info.HasLink, info.MRRS)
	}
	dev := os.Getenv("FABCTL_VM_RDMA")
	if dev == "" {
		t.Fatal("FABCTL_VM_RDMA (an rxe device) not set by the section")
	}
	qp := spec.DefaultQP
	qp.MaxSendWR, qp.CQDepth = 2000000, 40000
	fs := qpFindings(qp, &intent.NIC{Name: "fb", Device: dev, Model: "rxe", Limits: spec.ModelLimits("rxe")})
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, f.Severity+": "+f.Message)
	}
	got := strings.Join(msgs, "\n")
	t.Log(got)
	for _, want := range []string{"qp max_send_wr = 2000000 exceeds " + dev + "'s max_qp_wr", "qp cq_depth = 40000 exceeds " + dev + "'s max_cqe"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(got, "differ from the device") {
		t.Errorf("the rxe model table differs from the real rxe device: update spec.ModelLimits")
	}
}

// waitEffective polls an IRQ's effective affinity until it reads want or
// the time is up, causing device I/O (sync, a write to the 9p share)
// meanwhile so a deferred vector move can happen at an interrupt.
func waitEffective(irq int, want string, limit time.Duration) (string, bool) {
	path := filepath.Join(procRoot, "irq", itoa(irq), "effective_affinity_list")
	deadline := time.Now().Add(limit)
	for {
		eff, ok := readTrim(path)
		if !ok || eff == want || time.Now().After(deadline) {
			return eff, ok
		}
		if share := os.Getenv("FABTB_SHARE"); share != "" {
			_ = os.WriteFile(filepath.Join(share, "results", ".irq-poke"), []byte(time.Now().String()), 0o644)
		}
		syscall.Sync()
		time.Sleep(100 * time.Millisecond)
	}
}
