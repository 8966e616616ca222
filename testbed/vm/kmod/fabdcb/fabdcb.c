// SPDX-License-Identifier: GPL-2.0-only
/*
 * fabdcb: dummy Ethernet netdevs with IEEE DCB (dcbnl_rtnl_ops), so the VM
 * testbed can drive the kernel's real DCB netlink code (net/dcb/dcbnl.c)
 * with fabctl and iproute2's `dcb` and compare the two. No software netdev
 * in Linux implements dcbnl, and the RDMA NICs that do (mlx5, ice, bnxt)
 * need hardware, hence this module.
 *
 * It stores what a NIC would and applies the rules of the mlx5 driver
 * (drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c):
 *  - ETS: prio_tc < 8, no CB shaper (-EOPNOTSUPP), the bandwidths of the
 *    ETS TCs sum to exactly 100 (-EINVAL);
 *  - PFC: a change of pfc_en flaps the link (carrier off/on, counted in
 *    sysfs link_flaps); delay (cable length) is kept when 0 or >= 1000;
 *    requests/indications are per-priority pause counters;
 *  - APP: DSCP entries only (-EINVAL otherwise), one priority per DSCP (a
 *    new priority replaces the old entry); the first entry switches the
 *    port to DSCP trust, deleting the last one back to PCP (sysfs trust);
 *  - DCB buffer (en_dcbnl.c mlx5e_dcbnl_setbuffer, en/port_buffer.c
 *    mlx5e_port_manual_buffer_config): a SET that changes nothing is a
 *    no-op; otherwise the port goes to manual buffer mode for good and the
 *    change runs in the driver's order: a new prio2buffer first recomputes
 *    which buffers are lossless (a PFC priority on it, or global pause:
 *    update_buffer_lossy, fill_pfc_en) and checks them with the sizes the
 *    port has now; new sizes then (a lossless buffer of size 0 -EINVAL; more
 *    than the port holds -EINVAL; under 4 cells left for the shared pool
 *    -EINVAL, port_update_shared_buffer); every lossless buffer must hold
 *    xoff + max_mtu + one cell (update_xoff_threshold, -ENOMEM), with
 *    xoff = (301 + 2.16 * cable_len) * speed [Gbit/s] + 2.72 * MTU
 *    (calculate_xoff; speed is the link's, sysfs link_speed, at least
 *    40 Gbit/s, the driver's floor) and max_mtu at least 9216
 *    (MINIMUM_MAX_MTU). Sizes are
 *    kept in 128-byte cells, the rest cut off (port_set_buffer do_div;
 *    1 << MLX5E_BUFFER_CELL_SHIFT without an SBCAM register). In manual
 *    mode a PFC or cable length change re-checks the lossless buffers the
 *    same way (mlx5e_dcbnl_ieee_setpfc): PFC is already set when that
 *    fails, the cable length is restored. cable_len starts at 7 m
 *    (MLX5E_DEFAULT_CABLE_LEN);
 *  - maxrate (mlx5e_dcbnl_ieee_setmaxrate/getmaxrate, torvalds/linux
 *    43b27d1bd88a and d2099d9f16db): up to 25.5 Gbit/s in 100 Mbit/s units
 *    (the Kbps value divided down, at least one unit), up to 255 Gbit/s in
 *    1 Gbit/s units, above it -EINVAL; the read gives units x unit back, so
 *    10.05 Gbit/s reads 10 Gbit/s and 50 Mbit/s reads 100 Mbit/s;
 *  - DCBX: host mode (HOST bit) or firmware mode (0); LLD_MANAGED refused.
 * In firmware mode a DCBX peer (the switch) may override PFC: writing a
 * mask to sysfs peer_pfc plays that peer; the module adopts it and sends a
 * DCB notification (dcbnl_ieee_notify), as NIC drivers do on DCBX events.
 *
 * Personalities (module parameter personality=mlx5|ice|bnxt, default mlx5;
 * every device of one load has it; ethtool -i reports the real driver's
 * name, mlx5_core / ice / bnxt_en, with firmware-version "fabdcb"):
 *  mlx5 (en_dcbnl.c, torvalds/linux 84a83eb): the rules above; the
 *    firmware dscp2prio starts as dscp >> 3 (mlx5e_trust_initialize reads
 *    it from firmware; mlnx-tools dcbnetlink.py setDefaultAppEntry: "i >> 3
 *    #firmware default"), a deleted entry resets it to 0
 *    (mlx5e_dcbnl_ieee_delapp).
 *  ice (ice_dcb_nl.c 2a87bd7, ice_dcb_lib.c): ops ETS, PFC, APP, DCBX only
 *    (no maxrate, buffer, peer PFC). Every ETS, PFC or APP write that
 *    changes the configuration resets the netdev: ice_pf_dcb_cfg returns
 *    ICE_DCB_HW_CHG_RST (0) after taking the VSIs down and up, and the
 *    caller runs ice_dcbnl_devreset, dev_close + dev_open (the kernel then
 *    flushes the netdev's IPv6 addresses unless keep_addr_on_down, and
 *    brings a down netdev up); a write that changes nothing does not
 *    ("No change in DCB config required"). Counted in sysfs dev_resets. The firmware LLDP agent owns DCB at
 *    load (dcbx LLD_MANAGED, ice_dcb_get_mode) until the private flag
 *    fw-lldp-agent is turned off (ethtool --set-priv-flags IF fw-lldp-agent
 *    off); while it owns DCB, ETS/PFC/APP writes are -EINVAL
 *    (ice_dcbnl_setets/_setpfc/_setapp/_delapp) and setdcbx is refused
 *    (ice_dcbnl_setdcbx). ETS: TCs used by prio_tc must be contiguous from
 *    TC 0, else one TC with 100 % ("Non-contiguous TCs - Disabling DCB",
 *    ice_dcb_get_num_tc, ice_dcb_bwchk); the bandwidths of the used TCs sum
 *    to 100 (-EINVAL). APP: DSCP only (-EINVAL), priority = TC < max_tc, a
 *    DSCP already mapped is -EINVAL (delete it first); the first entry
 *    switches to DSCP mode, resets ETS to TC 0 = 100 % with prio_tc the
 *    identity and the DSCP map to ice's default (dscp >> 3 with 8 TCs; with
 *    fewer, the driver's i * max_tc + j loops) (ice_dcbnl_setapp); the
 *    DCBX app[] holds ICE_DCBX_MAX_APPS (64) and the driver appends
 *    without a bound, so fabdcb refuses the 65th with -EOVERFLOW; every
 *    reconfiguration sets the netdev's num_tc and prio_tc_map
 *    (ice_vsi_cfg_netdev_tc), which rdma_cm reads; in DSCP mode
 *    setets keeps prio_tc; a deleted entry maps to dscp % 8, the last one
 *    back to VLAN mode (ice_dcbnl_delapp).
 *  bnxt (bnxt_dcb.c 0898782; gregkh/linux 0118fe8 for the ETS checks):
 *    ops ETS, PFC, APP, DCBX only; every set is -EINVAL unless DCBX is IEEE
 *    + HOST (bnxt_dcbnl_ieee_set*); host mode at load for a PF without the
 *    firmware LLDP agent, IEEE only with it (module parameter
 *    fw_lldp_agent: bnxt_dcb_init), and then setdcbx refuses host mode
 *    (bnxt_dcbnl_setdcbx: BNXT_FW_CAP_LLDP_AGENT). ETS
 *    (bnxt_ets_validate): prio_tc > max_tc -EINVAL, a TC above max_tc with
 *    a bandwidth or TSA -EINVAL, TSA other than strict/ETS -EOPNOTSUPP, ETS
 *    bandwidths above 100 % -EINVAL, an ETS TC with 0 % while the ETS TCs
 *    sum to 100 -EINVAL ("starving a TC", c08c59653415; over all eight TCs,
 *    or with bnxt_ets_fix only below the highest TC in use, b74c2a2e9cc4);
 *    a new TC count (highest prio_tc + 1) closes and reopens the NIC and
 *    sets the netdev's num_tc, never its prio_tc_map (bnxt_setup_mq_tc).
 *    PFC (bnxt_hwrm_queue_pfc_cfg): -EINVAL before any ETS
 *    (bp->ieee_ets) and for more lossless TCs than max_lltc (module
 *    parameter, reported as pfc_cap by bnxt_dcbnl_ieee_getpfc); a lossless
 *    TC on a lossy queue remaps the queues and reopens the NIC
 *    (bnxt_queue_remap; fabdcb's lossless queues are the last max_lltc).
 *    APP: any selector is kept; DSCP code points above 63 -EINVAL
 *    (bnxt_dcbnl_ieee_dscp_app_prep). ETS and PFC read as zero until set in
 *    host mode (bnxt_dcbnl_ieee_getets); ets_cap is max_tc.
 * Module parameter max_tc (default 8): the TCs the ice/bnxt firmware
 * offers (bnxt may offer 3).
 *
 * Devices: module parameter count (fabdcb0..N-1), or
 * `ip link add NAME type fabdcb`. Global pause (ethtool -a/-A) is stored.
 *
 * sysfs, /sys/class/net/<dev>/fabdcb/:
 *   trust         ro  pcp | dscp
 *   buffer_mode   ro  auto | manual
 *   link_flaps    ro  carrier flaps caused by PFC changes (mlx5)
 *   dev_resets    ro  ice_dcbnl_devreset runs (ice)
 *   nic_reopens   ro  bnxt_close_nic + bnxt_open_nic runs: a new TC count
 *                     (bnxt_setup_mq_tc) or a queue remap (bnxt)
 *   link_speed    rw  the link's speed in Mb/s (0: unknown), reported by
 *                     ethtool and used by mlx5's headroom (module
 *                     parameter speed at load)
 *   pfc_counters  rw  read: "prio requests indications" per line;
 *                     write "prio requests indications": adds to them
 *   peer_pfc      wo  hex/decimal mask advertised by the DCBX peer
 *
 * configfs (personality bnxt): /sys/kernel/config/bnxt_re/bnxt_re<i>/ports/1/cc,
 * the congestion control of Broadcom's out-of-tree bnxt_re (bnxt_re_cc.c).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/list.h>
#include <net/rtnetlink.h>
#include <net/dcbnl.h>

#define DRV_NAME "fabdcb"
#define FABDCB_MAX_DSCP 64
#define FABDCB_MAX_CABLE_LEN 1000 /* MLX5E_MAX_CABLE_LENGTH */
#define FABDCB_TOTAL_BUFFER (512 * 1024)
#define FABDCB_CELL 128            /* 1 << MLX5E_BUFFER_CELL_SHIFT (no SBCAM) */
#define FABDCB_MIN_MAX_MTU 9216    /* MINIMUM_MAX_MTU, port_buffer.c */
#define FABDCB_DEFAULT_CABLE_LEN 7 /* MLX5E_DEFAULT_CABLE_LEN */
#define FABDCB_100MB 100000ULL     /* MLX5E_100MB, Kbps */
#define FABDCB_1GB 1000000ULL      /* MLX5E_1GB, Kbps */
#define FABDCB_ICE_MAX_APPS 64     /* ICE_DCBX_MAX_APPS, ice_type.h */

static int count = 1;
module_param(count, int, 0444);
MODULE_PARM_DESC(count, "Number of fabdcb devices created at load (fabdcb0..N-1, max 64)");

static char *personality = "mlx5";
module_param(personality, charp, 0444);
MODULE_PARM_DESC(personality, "NIC driver reproduced: mlx5 (default), ice or bnxt");

static int max_tc = IEEE_8021QAZ_MAX_TCS;
module_param(max_tc, int, 0444);
MODULE_PARM_DESC(max_tc, "Traffic classes the ice/bnxt firmware offers (1..8, default 8)");

static int speed;
module_param(speed, int, 0444);
MODULE_PARM_DESC(speed, "Link speed in Mb/s the devices report at load (ethtool; mlx5's PTYS oper speed), 0: unknown; sysfs fabdcb/link_speed changes it");

static int max_lltc = IEEE_8021QAZ_MAX_TCS;
module_param(max_lltc, int, 0444);
MODULE_PARM_DESC(max_lltc, "bnxt: lossless queues the firmware offers (bp->max_lltc, 0..max_tc, default 8)");

static bool bnxt_ets_fix;
module_param(bnxt_ets_fix, bool, 0444);
MODULE_PARM_DESC(bnxt_ets_fix, "bnxt: ETS starving check over the used TCs only (b74c2a2e9cc4, 6.16) instead of all eight (c08c59653415, 5.14)");

static bool fw_lldp_agent;
module_param(fw_lldp_agent, bool, 0444);
MODULE_PARM_DESC(fw_lldp_agent, "bnxt: the firmware runs an LLDP agent without a DCBX agent (BNXT_FW_CAP_LLDP_AGENT): DCBX IEEE only, host mode refused");

enum fabdcb_pers { PERS_MLX5, PERS_ICE, PERS_BNXT };

static enum fabdcb_pers pers(void)
{
	if (!strcmp(personality, "ice"))
		return PERS_ICE;
	if (!strcmp(personality, "bnxt"))
		return PERS_BNXT;
	return PERS_MLX5;
}

struct fabdcb_priv {
	struct ieee_ets ets;
	struct ieee_pfc pfc; /* pfc_cap, pfc_en, mbc, delay */
	u64 requests[IEEE_8021QAZ_MAX_TCS];
	u64 indications[IEEE_8021QAZ_MAX_TCS];
	struct ieee_maxrate maxrate;
	struct dcbnl_buffer buffer;
	bool manual_buffer;
	u8 buf_lossy[DCBX_MAX_BUFFERS]; /* mlx5e_bufferx_reg.lossy */
	u32 dev_resets;                 /* ice_dcbnl_devreset runs */
	u8 dcbx_cap;
	u8 dscp2prio[FABDCB_MAX_DSCP];
	int dscp_app_cnt;
	bool peer_pfc_valid;
	struct ieee_pfc peer_pfc;
	u32 link_flaps;
	struct ethtool_pauseparam pause;
	enum fabdcb_pers pers;
	bool fw_lldp;       /* ice: ICE_FLAG_FW_LLDP_AGENT; bnxt: BNXT_FW_CAP_LLDP_AGENT */
	bool ieee_ets_set;  /* bnxt: bp->ieee_ets (an ETS was set) */
	u8 num_tc;          /* bnxt: bp->num_tc (bnxt_setup_mq_tc) */
	u8 tc_to_qidx[IEEE_8021QAZ_MAX_TCS]; /* bnxt: bp->tc_to_qidx */
	u32 nic_reopens;    /* bnxt: bnxt_close_nic + bnxt_open_nic runs */
	u32 link_speed;     /* Mb/s, 0 unknown (mlx5: PTYS eth_proto_oper) */
	bool dscp_mode;     /* ice: ICE_QOS_MODE_DSCP */
	u64 dscp_mapped;    /* ice: dscp_mapped bitmap */
	int ice_numapps;    /* ice: desired_dcbx_cfg.numapps */
};

/* ice_dcb_get_num_tc(): contiguous TCs from TC 0 in prio_tc, else 1. */
static int ice_num_tc(const struct ieee_ets *ets)
{
	u8 used = 0;
	bool unused = false;
	int i, n = 0;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		used |= BIT(ets->prio_tc[i]);
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (used & BIT(i)) {
			if (unused) {
				pr_err("Non-contiguous TCs - Disabling DCB\n");
				return 1;
			}
			n++;
		} else {
			unused = true;
		}
	}
	return n ? n : 1;
}

/* ice DCBX state: the firmware LLDP agent or the host (ice_dcb_get_mode). */
static bool ice_fw_owned(struct fabdcb_priv *p)
{
	return p->pers == PERS_ICE && (p->dcbx_cap & DCB_CAP_DCBX_LLD_MANAGED);
}

/* bnxt: every set needs IEEE + HOST DCBX (bnxt_dcbnl_ieee_setets & co). */
static bool bnxt_not_host(struct fabdcb_priv *p)
{
	return p->pers == PERS_BNXT &&
	       (!(p->dcbx_cap & DCB_CAP_DCBX_VER_IEEE) || !(p->dcbx_cap & DCB_CAP_DCBX_HOST));
}

/* ---- DCB ---- */

static void ice_devreset(struct net_device *dev);

static int fabdcb_getets(struct net_device *dev, struct ieee_ets *ets)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	*ets = p->ets;
	ets->ets_cap = p->pers == PERS_MLX5 ? IEEE_8021QAZ_MAX_TCS : max_tc;
	return 0;
}

static int ice_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	struct ieee_ets n = p->ets;
	int i, num, sum = 0;
	bool changed;

	/* ice_dcbnl_setets */
	if (ice_fw_owned(p) || !(p->dcbx_cap & DCB_CAP_DCBX_VER_IEEE))
		return -EINVAL;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		n.tc_tx_bw[i] = ets->tc_tx_bw[i];
		n.tc_tsa[i] = ets->tc_tsa[i];
		if (!p->dscp_mode) /* in DSCP mode up->tc mapping cannot change */
			n.prio_tc[i] = ets->prio_tc[i] < IEEE_8021QAZ_MAX_TCS ? ets->prio_tc[i] : 0;
	}
	/* ice_dcb_bwchk */
	num = ice_num_tc(&n);
	if (num == 1) {
		n.tc_tx_bw[0] = 100;
	} else {
		for (i = 0; i < num; i++)
			sum += n.tc_tx_bw[i];
		if (!sum) {
			n.tc_tx_bw[0] = 100;
		} else if (sum != 100) {
			netdev_err(dev, "Invalid config, total bandwidth must equal 100\n");
			return -EINVAL;
		}
	}
	n.ets_cap = max_tc;
	changed = memcmp(n.prio_tc, p->ets.prio_tc, sizeof(n.prio_tc)) ||
		  memcmp(n.tc_tx_bw, p->ets.tc_tx_bw, sizeof(n.tc_tx_bw)) ||
		  memcmp(n.tc_tsa, p->ets.tc_tsa, sizeof(n.tc_tsa));
	p->ets = n;
	if (changed) /* ice_pf_dcb_cfg applied it: ICE_DCB_HW_CHG_RST */
		ice_devreset(dev);
	return 0;
}

/* bnxt_close_nic + bnxt_open_nic on a running NIC: the rings are freed
 * and re-allocated, the carrier goes down and up; the netdev stays up
 * (no dev_close: its addresses stay). */
static void bnxt_reopen(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	if (netif_running(dev)) {
		netif_carrier_off(dev);
		netif_carrier_on(dev);
	}
	p->nic_reopens++;
}

/* bnxt_setup_mq_tc (bnxt.c): a new TC count closes the NIC, sets the
 * netdev's TC count (netdev_set_num_tc; bnxt never sets a prio_tc_map, so
 * every priority maps to TC 0 there) and opens it again. */
static int bnxt_setup_mq_tc(struct net_device *dev, u8 tc)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	if (tc > max_tc) {
		netdev_err(dev, "Too many traffic classes requested: %d. Max supported is %d.\n", tc, max_tc);
		return -EINVAL;
	}
	if (p->num_tc == tc)
		return 0;
	if (tc)
		netdev_set_num_tc(dev, tc);
	else
		netdev_reset_tc(dev);
	p->num_tc = tc;
	bnxt_reopen(dev);
	return 0;
}

/* The firmware's queue profiles: fabdcb makes the last max_lltc queues the
 * lossless ones (BNXT_LLQ(q_info[j].queue_profile)), so that PFC on a TC
 * still mapped to a lossy queue runs the remap as on a NIC whose
 * firmware puts them elsewhere. */
static bool bnxt_llq(int qidx)
{
	return qidx >= max_tc - max_lltc;
}

/* bnxt_queue_remap: the lossless TCs go to the lossless queues first,
 * the others to the queues left; then close and open the NIC. */
static void bnxt_queue_remap(struct net_device *dev, unsigned int lltc_mask)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	unsigned long qmap = 0;
	int i, j;

	for (i = 0, j = 0; i < max_tc; ) {
		if (lltc_mask & (1 << i)) {
			if (j >= max_tc)
				break;
			if (bnxt_llq(j)) {
				p->tc_to_qidx[i] = j;
				__set_bit(j, &qmap);
				i++;
			}
			j++;
			continue;
		}
		i++;
	}
	for (i = 0, j = 0; i < max_tc; i++) {
		if (lltc_mask & (1 << i))
			continue;
		j = find_next_zero_bit(&qmap, max_tc, j);
		p->tc_to_qidx[i] = j;
		__set_bit(j, &qmap);
		j++;
	}
	bnxt_reopen(dev);
}

/* bnxt_ets_validate (bnxt_dcb.c): a priority on a TC above max_tc, a TSA or
 * bandwidth on a TC above max_tc (the ">" lets TC max_tc itself through),
 * a TSA other than strict/ETS, ETS bandwidths above 100 %, and (since
 * c08c59653415 "bnxt_en: reject ETS settings that will starve a TC") an
 * ETS TC with 0 % while the ETS TCs sum to 100 % are refused; that last
 * loop ran over all eight TCs until b74c2a2e9cc4 "bnxt_en: Fix DCB ETS
 * validation" (6.16) limited it to the TCs below the highest one in use
 * (module parameter bnxt_ets_fix). *tc is the TC count to set up. */
static int bnxt_ets_validate(struct net_device *dev, struct ieee_ets *ets, u8 *tc)
{
	int i, n, total = 0;
	bool zero = false;
	u8 high = 0;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->prio_tc[i] > max_tc) {
			netdev_err(dev, "priority to TC mapping exceeds TC count %d\n", ets->prio_tc[i]);
			return -EINVAL;
		}
		if (ets->prio_tc[i] > high)
			high = ets->prio_tc[i];
		if ((ets->tc_tx_bw[i] || ets->tc_tsa[i]) && i > max_tc)
			return -EINVAL;
	}
	n = bnxt_ets_fix ? high : IEEE_8021QAZ_MAX_TCS;
	for (i = 0; i < n; i++) {
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_STRICT:
			break;
		case IEEE_8021QAZ_TSA_ETS:
			total += ets->tc_tx_bw[i];
			zero = zero || !ets->tc_tx_bw[i];
			break;
		default:
			return -EOPNOTSUPP;
		}
	}
	if (total > 100) {
		netdev_warn(dev, "rejecting ETS config exceeding available bandwidth\n");
		return -EINVAL;
	}
	if (zero && total == 100) {
		netdev_warn(dev, "rejecting ETS config starving a TC\n");
		return -EINVAL;
	}
	*tc = high >= max_tc ? max_tc : high + 1;
	return 0;
}

/* bnxt_dcbnl_ieee_setets */
static int bnxt_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	u8 tc = 0;
	int err;

	if (bnxt_not_host(p))
		return -EINVAL;
	err = bnxt_ets_validate(dev, ets, &tc);
	if (err)
		return err;
	err = bnxt_setup_mq_tc(dev, tc);
	if (err)
		return err;
	p->ets = *ets;
	p->ets.ets_cap = max_tc;
	p->ieee_ets_set = true;
	return 0;
}

/* bnxt_dcbnl_ieee_setpfc -> bnxt_hwrm_queue_pfc_cfg: -EINVAL without an
 * ETS (bp->ieee_ets) and for more lossless TCs than lossless queues
 * (max_lltc); a lossless TC on a lossy queue remaps the queues, which
 * closes and opens the NIC (bnxt_queue_remap). */
static int bnxt_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	unsigned int tc_mask = 0;
	int i, prio, lltc_count = 0;
	bool need_q_remap = false;

	if (!p->ieee_ets_set)
		return -EINVAL;
	for (i = 0; i < max_tc; i++) {
		for (prio = 0; prio < IEEE_8021QAZ_MAX_TCS; prio++)
			if ((pfc->pfc_en & (1 << prio)) && p->ets.prio_tc[prio] == i)
				tc_mask |= 1 << i;
		if (tc_mask & (1 << i))
			lltc_count++;
	}
	if (lltc_count > max_lltc)
		return -EINVAL;
	for (i = 0; i < max_tc; i++)
		if ((tc_mask & (1 << i)) && !bnxt_llq(p->tc_to_qidx[i]))
			need_q_remap = true;
	if (need_q_remap)
		bnxt_queue_remap(dev, tc_mask);
	p->pfc.pfc_en = pfc->pfc_en;
	p->pfc.mbc = pfc->mbc;
	p->pfc.delay = pfc->delay;
	return 0;
}

static int fabdcb_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	bool have_ets = false;
	int i, sum = 0;

	if (p->pers == PERS_ICE)
		return ice_setets(dev, ets);
	if (p->pers == PERS_BNXT)
		return bnxt_setets(dev, ets);
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->prio_tc[i] >= IEEE_8021QAZ_MAX_TCS) {
			netdev_err(dev, "ETS: priority %d maps to TC %u (max 7)\n", i, ets->prio_tc[i]);
			return -EINVAL;
		}
		if (ets->tc_tsa[i] == IEEE_8021QAZ_TSA_CB_SHAPER) {
			netdev_err(dev, "ETS: CB shaper is not supported\n");
			return -EOPNOTSUPP;
		}
		if (ets->tc_tsa[i] == IEEE_8021QAZ_TSA_ETS) {
			have_ets = true;
			sum += ets->tc_tx_bw[i];
		}
	}
	if (have_ets && sum != 100) {
		netdev_err(dev, "ETS: bandwidths of the ETS TCs sum to %d, must be 100\n", sum);
		return -EINVAL;
	}
	p->ets = *ets;
	p->ets.ets_cap = IEEE_8021QAZ_MAX_TCS;
	return 0;
}

static void fabdcb_flap(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	/* mlx5_toggle_port_link(): a PFC change takes the link down and up. */
	if (netif_running(dev)) {
		netif_carrier_off(dev);
		netif_carrier_on(dev);
	}
	p->link_flaps++;
}

static int fabdcb_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	*pfc = p->pfc;
	/* bnxt_dcbnl_ieee_getpfc: pfc_cap = bp->max_lltc */
	pfc->pfc_cap = p->pers == PERS_BNXT ? max_lltc : IEEE_8021QAZ_MAX_TCS;
	memcpy(pfc->requests, p->requests, sizeof(pfc->requests));
	memcpy(pfc->indications, p->indications, sizeof(pfc->indications));
	return 0;
}

/* ice_vsi_cfg_netdev_tc (ice_lib.c), run by ice_pf_dcb_recfg on every DCB
 * reconfiguration and at load: the netdev's TC count is the number of
 * enabled TCs (contiguous from TC 0: ice_dcb_get_ena_tc), and each user
 * priority maps to the netdev TC of its ETS TC (netdev_set_prio_tc_map;
 * the netdev TC of an enabled TC is its index). rdma_cm takes a RoCE
 * connection's SL from this map whenever the real netdev has num_tc
 * (cma.c get_vlan_ndev_tc / iboe_tos_to_sl), not from the VLAN egress map. */
static void ice_cfg_netdev_tc(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int i, num = ice_num_tc(&p->ets);

	if (netdev_set_num_tc(dev, num))
		return;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		netdev_set_prio_tc_map(dev, i, num > 1 ? p->ets.prio_tc[i] : 0);
}

/* ice_dcbnl_devreset: "enough of a ifdown/ifup to sync DCBNL info", run by
 * ice_dcbnl_setets/_setpfc/_setapp/_delapp when ice_pf_dcb_cfg applied a
 * changed configuration (ICE_DCB_HW_CHG_RST). Called with RTNL held, as
 * the dcbnl ops are. */
static void ice_devreset(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	ice_cfg_netdev_tc(dev); /* ice_pf_dcb_cfg -> ice_pf_dcb_recfg, before the reset */
	dev_close(dev);
	netdev_state_change(dev);
	dev_open(dev, NULL);
	netdev_state_change(dev);
	p->dev_resets++;
}

/* calculate_xoff (port_buffer.c): xoff = (301 + 2.16 * len [m]) * speed
 * [Gbps] + 2.72 MTU [B], in the driver's u32 arithmetic; speed from PTYS
 * (mlx5e_port_linkspeed: the link's operational speed, here sysfs
 * link_speed), SPEED_40000 when it cannot be read, and at least that. */
static u32 mlx5_xoff(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	u32 speed = max_t(u32, p->link_speed, SPEED_40000);

	return (301 + 216 * (u32)p->pfc.delay / 100) * speed / 1000 + 272 * dev->mtu / 100;
}

/* update_xoff_threshold: every lossless buffer holds xoff + max_mtu + one
 * cell, else -ENOMEM ("is not enough for lossless buffer"). */
static int mlx5_xoff_check(struct net_device *dev, const u32 *size, const u8 *lossy)
{
	u32 xoff = mlx5_xoff(dev);
	u32 max_mtu = max_t(u32, dev->max_mtu, FABDCB_MIN_MAX_MTU);
	int i;

	for (i = 0; i < DCBX_MAX_BUFFERS; i++) {
		if (lossy[i])
			continue;
		if (size[i] < xoff + max_mtu + FABDCB_CELL) {
			netdev_err(dev, "buffer_size[%d]=%u is not enough for lossless buffer\n", i, size[i]);
			return -ENOMEM;
		}
	}
	return 0;
}

/* update_buffer_lossy: a buffer is lossless when a PFC priority maps to
 * it, lossy otherwise (also when no priority does). Returns whether any
 * lossy bit changed. */
static bool mlx5_update_lossy(u8 pfc_en, const u8 *prio2buffer, u8 *lossy)
{
	bool changed = false;
	int i, prio;

	for (i = 0; i < DCBX_MAX_BUFFERS; i++) {
		int prios = 0, lossy_prios = 0;
		u8 l;

		for (prio = 0; prio < IEEE_8021QAZ_MAX_TCS; prio++) {
			if (prio2buffer[prio] != i)
				continue;
			prios++;
			lossy_prios += !(pfc_en & BIT(prio));
		}
		l = lossy_prios == prios;
		if (l != lossy[i]) {
			lossy[i] = l;
			changed = true;
		}
	}
	return changed;
}

/* fill_pfc_en: global pause makes every buffer with priorities lossless. */
static u8 mlx5_pfc_en(struct fabdcb_priv *p)
{
	if (p->pause.rx_pause || p->pause.tx_pause)
		return 0xff;
	return p->pfc.pfc_en;
}

static int fabdcb_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	u16 old_cable_len = p->pfc.delay;
	bool pfc_changed = false, cable_changed = false;
	u8 lossy[DCBX_MAX_BUFFERS];
	int err;

	/* ice_dcbnl_setpfc, bnxt_dcbnl_ieee_setpfc */
	if (ice_fw_owned(p) || bnxt_not_host(p))
		return -EINVAL;
	if (p->pers == PERS_ICE) {
		bool changed = p->pfc.pfc_en != pfc->pfc_en;

		p->pfc.pfc_en = pfc->pfc_en;
		if (changed) /* ice_pf_dcb_cfg: ICE_DCB_HW_CHG_RST */
			ice_devreset(dev);
		return 0;
	}
	if (p->pers == PERS_BNXT)
		return bnxt_setpfc(dev, pfc);
	/* mlx5e_dcbnl_ieee_setpfc: PFC is set (and the link toggled) first. */
	if (pfc->pfc_en != p->pfc.pfc_en) {
		p->pfc.pfc_en = pfc->pfc_en;
		fabdcb_flap(dev);
		pfc_changed = true;
	}
	p->pfc.mbc = pfc->mbc;
	if (pfc->delay && pfc->delay < FABDCB_MAX_CABLE_LEN && pfc->delay != p->pfc.delay) {
		p->pfc.delay = pfc->delay;
		cable_changed = true;
	}
	if (!p->manual_buffer)
		return 0;
	/* mlx5e_port_manual_buffer_config(CABLE_LEN | PFC) */
	memcpy(lossy, p->buf_lossy, sizeof(lossy));
	err = 0;
	if (cable_changed)
		err = mlx5_xoff_check(dev, p->buffer.buffer_size, lossy);
	if (!err && pfc_changed && mlx5_update_lossy(mlx5_pfc_en(p), p->buffer.prio2buffer, lossy))
		err = mlx5_xoff_check(dev, p->buffer.buffer_size, lossy);
	if (err) {
		if (cable_changed)
			p->pfc.delay = old_cable_len;
		return err;
	}
	memcpy(p->buf_lossy, lossy, sizeof(lossy));
	return 0;
}

static int fabdcb_peer_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	if (!p->peer_pfc_valid)
		return -ENODATA;
	*pfc = p->peer_pfc;
	return 0;
}

static int fabdcb_getmaxrate(struct net_device *dev, struct ieee_maxrate *m)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	*m = p->maxrate; /* max_bw_value x unit (mlx5e_dcbnl_ieee_getmaxrate) */
	return 0;
}

static int fabdcb_setmaxrate(struct net_device *dev, struct ieee_maxrate *m)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	struct ieee_maxrate n = {};
	int i;

	/* mlx5e_dcbnl_ieee_setmaxrate: u8 values in 100 Mbps or 1 Gbps units */
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		u64 kbps = m->tc_maxrate[i];
		u64 v;

		if (!kbps)
			continue; /* MLX5_BW_NO_LIMIT */
		if (kbps <= 255 * FABDCB_100MB) {
			v = div_u64(kbps, FABDCB_100MB);
			n.tc_maxrate[i] = (v ? v : 1) * FABDCB_100MB;
		} else if (kbps <= 255 * FABDCB_1GB) {
			n.tc_maxrate[i] = div_u64(kbps, FABDCB_1GB) * FABDCB_1GB;
		} else {
			netdev_err(dev, "tc_%d maxrate %llu Kbps exceeds limit %llu\n", i,
				   kbps, 255 * FABDCB_1GB);
			return -EINVAL;
		}
	}
	p->maxrate = n;
	return 0;
}

static int fabdcb_getbuffer(struct net_device *dev, struct dcbnl_buffer *b)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	*b = p->buffer;
	return 0;
}

/* mlx5e_dcbnl_setbuffer + mlx5e_port_manual_buffer_config. */
static int fabdcb_setbuffer(struct net_device *dev, struct dcbnl_buffer *b)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	bool prio_changed = false, size_changed = false, update_buffer = false;
	u32 size[DCBX_MAX_BUFFERS];
	u8 lossy[DCBX_MAX_BUFFERS];
	u64 total_used = 0;
	int i, err;

	/* dcbnl_ieee_set (net/dcb/dcbnl.c) refuses prio2buffer >= DCBX_MAX_BUFFERS. */
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (b->prio2buffer[i] >= DCBX_MAX_BUFFERS)
			return -EINVAL;
		if (b->prio2buffer[i] != p->buffer.prio2buffer[i])
			prio_changed = true;
	}
	for (i = 0; i < DCBX_MAX_BUFFERS; i++)
		if (b->buffer_size[i] != p->buffer.buffer_size[i])
			size_changed = true;
	if (!prio_changed && !size_changed)
		return 0;
	p->manual_buffer = true;

	memcpy(size, p->buffer.buffer_size, sizeof(size));
	memcpy(lossy, p->buf_lossy, sizeof(lossy));
	if (prio_changed && mlx5_update_lossy(mlx5_pfc_en(p), b->prio2buffer, lossy)) {
		update_buffer = true;
		err = mlx5_xoff_check(dev, size, lossy); /* the sizes the port has now */
		if (err)
			return err;
	}
	if (size_changed) {
		for (i = 0; i < DCBX_MAX_BUFFERS; i++) {
			if (!lossy[i] && !b->buffer_size[i])
				return -EINVAL; /* "lossless buffer[%d] size cannot be zero" */
			size[i] = b->buffer_size[i];
			total_used += size[i];
		}
		/* total_used - headroom > spare: more than the port holds */
		if (total_used > FABDCB_TOTAL_BUFFER)
			return -EINVAL;
		update_buffer = true;
		err = mlx5_xoff_check(dev, size, lossy);
		if (err)
			return err;
	}
	if (update_buffer) {
		u32 cells = 0;

		for (i = 0; i < DCBX_MAX_BUFFERS; i++)
			cells += size[i] / FABDCB_CELL;
		/* port_update_shared_buffer: fewer than 4 cells left */
		if (FABDCB_TOTAL_BUFFER / FABDCB_CELL - cells < 4) {
			netdev_err(dev, "Requested port buffer is too large, not enough space left for shared buffer\n");
			return -EINVAL;
		}
		for (i = 0; i < DCBX_MAX_BUFFERS; i++) /* port_set_buffer: whole cells */
			p->buffer.buffer_size[i] = size[i] / FABDCB_CELL * FABDCB_CELL;
		memcpy(p->buf_lossy, lossy, sizeof(lossy));
	}
	if (prio_changed)
		memcpy(p->buffer.prio2buffer, b->prio2buffer, sizeof(p->buffer.prio2buffer));
	p->buffer.total_size = FABDCB_TOTAL_BUFFER; /* read-only */
	return 0;
}

/* ice: reset ETS as the switch to DSCP mode does (ice_dcbnl_setapp). */
static void ice_dscp_mode_ets(struct fabdcb_priv *p)
{
	int i;

	p->ets.tc_tx_bw[0] = 100;
	p->ets.tc_tsa[0] = IEEE_8021QAZ_TSA_ETS;
	p->ets.prio_tc[0] = 0;
	for (i = 1; i < max_tc; i++) {
		p->ets.tc_tx_bw[i] = 0;
		p->ets.tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
		p->ets.prio_tc[i] = i;
	}
}

static int ice_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int err, i;

	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP)
		return -EINVAL;
	if (ice_fw_owned(p)) {
		netdev_err(dev, "can't do DSCP QoS when FW DCB agent active\n");
		return -EINVAL;
	}
	if (!(p->dcbx_cap & DCB_CAP_DCBX_VER_IEEE))
		return -EINVAL;
	if (app->protocol >= FABDCB_MAX_DSCP) {
		netdev_err(dev, "DSCP value 0x%04X out of range\n", app->protocol);
		return -EINVAL;
	}
	if (app->priority >= max_tc) {
		netdev_err(dev, "TC %d out of range, max TC %d\n", app->priority, max_tc);
		return -EINVAL;
	}
	err = dcb_ieee_setapp(dev, app);
	if (err)
		return err;
	if (p->dscp_mapped & BIT_ULL(app->protocol)) {
		netdev_err(dev, "DSCP value 0x%04X already user mapped\n", app->protocol);
		dcb_ieee_delapp(dev, app);
		return -EINVAL;
	}
	p->dscp_mapped |= BIT_ULL(app->protocol);
	if (p->ice_numapps >= FABDCB_ICE_MAX_APPS) {
		/* ice_dcbnl_setapp appends to desired_dcbx_cfg.app[] without a
		 * bound ("new_cfg->app[new_cfg->numapps++]"): the real driver
		 * writes past ICE_DCBX_MAX_APPS; fabdcb refuses, so that a test
		 * sees it. */
		netdev_err(dev, "fabdcb: app %d would overflow ice's app[%d] (ICE_DCBX_MAX_APPS)\n",
			   p->ice_numapps, FABDCB_ICE_MAX_APPS);
		p->dscp_mapped &= ~BIT_ULL(app->protocol);
		dcb_ieee_delapp(dev, app);
		return -EOVERFLOW;
	}
	if (!p->dscp_mode) {
		int j;

		netdev_info(dev, "Switched QoS to L3 DSCP mode\n");
		p->dscp_mode = true;
		/* "set default DSCP QoS values": dscp_map[i * max_tc + j] = i for
		 * j < ICE_BYTES_PER_DSCP_VAL, and with fewer than 8 TCs also at
		 * + max_tc * 8 (later TCs overwrite; with 8 TCs dscp >> 3; the
		 * real driver does not bound the index, fabdcb stops at 63) */
		for (i = 0; i < max_tc; i++)
			for (j = 0; j < 8; j++) {
				int dscp = i * max_tc + j;

				if (dscp < FABDCB_MAX_DSCP)
					p->dscp2prio[dscp] = i;
				if (max_tc < IEEE_8021QAZ_MAX_TCS && dscp + max_tc * 8 < FABDCB_MAX_DSCP)
					p->dscp2prio[dscp + max_tc * 8] = i;
			}
		ice_dscp_mode_ets(p);
	}
	p->ice_numapps++;
	p->dscp2prio[app->protocol] = app->priority;
	p->dscp_app_cnt++;
	ice_devreset(dev); /* the APP table changed: ice_pf_dcb_cfg, then devreset */
	return 0;
}

static int ice_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int err, i;

	if (ice_fw_owned(p)) {
		netdev_err(dev, "can't delete DSCP netlink app when FW DCB agent is active\n");
		return -EINVAL;
	}
	err = dcb_ieee_delapp(dev, app);
	if (err)
		return err;
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP || app->protocol >= FABDCB_MAX_DSCP)
		return 0;
	if (p->ice_numapps)
		p->ice_numapps--;
	p->dscp_mapped &= ~BIT_ULL(app->protocol);
	p->dscp2prio[app->protocol] = app->protocol % 8; /* ICE_BYTES_PER_DSCP_VAL */
	if (p->dscp_app_cnt)
		p->dscp_app_cnt--;
	if (!p->dscp_mapped && p->dscp_mode) {
		netdev_info(dev, "Switched QoS to L2 VLAN mode\n");
		p->dscp_mode = false;
		/* ice_dcb_sw_dflt_cfg: one TC with every priority */
		memset(&p->ets, 0, sizeof(p->ets));
		p->ets.ets_cap = max_tc;
		p->ets.tc_tx_bw[0] = 100;
		for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
			p->ets.tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
	}
	/* ice_pf_dcb_cfg or ice_dcb_sw_dflt_cfg applied the change */
	ice_devreset(dev);
	return 0;
}

static int bnxt_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int err;

	if (bnxt_not_host(p))
		return -EINVAL;
	if (app->selector == IEEE_8021QAZ_APP_SEL_DSCP && app->protocol >= FABDCB_MAX_DSCP)
		return -EINVAL;
	err = dcb_ieee_setapp(dev, app);
	if (err)
		return err;
	if (app->selector == IEEE_8021QAZ_APP_SEL_DSCP) { /* bnxt_hwrm_queue_dscp2pri_cfg */
		p->dscp2prio[app->protocol] = app->priority;
		p->dscp_app_cnt++;
	}
	return 0;
}

static int bnxt_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int err;

	if (bnxt_not_host(p))
		return -EINVAL;
	if (app->selector == IEEE_8021QAZ_APP_SEL_DSCP && app->protocol >= FABDCB_MAX_DSCP)
		return -EINVAL;
	err = dcb_ieee_delapp(dev, app);
	if (err)
		return err;
	if (app->selector == IEEE_8021QAZ_APP_SEL_DSCP && p->dscp_app_cnt)
		p->dscp_app_cnt--;
	return 0;
}

static int fabdcb_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	struct dcb_app old;
	bool is_new;
	int err;

	if (p->pers == PERS_ICE)
		return ice_setapp(dev, app);
	if (p->pers == PERS_BNXT)
		return bnxt_setapp(dev, app);
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP || app->protocol >= FABDCB_MAX_DSCP)
		return -EINVAL;
	if (app->priority >= IEEE_8021QAZ_MAX_TCS)
		return -EINVAL;

	/* One priority per DSCP: drop the entry the new one replaces. */
	old.selector = IEEE_8021QAZ_APP_SEL_DSCP;
	old.protocol = app->protocol;
	old.priority = p->dscp2prio[app->protocol];
	is_new = dcb_ieee_delapp(dev, &old) != 0;

	err = dcb_ieee_setapp(dev, app);
	if (err)
		return err;
	p->dscp2prio[app->protocol] = app->priority;
	if (is_new)
		p->dscp_app_cnt++; /* the first entry means DSCP trust */
	return 0;
}

static int fabdcb_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int err;

	if (p->pers == PERS_ICE)
		return ice_delapp(dev, app);
	if (p->pers == PERS_BNXT)
		return bnxt_delapp(dev, app);
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP || app->protocol >= FABDCB_MAX_DSCP)
		return -EINVAL;
	if (!p->dscp_app_cnt || app->priority != p->dscp2prio[app->protocol])
		return -ENOENT;
	err = dcb_ieee_delapp(dev, app);
	if (err)
		return err;
	p->dscp2prio[app->protocol] = 0; /* mlx5e_dcbnl_ieee_delapp: back to zero */
	p->dscp_app_cnt--; /* none left: back to PCP trust */
	return 0;
}

static u8 fabdcb_getdcbx(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	return p->dcbx_cap;
}

static u8 fabdcb_setdcbx(struct net_device *dev, u8 mode)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	if (p->pers == PERS_ICE) { /* ice_dcbnl_setdcbx */
		if (p->fw_lldp)
			return 1; /* ICE_DCB_NO_HW_CHG: FW LLDP agent running */
		if ((mode & DCB_CAP_DCBX_LLD_MANAGED) ||
		    ((mode & DCB_CAP_DCBX_VER_IEEE) && (mode & DCB_CAP_DCBX_VER_CEE)) ||
		    !(mode & DCB_CAP_DCBX_HOST))
			return 1;
		p->dcbx_cap = mode;
		return 0;
	}
	if (p->pers == PERS_BNXT) { /* bnxt_dcbnl_setdcbx */
		if (p->dcbx_cap & DCB_CAP_DCBX_LLD_MANAGED)
			return 1; /* "All firmware DCBX settings are set in NVRAM" */
		if ((mode & DCB_CAP_DCBX_HOST) && p->fw_lldp)
			return 1; /* BNXT_VF(bp) || (bp->fw_cap & BNXT_FW_CAP_LLDP_AGENT) */
		if ((mode & DCB_CAP_DCBX_HOST) &&
		    ((mode & DCB_CAP_DCBX_VER_CEE) || !(mode & DCB_CAP_DCBX_VER_IEEE)))
			return 1;
		p->dcbx_cap = mode;
		return 0;
	}
	if (mode & DCB_CAP_DCBX_LLD_MANAGED)
		return 1;
	if (!mode) { /* firmware (willing) DCBX */
		p->dcbx_cap = DCB_CAP_DCBX_VER_IEEE;
		return 0;
	}
	if (!(mode & DCB_CAP_DCBX_HOST))
		return 1;
	p->dcbx_cap = mode;
	return 0;
}

static const struct dcbnl_rtnl_ops fabdcb_dcbnl_ops = {
	.ieee_getets = fabdcb_getets,
	.ieee_setets = fabdcb_setets,
	.ieee_getpfc = fabdcb_getpfc,
	.ieee_setpfc = fabdcb_setpfc,
	.ieee_peer_getpfc = fabdcb_peer_getpfc,
	.ieee_getmaxrate = fabdcb_getmaxrate,
	.ieee_setmaxrate = fabdcb_setmaxrate,
	.ieee_setapp = fabdcb_setapp,
	.ieee_delapp = fabdcb_delapp,
	.getdcbx = fabdcb_getdcbx,
	.setdcbx = fabdcb_setdcbx,
	.dcbnl_getbuffer = fabdcb_getbuffer,
	.dcbnl_setbuffer = fabdcb_setbuffer,
};

/* ice (ice_dcb_nl.c dcbnl_ops) and bnxt (bnxt_dcb.c dcbnl_ops): IEEE ETS,
 * PFC, APP and DCBX; no maxrate, buffer or peer PFC. */
static const struct dcbnl_rtnl_ops fabdcb_ice_bnxt_dcbnl_ops = {
	.ieee_getets = fabdcb_getets,
	.ieee_setets = fabdcb_setets,
	.ieee_getpfc = fabdcb_getpfc,
	.ieee_setpfc = fabdcb_setpfc,
	.ieee_setapp = fabdcb_setapp,
	.ieee_delapp = fabdcb_delapp,
	.getdcbx = fabdcb_getdcbx,
	.setdcbx = fabdcb_setdcbx,
};

/* ---- sysfs ---- */

static struct fabdcb_priv *to_priv(struct device *d)
{
	return netdev_priv(to_net_dev(d));
}

static ssize_t trust_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_priv(d)->dscp_app_cnt ? "dscp" : "pcp");
}
static DEVICE_ATTR_RO(trust);

static ssize_t buffer_mode_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_priv(d)->manual_buffer ? "manual" : "auto");
}
static DEVICE_ATTR_RO(buffer_mode);

static ssize_t link_flaps_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_priv(d)->link_flaps);
}
static DEVICE_ATTR_RO(link_flaps);

static ssize_t dev_resets_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_priv(d)->dev_resets);
}
static DEVICE_ATTR_RO(dev_resets);

static ssize_t nic_reopens_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_priv(d)->nic_reopens);
}
static DEVICE_ATTR_RO(nic_reopens);

static ssize_t link_speed_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_priv(d)->link_speed);
}

/* The link trains at another speed (a test plays the cable): ethtool and
 * mlx5's headroom follow. */
static ssize_t link_speed_store(struct device *d, struct device_attribute *a,
				const char *buf, size_t len)
{
	u32 v;
	int err = kstrtou32(buf, 0, &v);

	if (err)
		return err;
	if (!rtnl_trylock())
		return restart_syscall();
	to_priv(d)->link_speed = v;
	rtnl_unlock();
	return len;
}
static DEVICE_ATTR_RW(link_speed);

static ssize_t pfc_counters_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct fabdcb_priv *p = to_priv(d);
	int i, n = 0;

	if (!rtnl_trylock())
		return restart_syscall();
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		n += sysfs_emit_at(buf, n, "%d %llu %llu\n", i, p->requests[i], p->indications[i]);
	rtnl_unlock();
	return n;
}

static ssize_t pfc_counters_store(struct device *d, struct device_attribute *a,
				  const char *buf, size_t len)
{
	struct fabdcb_priv *p = to_priv(d);
	unsigned int prio;
	unsigned long long req, ind;

	if (sscanf(buf, "%u %llu %llu", &prio, &req, &ind) != 3 || prio >= IEEE_8021QAZ_MAX_TCS)
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	p->requests[prio] += req;
	p->indications[prio] += ind;
	rtnl_unlock();
	return len;
}
static DEVICE_ATTR_RW(pfc_counters);

static ssize_t peer_pfc_store(struct device *d, struct device_attribute *a,
			      const char *buf, size_t len)
{
	struct net_device *dev = to_net_dev(d);
	struct fabdcb_priv *p = netdev_priv(dev);
	u8 mask;
	int err;

	err = kstrtou8(buf, 0, &mask);
	if (err)
		return err;
	if (!rtnl_trylock())
		return restart_syscall();
	memset(&p->peer_pfc, 0, sizeof(p->peer_pfc));
	p->peer_pfc.pfc_cap = IEEE_8021QAZ_MAX_TCS;
	p->peer_pfc.pfc_en = mask;
	p->peer_pfc_valid = true;
	/* Willing (firmware) mode: the switch's advertisement wins. */
	if (!(p->dcbx_cap & DCB_CAP_DCBX_HOST) && p->pfc.pfc_en != mask) {
		p->pfc.pfc_en = mask;
		fabdcb_flap(dev);
	}
	dcbnl_ieee_notify(dev, RTM_SETDCB, DCB_CMD_IEEE_SET, 0, 0);
	rtnl_unlock();
	return len;
}
static DEVICE_ATTR_WO(peer_pfc);

static struct attribute *fabdcb_attrs[] = {
	&dev_attr_trust.attr,
	&dev_attr_buffer_mode.attr,
	&dev_attr_link_flaps.attr,
	&dev_attr_dev_resets.attr,
	&dev_attr_nic_reopens.attr,
	&dev_attr_link_speed.attr,
	&dev_attr_pfc_counters.attr,
	&dev_attr_peer_pfc.attr,
	NULL,
};

static const struct attribute_group fabdcb_group = {
	.name = "fabdcb",
	.attrs = fabdcb_attrs,
};

/* ---- netdev ---- */

static netdev_tx_t fabdcb_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev_lstats_add(dev, skb->len);
	dev_kfree_skb(skb);
	return NETDEV_TX_OK;
}

static int fabdcb_dev_init(struct net_device *dev)
{
	dev->lstats = netdev_alloc_pcpu_stats(struct pcpu_lstats);
	return dev->lstats ? 0 : -ENOMEM;
}

static void fabdcb_dev_uninit(struct net_device *dev)
{
	free_percpu(dev->lstats);
}

static void fabdcb_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *s)
{
	dev_lstats_read(dev, &s->tx_packets, &s->tx_bytes);
}

static int fabdcb_open(struct net_device *dev)
{
	netif_carrier_on(dev);
	return 0;
}

static int fabdcb_stop(struct net_device *dev)
{
	netif_carrier_off(dev);
	return 0;
}

static const struct net_device_ops fabdcb_netdev_ops = {
	.ndo_init = fabdcb_dev_init,
	.ndo_uninit = fabdcb_dev_uninit,
	.ndo_open = fabdcb_open,
	.ndo_stop = fabdcb_stop,
	.ndo_start_xmit = fabdcb_xmit,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_get_stats64 = fabdcb_get_stats64,
};

static const char * const fabdcb_drv[] = { "mlx5_core", "ice", "bnxt_en" };

static void fabdcb_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	strscpy(info->driver, fabdcb_drv[p->pers], sizeof(info->driver));
	strscpy(info->fw_version, DRV_NAME, sizeof(info->fw_version));
	info->n_priv_flags = p->pers == PERS_ICE ? 1 : 0;
}

/* ice private flag "fw-lldp-agent" (ice_ethtool.c ice_gstrings_priv_flags). */
static int fabdcb_get_sset_count(struct net_device *dev, int sset)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	if (sset == ETH_SS_PRIV_FLAGS && p->pers == PERS_ICE)
		return 1;
	return -EOPNOTSUPP;
}

static void fabdcb_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_PRIV_FLAGS)
		strscpy(data, "fw-lldp-agent", ETH_GSTRING_LEN);
}

static u32 fabdcb_get_priv_flags(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	return p->fw_lldp ? 1 : 0;
}

static int fabdcb_set_priv_flags(struct net_device *dev, u32 flags)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	if (p->pers != PERS_ICE)
		return flags ? -EOPNOTSUPP : 0;
	p->fw_lldp = flags & 1;
	/* ice_set_priv_flags: the agent stopped, DCB is the host's (and back) */
	p->dcbx_cap = (p->fw_lldp ? DCB_CAP_DCBX_LLD_MANAGED : DCB_CAP_DCBX_HOST) | DCB_CAP_DCBX_VER_IEEE;
	dcbnl_ieee_notify(dev, RTM_SETDCB, DCB_CMD_IEEE_SET, 0, 0);
	return 0;
}

static void fabdcb_get_pauseparam(struct net_device *dev, struct ethtool_pauseparam *pp)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	pp->autoneg = p->pause.autoneg;
	pp->rx_pause = p->pause.rx_pause;
	pp->tx_pause = p->pause.tx_pause;
}

static int fabdcb_set_pauseparam(struct net_device *dev, struct ethtool_pauseparam *pp)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	p->pause.autoneg = pp->autoneg;
	p->pause.rx_pause = pp->rx_pause;
	p->pause.tx_pause = pp->tx_pause;
	return 0;
}

static int fabdcb_get_link_ksettings(struct net_device *dev, struct ethtool_link_ksettings *cmd)
{
	struct fabdcb_priv *p = netdev_priv(dev);

	cmd->base.speed = p->link_speed && netif_carrier_ok(dev) ? p->link_speed : SPEED_UNKNOWN;
	cmd->base.duplex = cmd->base.speed == SPEED_UNKNOWN ? DUPLEX_UNKNOWN : DUPLEX_FULL;
	cmd->base.port = PORT_DA;
	cmd->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static const struct ethtool_ops fabdcb_ethtool_ops = {
	.get_link_ksettings = fabdcb_get_link_ksettings,
	.get_drvinfo = fabdcb_get_drvinfo,
	.get_sset_count = fabdcb_get_sset_count,
	.get_strings = fabdcb_get_strings,
	.get_priv_flags = fabdcb_get_priv_flags,
	.set_priv_flags = fabdcb_set_priv_flags,
	.get_link = ethtool_op_get_link,
	.get_pauseparam = fabdcb_get_pauseparam,
	.set_pauseparam = fabdcb_set_pauseparam,
};

static void fabdcb_setup(struct net_device *dev)
{
	struct fabdcb_priv *p = netdev_priv(dev);
	int i;

	ether_setup(dev);
	dev->netdev_ops = &fabdcb_netdev_ops;
	dev->ethtool_ops = &fabdcb_ethtool_ops;
	dev->dcbnl_ops = &fabdcb_dcbnl_ops;
	dev->needs_free_netdev = true;
	dev->flags |= IFF_NOARP;
	dev->priv_flags |= IFF_NO_QUEUE;
	dev->features |= NETIF_F_LLTX;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = 9216;
	dev->sysfs_groups[0] = &fabdcb_group;
	eth_hw_addr_random(dev);

	memset(p, 0, sizeof(*p));
	p->pers = pers();
	if (p->pers != PERS_MLX5)
		dev->dcbnl_ops = &fabdcb_ice_bnxt_dcbnl_ops;
	/* mlx5 firmware dscp2prio default (and ice's DSCP mode default) */
	for (i = 0; i < FABDCB_MAX_DSCP; i++)
		p->dscp2prio[i] = p->pers == PERS_BNXT ? 0 : i >> 3;
	/* NIC defaults: every priority on TC 0, TC 0 ETS with 100 %. */
	p->ets.ets_cap = IEEE_8021QAZ_MAX_TCS;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		p->ets.tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
	p->ets.tc_tx_bw[0] = 100;
	p->pfc.pfc_cap = IEEE_8021QAZ_MAX_TCS;
	if (p->pers == PERS_MLX5) /* mlx5e_dcbnl_initialize: dcbx.cable_len */
		p->pfc.delay = FABDCB_DEFAULT_CABLE_LEN;
	for (i = 0; i < DCBX_MAX_BUFFERS; i++)
		p->buf_lossy[i] = 1;
	p->buffer.buffer_size[0] = FABDCB_TOTAL_BUFFER / 2;
	p->buffer.total_size = FABDCB_TOTAL_BUFFER;
	p->dcbx_cap = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
	if (p->pers == PERS_ICE) { /* FW LLDP agent on at load: ice_dcb_get_mode(host=false) */
		p->fw_lldp = true;
		p->dcbx_cap = DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_IEEE;
	}
	if (p->pers == PERS_BNXT) { /* bnxt: zero ETS/PFC until the host sets them */
		memset(&p->ets, 0, sizeof(p->ets));
		for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
			p->tc_to_qidx[i] = i;
		/* bnxt_dcb_init: IEEE; HOST for a PF without the firmware LLDP
		 * agent, else LLD_MANAGED only with a firmware DCBX agent */
		if (fw_lldp_agent) {
			p->fw_lldp = true;
			p->dcbx_cap = DCB_CAP_DCBX_VER_IEEE;
		}
	}
	p->link_speed = speed > 0 ? speed : 0;
	p->pause.autoneg = AUTONEG_DISABLE;
	p->pause.rx_pause = 1;
	p->pause.tx_pause = 1;
}

static struct rtnl_link_ops fabdcb_link_ops __read_mostly = {
	.kind = DRV_NAME,
	.priv_size = sizeof(struct fabdcb_priv),
	.setup = fabdcb_setup,
};

#include "bnxt_re_cc.c" /* bnxt personality: bnxt_re's congestion control configfs */

static int __init fabdcb_init_one(int i)
{
	struct net_device *dev;
	char name[IFNAMSIZ];
	int err;

	snprintf(name, sizeof(name), DRV_NAME "%d", i);
	dev = alloc_netdev(sizeof(struct fabdcb_priv), name, NET_NAME_PREDICTABLE, fabdcb_setup);
	if (!dev)
		return -ENOMEM;
	dev->rtnl_link_ops = &fabdcb_link_ops;
	err = register_netdevice(dev);
	if (err < 0) {
		free_netdev(dev);
		return err;
	}
	if (pers() == PERS_ICE) /* ice_init_pf_dcb -> ice_pf_dcb_recfg at probe */
		ice_cfg_netdev_tc(dev);
	return 0;
}

static int __init fabdcb_init(void)
{
	int i, err;

	if (count < 0 || count > 64 || max_tc < 1 || max_tc > IEEE_8021QAZ_MAX_TCS ||
	    max_lltc < 0 || max_lltc > max_tc)
		return -EINVAL;
	if (strcmp(personality, "mlx5") && strcmp(personality, "ice") && strcmp(personality, "bnxt"))
		return -EINVAL;
	rtnl_lock();
	err = __rtnl_link_register(&fabdcb_link_ops);
	if (err < 0)
		goto out;
	for (i = 0; i < count && !err; i++)
		err = fabdcb_init_one(i);
	if (err < 0)
		__rtnl_link_unregister(&fabdcb_link_ops);
out:
	rtnl_unlock();
	if (!err) {
		err = fabdcb_re_init();
		if (err)
			rtnl_link_unregister(&fabdcb_link_ops);
	}
	return err;
}

static void __exit fabdcb_exit(void)
{
	fabdcb_re_exit();
	/* Deletes every fabdcb device, in every namespace. */
	rtnl_link_unregister(&fabdcb_link_ops);
}

module_init(fabdcb_init);
module_exit(fabdcb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Dummy netdevs with IEEE DCB (dcbnl) and mlx5-like rules, for the fabctl VM testbed");
MODULE_ALIAS_RTNL_LINK(DRV_NAME);
