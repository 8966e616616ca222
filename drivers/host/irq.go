package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"golang.org/x/sys/unix"
)

// IRQ affinity. A NIC's interrupts are its PCI device's MSI/MSI-X vectors
// (<device>/msi_irqs/<N>), or its legacy INTx line (<device>/irq); each
// one's CPUs are /proc/irq/<N>/smp_affinity_list. numa = "auto" spreads
// the IRQs round-robin over the NIC's local CPUs, one CPU each, as
// mlnx-tools set_irq_affinity_bynode.sh does; an explicit CPU list gives
// every IRQ that whole list (the kernel then picks one CPU of it per
// vector). irqbalance rewrites the same files every 10 s, so pinning
// needs irqbalance = "stop"; with "keep" and irqbalance running fabctl
// leaves IRQs to it and says so.

// deviceIRQs lists the IRQs of a device directory, sorted.
func deviceIRQs(dev string) []int {
	if dev == "" {
		return nil // virtual device
	}
	var out []int
	if ents, err := os.ReadDir(filepath.Join(dev, "msi_irqs")); err == nil {
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		if v, ok := readTrim(filepath.Join(dev, "irq")); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				out = append(out, n)
			}
		}
	}
	sort.Ints(out)
	return out
}

func irqAffinityFile(irq int) string {
	return filepath.Join(procRoot, "irq", strconv.Itoa(irq), "smp_affinity_list")
}

// irqAffinity reads an IRQ's CPUs.
func irqAffinity(irq int) (spec.CPUSet, error) {
	l, ok := readTrim(irqAffinityFile(irq))
	if !ok {
		return nil, fmt.Errorf("IRQ %d: cannot read %s", irq, irqAffinityFile(irq))
	}
	return parseCPUList(l)
}

// setIRQAffinity writes an IRQ's CPUs, unless they are already set.
func setIRQAffinity(irq int, cpus spec.CPUSet) error {
	if cur, err := irqAffinity(irq); err == nil && cur.String() == cpus.String() {
		return nil
	}
	err := writeSys(irqAffinityFile(irq), cpus.String())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EIO):
		return fmt.Errorf("IRQ %d: the kernel manages this IRQ's affinity (EIO): it cannot be pinned", irq)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("IRQ %d: CPUs %s refused (EINVAL: offline or not allowed for this IRQ)", irq, cpus)
	}
	return fmt.Errorf("IRQ %d: set affinity %s: %w", irq, cpus, err)
}

// irqTargets is where each IRQ goes for a NIC's NUMA policy.
func irqTargets(irqs []int, pol spec.NUMAPolicy, local spec.CPUSet) (map[int]spec.CPUSet, error) {
	out := map[int]spec.CPUSet{}
	if !pol.Auto {
		if len(pol.CPUs) == 0 {
			return nil, errors.New("numa has neither \"auto\" nor a CPU list")
		}
		for _, irq := range irqs {
			out[irq] = pol.CPUs
		}
		return out, nil
	}
	if len(local) == 0 {
		return nil, errors.New("the NIC's local CPUs are unknown (no local_cpulist, no /sys/devices/system/cpu/online)")
	}
	for i, irq := range irqs {
		out[irq] = spec.CPUSet{local[i%len(local)]}
	}
	return out, nil
}

// readIRQCPUs returns the union of the device's IRQ affinities: "auto"
// when auto is wanted and every IRQ is on the NIC's local CPUs, else the
// CPU list. False when the device has no IRQs (virtual devices).
func readIRQCPUs(dev string, auto bool) (string, bool) {
	irqs := deviceIRQs(dev)
	if len(irqs) == 0 {
		return "", false
	}
	set := map[int]bool{}
	for _, irq := range irqs {
		cs, err := irqAffinity(irq)
		if err != nil {
			continue
		}
		for _, c := range cs {
			set[c] = true
		}
	}
	var all spec.CPUSet
	for c := range set {
		all = append(all, c)
	}
	sort.Ints(all)
	if auto && all.SubsetOf(localCPUs(dev)) {
		return "auto", true
	}
	return all.String(), true
}

// applyIRQs pins a device's IRQs for the NIC's policy; it returns the
// prior affinities for restore.
func applyIRQs(n *intent.NIC, dev string) (map[int]string, error) {
	irqs := deviceIRQs(dev)
	if len(irqs) == 0 {
		return nil, fmt.Errorf("%s: no device IRQs", n.Name)
	}
	prior, err := snapIRQs(irqs)
	if err != nil {
		return nil, err
	}
	targets, err := irqTargets(irqs, n.NUMA, localCPUs(dev))
	if err != nil {
		return prior, fmt.Errorf("%s: %w", n.Name, err)
	}
	for _, irq := range irqs {
		if err := setIRQAffinity(irq, targets[irq]); err != nil {
			return prior, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return prior, nil
}

func snapIRQs(irqs []int) (map[int]string, error) {
	out := map[int]string{}
	for _, irq := range irqs {
		cs, err := irqAffinity(irq)
		if err != nil {
			return nil, err
		}
		out[irq] = cs.String()
	}
	return out, nil
}

func restoreIRQs(prior map[int]string) error {
	var errs []error
	for irq, l := range prior {
		cs, err := parseCPUList(l)
		if err == nil {
			err = setIRQAffinity(irq, cs)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// irqbalancePIDs lists the running irqbalance processes.
func irqbalancePIDs() []int {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == "irqbalance" {
			out = append(out, pid)
		}
	}
	return out
}

func irqbalanceRunning() bool { return len(irqbalancePIDs()) > 0 }

func systemdRunning() bool {
	_, err := os.Stat("/run/systemd/system")
	return err == nil
}

// systemctl is how irqbalance is stopped and started when systemd runs
// the host and its systemctl is at hand; the agent's image (a pod in the
// host's PID namespace) has neither, and signals the daemon instead.
func systemctl() bool {
	if !systemdRunning() {
		return false
	}
	_, err := exec.LookPath("systemctl")
	return err == nil
}

// stopIRQBalance stops irqbalance: through systemctl when systemd runs
// the host (so it does not restart it), else by SIGTERM to the daemon (a
// supervisor that restarts it shows as "still running" below). It reports
// whether it stopped anything.
func stopIRQBalance() (bool, error) {
	if !irqbalanceRunning() {
		return false, nil
	}
	if systemctl() {
		if out, err := exec.Command("systemctl", "stop", "irqbalance.service").CombinedOutput(); err != nil {
			return false, fmt.Errorf("systemctl stop irqbalance: %v: %s", err, strings.TrimSpace(string(out)))
		}
	} else {
		for _, pid := range irqbalancePIDs() {
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
				return false, fmt.Errorf("stop irqbalance (pid %d): %w", pid, err)
			}
		}
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !irqbalanceRunning() {
			return true, nil
		}
	}
	return true, fmt.Errorf("irqbalance still running 5 s after it was asked to stop (pids %v)", irqbalancePIDs())
}

// startIRQBalance undoes stopIRQBalance where it can.
func startIRQBalance() error {
	if !systemdRunning() {
		return errors.New("irqbalance was stopped by fabctl and this host has no systemd to start it again: start it by hand")
	}
	if !systemctl() {
		return errors.New("irqbalance was stopped by fabctl, which has no systemctl here (the agent's image): start it on the node with systemctl start irqbalance")
	}
	if out, err := exec.Command("systemctl", "start", "irqbalance.service").CombinedOutput(); err != nil {
		return fmt.Errorf("systemctl start irqbalance: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
