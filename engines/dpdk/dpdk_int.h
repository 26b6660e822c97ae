/* SPDX-License-Identifier: MIT */
/*
 * Private to engines/dpdk: a run's queues, the daqiri-like workers and the
 * backend interface (ethdev = a real port through rte_eth_rx_burst, sim =
 * the mlx5 PMD's receive disciplines over the software NIC's rings).
 *
 * Per queue: an RX lcore calls the backend's burst function (chosen once
 * at setup), collects packets into batches of `batch` with per-packet
 * segment pointers, and hands full batches to the app over an SP/SC
 * rte_ring; empty batches come back over a second SP/SC ring. The app
 * (EAL lcore, plain pthread, or inline on the RX lcore) reads pkt_len and
 * frees with rte_pktmbuf_free_bulk, mixed or grouped per pool.
 */
#ifndef RXRAY_DPDK_INT_H
#define RXRAY_DPDK_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/probe.h"
#include "rxray/result.h"

#define RXD_CACHELINE 64
#define RXD_MAX_SEGS 2
#define RXD_MAX_BURST 512
#define RXD_GPU_DEPTH 16 /* GPU batches in flight per queue */

/* One hand-off: up to `batch` packets and their segments. */
struct rxd_batch {
	uint32_t n; /* packets */
	uint32_t pad;
	struct rte_mbuf **pkts; /* [batch] packet heads */
	struct rte_mbuf **segs; /* [batch * segs] segment k*segs+s of packet k */
};

struct rxd_queue;
struct rxd_run;

/*
 * Receive up to n packets into pkts. Laps its own stages on p (cqe_poll
 * ... doorbell) and laps idle when it returns 0.
 */
typedef uint16_t (*rxd_burst_fn)(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
				 uint16_t n);

struct rxd_rx_stats {
	uint64_t delivered;   /* packets the backend returned */
	uint64_t app_dropped; /* hand-off ring full: freed on the RX lcore */
	uint64_t handoffs;
	uint64_t bursts, empty_bursts;
};

struct rxd_app_stats {
	uint64_t received; /* packets the app read and freed */
	uint64_t bytes;
	uint64_t batches;
	uint64_t seq_missing; /* sum of forward gaps (sim) */
	uint64_t seq_dup;     /* went backwards or repeated */
	uint64_t tag_errors;  /* bad magic or wrong queue */
	uint64_t len_errors;  /* pkt_len != frame (sim) */
	uint64_t next_seq;
	bool seq_started;
};

struct rxd_queue {
	uint32_t index;
	struct rxd_run *run;
	rxd_burst_fn burst_fn;		      /* chosen at setup */
	void *be;			      /* backend per-queue state */
	struct rte_mempool *mp[RXD_MAX_SEGS]; /* segment pools (mp[1] NULL: single) */
	uint32_t segs;			      /* segments per packet */
	uint32_t batch, burst;
	uint32_t frame; /* expected pkt_len; 0 = unchecked */
	bool check_tag; /* sim: read the rxray tag in the header */
	bool per_pool_free;
	enum rx_app app; /* resolved: EAL, THREAD (non-EAL) or INLINE */
	/* variants chosen once per queue (rxd_queue_variants) */
	void (*app_read)(struct rxd_queue *q, struct rxd_batch *b);
	void (*app_free)(struct rxd_queue *q, struct rxd_batch *b);
	void (*handoff)(struct rxd_queue *q, struct rxp_probe *p);

	/* rx side */
	_Alignas(RXD_CACHELINE) struct rxd_rx_stats rx;
	struct rxd_batch *cur;	    /* batch being filled */
	struct rxd_mpops_counts rx_ops;
	struct rxd_mpops_counts rx_idle_ops; /* calls made by empty polls */

	/* rx -> app */
	_Alignas(RXD_CACHELINE) atomic_int rx_done;
	atomic_int rx_started;
	struct rte_ring *hand;	   /* full batches, SP/SC */
	struct rte_ring *spare;	   /* empty batches back, SP/SC */
	struct rxd_batch *batches; /* owned array */
	uint32_t nbatches;
	struct rte_mbuf **batch_mem; /* owned pointer storage */

	/* app side */
	_Alignas(RXD_CACHELINE) struct rxd_app_stats appst;
	struct rxd_mpops_counts app_ops;

	/* GPU consumer (--gpu-work): batches wait in gfifo until the kernel
	 * that read their payloads completed, then their mbufs are freed */
	struct rxg_consumer *gpu;
	void **gaddr;           /* [batch] payload addresses */
	uint64_t *gseq;         /* [batch] sequence numbers */
	struct rxd_batch *gfifo[RXD_GPU_DEPTH];
	uint32_t ghead, gtail;
};

/* --------------------------------------------------------------- backends */

/*
 * A device behind the workers. open: everything up to traffic (pools,
 * rings, queue setup) and each queue's burst_fn/be/mp/segs; start: let
 * traffic flow; quiet: true once no new packet will arrive for queue q
 * (the RX lcore then drains and ends); pending: packets still waiting in
 * q's device queue; collect: counters and extras into r after the
 * workers ended; rearm: see below; close: undo open. 0 or -errno with a
 * line in err. open reads run->nic_seconds: how long a software NIC's
 * first phase runs (the warm-up's length when there is one).
 */
struct rxd_backend_ops {
	const char *name;
	/* Its queues are the software NIC's rings (q->be a struct rxd_simq),
	 * which can be looked at without polling: calibration mode waits on
	 * them (rxd_coalesce_ready). A flag, not a compare with the sim ops,
	 * so the workers' code does not reach into the sim backend. */
	bool soft_rings;
	int (*caps)(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen);
	int (*validate)(const struct rx_config *c, const struct rx_caps *caps, char *err,
			size_t errlen);
	int (*open)(struct rxd_run *run, char *err, size_t errlen);
	int (*start)(struct rxd_run *run, char *err, size_t errlen);
	bool (*quiet)(struct rxd_run *run, struct rxd_queue *q);
	bool (*pending)(struct rxd_run *run, struct rxd_queue *q);
	int (*collect)(struct rxd_run *run, struct rxr_result *r, json_t *extra);
	/* After a warm-up phase (every worker ended, the engine's counters
	 * reset): set each queue's appst.next_seq to where the measured phase
	 * starts, reset the device's counters and let it run `seconds` more. NULL: the device cannot
	 * warm up (its traffic is not ours to restart). */
	int (*rearm)(struct rxd_run *run, double seconds, char *err, size_t errlen);
	void (*close)(struct rxd_run *run);
};

extern const struct rxd_backend_ops rxd_backend_ethdev;
extern const struct rxd_backend_ops rxd_backend_sim;

struct rxd_run {
	const struct rx_config *c;
	const struct rxd_backend_ops *be;
	void *be_priv; /* owned by the backend */
	struct rx_placement pl;
	uint32_t nq;
	struct rxd_queue *q;	 /* nq entries, owned */
	uint32_t pool_buffers;	 /* mbufs per pool */
	uint32_t hring;		 /* hand-off ring slots */
	uint32_t run_id;	 /* makes DPDK object names unique */
	enum rx_discipline disc; /* resolved (sim) */
	volatile sig_atomic_t *stop;
	atomic_int quit; /* ethdev: time is up */
	atomic_int live; /* the device delivers: rx workers poll from then on
			  * (ethdev: once rte_eth_dev_start returned; a burst
			  * racing the start read a half-set queue and crashed) */
	double seconds;	 /* measured run length */
	char eal_note[256];
	bool no_huge;
	bool opened; /* the backend's open ran (close undoes it) */
	double nic_seconds; /* the first phase's length (warm-up or the run) */
	uint32_t ring_pkts; /* packets a queue's ring holds (rx_run.ring_pkts),
			     * set by the backend's open; 0 = c->ring */
};

/*
 * Bring the EAL up for a config (user arguments from a "dpdk:" device,
 * lcores for 2 threads per queue, memory for the pools). Same returns as
 * rxd_eal_ensure.
 */
int rxd_eal_for_config(const struct rx_config *c, char *note, size_t notelen, char *err,
		       size_t errlen);

/* Backend for a device string ("sim", "sim:...", "dpdk:..."); NULL none. */
const struct rxd_backend_ops *rxd_backend_find(const char *device);

/* --------------------------------------------------------------- workers */

/* Pools: mbufs per pool for a config (explicit c->buffers or derived). */
uint32_t rxd_pool_buffers(const struct rx_config *c, uint32_t hring);
/*
 * Create a pktmbuf pool with the counting driver: n mbufs of data room
 * `room` (headroom included), per-lcore cache `cache`. NULL + err line.
 */
/*
 * Data room of an mbuf that takes bytes of packet data: DPDK's headroom,
 * then at least RTE_MBUF_DEFAULT_DATAROOM (2048), larger rooms rounded
 * up to a cache line.
 */
static inline uint32_t rxd_mbuf_room(uint32_t bytes)
{
	return RTE_PKTMBUF_HEADROOM + (bytes > 2048 ? RTE_ALIGN_CEIL(bytes, 64) : 2048);
}

/* Data room of a header-segment mbuf (buffer split): headroom plus the
 * split size rounded up to a cache line. */
static inline uint32_t rxd_mbuf_hdr_room(uint32_t split)
{
	return RTE_PKTMBUF_HEADROOM + RTE_ALIGN_CEIL(split, 64);
}

struct rte_mempool *rxd_pool_create(const char *name, uint32_t n, uint32_t cache, uint32_t room,
				    char *err, size_t errlen);

/* Allocate batches and hand-off rings for q (after segs/batch are set). */
int rxd_queue_workers_init(struct rxd_run *run, struct rxd_queue *q, char *err, size_t errlen);
void rxd_queue_workers_fini(struct rxd_queue *q);
/* Choose q's app read, free and hand-off variants (after open set segs,
 * check_tag and the app placement). */
void rxd_queue_variants(struct rxd_queue *q);
/* Worker bodies (rx_worker_fn, arg = struct rxd_queue *): the RX thread
 * and the app thread, both registered with the EAL where DPDK gives such
 * a thread an lcore (RX always; app when placed as eal). */
int rxd_rx_loop(struct rx_worker *w, void *arg);
int rxd_app_loop(struct rx_worker *w, void *arg);
/* Wait for every queue's RX loop to end (the backend's quiet() ends each;
 * quit = 1 at c->seconds for ports that do not end by themselves). Sets
 * run->seconds. 0. */
int rxd_workers_wait(struct rxd_run *run, const struct rx_run *core);

/*
 * Calibration (--coalesce B, coalesce.c): true once `want` completions
 * wait in q's device queue (sim backend; always true on a real port).
 */
bool rxd_coalesce_ready(struct rxd_queue *q, uint32_t want);

/* Per-packet processing by the app on a batch (also used inline). Returns
 * true when the batch is kept (a GPU kernel still reads its payloads): it
 * goes back to the spare ring once that kernel completed. */
bool rxd_app_process(struct rxd_queue *q, struct rxp_probe *p, struct rxd_batch *b);
/* Wait for every GPU batch in flight, free its mbufs, return the batches
 * (after the workers ended). */
void rxd_gpu_drain(struct rxd_queue *q);
/* GPU payload pool for the software NIC: cudaMalloc'd buffers carved by
 * rte_pktmbuf_pool_create_extbuf (the counting driver's ops), no port to
 * map. NULL + err line (no CUDA, no GPU). */
struct rte_mempool *rxd_gpu_pool_create_sim(const char *name, uint32_t n, uint32_t cache,
					    uint32_t room, void **gpu_mem, size_t *gpu_len,
					    char *err, size_t errlen);

/* ---------------------------------------------------------------- GPU */

/*
 * Payload pool in GPU memory for an ethdev port (cudaMalloc +
 * rte_extmem_register + rte_dev_dma_map + rte_pktmbuf_pool_create_extbuf).
 * Built only with CUDA; otherwise returns NULL with "built without CUDA".
 * *gpu_mem receives the device allocation (free with rxd_gpu_pool_free).
 */
struct rte_mempool *rxd_gpu_pool_create(const char *name, uint16_t port, uint32_t n, uint32_t cache,
					uint32_t room, void **gpu_mem, size_t *gpu_len, char *err,
					size_t errlen);
/* Undo rte_dev_dma_map while the port still exists (before close). */
void rxd_gpu_unmap(uint16_t port, void *gpu_mem, size_t gpu_len);
/* Free the pool, unregister the external memory, cudaFree it. */
void rxd_gpu_pool_free(struct rte_mempool *mp, void *gpu_mem, size_t gpu_len);
bool rxd_gpu_available(void);
/* cudaFree for rxd_gpu_pool_create_sim's memory (after the pool went). */
void rxd_gpu_mem_free(void *gpu_mem);

#endif /* RXRAY_DPDK_INT_H */
