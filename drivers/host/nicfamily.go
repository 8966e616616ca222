package host

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/spec"
	"golang.org/x/sys/unix"
)

// NIC families: how a NIC's kernel driver takes DCB, from its source.
//
//   - famMLX5 (mlx5_core, drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c)
//     and unknown drivers: the generic order (ETS, PFC, APP), one priority
//     per DSCP (a new APP entry replaces the old one, mlx5e_dcbnl_ieee_setapp).
//   - famICE (ice, drivers/net/ethernet/intel/ice/ice_dcb_nl.c): the
//     firmware LLDP agent owns DCB until the fw-lldp-agent private flag is
//     off (every set is -EINVAL while dcbx is LLD_MANAGED); the first DSCP
//     APP entry switches to DSCP mode and resets ETS to TC 0 = 100 %, so APP
//     goes first and ETS after it; a DSCP already mapped is -EINVAL ("already
//     user mapped"), so a changed entry is deleted before it is added; in
//     DSCP mode prio_tc is the identity (ice_dcbnl_setets keeps it).
//   - famBNXT (bnxt_en, drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c): every
//     set needs host DCBX (IEEE + HOST, else -EINVAL); the RoCE priority is
//     programmed into firmware only from an APP entry UDP 4791 (RoCEv2) or
//     Ethertype 0x8915 (RoCEv1) (bnxt_dcbnl_ieee_setapp → bnxt_hwrm_set_dcbx_app).
type family string

const (
	famMLX5 family = spec.FamilyMLX5
	famICE  family = spec.FamilyICE
	famBNXT family = spec.FamilyBNXT
)

// familyOf picks the strategy from the spec's NIC model, else from the
// kernel driver's name (ethtool -i).
func familyOf(model, driver string) family {
	if f := spec.NICFamily(model); f != "" {
		return family(f)
	}
	switch driver {
	case "ice":
		return famICE
	case "bnxt_en":
		return famBNXT
	}
	return famMLX5
}

// nicFamily detects a live NIC's family (driver name through ethtool).
func nicFamily(s *session, n *intent.NIC) family {
	drv := ""
	if e, err := s.ethtool(); err == nil {
		drv, _ = e.DriverName(n.Name)
	}
	return familyOf(n.Model, drv)
}

const iceLLDPFlag = "fw-lldp-agent" // ice_ethtool.c ice_gstrings_priv_flags

// fwLLDP reads the ice fw-lldp-agent private flag (has false: no such flag).
func fwLLDP(s *session, nic string) (on, has bool, err error) {
	e, err := s.ethtool()
	if err != nil {
		return false, false, err
	}
	flags, err := e.PrivFlags(nic)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return false, false, nil
		}
		return false, false, err
	}
	v, ok := flags[iceLLDPFlag]
	return v, ok, nil
}

func setFWLLDP(s *session, nic string, on bool) error {
	e, err := s.ethtool()
	if err != nil {
		return fmt.Errorf("%s: ethtool: %w", nic, err)
	}
	if err := e.UpdatePrivFlags(nic, map[string]bool{iceLLDPFlag: on}); err != nil {
		return fmt.Errorf("%s: ethtool --set-priv-flags %s %s %s: %w", nic, nic, iceLLDPFlag, onOff(on), err)
	}
	return nil
}

// readFamily adds what a NIC family needs to the read: the ice firmware
// LLDP agent (state when the spec manages it; DCB unexpressible while it
// owns DCB and the spec does not hand it over), Broadcom's host DCBX and
// RoCE APP entry.
func readFamily(s *session, n *intent.NIC, fam family, ieee *dcbnl.IEEE, st map[string]string, unsup map[string]string, fs *[]drivers.Finding) {
	p := "nic/" + n.Name + "/"
	on, has, err := fwLLDP(s, n.Name)
	if err != nil {
		on, has = false, false
	}
	if n.FirmwareLLDP != nil {
		if has {
			st[p+"firmware_lldp"] = onOff(on)
		} else {
			unsup[p+"firmware_lldp"] = fmt.Sprintf("%s: no %s private flag (an Intel E810/ice setting; this NIC is %s)", n.Name, iceLLDPFlag, fam)
		}
	}
	dcbx := uint8(0)
	if ieee != nil && ieee.DCBX != nil {
		dcbx = *ieee.DCBX
	}
	switch fam {
	case famICE:
		handedOver := n.FirmwareLLDP != nil && !*n.FirmwareLLDP
		if !(has && on) || handedOver {
			*fs = append(*fs, drivers.Finding{Severity: "info", Path: p + "dcb", Message: n.Name +
				": ice resets the netdev after every ETS, PFC or APP write that changes something (ice_pf_dcb_cfg takes the VSIs down and up, then ice_dcbnl_devreset runs dev_close + dev_open): the link goes down and up once per write, one per DSCP entry (dcbnl_ieee_set calls ieee_setapp per entry, so one netlink message does not batch them), and the kernel flushes the netdev's IPv6 addresses; fabctl writes only the DSCP entries that differ from ice's DSCP-mode default map and what differs from the NIC's state, marks those steps disruptive, and puts the spec's addresses back"})
		}
		iceAppLimits(n, ieee, unsup)
		if has && on && !handedOver {
			unsup[p+"dcb"] = fmt.Sprintf("%s: the E810 firmware LLDP agent owns DCB (dcbx 0x%02x, LLD_MANAGED): ice refuses ETS, PFC and APP writes with EINVAL and any DCBX change (ice_dcbnl_setets, ice_dcbnl_setdcbx). Hand DCB to the host with `ethtool --set-priv-flags %s %s off`, or set firmware_lldp = false on the nic and fabctl does it",
				n.Name, dcbx, n.Name, iceLLDPFlag)
		}
	case famBNXT:
		bnxtDCBX(n.Name, ieee, unsup)
		if unsup[p+"dcb"] != "" {
			return // the firmware keeps DCB: nothing below can be applied
		}
		bnxtLimits(n, ieee, unsup)
		if n.RDMAPriority >= 0 && !hasRoCEApp(ieee, n) {
			*fs = append(*fs, drivers.Finding{Severity: "warning", Path: p + "app", Message: fmt.Sprintf(
				"%s: no APP entry %s -> priority %d: bnxt programs the RoCE priority into firmware only from that entry (bnxt_dcbnl_ieee_setapp); fabctl adds it with the DSCP table on apply (dcb app add dev %s %s:%d)",
				n.Name, roceAppText(n), n.RDMAPriority, n.Name, roceAppDcb(n), n.RDMAPriority)})
		}
	}
}

// cmFinding reports where rdma_cm takes a RoCE connection's SL from this
// NIC's own prio->TC map (ice, bnxt set a TC count on the netdev; cma.c
// get_vlan_ndev_tc) and that SL is not the RDMA class's priority: the
// VLAN egress map fabctl writes does not decide it there (intent.NIC.CMSL).
func cmFinding(n *intent.NIC, fam family) *drivers.Finding {
	if n.RoCEMode == "" || n.VLANName == "" || n.RDMAPriority < 0 {
		return nil
	}
	sl, via := n.CMSL(string(fam))
	if via != intent.CMViaPrioTC || sl == n.RDMAPriority {
		return nil
	}
	why := fmt.Sprintf("ice maps each priority to its ETS TC on the netdev (ice_vsi_cfg_netdev_tc), and skb priority %d is on TC %d", n.RDMASkbPriority, sl)
	if fam == famBNXT {
		why = "bnxt sets the TC count with the ETS (bnxt_setup_mq_tc) and never a prio->TC map, so every priority is on TC 0"
	}
	return &drivers.Finding{Severity: "warning", Path: "nic/" + n.Name + "/vlan/egress_qos_map", Message: fmt.Sprintf(
		"%s: rdma_cm gives RoCE connections on %s SL %d, not the RDMA class's priority %d: %s has a TC count on %s, so cma.c takes the SL from the NIC's prio->TC map (get_vlan_ndev_tc), not from the egress-qos-map fabctl writes on %s; %s. Whether the NIC sends that SL as the PCP is its driver's (unverified on hardware); prefer DSCP trust for RoCE on this NIC (lint HOST-7)",
		n.Name, n.VLANName, sl, n.RDMAPriority, fam, n.Name, n.VLANName, why)}
}

// bnxtDCBX lists DCB as not expressible where bnxt's DCBX mode keeps the
// host out: the firmware DCBX agent owns DCB (LLD_MANAGED), or host mode
// would be refused (bnxtIEEEOnly). Any other mode without HOST (set by
// hand) apply switches to host IEEE, which bnxt takes.
func bnxtDCBX(nic string, ieee *dcbnl.IEEE, unsup map[string]string) {
	if ieee == nil || ieee.DCBX == nil {
		return
	}
	dcbx := *ieee.DCBX
	switch {
	case dcbx&dcbnl.DCBXLLDManaged != 0:
		unsup["nic/"+nic+"/dcb"] = fmt.Sprintf("%s: the Broadcom firmware DCBX agent owns DCB (dcbx 0x%02x, LLD_MANAGED): bnxt refuses every DCB write without host DCBX and refuses the switch (\"All firmware DCBX settings are set in NVRAM\", bnxt_dcbnl_setdcbx); disable the firmware LLDP/DCBX agent in NVRAM (Broadcom niccli/bnxtnvm) and reload",
			nic, dcbx)
	case dcbx == dcbnl.DCBXVerIEEE:
		unsup["nic/"+nic+"/dcb"] = bnxtIEEEOnly(nic)
	}
}

// bnxtIEEEOnly is why DCB is not expressible on a bnxt NIC whose DCBX is
// IEEE without HOST: bnxt_dcb_init gives a PF host DCBX only when its
// firmware runs no LLDP agent (and LLD_MANAGED only with a firmware DCBX
// agent), so IEEE alone is a VF or a PF whose firmware runs an LLDP agent
// without a DCBX agent, and bnxt_dcbnl_setdcbx refuses host mode to both
// ("BNXT_VF(bp) || (bp->fw_cap & BNXT_FW_CAP_LLDP_AGENT)"): the switch
// fabctl would make fails, and every DCB write needs it.
func bnxtIEEEOnly(nic string) string {
	what := "its firmware runs an LLDP agent without a DCBX agent (BNXT_FW_CAP_LLDP_AGENT)"
	if _, err := os.Stat(filepath.Join(sysRoot, "class/net", nic, "device/physfn")); err == nil {
		what = "it is a VF"
	}
	return fmt.Sprintf("%s: DCBX is IEEE without HOST (0x%02x), as bnxt sets it at load when %s: bnxt refuses host DCBX then (bnxt_dcbnl_setdcbx) and every ETS, PFC and APP write without it (bnxt_dcbnl_ieee_set*, -EINVAL). Disable the firmware LLDP agent in NVRAM (Broadcom niccli/bnxtnvm) and reload the driver; if the mode was set by hand (dcb dcbx set dev %s ieee), `dcb dcbx set dev %s host ieee` gives DCB back to the host",
		nic, dcbnl.DCBXVerIEEE, what, nic, nic)
}

// roceApp is the APP entry bnxt needs for the RoCE priority.
func roceApp(n *intent.NIC) dcbnl.App {
	if n.RoCEMode == "v1" {
		return dcbnl.App{Selector: dcbnl.SelEthertype, Protocol: 0x8915, Priority: uint8(n.RDMAPriority)}
	}
	return dcbnl.App{Selector: dcbnl.SelUDP, Protocol: 4791, Priority: uint8(n.RDMAPriority)}
}

func roceAppText(n *intent.NIC) string {
	if n.RoCEMode == "v1" {
		return "Ethertype 0x8915"
	}
	return "UDP 4791"
}

func roceAppDcb(n *intent.NIC) string {
	if n.RoCEMode == "v1" {
		return "ethtype-prio 0x8915"
	}
	return "dgram-port-prio 4791"
}

func hasRoCEApp(ieee *dcbnl.IEEE, n *intent.NIC) bool {
	if ieee == nil {
		return false
	}
	want := roceApp(n)
	for _, a := range ieee.Apps {
		if a == want {
			return true
		}
	}
	return false
}

// maxCableLen is mlx5's limit: ieee_pfc.delay is taken when 0 < delay <
// MLX5E_MAX_CABLE_LENGTH (1000 m) (en_dcbnl.c mlx5e_dcbnl_ieee_setpfc).
const maxCableLen = 1000

// readCableLen reads the cable length the NIC computes PFC headroom with:
// mlx5 reports it as ieee_pfc.delay (mlx5e_dcbnl_ieee_getpfc, when the port
// has buffers) and takes it from there (mlnx_qos --cable_len); ice keeps
// its PFC link delay in firmware (ice_dcbnl_setpfc ignores delay) and bnxt
// sends only pfc_en (bnxt_hwrm_queue_pfc_cfg).
func readCableLen(n *intent.NIC, fam family, ieee *dcbnl.IEEE, st map[string]string, unsup map[string]string) {
	if n.CableLength <= 0 || len(n.PFC) == 0 {
		return
	}
	p := "nic/" + n.Name + "/"
	m := int(math.Ceil(float64(n.CableLength)))
	switch {
	case fam == famICE:
		unsup[p+"cable_len"] = n.Name + ": ice takes no cable length: ice_dcbnl_setpfc ignores ieee_pfc.delay (the PFC link delay is the firmware's)"
	case fam == famBNXT:
		unsup[p+"cable_len"] = n.Name + ": bnxt takes no cable length: bnxt_hwrm_queue_pfc_cfg sends only the PFC enable bits"
	case m >= maxCableLen:
		unsup[p+"cable_len"] = fmt.Sprintf("%s: cable length %dm: mlx5 takes below %dm only (MLX5E_MAX_CABLE_LENGTH)", n.Name, m, maxCableLen)
	case ieee.PFC == nil:
		unsup[p+"cable_len"] = n.Name + ": the driver reports no PFC delay (cable length)"
	case fam == famMLX5 && ieee.Buffer == nil:
		// mlx5e_dcbnl_ieee_getpfc fills delay with dcbx.cable_len only on a
		// port with buffers (MLX5_BUFFER_SUPPORTED: PBMC and PPTB); dcbnl
		// zero-fills it otherwise, and a planned delay would never read back.
		unsup[p+"cable_len"] = n.Name + ": the port has no PFC buffer registers (mlx5 MLX5_BUFFER_SUPPORTED: PBMC, PPTB): mlx5e_dcbnl_ieee_getpfc reports no cable length and the driver computes no headroom from one"
	default:
		st[p+"cable_len"] = strconv.Itoa(int(ieee.PFC.Delay))
	}
}

// mlx5 programs a TC's max rate as a u8 count of 100 Mbit/s units up to
// 25.5 Gbit/s and of 1 Gbit/s units up to 255 Gbit/s, the Kbit/s value
// divided down (at least one unit), and refuses more (-EINVAL); the read
// gives count x unit back (en_dcbnl.c mlx5e_dcbnl_ieee_setmaxrate and
// _getmaxrate, torvalds/linux 43b27d1bd88a "Fix wraparound in rate
// limiting for values above 255 Gbps" and d2099d9f16db). A rate that is
// not a whole number of units reads back lower and would never converge.
func mlx5Maxrate(bps int64) string {
	const mb100, gb = 100_000_000, 1_000_000_000
	switch {
	case bps > 255*gb:
		return "above 255 Gbit/s, which mlx5 refuses (EINVAL)"
	case bps <= 255*mb100 && bps%mb100 != 0:
		return "not a multiple of 100 Mbit/s (mlx5's unit up to 25.5 Gbit/s; it would read back as " + mlx5MaxrateText(mlx5MaxrateRead(bps)) + ")"
	case bps > 255*mb100 && bps%gb != 0:
		return "not a multiple of 1 Gbit/s (mlx5's unit above 25.5 Gbit/s; it would read back as " + mlx5MaxrateText(mlx5MaxrateRead(bps)) + ")"
	}
	return ""
}

// mlx5MaxrateRead is the rate (bit/s) mlx5 reads back for a set one.
func mlx5MaxrateRead(bps int64) int64 {
	const mb100, gb = 100_000_000, 1_000_000_000
	kbps := bps / 1000 // ieee_maxrate is Kbit/s
	switch {
	case kbps == 0:
		return 0
	case kbps <= 255*100_000:
		return max(kbps/100_000, 1) * mb100
	default:
		return kbps / 1_000_000 * gb
	}
}

func mlx5MaxrateText(bps int64) string {
	if bps%1_000_000_000 == 0 {
		return strconv.FormatInt(bps/1_000_000_000, 10) + " Gbit/s"
	}
	return strconv.FormatInt(bps/1_000_000, 10) + " Mbit/s"
}

// readMaxrate reports the class TCs' max rate (bit/s) when the spec caps
// any class: mlx5 has ieee_maxrate (Kbit/s); ice and bnxt have no
// maxrate op (ice_dcb_nl.c, bnxt_dcb.c dcbnl_ops).
func readMaxrate(n *intent.NIC, fam family, ieee *dcbnl.IEEE, st map[string]string, unsup map[string]string) {
	want := false
	for _, tc := range n.TCs {
		if tc.MaxRate > 0 {
			want = true
			if why := mlx5Maxrate(int64(tc.MaxRate)); why != "" && fam == famMLX5 {
				unsup["nic/"+n.Name+"/maxrate"] = fmt.Sprintf("%s: class %s max_rate %s is %s (mlx5e_dcbnl_ieee_setmaxrate)", n.Name, tc.Name, tc.MaxRate, why)
				return
			}
		}
	}
	if !want {
		return
	}
	p := "nic/" + n.Name + "/"
	if fam != famMLX5 || ieee.Maxrate == nil {
		unsup[p+"maxrate"] = fmt.Sprintf("%s: no per-TC max rate in the %s driver (no ieee_setmaxrate in its dcbnl_ops)", n.Name, fam)
		return
	}
	for _, tc := range n.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			continue
		}
		idx := tc.TC
		if ieee.ETS != nil && ieee.ETS.PrioTC[tc.TC] < 8 {
			idx = int(ieee.ETS.PrioTC[tc.TC])
		}
		st[p+"tc/"+strconv.Itoa(tc.TC)+"/max_rate"] = strconv.FormatUint(ieee.Maxrate[idx]*1000, 10)
	}
}
