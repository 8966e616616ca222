//go:build verbs

// The C half of fabctl's verbs engine: what cgo cannot do or should not
// do per message. ibv_query_port is a macro that cgo cannot call, the
// work-request unions are byte arrays to Go, and a cgo crossing costs
// 100-300 ns, so each hot loop runs a whole test in one call.
#ifndef FAB_SHIM_H
#define FAB_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define FAB_MAX_QPS 1024

enum { FAB_OP_WRITE = 0, FAB_OP_SEND = 1, FAB_OP_READ = 2 };

struct fab_port {
	int state;       /* enum ibv_port_state */
	int active_mtu;  /* enum ibv_mtu */
	int link_layer;  /* IBV_LINK_LAYER_* */
	int lid;
	int sm_lid;
	int gid_tbl_len;
};

struct fab_devinfo {
	int max_qp_wr;
	int max_cqe;
	int max_qp_rd_atom;
	int max_qp_init_rd_atom;
	int transport; /* enum ibv_transport_type */
	char name[64];
};

/* The address vector decided in Go (path.go Vector). */
struct fab_av {
	uint16_t dlid;
	uint8_t sl;
	uint8_t is_global;
	uint8_t dgid[16];
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t port;
};

/* One test run's parameters and outputs. */
struct fab_run {
	int op;
	uint32_t size;
	int tx_depth;
	int cq_mod;
	int post_list; /* WRs per ibv_post_send (perftest -l) */
	int use_inline;
	uint64_t iters;       /* per QP; 0: run for duration_ns */
	uint64_t duration_ns;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC_RAW; 0: none */
	uint64_t stall_ns;    /* fail after this long without a completion; 0: never */
	uint64_t progress_ns; /* time of the last completion (or the start) */
	int progressed;       /* a completion came since the last stall check: the loops
			       * set this flag and the check reads the clock, so no clock
			       * read per completion (expensive under emulation) */
	/* outputs */
	uint64_t messages;
	uint64_t t_start, t_end;
	uint64_t *ts; /* latency: post timestamps (malloc'd; fab_free_ts) */
	uint64_t ts_len;
};

/* One side: device context, PD, buffer, CQs, QPs (and rdma_cm ids). */
struct fab_side {
	struct ibv_context *ctx;
	int own_ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
	/* One slot per QP (up to nslots, then shared), as perftest does: in
	 * each slot a send region [0,half) and a receive region [half,2*half).
	 * Both sides use the same layout, so QP q writes from its slot into
	 * the peer's slot q. */
	size_t buflen, half, slot;
	int nslots;
	int numa_bound;      /* 1 bound, 0 not asked, -errno failed */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp[FAB_MAX_QPS];
	struct rdma_cm_id *cm[FAB_MAX_QPS];
	int nqp;
	int max_inline;
	int rx_depth;
	uint32_t size;
	uint64_t raddr;
	uint32_t rkey;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	volatile uint64_t target; /* server loops end here (UINT64_MAX: not yet known) */
	volatile int stop;
	/* the failing work completion, for the Go error message */
	int wc_status, wc_opcode, err_qp;
	uint32_t wc_vendor_err;
	char err[512];
};

uint64_t fab_now(void);

int fab_open_device(struct fab_side *s, const char *name);
int fab_query_port(struct fab_side *s, int port, struct fab_port *p);
int fab_query_gid(struct fab_side *s, int port, int index, uint8_t *gid16);
int fab_query_dev(struct fab_side *s, struct fab_devinfo *d);
int fab_alloc(struct fab_side *s, uint32_t size, int nqp, int numa_node);
int fab_create_cqs(struct fab_side *s, int scqe, int rcqe);
int fab_create_qp(struct fab_side *s, struct rdma_cm_id *id, int tx_depth, int rx_depth, int max_inline);
int fab_qp_init(struct fab_side *s, int i, int port);
int fab_qp_rtr(struct fab_side *s, int i, struct fab_av *av, int mtu, uint32_t dqpn, uint32_t rq_psn, int max_dest_rd_atomic);
int fab_qp_rts(struct fab_side *s, int i, uint32_t sq_psn, int timeout, int max_rd_atomic);
int fab_qp_mtu(struct fab_side *s, int i);
int fab_post_recvs(struct fab_side *s, int i, int n);
int fab_run_bw(struct fab_side *s, struct fab_run *r);
int fab_run_recv(struct fab_side *s, struct fab_run *r);
int fab_run_lat(struct fab_side *s, struct fab_run *r, int server);
void fab_set_target(struct fab_side *s, uint64_t n);
void fab_abort(struct fab_side *s);
void fab_free_ts(struct fab_run *r);
void fab_close(struct fab_side *s);

int fab_cm_listen(struct fab_side *s, const char *ip, int port, int tos, int *bound_port);
int fab_cm_wait(struct fab_side *s, int want, int timeout_ms, struct rdma_cm_id **id);
int fab_cm_accept(struct fab_side *s, struct rdma_cm_id *id, int resp_res, int init_depth);
int fab_cm_resolve(struct fab_side *s, struct rdma_cm_id **id, const char *src, const char *dst, int port, int tos, int ack_timeout, int timeout_ms);
void fab_id_route(struct rdma_cm_id *id, int *tclass, int *sl);
int fab_cm_connect(struct fab_side *s, struct rdma_cm_id *id, int resp_res, int init_depth, int timeout_ms);
const char *fab_id_device(struct rdma_cm_id *id);

#endif
