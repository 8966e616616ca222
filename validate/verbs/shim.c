//go:build verbs

#define _GNU_SOURCE
#include "shim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAB_POLL_BATCH 16
#define FAB_QP_SHIFT 40
#define FAB_CNT_MASK ((1ULL << FAB_QP_SHIFT) - 1)

#define ERRF(s, ...) snprintf((s)->err, sizeof((s)->err), __VA_ARGS__)

uint64_t fab_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int fab_open_device(struct fab_side *s, const char *name)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		ERRF(s, "ibv_get_device_list: %s", strerror(errno));
		return -1;
	}
	struct ibv_device *dev = NULL;
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			dev = list[i];
	}
	if (!dev) {
		ibv_free_device_list(list);
		ERRF(s, "libibverbs has no device %s (%d devices; is its provider library installed?)", name, n);
		return -1;
	}
	s->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!s->ctx) {
		ERRF(s, "ibv_open_device %s: %s", name, strerror(errno));
		return -1;
	}
	s->own_ctx = 1;
	return 0;
}

int fab_query_port(struct fab_side *s, int port, struct fab_port *p)
{
	struct ibv_port_attr a;
	memset(&a, 0, sizeof(a));
	int rc = ibv_query_port(s->ctx, (uint8_t)port, &a);
	if (rc) {
		ERRF(s, "ibv_query_port %d: %s", port, strerror(rc > 0 ? rc : errno));
		return -1;
	}
	p->state = a.state;
	p->active_mtu = a.active_mtu;
	p->link_layer = a.link_layer;
	p->lid = a.lid;
	p->sm_lid = a.sm_lid;
	p->gid_tbl_len = a.gid_tbl_len;
	return 0;
}

int fab_query_gid(struct fab_side *s, int port, int index, uint8_t *gid16)
{
	union ibv_gid g;
	if (ibv_query_gid(s->ctx, (uint8_t)port, index, &g)) {
		ERRF(s, "ibv_query_gid port %d index %d: %s", port, index, strerror(errno));
		return -1;
	}
	memcpy(gid16, g.raw, 16);
	return 0;
}

int fab_query_dev(struct fab_side *s, struct fab_devinfo *d)
{
	struct ibv_device_attr a;
	if (ibv_query_device(s->ctx, &a)) {
		ERRF(s, "ibv_query_device: %s", strerror(errno));
		return -1;
	}
	d->max_qp_wr = a.max_qp_wr;
	d->max_cqe = a.max_cqe;
	d->max_qp_rd_atom = a.max_qp_rd_atom;
	d->max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	d->transport = s->ctx->device->transport_type;
	snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(s->ctx->device));
	return 0;
}

/* FAB_MAX_BUF bounds the per-QP slots: past it QPs share slots. */
#define FAB_MAX_BUF (256UL << 20)

/* fab_alloc allocates the PD and the registered buffer: a slot per QP of
 * two regions of the message size (send, receive), page aligned, bound to
 * numa_node when it is >= 0 (MPOL_PREFERRED through the raw syscall: no
 * libnuma needed), then touched so the pages exist before registration. */
int fab_alloc(struct fab_side *s, uint32_t size, int nqp, int numa_node)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t region = ((size_t)(size < 64 ? 64 : size) + page - 1) / page * page;
	s->size = size;
	s->half = region;
	s->slot = 2 * region;
	s->nslots = nqp < 1 ? 1 : nqp;
	while (s->nslots > 1 && s->slot * (size_t)s->nslots > FAB_MAX_BUF)
		s->nslots--;
	s->buflen = s->slot * (size_t)s->nslots;
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd) {
		ERRF(s, "ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	void *p = mmap(NULL, s->buflen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		ERRF(s, "mmap %zu bytes: %s", s->buflen, strerror(errno));
		return -1;
	}
	s->buf = p;
	if (numa_node >= 0 && numa_node < 1024) {
		unsigned long mask[16];
		memset(mask, 0, sizeof(mask));
		mask[numa_node / (8 * sizeof(unsigned long))] |= 1UL << (numa_node % (8 * sizeof(unsigned long)));
		/* MPOL_PREFERRED = 1 */
		if (syscall(SYS_mbind, p, s->buflen, 1, mask, (unsigned long)numa_node + 2, 0) == 0)
			s->numa_bound = 1;
		else
			s->numa_bound = -errno;
	}
	memset(s->buf, 0, s->buflen);
	s->mr = ibv_reg_mr(s->pd, s->buf, s->buflen,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->mr) {
		ERRF(s, "ibv_reg_mr %zu bytes: %s (check ulimit -l, the locked-memory limit)", s->buflen, strerror(errno));
		return -1;
	}
	return 0;
}

int fab_create_cqs(struct fab_side *s, int scqe, int rcqe)
{
	s->scq = ibv_create_cq(s->ctx, scqe, NULL, NULL, 0);
	if (!s->scq) {
		ERRF(s, "ibv_create_cq (%d entries): %s", scqe, strerror(errno));
		return -1;
	}
	s->rcq = ibv_create_cq(s->ctx, rcqe, NULL, NULL, 0);
	if (!s->rcq) {
		ERRF(s, "ibv_create_cq (%d entries): %s", rcqe, strerror(errno));
		return -1;
	}
	return 0;
}

/* fab_create_qp creates one RC QP (through rdma_cm when id is set). An
 * inline size the device refuses is retried without inline data. */
int fab_create_qp(struct fab_side *s, struct rdma_cm_id *id, int tx_depth, int rx_depth, int max_inline)
{
	if (s->nqp >= FAB_MAX_QPS) {
		ERRF(s, "too many QPs");
		return -1;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		struct ibv_qp_init_attr a;
		memset(&a, 0, sizeof(a));
		a.send_cq = s->scq;
		a.recv_cq = s->rcq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = tx_depth;
		a.cap.max_recv_wr = rx_depth;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		a.cap.max_inline_data = attempt == 0 ? max_inline : 0;
		struct ibv_qp *qp = NULL;
		if (id) {
			if (rdma_create_qp(id, s->pd, &a) == 0)
				qp = id->qp;
		} else {
			qp = ibv_create_qp(s->pd, &a);
		}
		if (qp) {
			s->qp[s->nqp] = qp;
			s->cm[s->nqp] = id;
			s->nqp++;
			s->max_inline = a.cap.max_inline_data;
			s->rx_depth = rx_depth;
			return 0;
		}
		if (max_inline == 0 || errno != EINVAL)
			break;
	}
	ERRF(s, "create RC QP (send %d, recv %d WRs): %s", tx_depth, rx_depth, strerror(errno));
	return -1;
}

int fab_qp_init(struct fab_side *s, int i, int port)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	int rc = ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc) {
		ERRF(s, "QP %d to INIT: %s", i, strerror(rc));
		return rc;
	}
	return 0;
}

int fab_qp_rtr(struct fab_side *s, int i, struct fab_av *av, int mtu, uint32_t dqpn, uint32_t rq_psn, int max_dest_rd_atomic)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = max_dest_rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = av->dlid;
	a.ah_attr.sl = av->sl;
	a.ah_attr.src_path_bits = 0;
	a.ah_attr.port_num = av->port;
	a.ah_attr.is_global = av->is_global;
	if (av->is_global) {
		memcpy(a.ah_attr.grh.dgid.raw, av->dgid, 16);
		a.ah_attr.grh.sgid_index = av->sgid_index;
		a.ah_attr.grh.hop_limit = av->hop_limit;
		a.ah_attr.grh.traffic_class = av->tclass;
		a.ah_attr.grh.flow_label = av->flow_label;
	}
	int rc = ibv_modify_qp(s->qp[i], &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc) {
		ERRF(s, "QP %d to RTR: %s", i, strerror(rc));
		return rc;
	}
	return 0;
}

int fab_qp_rts(struct fab_side *s, int i, uint32_t sq_psn, int timeout, int max_rd_atomic)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = max_rd_atomic;
	int rc = ibv_modify_qp(s->qp[i], &a,
			       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				       IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc) {
		ERRF(s, "QP %d to RTS: %s", i, strerror(rc));
		return rc;
	}
	return 0;
}

/* fab_qp_mtu returns the QP's path MTU in bytes (0 when unknown). */
int fab_qp_mtu(struct fab_side *s, int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	if (ibv_query_qp(s->qp[i], &a, IBV_QP_PATH_MTU, &ia))
		return 0;
	return 128 << a.path_mtu;
}

static size_t slot_of(struct fab_side *s, int q) { return (size_t)(q % s->nslots) * s->slot; }

static void recv_wr(struct fab_side *s, int i, struct ibv_recv_wr *wr, struct ibv_sge *sge)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)(s->buf + slot_of(s, i) + s->half);
	sge->length = s->size;
	sge->lkey = s->mr->lkey;
	wr->wr_id = (uint64_t)i;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

int fab_post_recvs(struct fab_side *s, int i, int n)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr, *bad;
	recv_wr(s, i, &wr, &sge);
	for (int k = 0; k < n; k++) {
		int rc = ibv_post_recv(s->qp[i], &wr, &bad);
		if (rc) {
			ERRF(s, "ibv_post_recv on QP %d: %s", i, strerror(rc));
			return -1;
		}
	}
	return 0;
}

static int wc_failed(struct fab_side *s, struct ibv_wc *wc, int qp, const char *what)
{
	s->wc_status = wc->status;
	s->wc_opcode = wc->opcode;
	s->wc_vendor_err = wc->vendor_err;
	s->err_qp = qp;
	ERRF(s, "%s completion with error on QP %d: %s (status %d, vendor error %#x)", what, qp,
	     ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	return -1;
}

/* FAB_STALL_STATUS: the status a stall is reported as (retry exceeded). */
#define FAB_STALL_STATUS IBV_WC_RETRY_EXC_ERR

static int aborted(struct fab_side *s, struct fab_run *r, uint64_t now)
{
	if (s->stop) {
		ERRF(s, "aborted");
		return 1;
	}
	if (r->progressed) {
		r->progress_ns = now;
		r->progressed = 0;
	}
	if (r->stall_ns && r->progress_ns && now > r->progress_ns + r->stall_ns) {
		/* A transport retry count of 7 means "retry forever" to some
		 * providers (rxe): without this the test would hang. */
		s->wc_status = FAB_STALL_STATUS;
		ERRF(s, "no completion for %llu s: the transport keeps retrying (the retry count does not end it on this device)",
		     (unsigned long long)((now - r->progress_ns) / 1000000000ULL));
		return 1;
	}
	if (r->deadline_ns && now > r->deadline_ns) {
		ERRF(s, "the test did not finish in time (stuck: no completions)");
		return 1;
	}
	return 0;
}

static void send_wr(struct fab_side *s, struct fab_run *r, int q, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	char *buf = s->buf + slot_of(s, q);
	uint64_t raddr = s->raddr + slot_of(s, q);
	memset(wr, 0, sizeof(*wr));
	memset(sge, 0, sizeof(*sge));
	sge->length = r->size;
	sge->lkey = s->mr->lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	switch (r->op) {
	case FAB_OP_WRITE:
		/* my send region into the peer's receive region */
		sge->addr = (uintptr_t)buf;
		wr->opcode = IBV_WR_RDMA_WRITE;
		wr->wr.rdma.remote_addr = raddr + s->half;
		wr->wr.rdma.rkey = s->rkey;
		break;
	case FAB_OP_READ:
		/* the peer's send region into my receive region */
		sge->addr = (uintptr_t)(buf + s->half);
		wr->opcode = IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = s->rkey;
		break;
	default:
		sge->addr = (uintptr_t)buf;
		wr->opcode = IBV_WR_SEND;
	}
	if (r->use_inline && r->op != FAB_OP_READ && (int)r->size <= s->max_inline)
		wr->send_flags |= IBV_SEND_INLINE;
}

/* fab_run_bw is the bandwidth client: every QP keeps up to tx_depth WRs
 * outstanding, every cq_mod-th is signaled (its completion retires the
 * unsignaled ones before it: wr_id carries the QP and the post count),
 * until iters per QP are done or the duration is over. In duration mode a
 * QP stops at a signaled WR so every message posted is also counted. */
int fab_run_bw(struct fab_side *s, struct fab_run *r)
{
	int n = s->nqp, L = r->post_list < 1 ? 1 : r->post_list;
	uint64_t *posted = calloc(n, sizeof(uint64_t)), *done = calloc(n, sizeof(uint64_t));
	struct ibv_send_wr *wrs = calloc((size_t)n * L, sizeof(*wrs));
	struct ibv_sge *sges = calloc((size_t)n * L, sizeof(*sges));
	int rc = -1;
	if (!posted || !done || !wrs || !sges) {
		ERRF(s, "out of memory");
		goto out;
	}
	for (int q = 0; q < n; q++)
		for (int j = 0; j < L; j++)
			send_wr(s, r, q, &wrs[q * L + j], &sges[q * L + j]);
	uint64_t end = 0;
	int finishing = 0;
	r->t_start = 0;
	r->t_end = 0;
	struct ibv_wc wc[FAB_POLL_BATCH];
	/* The clock is read only where it matters (the first post, a batch
	 * of completions in duration mode, every 1024 empty polls for the
	 * deadline): under emulation a clock read can cost more than a post. */
	for (uint64_t idle = 0;; idle++) {
		if ((idle & 1023) == 0 && aborted(s, r, fab_now()))
			goto out;
		int all_done = 1;
		for (int q = 0; q < n; q++) {
			for (;;) {
				uint64_t p = posted[q];
				if (p - done[q] >= (uint64_t)r->tx_depth)
					break;
				/* how many to post now: room in the send queue, what is
				 * left (iterations), or up to the next signaled WR when
				 * a duration is over */
				uint64_t k = (uint64_t)r->tx_depth - (p - done[q]);
				if (r->iters)
					k = k < r->iters - p ? k : r->iters - p;
				else if (finishing) {
					uint64_t to_signaled = (r->cq_mod - p % r->cq_mod) % r->cq_mod;
					k = k < to_signaled ? k : to_signaled;
				}
				if (k > (uint64_t)L)
					k = L;
				if (k == 0)
					break;
				struct ibv_send_wr *first = &wrs[q * L], *bad;
				for (uint64_t j = 0; j < k; j++) {
					struct ibv_send_wr *wr = &first[j];
					uint64_t c = p + j + 1;
					if (c % r->cq_mod == 0 || (r->iters && c == r->iters))
						wr->send_flags |= IBV_SEND_SIGNALED;
					else
						wr->send_flags &= ~IBV_SEND_SIGNALED;
					wr->wr_id = ((uint64_t)q << FAB_QP_SHIFT) | c;
					wr->next = j + 1 < k ? &first[j + 1] : NULL;
				}
				if (!r->t_start) {
					r->t_start = fab_now();
					r->progress_ns = r->t_start;
					end = r->t_start + r->duration_ns;
				}
				int prc = ibv_post_send(s->qp[q], first, &bad);
				if (prc) {
					ERRF(s, "ibv_post_send on QP %d after %llu messages: %s", q,
					     (unsigned long long)p, strerror(prc));
					goto out;
				}
				posted[q] = p + k;
			}
			if (done[q] < posted[q] || (r->iters ? posted[q] < r->iters : !finishing))
				all_done = 0;
		}
		if (all_done)
			break;
		int ne = ibv_poll_cq(s->scq, FAB_POLL_BATCH, wc);
		if (ne < 0) {
			ERRF(s, "ibv_poll_cq failed (%d)", ne);
			goto out;
		}
		if (ne > 0) {
			r->progressed = 1;
			for (int k = 0; k < ne; k++) {
				int q = (int)(wc[k].wr_id >> FAB_QP_SHIFT);
				if (wc[k].status != IBV_WC_SUCCESS) {
					wc_failed(s, &wc[k], q, r->op == FAB_OP_READ ? "RDMA READ" : r->op == FAB_OP_SEND ? "SEND" : "RDMA WRITE");
					goto out;
				}
				if (q >= 0 && q < n)
					done[q] = wc[k].wr_id & FAB_CNT_MASK;
			}
			if (!r->iters && !finishing && fab_now() >= end)
				finishing = 1;
		} else if (!r->iters && !finishing && (idle & 1023) == 1023 && fab_now() >= end) {
			finishing = 1;
		}
	}
	/* The loop ends on the poll that returned the last completion. */
	r->t_end = fab_now();
	r->messages = 0;
	for (int q = 0; q < n; q++)
		r->messages += done[q];
	rc = 0;
out:
	free(posted);
	free(done);
	free(wrs);
	free(sges);
	return rc;
}

/* fab_run_recv is the SEND bandwidth server: count receives, repost each
 * one on its QP, until the client's message count (target) is reached. */
int fab_run_recv(struct fab_side *s, struct fab_run *r)
{
	struct ibv_wc wc[FAB_POLL_BATCH];
	struct ibv_recv_wr *rwr = calloc(s->nqp, sizeof(*rwr));
	struct ibv_sge *sges = calloc(s->nqp, sizeof(*sges));
	if (!rwr || !sges) {
		free(rwr);
		free(sges);
		ERRF(s, "out of memory");
		return -1;
	}
	for (int q = 0; q < s->nqp; q++)
		recv_wr(s, q, &rwr[q], &sges[q]);
	uint64_t got = 0;
	uint64_t want = r->iters ? r->iters * (uint64_t)s->nqp : UINT64_MAX;
	r->t_start = 0;
	int rc = 0;
	for (uint64_t spin = 0;; spin++) {
		uint64_t t = s->target;
		if (t != UINT64_MAX)
			want = t;
		if (got >= want)
			break;
		int ne = ibv_poll_cq(s->rcq, FAB_POLL_BATCH, wc);
		if (ne < 0) {
			ERRF(s, "ibv_poll_cq failed (%d)", ne);
			rc = -1;
			break;
		}
		if (ne == 0) {
			if ((spin & 1023) == 0 && aborted(s, r, fab_now())) {
				rc = -1;
				break;
			}
			continue;
		}
		if (!r->t_start)
			r->t_start = fab_now();
		for (int k = 0; k < ne; k++) {
			int q = (int)wc[k].wr_id;
			if (wc[k].status != IBV_WC_SUCCESS) {
				wc_failed(s, &wc[k], q, "RECV");
				rc = -1;
				goto out;
			}
			got++;
			struct ibv_recv_wr *bad;
			int prc = ibv_post_recv(s->qp[q], &rwr[q], &bad);
			if (prc) {
				ERRF(s, "ibv_post_recv on QP %d: %s", q, strerror(prc));
				rc = -1;
				goto out;
			}
		}
	}
out:
	r->t_end = fab_now();
	r->messages = got;
	free(rwr);
	free(sges);
	return rc;
}

/* wait_one polls cq for one completion. A server loop passes its
 * iteration (>= 0): once the client's count is known and reached, the wait
 * ends with 1 (no more messages come). */
static int wait_one(struct fab_side *s, struct fab_run *r, struct ibv_cq *cq, struct ibv_wc *wc, const char *what, int64_t server_i)
{
	/* spin counts from 1: the first empty poll of a wait reads no clock
	 * (a ping-pong waits twice per message; perftest reads the clock once
	 * per message, and so does the client here, in ts_push) */
	for (uint64_t spin = 1;; spin++) {
		int ne = ibv_poll_cq(cq, 1, wc);
		if (ne > 0) {
			if (wc->status != IBV_WC_SUCCESS)
				return wc_failed(s, wc, 0, what);
			r->progressed = 1;
			return 0;
		}
		if (ne < 0) {
			ERRF(s, "ibv_poll_cq failed (%d)", ne);
			return -1;
		}
		if ((spin & 1023) == 0) {
			uint64_t t = s->target;
			if (server_i >= 0 && t != UINT64_MAX && (uint64_t)server_i >= t)
				return 1;
			if (aborted(s, r, fab_now()))
				return -1;
		}
	}
}

static int ts_push(struct fab_side *s, struct fab_run *r, uint64_t *cap, uint64_t v)
{
	if (r->ts_len == *cap) {
		uint64_t nc = *cap ? *cap * 2 : 4096;
		uint64_t *n = realloc(r->ts, nc * sizeof(uint64_t));
		if (!n) {
			ERRF(s, "out of memory for latency samples");
			return -1;
		}
		r->ts = n;
		*cap = nc;
	}
	r->ts[r->ts_len++] = v;
	return 0;
}

/* fab_run_lat is the ping-pong, perftest's run_iter_lat_send /
 * run_iter_lat_write / run_iter_lat: the client stamps each post; the
 * server answers each message until the client's count is reached.
 * SEND waits on the receive CQ, WRITE polls the last byte of the receive
 * region for the iteration's counter, READ needs no answer. */
int fab_run_lat(struct fab_side *s, struct fab_run *r, int server)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge rsge;
	struct ibv_wc wc;
	send_wr(s, r, 0, &wr, &sge);
	wr.send_flags |= IBV_SEND_SIGNALED;
	recv_wr(s, 0, &rwr, &rsge);
	volatile char *post_buf = s->buf + r->size - 1;
	volatile char *poll_buf = s->buf + s->half + r->size - 1;
	uint64_t cap = r->iters ? r->iters + 1 : 0, end = 0;
	if (cap) {
		r->ts = malloc(cap * sizeof(uint64_t));
		if (!r->ts) {
			ERRF(s, "out of memory for %llu latency samples", (unsigned long long)cap);
			return -1;
		}
	}
	r->ts_len = 0;
	uint64_t i = 0;
	int rc = 0;
	r->t_start = fab_now();
	r->progress_ns = r->t_start;
	end = r->t_start + r->duration_ns;
	for (;; i++) {
		if (server) {
			uint64_t t = s->target;
			uint64_t limit = r->iters ? r->iters : t;
			if (i >= limit)
				break;
			/* wait for message i+1 */
			if (r->op == FAB_OP_SEND) {
				int w = wait_one(s, r, s->rcq, &wc, "RECV", (int64_t)i);
				if (w < 0)
					rc = -1;
				if (w != 0)
					goto out;
				if ((rc = ibv_post_recv(s->qp[0], &rwr, &rbad))) {
					ERRF(s, "ibv_post_recv: %s", strerror(rc));
					rc = -1;
					goto out;
				}
			} else {
				for (uint64_t spin = 1; *poll_buf != (char)(i + 1); spin++) {
					if ((spin & 1023) == 0) {
						if (s->target != UINT64_MAX && i >= s->target)
							goto out;
						if (aborted(s, r, fab_now())) {
							rc = -1;
							goto out;
						}
					}
				}
			}
			*post_buf = (char)(i + 1);
			if ((rc = ibv_post_send(s->qp[0], &wr, &bad))) {
				ERRF(s, "ibv_post_send: %s", strerror(rc));
				rc = -1;
				goto out;
			}
			if (wait_one(s, r, s->scq, &wc, r->op == FAB_OP_SEND ? "SEND" : "RDMA WRITE", -1)) {
				rc = -1;
				goto out;
			}
			continue;
		}
		/* client */
		uint64_t now = fab_now();
		if (r->iters ? i >= r->iters : now >= end)
			break;
		if (aborted(s, r, now)) {
			rc = -1;
			goto out;
		}
		if (ts_push(s, r, &cap, now)) {
			rc = -1;
			goto out;
		}
		*post_buf = (char)(i + 1);
		if ((rc = ibv_post_send(s->qp[0], &wr, &bad))) {
			ERRF(s, "ibv_post_send after %llu iterations: %s", (unsigned long long)i, strerror(rc));
			rc = -1;
			goto out;
		}
		const char *what = r->op == FAB_OP_READ ? "RDMA READ" : r->op == FAB_OP_SEND ? "SEND" : "RDMA WRITE";
		if (wait_one(s, r, s->scq, &wc, what, -1)) {
			rc = -1;
			goto out;
		}
		if (r->op == FAB_OP_SEND) {
			if (wait_one(s, r, s->rcq, &wc, "RECV", -1)) {
				rc = -1;
				goto out;
			}
			if ((rc = ibv_post_recv(s->qp[0], &rwr, &rbad))) {
				ERRF(s, "ibv_post_recv: %s", strerror(rc));
				rc = -1;
				goto out;
			}
		} else if (r->op == FAB_OP_WRITE) {
			for (uint64_t spin = 1; *poll_buf != (char)(i + 1); spin++) {
				if ((spin & 1023) == 0 && aborted(s, r, fab_now())) {
					rc = -1;
					goto out;
				}
			}
		}
	}
	/* the time of the last answer closes the last sample */
	if (!server && r->ts_len > 0 && ts_push(s, r, &cap, fab_now()))
		rc = -1;
out:
	r->t_end = fab_now();
	r->messages = i;
	return rc;
}

void fab_set_target(struct fab_side *s, uint64_t n) { __atomic_store_n(&s->target, n, __ATOMIC_SEQ_CST); }
void fab_abort(struct fab_side *s) { __atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST); }

void fab_free_ts(struct fab_run *r)
{
	free(r->ts);
	r->ts = NULL;
	r->ts_len = 0;
}

void fab_close(struct fab_side *s)
{
	for (int i = 0; i < s->nqp; i++) {
		if (s->cm[i]) {
			rdma_disconnect(s->cm[i]);
			rdma_destroy_qp(s->cm[i]);
			rdma_destroy_id(s->cm[i]);
		} else if (s->qp[i]) {
			ibv_destroy_qp(s->qp[i]);
		}
		s->qp[i] = NULL;
		s->cm[i] = NULL;
	}
	s->nqp = 0;
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->rcq)
		ibv_destroy_cq(s->rcq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->buf)
		munmap(s->buf, s->buflen);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->own_ctx && s->ctx)
		ibv_close_device(s->ctx);
	if (s->listen_id)
		rdma_destroy_id(s->listen_id);
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
	s->scq = s->rcq = NULL;
	s->mr = NULL;
	s->buf = NULL;
	s->pd = NULL;
	s->ctx = NULL;
	s->listen_id = NULL;
	s->ch = NULL;
}

/* ---- rdma_cm ---- */

static int sockaddr_of(const char *ip, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return 0;
	}
	return -1;
}

static int ensure_channel(struct fab_side *s)
{
	if (s->ch)
		return 0;
	s->ch = rdma_create_event_channel();
	if (!s->ch) {
		ERRF(s, "rdma_create_event_channel: %s (is the rdma_ucm module loaded?)", strerror(errno));
		return -1;
	}
	return 0;
}

int fab_cm_listen(struct fab_side *s, const char *ip, int port, int tos, int *bound_port)
{
	struct sockaddr_storage ss;
	if (sockaddr_of(ip, port, &ss)) {
		ERRF(s, "invalid address %s", ip);
		return -1;
	}
	if (ensure_channel(s))
		return -1;
	if (rdma_create_id(s->ch, &s->listen_id, NULL, RDMA_PS_TCP)) {
		ERRF(s, "rdma_create_id: %s", strerror(errno));
		return -1;
	}
	if (tos >= 0) {
		uint8_t t = (uint8_t)tos;
		rdma_set_option(s->listen_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &t, sizeof(t));
	}
	if (rdma_bind_addr(s->listen_id, (struct sockaddr *)&ss)) {
		ERRF(s, "rdma_bind_addr %s: %s (is the address on an RDMA netdev of this host?)", ip, strerror(errno));
		return -1;
	}
	if (rdma_listen(s->listen_id, FAB_MAX_QPS)) {
		ERRF(s, "rdma_listen %s: %s", ip, strerror(errno));
		return -1;
	}
	*bound_port = ntohs(rdma_get_src_port(s->listen_id));
	return 0;
}

static const char *ev_name(int e) { return rdma_event_str((enum rdma_cm_event_type)e); }

/* fab_cm_wait waits for one rdma_cm event of type want (timeout in ms);
 * any other event is an error that names it. */
int fab_cm_wait(struct fab_side *s, int want, int timeout_ms, struct rdma_cm_id **id)
{
	struct pollfd p = {.fd = s->ch->fd, .events = POLLIN};
	int prc = poll(&p, 1, timeout_ms);
	if (prc == 0) {
		ERRF(s, "no %s within %d ms", ev_name(want), timeout_ms);
		return -ETIMEDOUT;
	}
	if (prc < 0) {
		ERRF(s, "poll on the rdma_cm channel: %s", strerror(errno));
		return -1;
	}
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(s->ch, &ev)) {
		ERRF(s, "rdma_get_cm_event: %s", strerror(errno));
		return -1;
	}
	int type = ev->event, status = ev->status;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	if (type != want) {
		ERRF(s, "expected %s, got %s (status %d%s%s)", ev_name(want), ev_name(type), status,
		     status < 0 ? ": " : "", status < 0 ? strerror(-status) : "");
		return -type - 100;
	}
	return 0;
}

int fab_cm_accept(struct fab_side *s, struct rdma_cm_id *id, int resp_res, int init_depth)
{
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.responder_resources = resp_res;
	p.initiator_depth = init_depth;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (rdma_accept(id, &p)) {
		ERRF(s, "rdma_accept: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* fab_cm_resolve resolves the address and route of a new rdma_cm id.
 * tos < 0 leaves the ToS to rdma_cm: drivers/infiniband/core/cma.c
 * cma_resolve_iboe_route takes id_priv->tos when the application set one
 * (RDMA_OPTION_ID_TOS), else the device port's configfs default_roce_tos,
 * and makes the path's SL iboe_tos_to_sl(ndev, tos): the VLAN netdev's
 * egress map (or the parent's prio->tc map) of rt_tos2priority(tos).
 * ack_timeout > 0 sets the QP's local ACK timeout exponent
 * (RDMA_OPTION_ID_ACK_TIMEOUT, cma.c rdma_set_ack_timeout). */
int fab_cm_resolve(struct fab_side *s, struct rdma_cm_id **idp, const char *src, const char *dst, int port, int tos, int ack_timeout, int timeout_ms)
{
	struct sockaddr_storage sa, da;
	if (sockaddr_of(dst, port, &da)) {
		ERRF(s, "invalid address %s", dst);
		return -1;
	}
	int has_src = src && *src;
	if (has_src && sockaddr_of(src, 0, &sa)) {
		ERRF(s, "invalid address %s", src);
		return -1;
	}
	if (ensure_channel(s))
		return -1;
	struct rdma_cm_id *id;
	if (rdma_create_id(s->ch, &id, NULL, RDMA_PS_TCP)) {
		ERRF(s, "rdma_create_id: %s", strerror(errno));
		return -1;
	}
	*idp = id;
	if (tos >= 0) {
		uint8_t t = (uint8_t)tos;
		if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &t, sizeof(t))) {
			ERRF(s, "rdma_set_option TOS %d: %s", tos, strerror(errno));
			return -1;
		}
	}
	if (ack_timeout > 0) {
		uint8_t t = (uint8_t)ack_timeout;
		if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t))) {
			ERRF(s, "rdma_set_option ACK_TIMEOUT %d: %s", ack_timeout, strerror(errno));
			return -1;
		}
	}
	if (rdma_resolve_addr(id, has_src ? (struct sockaddr *)&sa : NULL, (struct sockaddr *)&da, timeout_ms)) {
		ERRF(s, "rdma_resolve_addr %s -> %s: %s", has_src ? src : "any", dst, strerror(errno));
		return -1;
	}
	int rc = fab_cm_wait(s, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms + 1000, NULL);
	if (rc)
		return rc;
	if (rdma_resolve_route(id, timeout_ms)) {
		ERRF(s, "rdma_resolve_route to %s: %s", dst, strerror(errno));
		return -1;
	}
	return fab_cm_wait(s, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms + 1000, NULL);
}

int fab_cm_connect(struct fab_side *s, struct rdma_cm_id *id, int resp_res, int init_depth, int timeout_ms)
{
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.responder_resources = resp_res;
	p.initiator_depth = init_depth;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (rdma_connect(id, &p)) {
		ERRF(s, "rdma_connect: %s", strerror(errno));
		return -1;
	}
	return fab_cm_wait(s, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, NULL);
}

/* fab_id_route reports the traffic class and SL of the path rdma_cm
 * resolved for id (librdmacm fills id->route.path_rec from the kernel's
 * route query, ucma_copy_iboe_route); -1 when it has none (iWARP). */
void fab_id_route(struct rdma_cm_id *id, int *tclass, int *sl)
{
	*tclass = -1;
	*sl = -1;
	if (!id || id->route.num_paths < 1 || !id->route.path_rec)
		return;
	*tclass = id->route.path_rec[0].traffic_class;
	*sl = id->route.path_rec[0].sl;
}

const char *fab_id_device(struct rdma_cm_id *id)
{
	if (!id || !id->verbs)
		return "";
	return ibv_get_device_name(id->verbs->device);
}
