/* SPDX-License-Identifier: MIT */
/*
 * daqiri-like workers (docs/design.md "daqiri's DPDK engine"): an RX lcore per
 * queue collects bursts into batches, hands each full batch to the app over an
 * SP/SC rte_ring, and the app reads pkt_len per packet and frees with
 * rte_pktmbuf_free_bulk. A full hand-off ring drops the batch on the RX lcore
 * (app_dropped). Which free, which app thread and which burst routine run are
 * all decided before the loops start.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dpdk_int.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif
#include "rxray/simnic.h"
#include "rxray/util.h"

uint32_t rxd_pool_buffers(const struct rx_config *c, uint32_t hring)
{
	if (c->buffers)
		return c->buffers;
	/* every WQE holds one buffer per segment; batches in the hand-off
	 * ring, the one being filled and the one the app works on hold more;
	 * the RX lcore's and the app lcore's caches each keep up to a flush
	 * threshold out of reach; batches a GPU kernel still reads hold theirs */
	uint64_t gpu = c->gpu_work != RX_GPU_WORK_NONE ? RXD_GPU_DEPTH : 0;
	uint64_t n = (uint64_t)c->ring + (uint64_t)(hring + 2 + gpu) * c->batch + c->burst +
		     2 * rx_mempool_cache_flushthresh(c->mempool_cache) + 64;
	return (uint32_t)n;
}

struct rte_mempool *rxd_pool_create(const char *name, uint32_t n, uint32_t cache, uint32_t room,
				    char *err, size_t errlen)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create_by_ops(
	    name, n, cache, 0, (uint16_t)room, (int)rte_socket_id(), RXD_MPOPS_NAME);
	if (!mp) {
		bool ring = false;
		for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops; i++)
			if (!strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc"))
				ring = true;
		if (!ring)
			snprintf(err, errlen,
				 "buffers: cannot create pool %s: no ring_mp_mc mempool driver "
				 "(librte_mempool_ring.so not loaded; set RXRAY_DPDK_PMD_DIR to "
				 "the DPDK plugin directory)",
				 name);
		else
			snprintf(err, errlen,
				 "buffers: cannot create pool %s (%u mbufs of %u bytes): %s", name,
				 n, room, rte_strerror(rte_errno));
	}
	return mp;
}

int rxd_queue_workers_init(struct rxd_run *run, struct rxd_queue *q, char *err, size_t errlen)
{
	char name[RTE_RING_NAMESIZE];
	/* ring contents + the one being filled + the app's (+ GPU batches) */
	uint32_t nb = run->hring + 2 + (q->gpu ? RXD_GPU_DEPTH : 0);
	uint32_t ring_sz = rte_align32pow2(nb + 1);

	q->nbatches = nb;
	q->batches = calloc(nb, sizeof(*q->batches));
	q->batch_mem = calloc((size_t)nb * q->batch * (1 + q->segs), sizeof(struct rte_mbuf *));
	if (!q->batches || !q->batch_mem) {
		snprintf(err, errlen, "batch: out of memory for %u batches of %u", nb, q->batch);
		return -ENOMEM;
	}
	snprintf(name, sizeof(name), "rxd%u_h%u", run->run_id, q->index);
	/* the hand-off ring holds at most hring batches: count = hring
	 * (RING_F_EXACT_SZ), so "full" means what --hring says */
	q->hand = rte_ring_create(name, run->hring, (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	snprintf(name, sizeof(name), "rxd%u_s%u", run->run_id, q->index);
	q->spare =
	    rte_ring_create(name, ring_sz, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!q->hand || !q->spare) {
		snprintf(err, errlen, "hring: cannot create hand-off rings: %s",
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nb; i++) {
		struct rxd_batch *b = &q->batches[i];
		b->pkts = q->batch_mem + (size_t)i * q->batch * (1 + q->segs);
		b->segs = b->pkts + q->batch;
		if (i == 0)
			q->cur = b;
		else
			rte_ring_sp_enqueue(q->spare, b);
	}
	return 0;
}

void rxd_queue_workers_fini(struct rxd_queue *q)
{
	rte_ring_free(q->hand);
	rte_ring_free(q->spare);
	q->hand = q->spare = NULL;
	free(q->batches);
	free(q->batch_mem);
	q->batches = NULL;
	q->batch_mem = NULL;
}

/* ------------------------------------------------------------------ app */

/*
 * The per-queue variants, chosen once in rxd_queue_variants(): how the app
 * reads a batch (tagged: the software NIC's frames carry a sequence tag
 * and a known length; plain: a real wire's do not), how it frees (mixed
 * chains or grouped per pool) and how the RX lcore hands a batch over
 * (inline or over the ring). The loops below never branch on the config.
 */
static void app_read_plain(struct rxd_queue *q, struct rxd_batch *b)
{
	struct rxd_app_stats *s = &q->appst;
	for (uint32_t k = 0; k < b->n; k++)
		s->bytes += b->pkts[k]->pkt_len;
}

static void app_read_tagged(struct rxd_queue *q, struct rxd_batch *b)
{
	struct rxd_app_stats *s = &q->appst;
	for (uint32_t k = 0; k < b->n; k++) {
		const struct rte_mbuf *m = b->pkts[k];
		uint32_t len = m->pkt_len;
		s->bytes += len;
		if (len != q->frame)
			s->len_errors++;
		const void *h = rte_pktmbuf_mtod(m, const void *);
		uint64_t seq = rxs_hdr_seq(h);
		if (!rxs_hdr_valid(h) || rxs_hdr_queue(h) != q->index)
			s->tag_errors++;
		else if (s->seq_started && seq < s->next_seq)
			s->seq_dup++;
		else {
			if (seq > s->next_seq)
				s->seq_missing += seq - s->next_seq;
			s->next_seq = seq + 1;
			s->seq_started = true;
		}
	}
}

/* mixed: free_bulk walks each chain, header then payload, and flushes
 * every time the pool changes */
static void app_free_mixed(struct rxd_queue *q, struct rxd_batch *b)
{
	rte_pktmbuf_free_bulk(b->pkts, b->n);
}

/* grouped per pool: unchain, then one free_bulk per segment column, so
 * every flush inside free_bulk is a full bulk put */
static void app_free_per_pool(struct rxd_queue *q, struct rxd_batch *b)
{
	uint32_t n = b->n;
	struct rte_mbuf **col = b->pkts; /* reused as scratch */
	for (uint32_t k = 0; k < n; k++) {
		struct rte_mbuf *h = b->segs[(size_t)k * q->segs];
		h->next = NULL;
		h->nb_segs = 1;
	}
	for (uint32_t s = 0; s < q->segs; s++) {
		for (uint32_t k = 0; k < n; k++)
			col[k] = b->segs[(size_t)k * q->segs + s];
		rte_pktmbuf_free_bulk(col, n);
	}
}

#ifdef RXRAY_HAVE_GPU
/* The oldest GPU batch, once its kernel completed (or waited for): its
 * mbufs freed, the batch back on the spare ring. false: none in flight or
 * not complete yet. */
static bool gpu_retire(struct rxd_queue *q, bool block)
{
	if (rxg_retire(q->gpu, block) <= 0)
		return false;
	struct rxd_batch *b = q->gfifo[q->gtail++ % RXD_GPU_DEPTH];
	q->app_free(q, b);
	b->n = 0;
	rte_ring_sp_enqueue(q->spare, b);
	return true;
}

/* Hand the batch to the kernel: hds, the payloads (segment 1, in GPU
 * memory) and the sequence numbers from the headers on the host; single
 * segment, whole frames in GPU memory, whose sequence numbers the kernel
 * reads itself. */
static void gpu_launch(struct rxd_queue *q, struct rxp_probe *p, struct rxd_batch *b)
{
	uint32_t n = b->n;
	const uint64_t *seqs = NULL;
	/* depth RXD_GPU_DEPTH (engine.c): rxg_submit is busy exactly then */
	rxp_stage_begin(p, q->ghead - q->gtail >= RXD_GPU_DEPTH ? RXP_ST_GPU_WAIT
								: RXP_ST_GPU_LAUNCH);
	if (q->segs > 1) {
		for (uint32_t k = 0; k < n; k++) {
			struct rte_mbuf *pay = b->segs[(size_t)k * q->segs + 1];
			q->gaddr[k] = rte_pktmbuf_mtod(pay, void *);
			q->gseq[k] = rxs_hdr_seq(rte_pktmbuf_mtod(b->pkts[k], const void *));
		}
		seqs = q->gseq;
	} else {
		for (uint32_t k = 0; k < n; k++)
			q->gaddr[k] = rte_pktmbuf_mtod(b->pkts[k], void *);
	}
	if (q->ghead - q->gtail >= RXD_GPU_DEPTH ||
	    rxg_submit(q->gpu, q->gaddr, seqs, n) == -EBUSY) {
		gpu_retire(q, true);
		rxp_lap(p, RXP_ST_GPU_WAIT, 0);
		rxp_stage_begin(p, RXP_ST_GPU_LAUNCH);
		rxg_submit(q->gpu, q->gaddr, seqs, n);
	}
	q->gfifo[q->ghead++ % RXD_GPU_DEPTH] = b;
	rxp_lap(p, RXP_ST_GPU_LAUNCH, n);
	rxp_stage_begin(p, RXP_ST_FREE);
}

void rxd_gpu_drain(struct rxd_queue *q)
{
	while (q->gpu && q->ghead != q->gtail && gpu_retire(q, true))
		;
}
#else
void rxd_gpu_drain(struct rxd_queue *q)
{
	(void)q;
}
#endif

bool rxd_app_process(struct rxd_queue *q, struct rxp_probe *p, struct rxd_batch *b)
{
	uint32_t n = b->n;
	/* hdr_read: first touch of each packet's metadata (and header) */
	rxp_stage_begin(p, RXP_ST_HDR_READ);
	q->app_read(q, b);
	rxp_lap(p, RXP_ST_HDR_READ, n);
	/* app: the application's own work (nothing but an injection point) */
	rxp_stage_begin(p, RXP_ST_APP);
	rxp_lap(p, RXP_ST_APP, n);
	q->appst.received += n;
	q->appst.batches++;
#ifdef RXRAY_HAVE_GPU
	if (q->gpu && n) {
		/* the buffers go back once the kernel that reads them is done */
		gpu_launch(q, p, b);
		while (gpu_retire(q, false))
			;
		rxp_lap(p, RXP_ST_FREE, n);
		return true;
	}
#endif
	rxp_stage_begin(p, RXP_ST_FREE);
	q->app_free(q, b);
	rxp_lap(p, RXP_ST_FREE, n);
	b->n = 0;
	return false;
}

int rxd_app_loop(struct rx_worker *w, void *arg)
{
	struct rxd_queue *q = arg;
	struct rxp_probe *p = w->probe;
	/* an EAL app thread is a registered lcore: it has mempool caches */
	if (q->app == RX_APP_EAL && rte_thread_register() != 0)
		return -(rte_errno ? rte_errno : EINVAL);
	rxd_mpops_bind(&q->app_ops);
	rxp_lap_start(p);
	for (;;) {
		struct rxd_batch *b;
		if (rte_ring_sc_dequeue(q->hand, (void **)&b) == 0) {
			rxp_burst_begin(p);
			rxp_stage_begin(p, RXP_ST_HANDOFF);
			rxp_lap(p, RXP_ST_HANDOFF, b->n);
			uint32_t n = b->n;
			if (!rxd_app_process(q, p, b))
				rte_ring_sp_enqueue(q->spare, b);
			rxp_burst_end(p, n);
			continue;
		}
		if (atomic_load_explicit(&q->rx_done, memory_order_acquire) &&
		    rte_ring_empty(q->hand))
			break;
		rxp_lap(p, RXP_ST_IDLE, 0);
	}
	rxd_mpops_bind(NULL);
	if (q->app == RX_APP_EAL)
		rte_thread_unregister();
	return 0;
}

/* ------------------------------------------------------------------- rx */

/* Inline app: the RX lcore processes the batch itself. */
static void rx_handoff_inline(struct rxd_queue *q, struct rxp_probe *p)
{
	rxp_stage_begin(p, RXP_ST_HANDOFF);
	rxp_lap(p, RXP_ST_HANDOFF, 0);
	if (!rxd_app_process(q, p, q->cur))
		return;
	/* a GPU kernel holds the batch: fill another */
	struct rxd_batch *next;
	while (rte_ring_sc_dequeue(q->spare, (void **)&next) != 0)
		rxd_gpu_drain(q);
	q->cur = next;
}

/* Hand the current batch over the ring (or drop it when the ring is full). */
static void rx_handoff_ring(struct rxd_queue *q, struct rxp_probe *p)
{
	struct rxd_batch *b = q->cur;
	uint32_t n = b->n;
	struct rxd_batch *next;
	rxp_stage_begin(p, RXP_ST_HANDOFF);
	if (rte_ring_sc_dequeue(q->spare, (void **)&next) != 0) {
		/* every batch is in flight: same as a full hand-off ring */
		next = NULL;
	}
	if (next && rte_ring_sp_enqueue(q->hand, b) == 0) {
		q->cur = next;
		q->rx.handoffs++;
	} else {
		if (next)
			rte_ring_sp_enqueue(q->spare, next);
		rte_pktmbuf_free_bulk(b->pkts, n);
		q->rx.app_dropped += n;
		b->n = 0;
	}
	rxp_lap(p, RXP_ST_HANDOFF, 0);
}

/*
 * Append a burst to the batch, recording per-packet segment pointers. The
 * collection is hand-off work: lapped as handoff with the packets
 * collected, before a full batch is handed off and for the rest of the
 * burst after it (the hand-off itself laps with 0 packets, so handoff's
 * packets count each packet once). A lap's packets are those whose
 * collection its cycles paid for: lapping the whole burst at its end
 * left the packets collected before a mid-burst hand-off to a 0-packet
 * lap, and with batch = burst every collection landed in a lap of 0
 * packets and every lap of n packets held almost nothing, which made the
 * stage's fit (cycles = a + b x packets) a per-lap cost with a negative
 * cost per packet.
 */
static inline void rx_collect(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			      uint16_t n)
{
	uint16_t lapped = 0;
	rxp_stage_begin(p, RXP_ST_HANDOFF);
	for (uint16_t i = 0; i < n; i++) {
		struct rxd_batch *b = q->cur;
		struct rte_mbuf *m = pkts[i];
		uint32_t k = b->n++;
		b->pkts[k] = m;
		for (uint32_t s = 0; s < q->segs; s++) {
			b->segs[(size_t)k * q->segs + s] = m;
			m = m ? m->next : NULL;
		}
		if (b->n == q->batch) {
			rxp_lap(p, RXP_ST_HANDOFF, (uint32_t)(i + 1 - lapped));
			lapped = (uint16_t)(i + 1);
			q->handoff(q, p);
			if (lapped < n) /* collecting the rest */
				rxp_stage_begin(p, RXP_ST_HANDOFF);
		}
	}
	if (lapped < n)
		rxp_lap(p, RXP_ST_HANDOFF, (uint32_t)(n - lapped));
}

void rxd_queue_variants(struct rxd_queue *q)
{
	q->app_read = q->check_tag ? app_read_tagged : app_read_plain;
	q->app_free = q->per_pool_free && q->segs > 1 ? app_free_per_pool : app_free_mixed;
	q->handoff = q->app == RX_APP_INLINE ? rx_handoff_inline : rx_handoff_ring;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How many bursts may pass between two quiet() checks while packets keep
 * coming (a real port at line rate never polls empty). */
#define RXD_QUIET_EVERY 64

int rxd_rx_loop(struct rx_worker *w, void *arg)
{
	struct rxd_queue *q = arg;
	struct rxd_run *run = q->run;
	struct rxp_probe *p = w->probe;
	struct rte_mbuf *pkts[RXD_MAX_BURST];

	/* the RX thread is a registered lcore, as an EAL lcore would be: it
	 * gets mempool caches (rte_lcore_id() valid) */
	if (rte_thread_register() != 0) {
		atomic_store_explicit(&q->rx_done, 1, memory_order_release);
		return -(rte_errno ? rte_errno : EINVAL);
	}
	/* rte_eth_rx_burst must not race rte_eth_dev_start (it sets the
	 * port's fast-path functions and queues one by one): wait for the
	 * backend's start; a run aborted before it (dpdk_stop: quit) polls
	 * nothing */
	struct timespec nap = {0, 20000};
	while (!atomic_load_explicit(&run->live, memory_order_acquire)) {
		if (atomic_load_explicit(&run->quit, memory_order_relaxed)) {
			rte_thread_unregister();
			atomic_store_explicit(&q->rx_done, 1, memory_order_release);
			return 0;
		}
		nanosleep(&nap, NULL);
	}
	rxd_mpops_bind(&q->rx_ops);
	rxp_lap_start(p);
	atomic_store_explicit(&q->rx_started, 1, memory_order_release);
	uint32_t coalesce = run->c->coalesce;
	for (;;) {
		rxp_burst_begin(p);
		if (__builtin_expect(coalesce != 0, 0) && !rxd_coalesce_ready(q, coalesce)) {
			/* calibration (--coalesce B): wait, lapped idle; once the
			 * device is quiet fewer than B may be all there is: poll
			 * as usual (waiting on, the loop never ended) */
			rxp_lap(p, RXP_ST_IDLE, 0);
			rxp_burst_end(p, 0);
			if (run->be->quiet(run, q))
				coalesce = 0;
			continue;
		}
		uint16_t n = q->burst_fn(q, p, pkts, (uint16_t)q->burst);
		uint64_t nb = ++q->rx.bursts;
		if (n) {
			q->rx.delivered += n;
			rx_collect(q, p, pkts, n);
		} else {
			q->rx.empty_bursts++;
		}
		rxp_burst_end(p, n);
		/* the device's state is another core's cache line: read it
		 * after empty polls, and now and then under load */
		if ((!n || !(nb % RXD_QUIET_EVERY)) && run->be->quiet(run, q))
			break;
	}
	/* drain: the device is quiet; take what is still waiting in its
	 * queue (a real port never runs dry: nothing is taken there),
	 * flushing the partial batch whenever a burst comes back empty so
	 * the buffers it holds can be replenished; give up after 0.5 s
	 * without progress. A burst ends after every lap it caused (the
	 * collection, a flush), as above: full mode's NVTX ranges are a
	 * burst's laps, and a lap outside one has none */
	double last = now_s();
	while (run->be->pending(run, q)) {
		rxp_burst_begin(p);
		uint16_t n = q->burst_fn(q, p, pkts, (uint16_t)q->burst);
		if (n) {
			q->rx.delivered += n;
			rx_collect(q, p, pkts, n);
			last = now_s();
		} else if (q->cur->n) {
			q->handoff(q, p);
		}
		rxp_burst_end(p, n);
		if (!n && now_s() - last > 0.5)
			break;
	}
	/* the last partial batch: a burst of its own */
	if (q->cur->n) {
		rxp_burst_begin(p);
		q->handoff(q, p);
		rxp_burst_end(p, 0);
	}
	rxd_mpops_bind(NULL);
	rte_thread_unregister();
	atomic_store_explicit(&q->rx_done, 1, memory_order_release);
	return 0;
}

int rxd_workers_wait(struct rxd_run *run, const struct rx_run *core)
{
	/* ethdev ends on time (quit = 1); the software NIC ends by itself;
	 * quit = 2 is the hang guard for both. The phase's length: the
	 * warm-up's while warming (the NIC runs that long), not the run's */
	double len = core->warming ? core->warmup_s : run->c->seconds;
	double t0 = now_s();
	bool started = false;
	for (;;) {
		bool all = true, all_started = true;
		for (uint32_t i = 0; i < run->nq; i++) {
			const struct rx_worker *w = &core->q[i].rxw;
			/* a worker that never ran its loop (pinning) counts as done */
			bool gone = __atomic_load_n(&w->finished, __ATOMIC_ACQUIRE) != 0;
			if (!gone && !atomic_load_explicit(&run->q[i].rx_done, memory_order_acquire))
				all = false;
			if (!gone &&
			    !atomic_load_explicit(&run->q[i].rx_started, memory_order_acquire))
				all_started = false;
		}
		if (all)
			break;
		if (!started && all_started) {
			/* the clock starts when every RX loop runs */
			started = true;
			t0 = now_s();
		}
		double el = started ? now_s() - t0 : 0;
		if (el >= len + 30)
			atomic_store(&run->quit, 2);
		if ((el >= len || (run->stop && *run->stop)) && !atomic_load(&run->quit)) {
			atomic_store(&run->quit, 1);
			run->seconds = el;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	if (run->seconds == 0)
		run->seconds = now_s() - t0;
	return 0;
}
