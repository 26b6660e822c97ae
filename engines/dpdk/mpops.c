/* SPDX-License-Identifier: MIT */
/*
 * Counting mempool driver "rxray_ring". The mempool library calls a driver
 * only when the per-lcore cache cannot serve a get or absorb a put (or when
 * there is no cache: cache size 0, or a thread that is not an EAL lcore).
 * Those calls are exactly the shared-ring operations docs/design.md ("daqiri's
 * DPDK engine") counts ("about four shared ring operations per packet"), so
 * counting them here turns that hypothesis into a structural fact per run.
 *
 * The ring discipline is the one DPDK's ring_mp_mc driver uses: one
 * rte_ring sized to the next power of two above the pool size, multi-
 * producer enqueue and multi-consumer dequeue, all-or-nothing bulk
 * operations. (DPDK 22.11 still needs librte_mempool_ring.so loaded:
 * rte_mempool_create_empty sets ring_mp_mc before any other driver.)
 *
 * Counting must not add sharing: each thread counts into its own slot
 * (bound with rxd_mpops_bind, cache-line aligned, read after the thread
 * ends), so the cost is a thread-local load and a few private adds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "rxray/dpdk.h"
#include "rxray/probe.h"

struct mpops_pool {
	struct rte_ring *ring;
	int slot;
};

static _Thread_local struct rxd_mpops_counts *mpops_tls;
static struct rxd_mpops_counts mpops_unbound; /* guarded by mpops_lock */
static pthread_mutex_t mpops_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned mpops_slot_used; /* bitmap, mpops_lock */
static int mpops_registered;	 /* mpops_lock */

/* --op-delay mempool=K: cycles spun per driver call (0 = off) */
static uint32_t mpops_delay;

void rxd_mpops_set_delay(uint32_t cycles)
{
	__atomic_store_n(&mpops_delay, cycles, __ATOMIC_RELEASE);
}

/* Each get and put owes the delay (rxp_op_delay), and the lap the
 * operation ran in pays it (in A/B only while the thread's gate has it
 * armed):
 * it is charged to whatever stage performs the get or put, whatever that
 * stage is called. Where in the call it is owed makes no difference. */
static inline void mpops_spin(void)
{
	rxp_op_delay(__atomic_load_n(&mpops_delay, __ATOMIC_RELAXED));
}

static struct rxd_mpops_pool *mpops_counter(const struct rte_mempool *mp, bool *locked)
{
	const struct mpops_pool *p = mp->pool_data;
	struct rxd_mpops_counts *c = mpops_tls;
	*locked = false;
	if (!c) {
		/* population/teardown from an unbound thread: rare, locked */
		pthread_mutex_lock(&mpops_lock);
		*locked = true;
		c = &mpops_unbound;
	}
	return &c->pool[p->slot];
}

static int mpops_alloc(struct rte_mempool *mp)
{
	char name[RTE_RING_NAMESIZE];
	struct mpops_pool *p = rte_zmalloc_socket("rxd_mpops", sizeof(*p), 0, mp->socket_id);
	if (!p)
		return -ENOMEM;
	/* a ring one slot larger than the pool, rounded to a power of two,
	 * like the ring driver, so every object always fits */
	snprintf(name, sizeof(name), "RXD_%.24s", mp->name);
	p->ring = rte_ring_create(name, rte_align32pow2(mp->size + 1), mp->socket_id, 0);
	if (!p->ring) {
		int e = rte_errno ? rte_errno : ENOMEM;
		rte_free(p);
		return -e;
	}
	pthread_mutex_lock(&mpops_lock);
	p->slot = RXD_MPOPS_MAX_POOLS - 1; /* overflow pools share the last slot */
	for (int i = 0; i < RXD_MPOPS_MAX_POOLS - 1; i++) {
		if (!(mpops_slot_used & (1u << i))) {
			mpops_slot_used |= 1u << i;
			p->slot = i;
			break;
		}
	}
	pthread_mutex_unlock(&mpops_lock);
	mp->pool_data = p;
	return 0;
}

static void mpops_free(struct rte_mempool *mp)
{
	struct mpops_pool *p = mp->pool_data;
	if (!p)
		return;
	pthread_mutex_lock(&mpops_lock);
	if (p->slot < RXD_MPOPS_MAX_POOLS - 1)
		mpops_slot_used &= ~(1u << p->slot);
	pthread_mutex_unlock(&mpops_lock);
	rte_ring_free(p->ring);
	rte_free(p);
	mp->pool_data = NULL;
}

static int mpops_enqueue(struct rte_mempool *mp, void *const *objs, unsigned n)
{
	const struct mpops_pool *p = mp->pool_data;
	bool locked;
	struct rxd_mpops_pool *c = mpops_counter(mp, &locked);
	c->enq_calls++;
	c->enq_objs += n;
	if (locked)
		pthread_mutex_unlock(&mpops_lock);
	int rc = rte_ring_mp_enqueue_bulk(p->ring, objs, n, NULL) == 0 ? -ENOBUFS : 0;
	mpops_spin();
	return rc;
}

static int mpops_dequeue(struct rte_mempool *mp, void **objs, unsigned n)
{
	const struct mpops_pool *p = mp->pool_data;
	bool locked;
	struct rxd_mpops_pool *c = mpops_counter(mp, &locked);
	mpops_spin();
	unsigned got = rte_ring_mc_dequeue_bulk(p->ring, objs, n, NULL);
	c->deq_calls++;
	if (got)
		c->deq_objs += n;
	else
		c->deq_fail++;
	if (locked)
		pthread_mutex_unlock(&mpops_lock);
	return got ? 0 : -ENOBUFS;
}

static unsigned mpops_get_count(const struct rte_mempool *mp)
{
	const struct mpops_pool *p = mp->pool_data;
	return rte_ring_count(p->ring);
}

static const struct rte_mempool_ops mpops_ops = {
    .name = RXD_MPOPS_NAME,
    .alloc = mpops_alloc,
    .free = mpops_free,
    .enqueue = mpops_enqueue,
    .dequeue = mpops_dequeue,
    .get_count = mpops_get_count,
};

int rxd_mpops_register(void)
{
	int rc = 0;
	pthread_mutex_lock(&mpops_lock);
	if (!mpops_registered) {
		/* the ops table may already hold it (a plugin or an earlier
		 * registration in this process): look it up first */
		if (rte_mempool_ops_table.num_ops > 0) {
			for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops; i++)
				if (!strcmp(rte_mempool_ops_table.ops[i].name, RXD_MPOPS_NAME))
					mpops_registered = 1;
		}
		if (!mpops_registered) {
			int idx = rte_mempool_register_ops(&mpops_ops);
			if (idx < 0)
				rc = idx;
			else
				mpops_registered = 1;
		}
	}
	pthread_mutex_unlock(&mpops_lock);
	return rc;
}

void rxd_mpops_bind(struct rxd_mpops_counts *slot)
{
	mpops_tls = slot;
}

int rxd_mpops_pool_slot(const struct rte_mempool *mp)
{
	if (!mp || strcmp(rte_mempool_get_ops(mp->ops_index)->name, RXD_MPOPS_NAME))
		return -1;
	return ((const struct mpops_pool *)mp->pool_data)->slot;
}

void rxd_mpops_total(const struct rxd_mpops_counts *c, struct rxd_mpops_pool *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < RXD_MPOPS_MAX_POOLS; i++) {
		out->enq_calls += c->pool[i].enq_calls;
		out->enq_objs += c->pool[i].enq_objs;
		out->deq_calls += c->pool[i].deq_calls;
		out->deq_objs += c->pool[i].deq_objs;
		out->deq_fail += c->pool[i].deq_fail;
	}
}

void rxd_mpops_add(struct rxd_mpops_counts *dst, const struct rxd_mpops_counts *src)
{
	for (int i = 0; i < RXD_MPOPS_MAX_POOLS; i++) {
		dst->pool[i].enq_calls += src->pool[i].enq_calls;
		dst->pool[i].enq_objs += src->pool[i].enq_objs;
		dst->pool[i].deq_calls += src->pool[i].deq_calls;
		dst->pool[i].deq_objs += src->pool[i].deq_objs;
		dst->pool[i].deq_fail += src->pool[i].deq_fail;
	}
}
