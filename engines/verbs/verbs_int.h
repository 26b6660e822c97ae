/* SPDX-License-Identifier: MIT */
/*
 * Private to engines/verbs: the fixed-slot datapath's state and the
 * backend interface (sim = the software NIC's rings, mlx5 = rdma-core).
 *
 * Both backends hand the datapath the same thing: per queue, a receive
 * work queue and a completion queue in mlx5 format, described by
 * rdma-core's own struct mlx5dv_rwq and struct mlx5dv_cq (what
 * mlx5dv_init_obj fills on real hardware), plus the registered header and
 * payload regions with their lkeys. Everything after that is shared.
 *
 * Slot discipline (docs/design.md "The two engines", "daqiri's ibverbs engine"):
 * WQE i always points at header slot i and payload slot i. A completion's
 * wqe_counter & mask names the slot. The app releases slots in order with
 * one atomic add per packet; the RX worker reposts WQEs up to
 * released + ring and rings the doorbell record once per batch.
 */
#ifndef RXRAY_VERBS_INT_H
#define RXRAY_VERBS_INT_H

#include <infiniband/mlx5dv.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rxray/core.h"
#include "rxray/probe.h"

#define VERBS_CACHELINE 64
#define VERBS_MAX_RING 32768u /* 16-bit doorbell/wqe_counter must stay unambiguous */

/* One packet as the RX worker hands it to the app: its slot and length. */
struct verbs_pkt {
	uint16_t slot;
	uint16_t len;
};

/*
 * SPSC ring of bursts between one RX worker and one app thread. Entries
 * are fixed size (a count + burst packets). Producer and consumer indices
 * on separate cache lines, each side caching the other's index.
 */
struct verbs_hring {
	_Alignas(VERBS_CACHELINE) _Atomic uint32_t head; /* written by rx */
	uint32_t tail_cache;
	_Alignas(VERBS_CACHELINE) _Atomic uint32_t tail; /* written by app */
	uint32_t head_cache;
	_Alignas(VERBS_CACHELINE) uint32_t size;         /* entries, power of two */
	uint32_t mask;
	uint32_t entry_pkts;  /* packets per entry (= burst) */
	size_t entry_bytes;
	uint8_t *entries;     /* owned */
};

/*
 * Header of one hand-off entry; entry_pkts struct verbs_pkt follow.
 * n good packets go to the app; nfree >= n slots are released after them:
 * the burst's error CQEs and the slots of bursts dropped before it (a full
 * hand-off ring). Releases are positional counts, so a slot may only be
 * counted once every slot completed before it is counted too: carrying a
 * dropped burst's slots into the next burst keeps that order.
 */
struct verbs_burst {
	uint32_t n;
	uint32_t nfree;
	struct verbs_pkt pkt[];
};

/* Per-queue statistics, one writer each (rx or app), read after join. */
struct verbs_rx_stats {
	uint64_t cqes;          /* good completions polled */
	uint64_t err_cqes;      /* error completions */
	uint64_t app_dropped;   /* packets dropped: hand-off ring full */
	uint64_t doorbells;
	uint64_t posted;        /* WQEs rewritten after the initial post */
	uint32_t last_syndrome; /* of the last error CQE (0 = none) */
	uint32_t last_opcode;
};

struct verbs_app_stats {
	uint64_t received;      /* packets the app read and released */
	uint64_t bytes;
	uint64_t seq_dup;       /* sequence went backwards or repeated */
	uint64_t seq_missing;   /* sum of forward gaps */
	uint64_t len_errors;    /* byte count != frame */
	uint64_t next_seq;      /* next expected sequence number */
	bool seq_started;
};

struct verbs_queue;
typedef void (*verbs_app_fn)(struct verbs_queue *q, struct rxp_probe *p,
			     const struct verbs_burst *b);
typedef void (*verbs_rx_fn)(struct verbs_queue *q, struct rxp_probe *p);

/*
 * One queue: device rings (from the backend), slot regions, the release
 * counter shared by rx and app, the hand-off ring, per-side state.
 */
struct verbs_queue {
	/* set by the backend's open */
	struct mlx5dv_rwq rq;
	struct mlx5dv_cq cq;

	/* set by the engine */
	uint8_t *hdr_base;      /* this queue's header slots (hds) */
	uint8_t *pay_base;      /* payload slots (whole frame in single) */
	uint32_t hdr_lkey, pay_lkey;
	uint32_t index;
	uint32_t ring, mask;    /* WQEs = slots */
	uint32_t hdr_stride, pay_stride;   /* slot sizes (bytes) */
	uint32_t sge0_len, sge1_len;       /* data segment byte counts */
	uint32_t rq_shift;      /* log2(rq.stride) */
	uint32_t cqe_shift;     /* log2(cq.cqe_size) */
	uint32_t cqe64_off;     /* 64-byte CQE inside a 128-byte entry */
	uint32_t cq_mask;
	uint32_t frame, batch, burst;
	uint32_t coalesce;      /* calibration: completions to wait for, 0 = off */
	uint32_t seq_off;       /* be64 sequence number's offset in the header */
	/* --op-delay (attribution ground truth): cycles each operation owes */
	uint32_t od_repost;     /* per slot reposted (its WQE's data segments) */
	uint32_t od_dbrec;      /* per doorbell record written */
	uint32_t od_hdr_read;   /* per header the app reads */
	verbs_rx_fn rx_fn;      /* loop variant chosen at setup */
	verbs_app_fn app_fn;
	const _Atomic int *wire_done; /* nonzero once no new CQE can appear */

	/* rx worker private */
	_Alignas(VERBS_CACHELINE) uint32_t head;   /* WQEs posted, ever (mod 2^32) */
	uint32_t ci;            /* CQ consumer index */
	struct verbs_rx_stats rx;
	struct verbs_burst *scratch; /* owned; one burst */
	uint32_t carry;         /* slots of dropped bursts, released with the next */

	/* released by the app (one atomic add per packet) */
	_Alignas(VERBS_CACHELINE) _Atomic uint32_t released;

	/* rx -> app */
	_Alignas(VERBS_CACHELINE) _Atomic int rx_done;
	struct verbs_hring hr;

	/* app private */
	_Alignas(VERBS_CACHELINE) struct verbs_app_stats app;
	struct verbs_burst *gather; /* owned (app thread); up to max(batch, burst) */

	/* GPU consumer (--gpu-work): a batch's slots are released once the
	 * kernel that read them completed; gfree[] holds, per batch in
	 * flight, how many slots it releases */
	struct rxg_consumer *gpu;
	void **gaddr;           /* [burst] payload addresses of a batch */
	uint64_t *gseq;         /* [burst] their sequence numbers */
	uint32_t gfree[64];
	uint32_t ghead, gtail;
	int rx_core, app_core;  /* from the placement (app -1: inline) */
	uint64_t seq_base;      /* sequence numbers offered before this phase */
	bool inline_app;
};

/* ------------------------------------------------------------ backends */

struct verbs_run;

/* Per-queue counters a backend reports back to the engine. */
struct verbs_dev_counters {
	uint64_t offered;
	uint64_t out_of_buffer;
	uint64_t errors;        /* device-side errors (error CQEs written) */
	bool known;             /* offered/out_of_buffer are exact here */
};

/*
 * A device behind the datapath. Each hook returns 0 or -errno with one
 * line in err.
 *   caps     device caps from the config's device string, nothing opened
 *   open     device, rings (fills each queue's rq and cq), ready for reg
 *   reg      register [addr, addr+len) -> lkey (gpu: device memory)
 *   start    let traffic flow (sim: start the NIC thread)
 *   wait     block until the wire is quiet: the run's time is up or *stop
 *            (sim: the NIC ended; mlx5: the flow rule is gone), so no new
 *            CQE can appear; *seconds = how long traffic flowed
 *   collect  counters (totals + per queue) and device extras into r
 *   rearm    after a warm-up phase: counters start again, rings carry on,
 *            the device runs `seconds` more (NULL: no warm-up possible)
 *   close    undo open (NULL-safe on a partial open)
 */
struct verbs_backend_ops {
	const char *name;
	int (*caps)(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen);
	int (*open)(struct verbs_run *run, char *err, size_t errlen);
	int (*reg)(struct verbs_run *run, void *addr, size_t len, bool gpu, uint32_t *lkey,
		   char *err, size_t errlen);
	int (*start)(struct verbs_run *run, char *err, size_t errlen);
	int (*wait)(struct verbs_run *run, volatile sig_atomic_t *stop, double *seconds, char *err,
		    size_t errlen);
	int (*collect)(struct verbs_run *run, struct rxr_result *r, struct verbs_dev_counters *tot,
		       struct verbs_dev_counters *perq);
	int (*rearm)(struct verbs_run *run, double seconds, char *err, size_t errlen);
	void (*close)(struct verbs_run *run);
};

extern const struct verbs_backend_ops verbs_backend_sim;
extern const struct verbs_backend_ops verbs_backend_mlx5;

/* Backend for a device kind ("sim", "mlx5"); NULL when unknown. */
const struct verbs_backend_ops *verbs_backend_find(const char *kind);

/* A run: config, placement, queues, memory, backend state. */
struct verbs_run {
	const struct rx_config *c;
	const struct verbs_backend_ops *be;
	struct rx_dev dev;
	void *be_priv;          /* owned by the backend */
	struct rx_placement pl;
	uint32_t nq;
	struct verbs_queue *q;  /* nq entries, owned */
	struct rx_mem hdr_mem, pay_mem; /* every queue's slots, owned */
	uint32_t hdr_stride, pay_stride;
	uint32_t seq_off;
	_Atomic int wire_done;
	double nic_seconds;     /* the device's first phase (warm-up or run) */
};

/* ------------------------------------------------------------ datapath */

/*
 * Prepare queue q for the datapath: derive shifts and masks from its rq/cq,
 * pick the hot-loop variant, allocate its hand-off ring and scratch burst,
 * write every WQE (slot i -> WQE i) and ring the doorbell once.
 * 0 or -errno with a line in err.
 */
int verbs_queue_setup(struct verbs_run *run, struct verbs_queue *q, char *err, size_t errlen);
/* Free what verbs_queue_setup allocated (NULL-safe, idempotent). */
void verbs_queue_teardown(struct verbs_queue *q);
/*
 * The RX loop variant for a consumer (RX_CONSUMER_DEVX: no barrier per CQE
 * beyond the owner byte's acquire load, as daqiri's DevX consumer;
 * RX_CONSUMER_RDMA_CORE: rdma-core's udma_from_device_barrier per CQE,
 * an lfence on x86-64, dmb oshld on arm64), mode (hds), app placement
 * (inline) and WQE terminator (term). Chosen once per queue at setup.
 */
verbs_rx_fn verbs_rx_fn_pick(enum rx_consumer consumer, bool hds, bool inl, bool term);
/* The app's work with a GPU consumer (q->gpu set): hdr_read, app,
 * gpu_launch (and gpu_wait when the consumer is full), free of the slots
 * whose kernel completed. verbs_app_gpu_drain waits for every batch in
 * flight and releases its slots (after the workers ended). */
void verbs_app_gpu(struct verbs_queue *q, struct rxp_probe *p, const struct verbs_burst *b);
void verbs_app_gpu_drain(struct verbs_queue *q);
/* Worker bodies (rx_worker_fn): arg is a struct verbs_queue *. */
int verbs_rx_worker(struct rx_worker *w, void *arg);
int verbs_app_worker(struct rx_worker *w, void *arg);

#endif /* RXRAY_VERBS_INT_H */
