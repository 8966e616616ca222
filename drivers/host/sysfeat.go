package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

// The NIC settings that live in sysfs, configfs and procfs rather than
// netlink: DCQCN enable per priority (ecn), the rdma_cm defaults
// (roce_mode, tos) and IRQ affinity (irq_cpus); plus the read-only
// findings (NUMA, PCIe, device limits). All of it runs inside hostFS, so a
// namespace host sees its own sysfs.

func isSysFeature(f string) bool {
	switch f {
	case "ecn", "cnp", "roce_mode", "tos", "irq_cpus":
		return true
	}
	return false
}

// needsCfg: configfs (rdma_cm) matters when a RoCE NIC names its RDMA
// device.
func needsCfg(h *intent.Host) bool {
	for _, n := range h.NICs {
		if n.RoCEMode != "" && n.Device != "" {
			return true
		}
	}
	return false
}

func ibDeviceExists(dev string) bool {
	if dev == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(sysRoot, "class/infiniband", dev))
	return err == nil
}

// readSys reads the sysfs/configfs/procfs settings of every NIC the
// netlink pass found, and collects the findings.
func readSys(s *session, h *intent.Host, st intent.State, unsup map[string]string) ([]drivers.Finding, error) {
	var fs []drivers.Finding
	fams := nicFamilies(s, h)
	err := s.hostFS(needsCfg(h), func() error {
		topo := nodeTopology()
		fs = append(fs, topologyFindings(h, topo)...)
		balancing := irqbalanceRunning()
		for i := range h.NICs {
			n := &h.NICs[i]
			p := "nic/" + n.Name + "/"
			if _, absent := unsup[p]; absent {
				continue
			}
			dev := nicPCI(n.Name)
			fs = append(fs, numaFindings(n, dev, topo)...)
			if pi, ok := readPCIe(dev); ok {
				fs = append(fs, pcieFindings(n.Name, n.Model, pi)...)
			}
			if ibDeviceExists(n.Device) {
				fs = append(fs, qpFindings(h.QP, n)...)
			}
			fs = append(fs, ibFindings(n)...) // InfiniBand port state, rate, P_Keys, GUID, MTU (ib.go)
			if n.RoCEMode == "" {
				continue // iWARP / InfiniBand: no DCQCN, rdma_cm RoCE defaults or IRQ policy in the state
			}
			if fams[n.Name] == famBNXT { // bnxt_re configfs or the in-tree default (bnxtcc.go)
				fs = append(fs, readBnxt(n, h, dev, st, unsup)...)
			} else if v, ok := readECN(n.Name); ok {
				st[p+"ecn"] = v
			} else {
				unsup[p+"ecn"] = n.Name + ": no DCQCN sysfs (ecn/roce_np, ecn/roce_rp: MLNX_OFED driver only)"
				if f := ccParamsFinding(n.Name, dev); f != nil {
					fs = append(fs, *f)
				}
			}
			if fams[n.Name] != famBNXT && (n.CNPDSCP >= 0 || n.CNPPriority >= 0) {
				if v, ok := readCNP(n.Name); ok {
					for k, x := range v {
						st[p+k] = x
					}
				} else {
					unsup[p+"cnp"] = cnpUnexpressible(n)
				}
			}
			if why := rdmacmUnsupported(n.Name, n.Device); why != "" {
				unsup[p+"roce_mode"], unsup[p+"tos"] = why, why
			} else {
				mode, tos, err := readRDMACM(n.Device)
				if err != nil {
					return fmt.Errorf("%s: %w", n.Name, err)
				}
				st[p+"roce_mode"], st[p+"tos"] = mode, tos
			}
			if v, ok := readIRQCPUs(dev, n.NUMA.Auto); !ok {
				unsup[p+"irq_cpus"] = n.Name + ": no device IRQs (virtual device)"
			} else {
				st[p+"irq_cpus"] = v
				if balancing && h.IRQBalance != "stop" {
					unsup[p+"irq_cpus"] = n.Name + `: irqbalance is running and the spec keeps it (irqbalance = "keep"): it owns IRQ affinity; set irqbalance = "stop" to pin the NIC's IRQs`
				}
			}
		}
		return nil
	})
	return fs, err
}

// dcbxFinding warns when the NIC's DCBX is not host-controlled: in
// firmware (willing) mode the switch's DCBX advertisement overrides the
// ETS/PFC the host sets.
func dcbxFinding(nic string, ieee *dcbnl.IEEE) *drivers.Finding {
	if ieee == nil || ieee.DCBX == nil || *ieee.DCBX&dcbnl.DCBXHost != 0 {
		return nil
	}
	return &drivers.Finding{Severity: "warning", Path: "nic/" + nic + "/dcbx", Message: fmt.Sprintf(
		"%s: DCBX is firmware-controlled (mode 0x%02x, no HOST bit): a willing NIC takes ETS/PFC from the switch's DCBX and may override what fabctl sets; make it host-controlled: dcb dcbx set dev %s host ieee (mlnx_qos -d os)",
		nic, *ieee.DCBX, nic)}
}

// sysSnap is a NIC's sysfs/configfs/procfs state before a transaction.
type sysSnap struct {
	NIC    string            `json:"nic"`
	Device string            `json:"device,omitempty"`
	ECN    map[string]string `json:"ecn,omitempty"`
	BnxtCC *bnxtCC           `json:"bnxt_cc,omitempty"` // bnxtcc.go
	RDMACM *rdmacmSnap       `json:"rdma_cm,omitempty"`
	IRQs   map[int]string    `json:"irqs,omitempty"`
}

// anySys says whether a transaction changes a sysfs feature at all (a
// namespace host pays a private mount namespace for each hostFS).
func anySys(todo map[string]map[string]bool) bool {
	for _, f := range todo {
		for k := range f {
			if isSysFeature(k) {
				return true
			}
		}
	}
	return false
}

// prepareSys snapshots what a transaction will change in sysfs and checks
// that each change is possible, before anything is touched.
func prepareSys(s *session, h *intent.Host, todo map[string]map[string]bool) ([]sysSnap, []string) {
	var snaps []sysSnap
	var probs []string
	if !anySys(todo) {
		return nil, nil
	}
	fams := nicFamilies(s, h)
	err := s.hostFS(needsCfg(h), func() error {
		for i := range h.NICs {
			n := &h.NICs[i]
			f := todo[n.Name]
			if f == nil {
				continue
			}
			sn := sysSnap{NIC: n.Name, Device: n.Device}
			if fams[n.Name] == famBNXT && (f["ecn"] || f["cnp"]) {
				if !bnxtConfigfs() {
					probs = append(probs, n.Name+": no bnxt_re congestion control configfs ("+bnxtCCRoot()+": Broadcom's out-of-tree bnxt_re only)")
				} else if cc, err := readBnxtCC(n.Device); err != nil {
					probs = append(probs, n.Name+": "+err.Error())
				} else {
					sn.BnxtCC = &cc
				}
				f = withoutECN(f)
			}
			if f["ecn"] {
				if v, ok := snapECN(n.Name); ok {
					sn.ECN = v
				} else {
					probs = append(probs, n.Name+": no DCQCN sysfs (ecn/roce_np, ecn/roce_rp: MLNX_OFED driver only)")
				}
			}
			if f["cnp"] {
				if v, ok := snapCNP(n.Name); ok {
					if sn.ECN == nil {
						sn.ECN = map[string]string{}
					}
					for k, x := range v {
						sn.ECN[k] = x
					}
				} else {
					probs = append(probs, cnpUnexpressible(n))
				}
			}
			if f["roce_mode"] || f["tos"] {
				if why := rdmacmUnsupported(n.Name, n.Device); why != "" {
					probs = append(probs, why)
				} else if m, t, err := readRDMACM(n.Device); err != nil {
					probs = append(probs, n.Name+": "+err.Error())
				} else {
					sn.RDMACM = &rdmacmSnap{Mode: m, Tos: t}
				}
			}
			if f["irq_cpus"] {
				irqs := deviceIRQs(nicPCI(n.Name))
				switch {
				case len(irqs) == 0:
					probs = append(probs, n.Name+": no device IRQs (virtual device)")
				case h.IRQBalance != "stop" && irqbalanceRunning():
					probs = append(probs, n.Name+`: irqbalance is running and the spec keeps it (irqbalance = "keep"): it owns IRQ affinity`)
				default:
					prior, err := snapIRQs(irqs)
					if err != nil {
						probs = append(probs, n.Name+": "+err.Error())
					}
					sn.IRQs = prior
				}
			}
			if sn.ECN != nil || sn.BnxtCC != nil || sn.RDMACM != nil || sn.IRQs != nil {
				snaps = append(snaps, sn)
			}
		}
		return nil
	})
	if err != nil {
		probs = append(probs, err.Error())
	}
	return snaps, probs
}

// applySys applies the sysfs/configfs/procfs features of every NIC.
func applySys(s *session, h *intent.Host, todo map[string]map[string]bool) error {
	if !anySys(todo) {
		return nil
	}
	fams := nicFamilies(s, h)
	return s.hostFS(needsCfg(h), func() error {
		for i := range h.NICs {
			n := &h.NICs[i]
			f := todo[n.Name]
			if f == nil {
				continue
			}
			if fams[n.Name] == famBNXT && (f["ecn"] || f["cnp"]) {
				if err := writeBnxtCC(n.Name, n.Device, bnxtCCWant(n, h)); err != nil {
					return err
				}
				f = withoutECN(f)
			}
			if f["ecn"] {
				if err := applyECN(n.Name, n.ECNPrios); err != nil {
					return err
				}
			}
			if f["cnp"] {
				if err := applyCNP(n); err != nil {
					return err
				}
			}
			if f["roce_mode"] || f["tos"] {
				mode, tos := n.RoCEMode, h.RDMATos
				if !f["roce_mode"] {
					mode = "" // only what the plan says differs
				}
				if !f["tos"] {
					tos = -1
				}
				if err := applyRDMACM(n.Device, mode, tos); err != nil {
					return fmt.Errorf("%s: %w", n.Name, err)
				}
			}
			if f["irq_cpus"] {
				if _, err := applyIRQs(n, nicPCI(n.Name)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// restoreSys puts snapshots back.
func restoreSys(s *session, h *intent.Host, snaps []sysSnap) error {
	if len(snaps) == 0 {
		return nil
	}
	var errs []error
	err := s.hostFS(needsCfg(h), func() error {
		for _, sn := range snaps {
			if sn.ECN != nil {
				errs = append(errs, restoreFiles(sn.ECN))
			}
			if sn.BnxtCC != nil {
				errs = append(errs, writeBnxtCC(sn.NIC, sn.Device, *sn.BnxtCC))
			}
			if sn.RDMACM != nil {
				tos, err := strconv.Atoi(sn.RDMACM.Tos)
				if err == nil {
					err = applyRDMACM(sn.Device, sn.RDMACM.Mode, tos)
				}
				errs = append(errs, err)
			}
			if sn.IRQs != nil {
				errs = append(errs, restoreIRQs(sn.IRQs))
			}
		}
		return nil
	})
	errs = append(errs, err)
	return joinErrs(errs)
}

// describeSys is the plan step of a sysfs feature, with the equivalent
// commands as payload.
func describeSys(nic, feat string, n *intent.NIC, h *intent.Host, where string) (string, []string, bool) {
	if (feat == "ecn" || feat == "cnp") && familyOf(n.Model, sysDriver(nic)) == famBNXT {
		sum, pl := describeBnxt(nic, n, h, where)
		return sum, pl, true
	}
	switch feat {
	case "ecn":
		on := map[int]bool{}
		for _, p := range n.ECNPrios {
			on[p] = true
		}
		var pl []string
		for p := 0; p < 8; p++ {
			v := 0
			if on[p] {
				v = 1
			}
			pl = append(pl, fmt.Sprintf("echo %d > /sys/class/net/%s/ecn/roce_{rp,np}/enable/%d%s", v, nic, p, where))
		}
		return fmt.Sprintf("%s: DCQCN (RP+NP) on priorities %q", nic, intsList(n.ECNPrios)), pl, true
	case "cnp":
		return fmt.Sprintf("%s: CNPs with DSCP %d, priority %d", nic, n.CNPDSCP, n.CNPPriority), []string{
			fmt.Sprintf("echo %d > /sys/class/net/%s/ecn/roce_np/cnp_dscp%s", n.CNPDSCP, nic, where),
			fmt.Sprintf("echo %d > /sys/class/net/%s/ecn/roce_np/cnp_802p_prio%s", n.CNPPriority, nic, where)}, true
	case "roce_mode", "tos":
		port := "/sys/kernel/config/rdma_cm/" + n.Device + "/ports/1/"
		return fmt.Sprintf("%s: rdma_cm defaults of %s: RoCE %s, ToS %d", nic, n.Device, n.RoCEMode, h.RDMATos), []string{
			"mkdir -p /sys/kernel/config/rdma_cm/" + n.Device + where,
			fmt.Sprintf("echo %q > %sdefault_roce_mode%s", roceModeNames[n.RoCEMode], port, where),
			fmt.Sprintf("echo %d > %sdefault_roce_tos%s", h.RDMATos, port, where)}, true
	case "irq_cpus":
		what := "round-robin over the NIC's local CPUs (device/local_cpulist)"
		if !n.NUMA.Auto {
			what = n.NUMA.CPUs.String()
		}
		return fmt.Sprintf("%s: IRQ affinity %s", nic, what), []string{
			fmt.Sprintf("for each IRQ in /sys/class/net/%s/device/msi_irqs: echo <cpus> > /proc/irq/<irq>/smp_affinity_list (%s)%s", nic, what, where)}, true
	}
	return "", nil, false
}

// nicFamilies is each RoCE NIC's family (ethtool), found before hostFS.
func nicFamilies(s *session, h *intent.Host) map[string]family {
	out := map[string]family{}
	for i := range h.NICs {
		if n := &h.NICs[i]; n.RoCEMode != "" {
			out[n.Name] = nicFamily(s, n)
		}
	}
	return out
}

// withoutECN is a NIC's feature set without ecn and cnp (settled
// together on a Broadcom NIC, bnxtcc.go).
func withoutECN(f map[string]bool) map[string]bool {
	out := make(map[string]bool, len(f))
	for k, v := range f {
		if k != "ecn" && k != "cnp" {
			out[k] = v
		}
	}
	return out
}
