/*
 * opensmcheck: runs the real opensm's own parsers on rendered files,
 * without InfiniBand hardware.
 *
 * opensm parses partitions.conf and the QoS policy only in a heavy sweep,
 * which needs a bound IB port: on a machine without one it stops with
 * "No local ports detected!" before reading either file. The parsers are
 * exported from the opensm executable (osm_prtn_config_parse_file,
 * osm_qos_parse_policy_file), so this library, LD_PRELOADed into
 * /usr/sbin/opensm, calls them from a constructor before main() runs:
 * osm_opensm_init (which works without a port), the SA's subnet and log
 * pointers that creating IPoIB groups needs (osm_opensm_init_finish would
 * set them but fails in osm_sm_init without a port), then the parsers.
 * It prints what opensm understood and exits: 0 when both parsed, 1 when
 * a parser failed. opensm's own log goes to stdout at ERROR, INFO and
 * VERBOSE, so "PARSE ERROR", "PARSE WARN" and each member GUID
 * ("osm_prtn_add_port: port 0x... not found": the subnet is empty) show.
 *
 * Build: gcc -shared -fPIC -I/usr/include/infiniband -o check.so opensmcheck.c
 * (Debian: opensm, libopensm-dev, libibumad-dev). Run:
 * FABCTL_PARTITIONS=f FABCTL_QOS_POLICY=g LD_PRELOAD=./check.so opensm
 */
#include <opensm/osm_config.h> /* the build's options: struct layouts depend on them */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_partition.h>
#include <opensm/osm_qos_policy.h>
#include <opensm/osm_multicast.h>

extern int osm_prtn_config_parse_file(osm_log_t *, osm_subn_t *, const char *);

static void print_levels(osm_qos_policy_t *pol)
{
	cl_list_iterator_t it;
	for (it = cl_list_head(&pol->qos_levels); it != cl_list_end(&pol->qos_levels); it = cl_list_next(it)) {
		osm_qos_level_t *l = (osm_qos_level_t *)cl_list_obj(it);
		unsigned i;
		printf("FABCTL level name=%s", l->name);
		if (l->sl_set)
			printf(" sl=%u", l->sl);
		if (l->mtu_limit_set)
			printf(" mtu=%u", l->mtu_limit);
		if (l->rate_limit_set)
			printf(" rate=%u", l->rate_limit);
		for (i = 0; i < l->pkey_range_len; i++)
			printf(" pkey=0x%04x-0x%04x", (unsigned)l->pkey_range_arr[i][0], (unsigned)l->pkey_range_arr[i][1]);
		printf("\n");
	}
	printf("FABCTL rules=%u\n", (unsigned)cl_list_count(&pol->qos_match_rules));
}

__attribute__((constructor)) static void fabctl_check(void)
{
	const char *part = getenv("FABCTL_PARTITIONS"), *qos = getenv("FABCTL_QOS_POLICY");
	static osm_opensm_t osm;
	static osm_subn_opt_t opt;
	int rc = 0;

	if (!part && !qos)
		return;
	osm_subn_set_default_opt(&opt);
	opt.log_file = "stdout";
	opt.log_flags = OSM_LOG_ERROR | OSM_LOG_INFO | OSM_LOG_VERBOSE;
	opt.force_log_flush = TRUE;
	opt.qos = TRUE; /* partition SLs survive only with QoS on */
	if (qos)
		opt.qos_policy_file = (char *)qos;
	if (osm_opensm_init(&osm, &opt) != IB_SUCCESS) {
		printf("FABCTL osm_opensm_init failed\n");
		fflush(stdout);
		_exit(3);
	}
	osm.sa.p_subn = &osm.subn;
	osm.sa.p_log = &osm.log;
	osm.sa.sm = &osm.sm;
	osm.sm.p_subn = &osm.subn;
	osm.sm.p_log = &osm.log;

	if (part) {
		cl_map_item_t *i;
		if (osm_prtn_config_parse_file(&osm.log, &osm.subn, part) < 0) {
			printf("FABCTL cannot open %s\n", part);
			rc = 1;
		}
		for (i = cl_qmap_head(&osm.subn.prtn_pkey_tbl); i != cl_qmap_end(&osm.subn.prtn_pkey_tbl); i = cl_qmap_next(i)) {
			osm_prtn_t *p = (osm_prtn_t *)i;
			int g;
			printf("FABCTL partition name=%s pkey=0x%04x sl=%u", p->name, cl_ntoh16(p->pkey), p->sl);
			for (g = 0; g < p->nmgrps; g++)
				printf(" mgroup=mtu:%u,rate:%u", p->mgrps[g]->mcmember_rec.mtu & 0x3f,
				       p->mgrps[g]->mcmember_rec.rate & 0x3f);
			printf("\n");
		}
	}
	if (qos) {
		/* after the partitions: the policy's P_Keys are checked against them */
		if (osm_qos_parse_policy_file(&osm.subn) != 0) {
			printf("FABCTL qos policy parse failed\n");
			rc = 1;
		} else if (osm.subn.p_qos_policy) {
			print_levels(osm.subn.p_qos_policy);
		}
	}
	fflush(stdout);
	_exit(rc);
}
