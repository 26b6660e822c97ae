/* SPDX-License-Identifier: MIT */
/* Software NIC internals shared by nic.c (lifecycle), wire.c (packets,
 * flows, params) and dma.c (the NIC threads). Not installed. */
#ifndef RXRAY_SIMNIC_PRIV_H
#define RXRAY_SIMNIC_PRIV_H

#include <pthread.h>

#include "rxray/simnic.h"
#include "rxray/validity.h"

#define NIC_TMPL_SIZE 64u
#define NIC_RETA_SIZE 128u

enum nic_state { NIC_IDLE = 0, NIC_RUNNING, NIC_DONE };

struct nic_mr {
	uintptr_t addr;
	size_t len;
	uint32_t lkey;
	bool valid;
	bool gpu;       /* GPU memory: written through the DMA engine (gpu_dma) */
};

/* One queue. NIC-thread fields first; counters are written only by the
 * NIC thread that owns the queue (queue q -> thread q % threads; relaxed
 * atomic stores) and read by anyone. */
struct nic_queue {
	uint32_t rq_ci;        /* WQEs consumed (low 16 bits compared) */
	uint32_t rq_posted;    /* cached doorbell value (16 bits) */
	uint32_t cq_pi;        /* CQEs produced */
	uint32_t cq_ci;        /* cached consumer index (24 bits) */
	uint64_t seq;          /* next sequence number */
	uint64_t dry_burst;    /* burst (thread's count + 1) that found the RQ empty */
	struct rxs_counters cnt;
	void *rq_buf;
	__be32 *rq_dbrec;      /* own cache line */
	struct mlx5_cqe64 *cq_buf;
	__be32 *cq_dbrec;      /* own cache line */
	/* writer path (several DMA writers per queue): the flows this queue
	 * offers, its pacing and its quota; read-only while running */
	uint32_t *wflows;      /* flow numbers hashed to this queue, in order */
	uint32_t nwflows;
	double tpp;            /* clock ticks per packet, 0 = unpaced */
	uint64_t quota;        /* share of p.max_packets (limited only) */
	/* The producer, the one word writers claim runs with (one CAS):
	 * bits 63..24 = packets offered in this phase (seq = seq + that),
	 * bits 23..0 = WQEs consumed = CQ entries claimed (one entry per
	 * WQE, so the same counter indexes both rings). */
	_Alignas(64) uint64_t prod;
	/* CQ entries published (24 bits): a run's op_owns are stored only
	 * when this reaches its first entry, so the CQ fills in order; only
	 * the holder of pub_lock advances it */
	_Alignas(64) uint32_t published;
	int pub_lock;
	/* ready[c & mask] = (c << 8) | m once the run of m entries from c is
	 * written and its gate done (0 once published); op_pend[e] = the
	 * op_own entry e gets (0 = none: a session's other entries).
	 * cq_depth entries each. */
	uint32_t *ready;
	uint8_t *op_pend;
} __attribute__((aligned(64)));

/* A run a writer wrote whose gate ticket is not done yet. */
struct nic_run {
	struct nic_queue *q;
	uint32_t c;            /* first CQ entry / WQE (24 bits) */
	uint32_t m;            /* entries */
	uint64_t ticket;       /* completion-gate ticket (0 = none) */
};

#define NIC_RUNS_MAX 64u   /* runs a writer keeps awaiting publication */
#define NIC_DMA_BATCH 128u /* GPU pieces a writer stages before it submits them */

/*
 * One NIC thread: owns the queues q with q % threads == idx, walks its own
 * flow list (the flows hashed to its queues, in flow order) at its share
 * of the offered rate. Everything here is written by that thread only
 * (counters with relaxed atomic stores), except the lifecycle flags.
 */
struct nic_thread {
	struct rxs_nic *n;
	uint32_t idx;
	int core;                     /* -1 = unpinned */
	uint32_t *flows;              /* flow numbers this thread offers */
	uint32_t nflows;
	double rate_pps;              /* share of p.rate_pps (0 = max) */
	uint64_t max_packets;         /* share of p.max_packets (0 = none) */
	bool limited;                 /* p.max_packets set (quota may be 0) */
	struct rxp_probe *probe;
	pthread_t tid;
	bool started, joined;
	int state;                    /* enum nic_state, atomic */
	int rc;
	uint64_t t_start, t_end;      /* clock ticks of first due packet, stop */
	uint64_t bursts;
	/* the thread's own tally, kept apart from the per-queue counters */
	uint64_t offered, received, out_of_buffer;
	struct rxg_dma *gdma;         /* GPU writes (NULL: no GPU region) */
	uint64_t dma_pieces, dma_flushes;
	/* the generator is a measured thread too: switches, migrations and
	 * run-queue wait over its loop (rxray/validity.h); valid_ok once
	 * begun and ended on the thread in this phase */
	struct rxr_valid_thread valid;
	bool valid_ok;
	/* writer path: this thread is DMA writer `writer` of group `group`
	 * (the queues q % groups == group) */
	uint32_t group, writer;
	struct rxs_counters *qcnt;    /* per-queue counters it adds (p.queues) */
	uint32_t *rq_posted, *rq_seen, *cq_ci, *cq_seen; /* per-queue caches */
	struct nic_run *runs;         /* NIC_RUNS_MAX, awaiting publication */
	uint32_t run_head, run_tail;
	uint64_t tickets;             /* gate tickets issued */
	uint64_t run_ticket;          /* GPU copies: the run's last ticket */
	uint64_t gate_polls;          /* host gate: polls so far */
	uint64_t claims;              /* runs claimed (fault_dup_claim counts them) */
	double avg_pkt;               /* unpaced: ticks per delivered packet, kept
				       * across phases (a measured phase may start
				       * on a dry RQ) */
} __attribute__((aligned(64)));

struct rxs_nic {
	struct rxs_params p;
	uint32_t stride, cq_depth, cq_shift, nflows;
	struct nic_queue *q;          /* p.queues entries */
	uint8_t *tmpl;                /* nflows * NIC_TMPL_SIZE header templates */
	uint8_t *flow_q;              /* flow -> queue */
	uint32_t *flow_hash;          /* flow -> Toeplitz hash (written into CQEs) */
	struct nic_mr mr[RXS_MAX_MRS];
	uint32_t nmr, mr_gen;
	/* RXRAY_SIM_LEGACY=dbrec: re-read the RQ doorbell record for every
	 * packet due on a dry RQ, as before the back-off (measurement only) */
	bool legacy_dbrec;
	bool legacy_state;     /* RXRAY_SIM_LEGACY=state: rxs_nic_done reads
				* each thread's state word (measurement only) */
	bool gpu_mrs;                 /* some region is GPU memory */
	struct nic_thread *t;         /* nthreads entries */
	uint32_t nthreads;            /* groups * writers on the writer path */
	uint32_t groups, writers;     /* writer path: NIC threads, writers each */
	bool writer_path;
	uint64_t t0;                  /* writer path: the phase's clock origin */
	bool started, joined;
	/* Read by every polling engine thread (rxs_nic_done) and by the NIC
	 * threads (stop_req) all the time, written once each: a cache line of
	 * their own, away from anything a NIC thread writes per burst, so a
	 * poll of it stays a hit in the poller's cache. */
	_Alignas(64) int stop_req;    /* atomic */
	int ndone;                    /* NIC threads that ended (atomic) */
	char pad_[64 - 2 * sizeof(int)];
};

struct rxg_dma;

/* Relaxed publication of a counter only the NIC thread writes. */
#define NIC_CNT_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

/* wire.c: build flow templates and the flow -> queue table. 0 or -ENOMEM. */
int nic_flows_build(struct rxs_nic *n);
/* wire.c: each thread's flow list, rate share and packet quota (after
 * nic_flows_build). 0 or -ENOMEM. */
int nic_threads_share(struct rxs_nic *n);
/* Toeplitz hash of the bytes in with the default 40-byte RSS key. */
uint32_t nic_toeplitz(const uint8_t *in, size_t len);
/* wire.c: each queue's flow list, pacing and quota (writer path). 0 or
 * -ENOMEM. */
int nic_queues_share(struct rxs_nic *n);
/* True when NIC thread t writes queue q. */
static inline bool nic_thread_owns(const struct rxs_nic *n, uint32_t t, uint32_t q)
{
	return n->writer_path ? q % n->groups == t / n->writers : q % n->nthreads == t;
}
/* dma.c: a NIC thread's body (arg: its struct nic_thread). */
void *nic_thread_main(void *arg);

#endif
