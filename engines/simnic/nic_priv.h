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

/* One queue: its rings, its share of the flows and of the rate, and the
 * producer word its writers claim runs with. Read-only while running but
 * for prod and seq (seq changes only between phases). */
struct nic_queue {
	uint64_t seq;          /* sequence number of the phase's packet 0 */
	void *rq_buf;
	__be32 *rq_dbrec;      /* own cache line */
	struct mlx5_cqe64 *cq_buf;
	__be32 *cq_dbrec;      /* own cache line */
	uint32_t *wflows;      /* flow numbers hashed to this queue, in order */
	uint32_t nwflows;
	bool paced;            /* an offered rate was asked (else: the NIC's best) */
	double ttrain;         /* clock ticks from one train's start to the next */
	uint64_t late_ticks;   /* paced: the late limit (simnic.h "Late"); else
				* UINT64_MAX */
	int fault_stalled;     /* params.fault_stall_train fired this phase (atomic) */
	uint64_t quota;        /* share of p.max_packets (limited only) */
	/* The producer, the one word writers claim runs with (one CAS):
	 * bits 63..24 = packets offered in this phase (seq = seq + that),
	 * bits 23..0 = WQEs consumed = CQ entries claimed (one entry per
	 * WQE, so the same counter indexes both rings). */
	_Alignas(64) uint64_t prod;
} __attribute__((aligned(64)));

/* A run a writer wrote: its CQ entries c..c+m-1, the queue's packets
 * off..off+m-1, and the op_own each entry gets (0: none, a session's
 * other entries), stored by the same writer once the gate ticket is done
 * and the packet at[i] is due. */
struct nic_run {
	struct nic_queue *q;
	uint64_t off;          /* the queue's packet number of its first */
	uint32_t c;            /* first CQ entry / WQE (24 bits) */
	uint32_t m;            /* entries */
	uint64_t ticket;       /* completion-gate ticket (0 = none) */
	uint8_t op[RXS_BURST];
	uint8_t at[RXS_BURST]; /* op[i] waits for packet at[i]'s due time */
};

#define NIC_RUNS_MAX 64u   /* runs a writer keeps awaiting publication */
#define NIC_DMA_BATCH 128u /* launch: GPU pieces a writer stages before it submits them */
#define NIC_STALL_S 2.0    /* GPU copies without progress this long: a stall */
#define NIC_START_WAIT_S 1.0 /* rxs_nic_start waits this long at most for its threads */
#define NIC_LATE_MIN_S 10e-6 /* the late limit's floor (simnic.h "Late") */

/*
 * One DMA writer thread: writer `writer` of NIC thread (group) `group`,
 * which owns the queues q with q % groups == group; every writer of the
 * group claims runs on all of them. Everything here is written by that
 * thread only (counters with relaxed atomic stores), except the
 * lifecycle flags.
 */
struct nic_thread {
	struct rxs_nic *n;
	uint32_t idx;
	int core;                     /* -1 = unpinned */
	struct rxp_probe *probe;
	pthread_t tid;
	bool started, joined;
	int state;                    /* enum nic_state, atomic */
	int rc;
	uint64_t t_start, t_end;      /* clock ticks of its start, stop */
	uint64_t bursts;              /* runs claimed */
	/* the thread's own tally, kept apart from the per-queue counters */
	uint64_t offered, received, out_of_buffer;
	struct rxg_dma *gdma;         /* GPU writes (NULL: no GPU region) */
	uint64_t dma_pieces, dma_flushes;
	/* the generator is a measured thread too: switches, migrations and
	 * run-queue wait over its loop (rxray/validity.h); valid_ok once
	 * begun and ended on the thread in this phase */
	struct rxr_valid_thread valid;
	bool valid_ok;
	uint32_t group, writer;
	struct rxs_counters *qcnt;    /* its part of each queue's counters (p.queues) */
	uint32_t *rq_posted, *rq_seen, *cq_ci, *cq_seen; /* per-queue caches */
	struct nic_run *runs;         /* NIC_RUNS_MAX, awaiting their gate */
	uint32_t run_head, run_tail;
	uint64_t tickets;             /* gate tickets issued */
	uint64_t run_ticket;          /* GPU copies: the run's last ticket */
	uint64_t gate_polls;          /* host gate: polls so far */
	uint64_t gate_since;          /* GPU copies: when the oldest run began
				       * waiting for its ticket with nothing
				       * published since (0: not waiting) */
	bool stalled;                 /* a copy made no progress for 2 s */
	uint64_t claims;              /* runs claimed (the fault switches count them) */
	double lead;                  /* ticks a train is claimed before it begins
				       * (wr_lead), kept across phases */
	/* Late (simnic.h): per queue, the due tick of this writer's oldest
	 * claimed, unpublished packet (UINT64_MAX: none), read by the other
	 * writers of its group at a drop (relaxed atomics) */
	uint64_t *hol;
	uint64_t late_pub_max;        /* ticks: latest publication after its due */
	uint64_t late_runs;           /* runs published later than the limit */
	uint64_t late_drop_max;       /* ticks the NIC was behind at a late drop */
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
	/* RXRAY_SIM_LEGACY=dbrec: re-read the RQ doorbell record on every
	 * claim, whatever the cached view holds (measurement only) */
	bool legacy_dbrec;
	bool legacy_state;     /* RXRAY_SIM_LEGACY=state: rxs_nic_done reads
				* each thread's state word (measurement only) */
	bool gpu_mrs;                 /* some region is GPU memory */
	struct nic_thread *t;         /* nthreads entries */
	uint32_t nthreads;            /* groups * writers */
	uint32_t groups, writers;     /* NIC threads, DMA writers each */
	uint32_t train;               /* packets per train (arrival pattern) */
	double line_pps;              /* the port's line rate at this frame */
	double twire;                 /* clock ticks per packet at line rate */
	uint64_t t0;                  /* the phase's clock origin: set once every
				       * NIC thread is running (rxs_nic_start) */
	int ready;                    /* NIC threads at the start line (atomic) */
	int go;                       /* t0 is set: the threads start (atomic) */
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

/* Line rate (Gb/s) when params.line_gbps is 0: a ConnectX-7 port. */
#define NIC_LINE_GBPS_DEFAULT 400.0
/* Bytes a frame takes on the wire beyond its own: preamble + SFD (8),
 * FCS (4), inter-frame gap (12). */
#define NIC_WIRE_OVERHEAD 24u

/* Relaxed publication of a counter only the NIC thread writes. */
#define NIC_CNT_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

/* wire.c: build flow templates and the flow -> queue table. 0 or -ENOMEM. */
int rxs_nic_flows_build(struct rxs_nic *n);
/* wire.c: each queue's flow list, arrival schedule and quota (after
 * rxs_nic_flows_build). 0 or -ENOMEM. */
int rxs_nic_queues_share(struct rxs_nic *n);
/* True when NIC thread t writes queue q. */
static inline bool nic_thread_owns(const struct rxs_nic *n, uint32_t t, uint32_t q)
{
	return q % n->groups == t / n->writers;
}
/* dma.c: a NIC thread's body (arg: its struct nic_thread). */
void *rxs_nic_thread_main(void *arg);

#endif
