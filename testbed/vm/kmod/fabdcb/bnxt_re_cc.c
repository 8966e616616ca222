// SPDX-License-Identifier: GPL-2.0-only
/*
 * bnxt personality, RoCE side: the congestion control configfs of
 * Broadcom's bnxt_re RoCE driver as the out-of-tree NetXtreme-E driver
 * package registers it (the in-tree drivers/infiniband/hw/bnxt_re has no
 * configfs). Included by fabdcb.c; registered only with personality=bnxt.
 *
 * Sources (Broadcom bnxt_re 233.x, copyright Broadcom Inc., as carried in
 * github.com/lykeioner/driver bnxt_re/, commit bcef51d):
 *  - README.TXT "Congestion Control": mkdir /sys/kernel/config/bnxt_re/
 *    <ibdev>; ports/1/cc/ holds cnp_dscp cnp_prio apply cc_mode roce_prio
 *    ecn_enable roce_dscp ecn_marking (and tuning parameters); values are
 *    written as hex ("echo -n 0x1c > roce_dscp" for DSCP 28); "Any changes
 *    will not take effect unless" 0x1 is written to apply; "cat apply"
 *    shows the parameters from the hardware, the single files what was
 *    written; rmdir removes the group.
 *  - configfs.c: make_bnxt_re_dev (-ENODEV for a name that is no bnxt_re
 *    device), make_bnxt_re_ports / make_bnxt_re_cc (ports/<n>/cc default
 *    groups), the *_show ("%#x\n" of the driver's cc_param) and *_store
 *    (sscanf "%x"; range checks) functions, apply_store (0x1 =
 *    BNXT_RE_MODIFY_CC sends the fields written since the last apply,
 *    then clears the mask), apply_show (ecn status / marking / mode, then
 *    roce prio+dscp, and cnp prio+dscp only while ECN is enabled,
 *    __print_pri_dscp_values).
 *  - main.c bnxt_re_init_cc_param / bnxt_re_setup_cc: at load CNP DSCP 48,
 *    CNP priority 7, RoCE DSCP 26, RoCE priority 3 (bnxt_re.h
 *    BNXT_RE_DEFAULT_*), CC enabled with ECT(1) marking (tos_ecn 1).
 * Not reproduced: the tuning parameters (g, init_cr, rtt, ...); firmware
 * with service profiles (fw_service_prof_type_sup, where roce_prio and
 * cnp_prio writes are -EINVAL); the firmware's pri2cos map, from which the
 * real apply_show takes the priorities (fabdcb shows the applied ones);
 * bnxt_re_program_cnp_dcb_values clearing the firmware DSCP table on apply
 * (firmware-only, the kernel's APP table keeps its entries). The congestion
 * control mode at load is the firmware's (no source): fabdcb starts at 0.
 */
#include <linux/configfs.h>

#define BNXT_RE_DEFAULT_CNP_DSCP 48 /* bnxt_re.h */
#define BNXT_RE_DEFAULT_CNP_PRI 7
#define BNXT_RE_DEFAULT_ROCE_DSCP 26
#define BNXT_RE_DEFAULT_ROCE_PRI 3
#define BNXT_RE_MODIFY_CC 0x01 /* configfs.h */

enum { /* which fields a store marked for the next apply (cc_param.mask) */
	CC_ENABLE = 1 << 0, CC_TOS_ECN = 1 << 1, CC_MODE = 1 << 2, CC_TOS_DSCP = 1 << 3,
	CC_ALT_TOS_DSCP = 1 << 4, CC_ALT_VLAN_PCP = 1 << 5, CC_ROCE_PRI = 1 << 6,
};

struct fabdcb_cc_param {
	u8 enable, tos_ecn, cc_mode, tos_dscp, alt_tos_dscp, alt_vlan_pcp, roce_pri;
};

struct fabdcb_re_dev {
	struct fabdcb_cc_param cc; /* rdev->cc_param: what the files show */
	struct fabdcb_cc_param hw; /* firmware (bnxt_qplib_query_cc_param) */
	u32 mask;
};

static struct fabdcb_re_dev fabdcb_re[64];
static DEFINE_MUTEX(fabdcb_re_lock);

struct fabdcb_re_group {
	struct config_group dev, ports, port1, cc;
	int idx;
};

static struct fabdcb_re_dev *cc_dev(struct config_item *item)
{
	struct config_group *g = to_config_group(item);

	return &fabdcb_re[container_of(g, struct fabdcb_re_group, cc)->idx];
}

static unsigned int cc_val(const char *buf)
{
	unsigned int val = 0;

	if (sscanf(buf, "%x", &val) != 1) /* configfs.c: sscanf(buf, "%x\n", &val) */
		val = 0;
	return val;
}

#define CC_SHOW(name, field)                                                        \
	static ssize_t name##_show(struct config_item *item, char *buf)             \
	{                                                                           \
		struct fabdcb_re_dev *d = cc_dev(item);                             \
		ssize_t n;                                                          \
		mutex_lock(&fabdcb_re_lock);                                        \
		n = sprintf(buf, "%#x\n", d->cc.field);                             \
		mutex_unlock(&fabdcb_re_lock);                                      \
		return n;                                                           \
	}

CC_SHOW(ecn_enable, enable)
CC_SHOW(ecn_marking, tos_ecn)
CC_SHOW(cc_mode, cc_mode)
CC_SHOW(roce_dscp, tos_dscp)
CC_SHOW(cnp_dscp, alt_tos_dscp)
CC_SHOW(cnp_prio, alt_vlan_pcp)
CC_SHOW(roce_prio, roce_pri)

/* cc_store is the shape every *_store of configfs.c shares: parse the
 * hex value, refuse one above max with -EINVAL, keep val & keep in the
 * field and mark it for apply. */
static ssize_t cc_store(struct config_item *item, const char *buf, size_t count,
			unsigned int max, unsigned int keep, size_t off, u32 bit)
{
	struct fabdcb_re_dev *d = cc_dev(item);
	unsigned int val = cc_val(buf);

	if (val > max)
		return -EINVAL;
	mutex_lock(&fabdcb_re_lock);
	*((u8 *)&d->cc + off) = val & keep;
	d->mask |= bit;
	mutex_unlock(&fabdcb_re_lock);
	return strnlen(buf, count);
}

#define CC_STORE(name, max, keep, field, bit)                                                  \
	static ssize_t name##_store(struct config_item *item, const char *buf, size_t count)   \
	{                                                                                      \
		return cc_store(item, buf, count, max, keep,                                   \
				offsetof(struct fabdcb_cc_param, field), bit);                 \
	}

/* ecn_enable_store: any value, & 0xFF */
CC_STORE(ecn_enable, UINT_MAX, 0xFF, enable, CC_ENABLE)
/* ecn_marking_store: >= 3 -EINVAL (Not-ECT, ECT(1), ECT(0)) */
CC_STORE(ecn_marking, 0x02, 0x03, tos_ecn, CC_TOS_ECN)
/* cc_mode_store: > 1 -EINVAL */
CC_STORE(cc_mode, 0x01, 0xFF, cc_mode, CC_MODE)
/* roce_dscp_store, cnp_dscp_store: > 0x3F -EINVAL */
CC_STORE(roce_dscp, 0x3F, 0xFF, tos_dscp, CC_TOS_DSCP)
CC_STORE(cnp_dscp, 0x3F, 0xFF, alt_tos_dscp, CC_ALT_TOS_DSCP)
/* roce_prio_store, cnp_prio_store: the value is taken & 0x07 (the
 * driver's "> 7" check looks at the previous value, which never is). */
CC_STORE(roce_prio, UINT_MAX, 0x07, roce_pri, CC_ROCE_PRI)
CC_STORE(cnp_prio, UINT_MAX, 0x07, alt_vlan_pcp, CC_ALT_VLAN_PCP)

/* apply_store: 0x1 sends the marked fields to the firmware
 * (bnxt_qplib_modify_cc) and clears the mask; other values do nothing. */
static ssize_t apply_store(struct config_item *item, const char *buf, size_t count)
{
	struct fabdcb_re_dev *d = cc_dev(item);

	mutex_lock(&fabdcb_re_lock);
	if (cc_val(buf) == BNXT_RE_MODIFY_CC) {
		if (d->mask & CC_ENABLE)
			d->hw.enable = d->cc.enable;
		if (d->mask & CC_TOS_ECN)
			d->hw.tos_ecn = d->cc.tos_ecn;
		if (d->mask & CC_MODE)
			d->hw.cc_mode = d->cc.cc_mode;
		if (d->mask & CC_TOS_DSCP)
			d->hw.tos_dscp = d->cc.tos_dscp;
		if (d->mask & CC_ALT_TOS_DSCP)
			d->hw.alt_tos_dscp = d->cc.alt_tos_dscp;
		if (d->mask & CC_ALT_VLAN_PCP)
			d->hw.alt_vlan_pcp = d->cc.alt_vlan_pcp;
		if (d->mask & CC_ROCE_PRI)
			d->hw.roce_pri = d->cc.roce_pri;
	}
	d->mask = 0; /* "Reset the cc param" */
	mutex_unlock(&fabdcb_re_lock);
	return strnlen(buf, count);
}

/* apply_show: the firmware's parameters (mode names of a P5 chip,
 * mode_name_p5). */
static ssize_t apply_show(struct config_item *item, char *buf)
{
	static const char * const mode[] = { "DCQCN-D", "DCQCN-P" };
	struct fabdcb_re_dev *d = cc_dev(item);
	struct fabdcb_cc_param h;
	int n = 0;

	mutex_lock(&fabdcb_re_lock);
	h = d->hw;
	mutex_unlock(&fabdcb_re_lock);
	n += sprintf(buf + n, "ecn status (ecn_enable)\t\t\t\t\t: %s\n", h.enable ? "Enabled" : "Disabled");
	n += sprintf(buf + n, "ecn marking (ecn_marking)\t\t\t\t: %s\n",
		     !h.tos_ecn ? "Not-ECT" : h.tos_ecn == 0x01 ? "ECT(1)" : "ECT(0)");
	n += sprintf(buf + n, "congestion control mode (cc_mode)\t\t\t: %s\n", mode[h.cc_mode & 1]);
	n += sprintf(buf + n, "roce prio (roce_prio)\t\t\t\t\t: %d\n", h.roce_pri);
	n += sprintf(buf + n, "roce dscp (roce_dscp)\t\t\t\t\t: %d\n", h.tos_dscp);
	if (!h.enable)
		return n;
	n += sprintf(buf + n, "cnp prio (cnp_prio)\t\t\t\t\t: %d\n", h.alt_vlan_pcp);
	n += sprintf(buf + n, "cnp dscp (cnp_dscp)\t\t\t\t\t: %d\n", h.alt_tos_dscp);
	return n;
}

CONFIGFS_ATTR(, apply);
CONFIGFS_ATTR(, cnp_dscp);
CONFIGFS_ATTR(, cnp_prio);
CONFIGFS_ATTR(, cc_mode);
CONFIGFS_ATTR(, ecn_enable);
CONFIGFS_ATTR(, roce_dscp);
CONFIGFS_ATTR(, roce_prio);
CONFIGFS_ATTR(, ecn_marking);

static struct configfs_attribute *fabdcb_re_cc_attrs[] = { /* bnxt_re_cc_attrs, without tuning */
	&attr_apply, &attr_cnp_dscp, &attr_cnp_prio, &attr_cc_mode, &attr_ecn_enable,
	&attr_roce_dscp, &attr_roce_prio, &attr_ecn_marking, NULL,
};

static const struct config_item_type fabdcb_re_cc_type = {
	.ct_attrs = fabdcb_re_cc_attrs,
	.ct_owner = THIS_MODULE,
};

static const struct config_item_type fabdcb_re_plain_type = {
	.ct_owner = THIS_MODULE,
};

static void fabdcb_re_release(struct config_item *item)
{
	kfree(container_of(to_config_group(item), struct fabdcb_re_group, dev));
}

static struct configfs_item_operations fabdcb_re_dev_ops = {
	.release = fabdcb_re_release,
};

static const struct config_item_type fabdcb_re_dev_type = {
	.ct_item_ops = &fabdcb_re_dev_ops,
	.ct_owner = THIS_MODULE,
};

/* make_bnxt_re_dev: the group is named after a bnxt_re RDMA device;
 * fabdcb<i> plays the netdev of bnxt_re<i> (one port each). */
static struct config_group *fabdcb_re_make(struct config_group *group, const char *name)
{
	struct fabdcb_re_group *g;
	int idx;
	char tail;

	if (sscanf(name, "bnxt_re%d%c", &idx, &tail) != 1 || idx < 0 || idx >= count)
		return ERR_PTR(-ENODEV);
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return ERR_PTR(-ENOMEM);
	g->idx = idx;
	config_group_init_type_name(&g->dev, name, &fabdcb_re_dev_type);
	config_group_init_type_name(&g->ports, "ports", &fabdcb_re_plain_type);
	config_group_init_type_name(&g->port1, "1", &fabdcb_re_plain_type);
	config_group_init_type_name(&g->cc, "cc", &fabdcb_re_cc_type);
	configfs_add_default_group(&g->cc, &g->port1);
	configfs_add_default_group(&g->port1, &g->ports);
	configfs_add_default_group(&g->ports, &g->dev);
	return &g->dev;
}

static void fabdcb_re_drop(struct config_group *group, struct config_item *item)
{
	config_item_put(item);
}

static struct configfs_group_operations fabdcb_re_group_ops = {
	.make_group = fabdcb_re_make,
	.drop_item = fabdcb_re_drop,
};

static const struct config_item_type fabdcb_re_subsys_type = {
	.ct_group_ops = &fabdcb_re_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct configfs_subsystem fabdcb_re_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = "bnxt_re",
			.ci_type = &fabdcb_re_subsys_type,
		},
	},
};

static bool fabdcb_re_registered;

/* bnxt_re_configfs_init, and bnxt_re_init_cc_param's load-time values. */
static int fabdcb_re_init(void)
{
	int i, err;

	if (pers() != PERS_BNXT)
		return 0;
	for (i = 0; i < ARRAY_SIZE(fabdcb_re); i++) {
		struct fabdcb_cc_param def = {
			.enable = 1, .tos_ecn = 1, .tos_dscp = BNXT_RE_DEFAULT_ROCE_DSCP,
			.alt_tos_dscp = BNXT_RE_DEFAULT_CNP_DSCP, .alt_vlan_pcp = BNXT_RE_DEFAULT_CNP_PRI,
			.roce_pri = BNXT_RE_DEFAULT_ROCE_PRI,
		};
		fabdcb_re[i].cc = def;
		fabdcb_re[i].hw = def;
		fabdcb_re[i].mask = 0;
	}
	config_group_init(&fabdcb_re_subsys.su_group);
	mutex_init(&fabdcb_re_subsys.su_mutex);
	err = configfs_register_subsystem(&fabdcb_re_subsys);
	fabdcb_re_registered = !err;
	return err;
}

static void fabdcb_re_exit(void)
{
	if (fabdcb_re_registered)
		configfs_unregister_subsystem(&fabdcb_re_subsys);
	fabdcb_re_registered = false;
}
