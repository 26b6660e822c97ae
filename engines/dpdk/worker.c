/* SPDX-License-Identifier: MIT */
/*
 * daqiri-like workers (DOMAIN.md): an RX lcore per queue collects bursts
 * into batches, hands each full batch to the app over an SP/SC rte_ring,
 * and the app reads pkt_len per packet and frees with
 * rte_pktmbuf_free_bulk. A full hand-off ring drops the batch on the RX
 * lcore (app_dropped). Which free, which app thread and which burst
 * routine run are all decided before the loops start.
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
#include "rxray/simnic.h"
#include "rxray/util.h"

uint32_t rxd_pool_buffers(const struct rx_config *c, uint32_t hring)
{
	if (c->buffers)
		return c->buffers;
	/* every WQE holds one buffer per segment; batches in the hand-off
	 * ring, the one being filled and the one the app works on hold more;
	 * each lcore cache may keep up to 1.5x its size out of reach */
	uint64_t n = (uint64_t)c->ring + (uint64_t)(hring + 2) * c->batch + c->burst +
		     3ull * c->mempool_cache + 64;
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
	uint32_t nb = run->hring + 2; /* ring contents + the one being filled + the app's */
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

static inline void app_read(struct rxd_queue *q, struct rxd_batch *b)
{
	struct rxd_app_stats *s = &q->appst;
	for (uint32_t k = 0; k < b->n; k++) {
		const struct rte_mbuf *m = b->pkts[k];
		uint32_t len = m->pkt_len;
		s->bytes += len;
		if (q->frame && len != q->frame)
			s->len_errors++;
		if (q->check_tag) {
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
}

void rxd_app_process(struct rxd_queue *q, struct rxr_probe *p, struct rxd_batch *b)
{
	uint32_t n = b->n;
	/* hdr_read: first touch of each packet's metadata (and header) */
	app_read(q, b);
	rxr_lap(p, RXR_ST_HDR_READ, n);
	/* app: the application's own work (nothing but an injection point) */
	rxr_lap(p, RXR_ST_APP, n);
	if (q->per_pool_free && q->segs > 1) {
		/* grouped per pool: unchain, then one free_bulk per segment
		 * column, so every flush inside free_bulk is a full bulk put */
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
	} else {
		/* mixed: free_bulk walks each chain, header then payload, and
		 * flushes every time the pool changes */
		rte_pktmbuf_free_bulk(b->pkts, n);
	}
	rxr_lap(p, RXR_ST_FREE, n);
	q->appst.received += n;
	q->appst.batches++;
	b->n = 0;
}

static int app_loop(struct rxd_queue *q)
{
	struct rxr_probe *p = q->app_probe;
	rxd_mpops_bind(&q->app_ops);
	rxr_lap_start(p);
	for (;;) {
		struct rxd_batch *b;
		if (rte_ring_sc_dequeue(q->hand, (void **)&b) == 0) {
			rxr_burst_begin(p);
			rxr_lap(p, RXR_ST_HANDOFF, b->n);
			uint32_t n = b->n;
			rxd_app_process(q, p, b);
			rte_ring_sp_enqueue(q->spare, b);
			rxr_burst_end(p, n);
			continue;
		}
		if (atomic_load_explicit(&q->rx_done, memory_order_acquire) &&
		    rte_ring_empty(q->hand))
			break;
		rxr_lap(p, RXR_ST_IDLE, 0);
	}
	rxd_mpops_bind(NULL);
	return 0;
}

static int app_pin(struct rxd_queue *q)
{
	if (q->app_core < 0)
		return 0;
	if (q->app == RX_APP_EAL) {
		rte_cpuset_t cs;
		CPU_ZERO(&cs);
		CPU_SET(q->app_core, &cs);
		return rte_thread_set_affinity(&cs) ? -EINVAL : 0;
	}
	return rxr_pin_self(q->app_core);
}

static int app_lcore_main(void *arg)
{
	struct rxd_queue *q = arg;
	q->app_rc = app_pin(q);
	if (q->app_rc)
		return q->app_rc;
	return app_loop(q);
}

static void *app_thread_main(void *arg)
{
	app_lcore_main(arg);
	return NULL;
}

/* ------------------------------------------------------------------- rx */

/* Hand the current batch over (or drop it when the ring is full). */
static inline void rx_handoff(struct rxd_queue *q, struct rxr_probe *p)
{
	struct rxd_batch *b = q->cur;
	uint32_t n = b->n;
	if (q->app == RX_APP_INLINE) {
		rxr_lap(p, RXR_ST_HANDOFF, n);
		rxd_app_process(q, p, b);
		return;
	}
	struct rxd_batch *next;
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
	rxr_lap(p, RXR_ST_HANDOFF, n);
}

/* Append a burst to the batch, recording per-packet segment pointers. */
static inline void rx_collect(struct rxd_queue *q, struct rxr_probe *p, struct rte_mbuf **pkts,
			      uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rxd_batch *b = q->cur;
		struct rte_mbuf *m = pkts[i];
		uint32_t k = b->n++;
		b->pkts[k] = m;
		for (uint32_t s = 0; s < q->segs; s++) {
			b->segs[(size_t)k * q->segs + s] = m;
			m = m ? m->next : NULL;
		}
		if (b->n == q->batch)
			rx_handoff(q, p);
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int rx_lcore_main(void *arg)
{
	struct rxd_queue *q = arg;
	struct rxd_run *run = q->run;
	struct rxr_probe *p = q->rx_probe;
	struct rte_mbuf *pkts[RXD_MAX_BURST];
	rte_cpuset_t cs;

	if (q->rx_core >= 0) {
		CPU_ZERO(&cs);
		CPU_SET(q->rx_core, &cs);
		if (rte_thread_set_affinity(&cs)) {
			q->rx_rc = -EINVAL;
			atomic_store_explicit(&q->rx_done, 1, memory_order_release);
			return q->rx_rc;
		}
	}
	rxd_mpops_bind(&q->rx_ops);
	rxr_lap_start(p);
	atomic_store_explicit(&q->rx_started, 1, memory_order_release);
	while (!run->be->quiet(run, q)) {
		rxr_burst_begin(p);
		if (__builtin_expect(run->c->coalesce != 0, 0) &&
		    !rxd_coalesce_ready(q, run->c->coalesce)) {
			/* calibration (--coalesce B): wait, lapped idle */
			rxr_lap(p, RXR_ST_IDLE, 0);
			rxr_burst_end(p, 0);
			continue;
		}
		uint16_t n = q->burst_fn(q, p, pkts, (uint16_t)q->burst);
		q->rx.bursts++;
		if (n) {
			q->rx.delivered += n;
			rx_collect(q, p, pkts, n);
		} else {
			q->rx.empty_bursts++;
		}
		rxr_burst_end(p, n);
	}
	/* drain: the device is quiet; take what is still waiting in its
	 * queue (a real port never runs dry: nothing is taken there),
	 * flushing the partial batch whenever a burst comes back empty so
	 * the buffers it holds can be replenished; give up after 0.5 s
	 * without progress */
	double last = now_s();
	while (run->be->pending(run, q)) {
		rxr_burst_begin(p);
		uint16_t n = q->burst_fn(q, p, pkts, (uint16_t)q->burst);
		rxr_burst_end(p, n);
		if (n) {
			q->rx.delivered += n;
			rx_collect(q, p, pkts, n);
			last = now_s();
			continue;
		}
		if (q->cur->n)
			rx_handoff(q, p);
		if (now_s() - last > 0.5)
			break;
	}
	if (q->cur->n)
		rx_handoff(q, p);
	rxd_mpops_bind(NULL);
	atomic_store_explicit(&q->rx_done, 1, memory_order_release);
	return 0;
}

int rxd_workers_run(struct rxd_run *run, char *err, size_t errlen)
{
	int rc = 0;
	uint32_t launched_rx = 0;

	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		atomic_store(&q->rx_done, 0);
		atomic_store(&q->rx_started, 0);
		if (q->app == RX_APP_EAL) {
			if (rte_eal_remote_launch(app_lcore_main, q, q->app_lcore)) {
				snprintf(err, errlen, "app: cannot launch lcore %u", q->app_lcore);
				rc = -EBUSY;
				break;
			}
		} else if (q->app == RX_APP_THREAD) {
			if (pthread_create(&q->app_thr, NULL, app_thread_main, q)) {
				snprintf(err, errlen, "app: cannot start thread");
				rc = -EAGAIN;
				break;
			}
			q->app_thr_started = true;
		}
	}
	if (!rc) {
		rc = run->be->start(run, err, errlen);
		for (uint32_t i = 0; !rc && i < run->nq; i++) {
			struct rxd_queue *q = &run->q[i];
			if (rte_eal_remote_launch(rx_lcore_main, q, q->rx_lcore)) {
				snprintf(err, errlen, "queues: cannot launch RX lcore %u",
					 q->rx_lcore);
				rc = -EBUSY;
				break;
			}
			launched_rx++;
		}
	}
	if (rc) {
		/* release whatever started: apps end once rx_done is set */
		atomic_store(&run->quit, 2);
	} else {
		/* ethdev ends on time (quit = 1); the software NIC ends by
		 * itself; quit = 2 is the hang guard for both */
		double t0 = now_s();
		bool started = false;
		for (;;) {
			bool all = true, all_started = true;
			for (uint32_t i = 0; i < run->nq; i++) {
				if (!atomic_load_explicit(&run->q[i].rx_done, memory_order_acquire))
					all = false;
				if (!atomic_load_explicit(&run->q[i].rx_started,
							  memory_order_acquire))
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
			if (el >= run->c->seconds + 30)
				atomic_store(&run->quit, 2);
			if ((el >= run->c->seconds || (run->stop && *run->stop)) &&
			    !atomic_load(&run->quit)) {
				atomic_store(&run->quit, 1);
				run->seconds = el;
			}
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		if (run->seconds == 0)
			run->seconds = now_s() - t0;
	}
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		if (i < launched_rx)
			rte_eal_wait_lcore(q->rx_lcore);
		else
			atomic_store_explicit(&q->rx_done, 1, memory_order_release);
	}
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		if (q->app == RX_APP_EAL)
			rte_eal_wait_lcore(q->app_lcore);
		else if (q->app_thr_started) {
			pthread_join(q->app_thr, NULL);
			q->app_thr_started = false;
		}
		if (!rc && (q->rx_rc || q->app_rc)) {
			snprintf(err, errlen, "cores: cannot pin queue %u's %s thread", i,
				 q->rx_rc ? "RX" : "app");
			rc = q->rx_rc ? q->rx_rc : q->app_rc;
		}
	}
	return rc;
}
