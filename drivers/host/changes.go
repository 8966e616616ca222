package host

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

// nicOf returns the NIC name of a "nic/<n>/..." path.
func nicOf(p string) string {
	rest, ok := strings.CutPrefix(p, "nic/")
	if !ok {
		return ""
	}
	n, _, _ := strings.Cut(rest, "/")
	return n
}

// feature groups a path into the step that settles it.
func feature(p string) string {
	if n := nicOf(p); n != "" {
		rest := strings.TrimPrefix(p, "nic/"+n+"/")
		switch {
		case rest == "mtu":
			return "mtu"
		case rest == "addresses":
			return "addresses"
		case strings.HasPrefix(rest, "vlan/"):
			return "vlan" // vlan.go
		case rest == "pfc":
			return "pfc"
		case rest == "trust" || strings.HasPrefix(rest, "dscp/"):
			return "app"
		case strings.HasPrefix(rest, "tc/") && strings.Contains(rest, "/ecn/"):
			return "tc-ecn"
		case strings.HasPrefix(rest, "tc/") && strings.HasSuffix(rest, "/lossless"):
			return "pfc"
		case strings.HasPrefix(rest, "tc/") && strings.HasSuffix(rest, "/max_rate"):
			return "maxrate"
		case strings.HasPrefix(rest, "tc/"):
			return "ets"
		case rest == "cable_len":
			return "cable_len" // set with PFC (ieee_pfc.delay)
		case strings.HasPrefix(rest, "buffer/"):
			return "buffer" // buffer.go
		case rest == "cnp_dscp" || rest == "cnp_prio":
			return "cnp" // ecn.go
		default:
			return rest // pause, ecn, roce_mode, tos, irq_cpus
		}
	}
	if strings.HasPrefix(p, "nccl/") {
		return "nccl"
	}
	return p // irqbalance
}

// featureOrder is the apply order within a NIC: link first, then DCB in
// the kernel's own order (ETS before PFC before APP), then the rest.
var featureOrder = map[string]int{"mtu": 0, "addresses": 1, "vlan": 1, "firmware_lldp": 1, "ets": 2, "maxrate": 2, "buffer": 2, "pfc": 3, "cable_len": 3, "app": 4, "pause": 5,
	"ecn": 6, "cnp": 6, "tc-ecn": 7, "roce_mode": 8, "tos": 9, "irq_cpus": 10}

// applicable says whether this build can apply a feature.
func applicable(f string) bool {
	switch f {
	case "mtu", "addresses", "vlan", "firmware_lldp", "ets", "maxrate", "buffer", "pfc", "cable_len", "app", "pause", "nccl", "irqbalance",
		"ecn", "cnp", "roce_mode", "tos", "irq_cpus": // the last five: sysfeat.go
		return true
	}
	return false
}

func notBuilt(f, nic string) string {
	switch f {
	case "tc-ecn":
		return nic + ": ECN marking thresholds (tc/*/ecn/*) are switch queue settings; a host NIC has none (DCQCN is nic/" + nic + "/ecn)"
	}
	return nic + ": " + f + " cannot be applied by this build"
}

// Changes groups the diff into one step per NIC feature, with the netlink
// operations as payload.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	unsup := d.unsupported[h.Name]
	facts := d.facts[h.Name]
	d.mu.Unlock()
	where := ""
	if h.Connect.Netns != "" { // netns:NAME, or ssh+netns:NAME on the remote host
		where = " (netns " + h.Connect.Netns + ")"
	}
	type key struct{ nic, feat string }
	groups := map[key][]intent.AttrChange{}
	var keys []key
	for _, c := range diff {
		k := key{nicOf(c.Path), feature(c.Path)}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].nic != keys[j].nic {
			return keys[i].nic < keys[j].nic
		}
		oi, oj := featureOrder[keys[i].feat], featureOrder[keys[j].feat]
		if oi != oj {
			return oi < oj
		}
		return keys[i].feat < keys[j].feat
	})
	nics := map[string]*intent.NIC{}
	for i := range h.NICs {
		nics[h.NICs[i].Name] = &h.NICs[i]
	}
	out := make([]drivers.Change, 0, len(keys))
	for _, k := range keys {
		cs := groups[k]
		ch := drivers.Change{}
		for _, c := range cs {
			ch.Paths = append(ch.Paths, c.Path)
			if c.Disruptive != "" && ch.Disruptive == "" {
				ch.Disruptive = c.Disruptive
			}
		}
		if why := disruptiveFor(facts, k.nic, k.feat); why != "" && ch.Disruptive == "" {
			ch.Disruptive = why // the NIC's driver interrupts traffic for it (nicfacts.go)
		}
		n := nics[k.nic]
		ch.Summary, ch.Payload = describe(k.nic, k.feat, n, h, cs, where, facts)
		if why := blocked(unsup, k.nic, k.feat); why != "" {
			ch.Summary += " — cannot apply: " + why
		} else if k.nic != "" && !applicable(k.feat) {
			ch.Summary += " — cannot apply: " + notBuilt(k.feat, k.nic)
		}
		out = append(out, ch)
	}
	return out, nil
}

var _ drivers.Limiter = (*Driver)(nil)

// Unexpressible reports the desired NIC settings that Read found the
// device cannot have, with the reason: DCB (ETS, PFC, trust and the DSCP
// APP table) on a NIC whose kernel driver has no DCB (EOPNOTSUPP, e.g. a
// veth), global pause without ethtool pause support, DCQCN without the
// MLNX_OFED sysfs, the rdma_cm default RoCE mode/ToS without configfs, IRQ
// affinity on a device without IRQs. Plans list them instead of planning
// changes that cannot apply and would never converge. A NIC that does
// not exist at all is not "unexpressible": its settings stay planned, and
// applying them fails naming the missing device. On a NIC with DCB (and
// the sysfs) nothing is reported.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	h, err := hostOf(t)
	if err != nil {
		return nil
	}
	d.mu.Lock()
	unsup := d.unsupported[h.Name]
	d.mu.Unlock()
	if len(unsup) == 0 {
		return nil
	}
	out := map[string]string{}
	for k := range desired {
		nic := nicOf(k)
		if nic == "" {
			if why := unsup[k]; why != "" && strings.HasPrefix(k, "nccl/") {
				out[k] = why // an NCCL value the host cannot give (nccl.go)
			}
			continue
		}
		if _, absent := unsup["nic/"+nic+"/"]; absent {
			continue
		}
		if why := blocked(unsup, nic, feature(k)); why != "" {
			out[k] = why
		}
	}
	return out
}

// blocked returns why Read found a NIC feature impossible ("" if not).
func blocked(unsup map[string]string, nic, feat string) string {
	if nic == "" {
		return ""
	}
	p := "nic/" + nic + "/"
	if why, ok := unsup[p]; ok {
		return why
	}
	switch feat {
	case "ets", "pfc", "app":
		if why := unsup[p+"dcb"]; why != "" {
			return why
		}
		return unsup[p+feat]
	case "cable_len", "maxrate", "buffer":
		if why := unsup[p+"dcb"]; why != "" {
			return why
		}
		return unsup[p+feat]
	case "pause", "ecn", "cnp", "roce_mode", "tos", "irq_cpus", "vlan", "firmware_lldp":
		return unsup[p+feat]
	}
	return ""
}

func describe(nic, feat string, n *intent.NIC, h *intent.Host, cs []intent.AttrChange, where string, facts map[string]string) (string, []string) {
	if n == nil && nic != "" {
		return "nic " + nic + " is not in the spec", nil
	}
	switch feat {
	case "mtu":
		return fmt.Sprintf("%s: MTU %d", nic, n.MTU), []string{
			fmt.Sprintf("ip link set dev %s mtu %d%s", nic, n.MTU, where),
			fmt.Sprintf("ip link set dev %s up%s", nic, where)}
	case "addresses":
		var pl []string
		add, del := addrDelta(cs[0].Before, cs[0].After)
		for _, a := range del {
			pl = append(pl, fmt.Sprintf("ip addr del %s dev %s%s", a, nic, where))
		}
		for _, a := range add {
			pl = append(pl, fmt.Sprintf("ip addr add %s dev %s%s", a, nic, where))
		}
		return fmt.Sprintf("%s: addresses %s", nic, strings.Join(n.Addresses, ",")), pl
	case "ets":
		return fmt.Sprintf("%s: ETS prio-tc/tsa/bandwidth", nic), []string{fmt.Sprintf(
			"dcb ieee ets dev %s %s (DCB_CMD_IEEE_SET{ETS}, read-modify-write)%s", nic, etsPayload(facts, n), where)}
	case "pfc":
		return fmt.Sprintf("%s: PFC on priorities %q", nic, intsList(n.PFC)), []string{fmt.Sprintf(
			"dcb ieee pfc dev %s enable %s (DCB_CMD_IEEE_SET{PFC}, delay kept)%s", nic, orNone(intsList(n.PFC)), where)}
	case "app":
		if w := facts[factKey(nic, factAppWrites)]; familyFact(facts, nic) == famICE && w != "" {
			return fmt.Sprintf("%s: trust %s, %s DSCP app writes (ice: one netdev reset each)", nic, n.Trust, w), []string{fmt.Sprintf(
				"dcb app replace dev %s dscp-prio: the code points that differ from ice's DSCP-mode default map (DCB_CMD_IEEE_DEL changed, then DCB_CMD_IEEE_SET; %s writes)%s", nic, w, where)}
		}
		want := desiredApps(n)
		return fmt.Sprintf("%s: trust %s, %d DSCP app entries", nic, n.Trust, len(want)), []string{fmt.Sprintf(
			"dcb ieee app dev %s replace dscp-prio table (%d entries; DCB_CMD_IEEE_DEL stale + DCB_CMD_IEEE_SET new)%s", nic, len(want), where)}
	case "vlan":
		return describeVLAN(nic, n, cs, where)
	case "maxrate":
		m := desiredMaxrate(n)
		return fmt.Sprintf("%s: per-TC max rate (Kbit/s) %v", nic, m), []string{fmt.Sprintf(
			"dcb maxrate set dev %s tc-maxrate ... (DCB_CMD_IEEE_SET{MAXRATE} %v Kbit/s per TC; mlnx_qos -r)%s", nic, m, where)}
	case "cable_len":
		m := int(math.Ceil(float64(n.CableLength)))
		return fmt.Sprintf("%s: cable length %dm for the PFC headroom", nic, m), []string{fmt.Sprintf(
			"dcb pfc set dev %s delay %d (mlnx_qos -i %s --cable_len=%d; DCB_CMD_IEEE_SET{PFC} with pfc_en kept)%s", nic, m, nic, m, where)}
	case "buffer":
		return describeBuffer(nic, n, where)
	case "firmware_lldp":
		on := n.FirmwareLLDP != nil && *n.FirmwareLLDP
		sum := fmt.Sprintf("%s: firmware LLDP agent %s", nic, onOff(on))
		if !on {
			sum += " (DCB goes to the host)"
		}
		return sum, []string{fmt.Sprintf("ethtool --set-priv-flags %s %s %s%s", nic, iceLLDPFlag, onOff(on), where)}
	case "pause":
		return fmt.Sprintf("%s: global pause %s", nic, onOff(n.Pause)), []string{fmt.Sprintf(
			"ethtool -A %s rx %s tx %s%s", nic, onOff(n.Pause), onOff(n.Pause), where)}
	case "nccl":
		return "NCCL env file " + h.NCCLEnvFile, []string{"write " + h.NCCLEnvFile}
	case "irqbalance":
		return "irqbalance " + h.IRQBalance, []string{"systemctl stop irqbalance (SIGTERM to irqbalance without systemd)"}
	}
	if sum, pl, ok := describeSys(nic, feat, n, h, where); ok {
		return sum, pl
	}
	var pl []string
	for _, c := range cs {
		pl = append(pl, fmt.Sprintf("set %s = %s", c.Path, c.After))
	}
	return fmt.Sprintf("%s: %s", nic, feat), pl
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func intsList(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func addrDelta(before, after string) (add, del []string) {
	have := map[string]bool{}
	for _, a := range splitList(before) {
		have[a] = true
	}
	want := map[string]bool{}
	for _, a := range splitList(after) {
		want[a] = true
		if !have[a] {
			add = append(add, a)
		}
	}
	for _, a := range splitList(before) {
		if !want[a] {
			del = append(del, a)
		}
	}
	return add, del
}

// desiredETS is the NIC's ETS: priority p -> TC p for the spec's classes,
// other priorities -> the lowest class, unused TCs ETS with 0 % (mlx5:
// ETS bandwidths must sum to 100 and non-ETS TCs must have 0 %).
func desiredETS(n *intent.NIC) dcbnl.ETS { return desiredETSLayout(n, false) }

// desiredETSLayout is desiredETS, or with compact the class priorities on
// TCs 0..k-1 in priority order (other priorities on the lowest class's
// TC): ice needs the TCs prio_tc uses contiguous from TC 0, else it falls
// back to one TC ("Non-contiguous TCs - Disabling DCB", ice_dcb_lib.c
// ice_dcb_get_num_tc), and bnxt refuses a TC above the count its firmware
// offers (bnxt_ets_validate; Broadcom firmware may offer 3).
func desiredETSLayout(n *intent.NIC, compact bool) dcbnl.ETS {
	var e dcbnl.ETS
	slot := [8]int{} // class priority -> TC
	present := [8]bool{}
	low := -1
	k := 0
	for _, tc := range n.TCs { // sorted by priority
		if tc.TC < 0 || tc.TC > 7 {
			continue
		}
		present[tc.TC] = true
		slot[tc.TC] = tc.TC
		if compact {
			slot[tc.TC] = k
		}
		k++
		if low < 0 {
			low = slot[tc.TC]
		}
	}
	if low < 0 {
		low = 0
	}
	for p := 0; p < 8; p++ {
		e.PrioTC[p] = uint8(low)
		if present[p] {
			e.PrioTC[p] = uint8(slot[p])
		}
		e.TCTSA[p] = dcbnl.TSAETS
	}
	for _, tc := range n.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			continue
		}
		if tc.Strict {
			e.TCTSA[slot[tc.TC]] = dcbnl.TSAStrict
		} else {
			e.TCTxBW[slot[tc.TC]] = uint8(tc.Bandwidth)
		}
	}
	return e
}

// needsCompactTCs says whether a NIC needs the class TCs contiguous from
// TC 0: ice outside DSCP mode (in DSCP mode ice makes prio_tc the
// identity itself), bnxt when its firmware offers fewer TCs than the
// highest class priority needs (ets_cap).
func needsCompactTCs(fam family, cur *dcbnl.IEEE, n *intent.NIC) bool {
	if cur == nil {
		return false
	}
	switch fam {
	case famICE:
		return !hasDSCPApp(cur)
	case famBNXT:
		high := 0
		for _, tc := range n.TCs {
			if tc.TC > high {
				high = tc.TC
			}
		}
		return cur.ETS != nil && cur.ETS.ETSCap > 0 && int(cur.ETS.ETSCap) <= high
	}
	return false
}

// etsFor is the ETS apply writes on a NIC of a family with DCB state cur:
// desiredETSLayout, compacted where the driver needs it
// (needsCompactTCs). On bnxt a TC no priority maps to carries neither a
// TSA nor a bandwidth (TSA 0 is strict): bnxt_ets_validate
// (drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c) returns -EINVAL for
// "(ets->tc_tx_bw[i] || ets->tc_tsa[i]) && i > bp->max_tc", and since
// c08c59653415 "bnxt_en: reject ETS settings that will starve a TC"
// (5.14) for an ETS TC with 0 % while the ETS TCs sum to 100 ("rejecting
// ETS config starving a TC"), over all eight TCs until b74c2a2e9cc4
// "bnxt_en: Fix DCB ETS validation" (6.16) limited that loop to the TCs
// in use; fabctl's 0 % ETS on unused TCs failed both.
func etsFor(n *intent.NIC, fam family, cur *dcbnl.IEEE) dcbnl.ETS {
	e := desiredETSLayout(n, needsCompactTCs(fam, cur, n))
	if fam == famBNXT {
		var used [8]bool
		for _, tc := range e.PrioTC {
			if tc < 8 {
				used[tc] = true
			}
		}
		for tc := range used {
			if !used[tc] {
				e.TCTSA[tc], e.TCTxBW[tc] = dcbnl.TSAStrict, 0
			}
		}
	}
	return e
}

// bnxtTCCount is the TC count bnxt sets up for an ETS: the highest TC a
// priority maps to, plus one (bnxt_ets_validate's *tc, passed to
// bnxt_setup_mq_tc).
func bnxtTCCount(e dcbnl.ETS) int {
	high := 0
	for _, tc := range e.PrioTC {
		if int(tc) > high && tc < 8 {
			high = int(tc)
		}
	}
	return high + 1
}

// bnxtNumTC is the TC count a bnxt NIC has now: 0 until the host set an
// ETS (bnxt_dcbnl_ieee_getets leaves the ETS zero while bp->ieee_ets is
// unset in host mode; bnxt_setup_mq_tc runs only from the setets),
// else bnxtTCCount of the ETS it reports.
func bnxtNumTC(cur *dcbnl.IEEE) int {
	if cur == nil || cur.ETS == nil {
		return 0
	}
	e := *cur.ETS
	if e.PrioTC == ([8]uint8{}) && e.TCTSA == ([8]uint8{}) && e.TCTxBW == ([8]uint8{}) {
		return 0
	}
	return bnxtTCCount(e)
}

// bnxtLimits lists the DCB settings a Broadcom NIC's firmware cannot take
// (bnxt_dcb.c): more classes than the TCs it offers (ets_cap is
// bp->max_tc, bnxt_dcbnl_ieee_getets; a prio_tc above it is -EINVAL in
// bnxt_ets_validate), more lossless TCs than it has lossless queues
// (pfc_cap is bp->max_lltc, bnxt_dcbnl_ieee_getpfc;
// bnxt_hwrm_queue_pfc_cfg: "lltc_count > bp->max_lltc" -> -EINVAL), an
// ETS class with 0 % (bnxt_ets_validate: "starving a TC"). PFC needs the
// ETS (bnxt_hwrm_queue_pfc_cfg: -EINVAL without bp->ieee_ets), so a
// refused ETS takes PFC with it.
func bnxtLimits(n *intent.NIC, cur *dcbnl.IEEE, unsup map[string]string) {
	p := "nic/" + n.Name + "/"
	classes := 0
	ets, zero := 0, ""
	for _, tc := range n.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			continue
		}
		classes++
		if !tc.Strict {
			ets += tc.Bandwidth
			if tc.Bandwidth == 0 {
				zero = tc.Name
			}
		}
	}
	if cur.ETS != nil && cur.ETS.ETSCap > 0 && classes > int(cur.ETS.ETSCap) {
		unsup[p+"ets"] = fmt.Sprintf("%s: the Broadcom firmware offers %d TCs (ets_cap, bnxt max_tc) and the spec has %d classes: bnxt refuses a priority on a TC above them (bnxt_ets_validate, -EINVAL); merge classes to fit %d, or use a NIC with more TCs",
			n.Name, cur.ETS.ETSCap, classes, cur.ETS.ETSCap)
	} else if zero != "" && ets == 100 {
		unsup[p+"ets"] = fmt.Sprintf("%s: class %s is ETS with 0 %% while the ETS classes sum to 100 %%: bnxt refuses it (bnxt_ets_validate: \"rejecting ETS config starving a TC\", -EINVAL); give it a bandwidth or make it strict", n.Name, zero)
	}
	if why := unsup[p+"ets"]; why != "" && len(n.PFC) > 0 {
		unsup[p+"pfc"] = why + "; bnxt takes PFC only after an ETS (bnxt_hwrm_queue_pfc_cfg: -EINVAL without bp->ieee_ets)"
		return
	}
	if cur.PFC == nil || cur.PFC.Cap == 0 || len(n.PFC) == 0 {
		return
	}
	e := etsFor(n, famBNXT, cur)
	var lossless [8]bool
	count := 0
	for _, prio := range n.PFC {
		if prio >= 0 && prio < 8 && !lossless[e.PrioTC[prio]] {
			lossless[e.PrioTC[prio]] = true
			count++
		}
	}
	if count > int(cur.PFC.Cap) {
		unsup[p+"pfc"] = fmt.Sprintf("%s: PFC on %d TCs, but the Broadcom firmware has %d lossless queues (pfc_cap, bnxt max_lltc): bnxt refuses more (bnxt_hwrm_queue_pfc_cfg, -EINVAL); make fewer classes lossless",
			n.Name, count, cur.PFC.Cap)
	}
}

func desiredPFC(n *intent.NIC) uint8 {
	var en uint8
	for _, p := range n.PFC {
		if p >= 0 && p < 8 {
			en |= 1 << p
		}
	}
	return en
}

// desiredApps is the DSCP APP table for trust dscp: all 64 code points,
// none for trust pcp. A code point without an entry keeps the NIC's own
// mapping: firmware dscp2prio, which is dscp >> 3 out of the box
// (mlx5: en_dcbnl.c mlx5e_trust_initialize reads it from firmware, and
// mlx5e_dcbnl_ieee_delapp resets a deleted one to 0; mlnx-tools
// python/Python/dcbnetlink.py setDefaultAppEntry writes "i >> 3 #firmware
// default"; ice: ice_dcb_lib.c ice_dcb_sw_dflt_cfg / DSCP mode DSCP/8), so a
// partial table leaves e.g. DSCP 24-31 on priority 3. `mlnx_qos --trust
// dscp` writes all 64 (setDefaultAppEntry), and so does fabctl.
func desiredApps(n *intent.NIC) []dcbnl.App {
	if n.Trust != "dscp" {
		return nil
	}
	out := make([]dcbnl.App, 0, 64)
	for d, tc := range n.DSCPToTC {
		if tc > 7 {
			tc = 0
		}
		out = append(out, dcbnl.App{Selector: dcbnl.SelDSCP, Priority: tc, Protocol: uint16(d)})
	}
	return out
}

// desiredMaxrate is the per-TC cap in Kbit/s (struct ieee_maxrate's unit).
func desiredMaxrate(n *intent.NIC) dcbnl.Maxrate {
	var m dcbnl.Maxrate
	for _, tc := range n.TCs {
		if tc.TC >= 0 && tc.TC < 8 && tc.MaxRate > 0 {
			m[tc.TC] = uint64(tc.MaxRate) / 1000
		}
	}
	return m
}

// desiredAppsFor is desiredApps plus what the NIC family needs: bnxt
// programs the RoCE priority only from an APP entry UDP 4791 (RoCEv2) or
// Ethertype 0x8915 (RoCEv1) (bnxt_dcb.c bnxt_dcbnl_ieee_setapp).
func desiredAppsFor(n *intent.NIC, fam family) []dcbnl.App {
	out := desiredApps(n)
	if fam == famBNXT && n.RDMAPriority >= 0 && n.RDMAPriority < 8 && n.RoCEMode != "" {
		out = append(out, roceApp(n))
	}
	return out
}

// FirmwareDSCPDefault is the priority a NIC gives a code point that has no
// DSCP APP entry: dscp >> 3 (mlx5 firmware dscp2prio as mlnx-tools'
// setDefaultAppEntry restores it; ice DSCP mode's default). Read reports an
// absent entry with it, so an entry missing from the live table is drift
// unless the spec wants exactly that.
func FirmwareDSCPDefault(dscp int) int { return dscp >> 3 }

// ICE_DCBX_MAX_APPS (ice_type.h): the app[] slots of ice's DCBX
// configuration. ice_dcbnl_setapp appends each new entry there
// ("new_cfg->app[new_cfg->numapps++]") without a bound.
const iceMaxApps = 64

// iceDSCPDefaults is the DSCP map ice sets when the first DSCP APP entry
// switches the port to DSCP mode (ice_dcb_nl.c ice_dcbnl_setapp, "set
// default DSCP QoS values"): for TC i below max_tc and j below 8
// (ICE_BYTES_PER_DSCP_VAL), dscp_map[i*max_tc + j] = i, and with fewer
// than 8 TCs also dscp_map[that + max_tc*8] = i; later TCs overwrite
// earlier ones. With 8 TCs that is dscp >> 3 (Intel 800 Series flow
// control guide: "default DSCP/8"). A code point the loops never reach
// is -1: its mapping is not the driver's to tell, so fabctl writes it.
// (A deleted entry maps to dscp % 8 instead, ice_dcbnl_delapp: fabctl
// never deletes an ice entry it does not replace.)
func iceDSCPDefaults(maxTC int) [64]int {
	var m [64]int
	for d := range m {
		m[d] = -1
	}
	if maxTC <= 0 || maxTC > 8 {
		maxTC = 8
	}
	for i := 0; i < maxTC; i++ {
		for j := 0; j < 8; j++ {
			d := i*maxTC + j
			if d < 64 {
				m[d] = i
			}
			if maxTC < 8 && d+maxTC*8 < 64 {
				m[d+maxTC*8] = i
			}
		}
	}
	return m
}

// iceMaxTC is the TC count ice reports (ieee_ets.ets_cap = maxtcs,
// ice_dcbnl_getets), 8 when unknown.
func iceMaxTC(cur *dcbnl.IEEE) int {
	if cur != nil && cur.ETS != nil && cur.ETS.ETSCap > 0 && cur.ETS.ETSCap <= 8 {
		return int(cur.ETS.ETSCap)
	}
	return 8
}

// dscpDefaults is the priority a NIC gives each code point without a
// DSCP APP entry: ice's DSCP-mode default (iceDSCPDefaults), else
// FirmwareDSCPDefault.
func dscpDefaults(fam family, cur *dcbnl.IEEE) [64]int {
	if fam == famICE {
		return iceDSCPDefaults(iceMaxTC(cur))
	}
	var m [64]int
	for d := range m {
		m[d] = FirmwareDSCPDefault(d)
	}
	return m
}

// iceApps is the DSCP table fabctl keeps on an ice NIC: every ETS, PFC or
// APP write that changes something resets the netdev there (ice_pf_dcb_cfg,
// ice_dcbnl_devreset), so it writes only the code points whose priority
// differs from ice's DSCP-mode default, keeps the entries the NIC already
// has (replacing those with another priority: deleting one maps it to
// dscp % 8, not to the default) and writes at least one entry, which
// switches the port to DSCP mode. Trust pcp: none.
func iceApps(n *intent.NIC, cur *dcbnl.IEEE) []dcbnl.App {
	if n.Trust != "dscp" {
		return nil
	}
	def := iceDSCPDefaults(iceMaxTC(cur))
	have := [64]bool{}
	if cur != nil {
		for _, a := range cur.Apps {
			if a.Selector == dcbnl.SelDSCP && a.Protocol < 64 {
				have[a.Protocol] = true
			}
		}
	}
	var out []dcbnl.App
	for d, tc := range n.DSCPToTC {
		if tc > 7 {
			tc = 0
		}
		if int(tc) != def[d] || have[d] {
			out = append(out, dcbnl.App{Selector: dcbnl.SelDSCP, Priority: tc, Protocol: uint16(d)})
		}
	}
	if len(out) == 0 {
		// The whole table is ice's default: one entry still switches the
		// port to DSCP mode; the RDMA class's code point, else DSCP 0.
		d := 0
		for c, tc := range n.DSCPToTC {
			if n.RDMAPriority >= 0 && int(tc) == n.RDMAPriority {
				d = c
				break
			}
		}
		out = append(out, dcbnl.App{Selector: dcbnl.SelDSCP, Priority: n.DSCPToTC[d], Protocol: uint16(d)})
	}
	return out
}

// iceAppWrites counts the APP writes (each a netdev reset on ice) that
// turn cur's DSCP table into want: entries to delete, then to add.
func iceAppWrites(cur *dcbnl.IEEE, want []dcbnl.App) int {
	wantSet := map[dcbnl.App]bool{}
	for _, a := range want {
		wantSet[a] = true
	}
	haveSet := map[dcbnl.App]bool{}
	n := 0
	if cur != nil {
		for _, a := range cur.Apps {
			if a.Selector != dcbnl.SelDSCP {
				continue
			}
			haveSet[a] = true
			if !wantSet[a] {
				n++
			}
		}
	}
	for _, a := range want {
		if !haveSet[a] {
			n++
		}
	}
	return n
}

// iceAppLimits lists the DSCP table ice cannot take: a priority at or
// above its TC count (in DSCP mode the priority is the TC: ice_dcbnl_setapp
// "TC %d out of range, max TC %d", -EINVAL), more entries than
// ICE_DCBX_MAX_APPS with the other APP entries the NIC has and one slot
// for the FCoE entry ice_dcb_sw_dflt_cfg puts in the desired
// configuration (ice_dcbnl_setapp appends without a bound).
func iceAppLimits(n *intent.NIC, cur *dcbnl.IEEE, unsup map[string]string) {
	want := iceApps(n, cur)
	if len(want) == 0 {
		return
	}
	p := "nic/" + n.Name + "/"
	maxTC := iceMaxTC(cur)
	for _, a := range want {
		if int(a.Priority) >= maxTC {
			unsup[p+"app"] = fmt.Sprintf("%s: DSCP %d on priority %d, but ice in DSCP mode takes the priority as the TC, below its %d TCs (ice_dcbnl_setapp: \"TC %d out of range\", -EINVAL); put the class on a priority below %d",
				n.Name, a.Protocol, a.Priority, maxTC, a.Priority, maxTC)
			return
		}
	}
	other := 0
	if cur != nil {
		for _, a := range cur.Apps {
			if a.Selector != dcbnl.SelDSCP {
				other++
			}
		}
	}
	if total := len(want) + other + 1; total > iceMaxApps {
		unsup[p+"app"] = fmt.Sprintf("%s: %d DSCP entries differ from ice's default map, which with %d other APP entries and the FCoE entry of ice's default configuration is %d, more than the %d slots of ice's APP table (ICE_DCBX_MAX_APPS; ice_dcbnl_setapp appends without a bound); map more code points as ice does by default (dscp >> 3 with 8 TCs)",
			n.Name, len(want), other, total, iceMaxApps)
	}
}
