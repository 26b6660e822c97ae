/* SPDX-License-Identifier: MIT */
/*
 * The object graph every engine is driven through (DESIGN.md "One object
 * graph for every engine"): a run is described by one struct rx_config,
 * validated against the device's caps (queried before anything opens),
 * then handed to an engine's ops table, which fills a struct rxr_result.
 *
 *   rx_dev    opened from a device string ("sim", "sim:rate=12M",
 *             "mlx5:<pci>", "dpdk:<eal args>"); caps first
 *   rx_mem    a memory region: host | huge | gpu; registered -> lkey
 *   rx_queue  RQ + CQ of a given depth and segment layout
 *   rx_engine the datapath ops (this header: struct rx_engine_ops)
 *   worker    a pinned thread with a probe context
 *
 * Owner of this header: engines/core. Extend freely; do not rename.
 * Error rule: functions return 0 or -errno; validation errors also write
 * one line "<field>: <what>" into the caller's buffer and return -EINVAL.
 */
#ifndef RXRAY_CORE_H
#define RXRAY_CORE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxray/probe.h"
#include "rxray/result.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rx_mode { RX_MODE_SINGLE = 0, RX_MODE_HDS };
enum rx_dma { RX_DMA_CACHE = 0, RX_DMA_MEMORY };          /* header placement */
enum rx_payload { RX_PAYLOAD_NONE = 0, RX_PAYLOAD_STAMP, RX_PAYLOAD_FULL };
/* Where the application's per-packet work runs. */
enum rx_app {
	RX_APP_AUTO = 0,   /* thread when cores allow, else inline */
	RX_APP_THREAD,     /* its own core (verbs "thread"; dpdk "non-eal") */
	RX_APP_INLINE,     /* inside the RX worker ("same-core") */
	RX_APP_EAL,        /* dpdk: an EAL lcore (has a mempool cache) */
};
enum rx_free { RX_FREE_MIXED = 0, RX_FREE_PER_POOL }; /* dpdk free mode */
enum rx_discipline { RX_DISC_AUTO = 0, RX_DISC_SCALAR, RX_DISC_VECTOR };
enum rx_mem_kind { RX_MEM_HOST = 0, RX_MEM_HUGE, RX_MEM_GPU };

#define RX_MAX_QUEUES 64
#define RX_MAX_CORES 256

/* Everything a run needs; `rxray run` options map 1:1 onto fields. */
struct rx_config {
	char engine[16];        /* "verbs" | "dpdk" */
	char device[512];       /* device string as given */
	enum rx_mode mode;
	uint32_t frame;         /* bytes on the wire, without FCS */
	uint32_t split;         /* hds: bytes into the header segment */
	uint32_t queues;
	uint32_t nic_threads;   /* sim: software NIC threads, 0 = auto (rx_place) */
	uint32_t ring;          /* receive WQEs per queue (power of two) */
	uint32_t batch;         /* packets per hand-off to the app */
	uint32_t burst;         /* CQEs polled per rx burst */
	uint32_t buffers;       /* dpdk: mbufs per pool (0 = derived) */
	uint32_t hring;         /* hand-off ring slots (0 = derived) */
	double rate_pps;        /* offered rate, 0 = as fast as possible */
	double seconds;
	int cores[RX_MAX_CORES];/* cores to use, in order (NIC threads first on sim) */
	int ncores;             /* 0 = the process's affinity mask */
	enum rx_dma dma;
	enum rx_payload payload;
	enum rx_app app;
	enum rx_free free_mode;
	enum rx_discipline discipline;
	enum rx_mem_kind payload_mem;
	uint32_t mempool_cache; /* dpdk: per-lcore cache size, 0..512 */
	uint64_t inject[RXR_ST_COUNT]; /* cycles spun inside a stage */
	uint32_t coalesce;      /* calibration: the rx worker waits (lapped idle)
				 * until this many completions are ready before it
				 * polls; 0 = off (cost model, DESIGN.md) */
	/* attribution ground truth (off = 0): cycles spun inside operations */
	uint32_t op_delay_mempool;  /* dpdk sim: per mempool driver get and put */
	uint32_t op_delay_mr;       /* dpdk sim: per MR (lkey) lookup */
	uint32_t op_delay_hdr_write;/* sim NIC: per header written */
	unsigned sample_shift;  /* full probes: sample 1 in 2^k bursts */
	bool allow_oversubscribe;
	char out[512];          /* result JSON path ("" = none, "-" = stdout) */
	bool quiet;
};

/* Defaults: verbs, "sim", single, frame 1064, split 64, 1 queue, ring
 * 8192, batch 64, burst 64, rate max, 2 s, dma cache, payload stamp. */
void rx_config_defaults(struct rx_config *c);
/* Config as a JSON object (for the result's "config"). New reference. */
json_t *rx_config_to_json(const struct rx_config *c);
/* Names of enum values as used on the command line and in JSON. */
const char *rx_mode_name(enum rx_mode m);
const char *rx_app_name(enum rx_app a);
const char *rx_free_name(enum rx_free f);
const char *rx_discipline_name(enum rx_discipline d);
const char *rx_dma_name(enum rx_dma d);
const char *rx_payload_name(enum rx_payload p);
const char *rx_mem_kind_name(enum rx_mem_kind k);

/*
 * Set one field from its command-line/spec name and text value, e.g.
 * ("frame", "1064"), ("rate", "12M"), ("cores", "0,2-3"), ("inject",
 * "app=500" — accumulates), ("allow-oversubscribe", NULL). Units via
 * rxr_parse_*. 0, or -EINVAL with "<key>: <what>" in err (unknown key,
 * bad value, out of range). Only syntax and ranges here; cross-field
 * checks are rx_config_validate's.
 */
int rx_config_set(struct rx_config *c, const char *key, const char *val, char *err,
		  size_t errlen);

/* The keys rx_config_set knows, in help order. */
struct rx_config_key {
	const char *name;   /* "frame" */
	bool has_arg;
	const char *arg;    /* "BYTES" */
	const char *help;   /* one line, with the default */
};
extern const struct rx_config_key rx_config_keys[];
extern const size_t rx_config_nkeys;

/* ----------------------------------------------------------------- caps */

struct rx_caps {
	char name[64];          /* "simnic", "mlx5_0", "net_null0" */
	uint32_t max_ring;      /* max WQEs per RQ (max_qp_wr) */
	uint32_t max_sges;      /* max data segments per WQE */
	uint32_t max_queues;
	uint32_t max_frame;
	bool buffer_split;      /* header/data split supported */
	bool gpu_mem;           /* payload in GPU memory possible */
	double max_rate_pps;    /* device/generator ceiling if known, else 0 */
	uint32_t min_frame;     /* smallest frame (0 = no limit) */
	uint32_t min_split;     /* hds: smallest header segment (0 = 1) */
	bool sim_nic;           /* a software NIC thread needs a core */
};

/* Caps as a JSON object (new reference, NULL on ENOMEM). */
json_t *rx_caps_to_json(const struct rx_caps *caps);

/* -------------------------------------------------------------- engines */

/*
 * An engine: one file exporting a const ops table, listed in the CLI's
 * registry (tools/engines.c). NULL hook = nothing to do.
 */
struct rx_engine_ops {
	const char *name;
	const char *summary;
	/* Caps of the device named in c->device, before anything opens. */
	int (*caps)(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen);
	/* Engine-specific checks beyond rx_config_validate. */
	int (*validate)(const struct rx_config *c, const struct rx_caps *caps, char *err,
			size_t errlen);
	/*
	 * Run the datapath for c->seconds (or until *stop becomes nonzero),
	 * filling r: counters, threads (one per probe), config, env extras.
	 * Returns 0, or -errno with a line in err (runtime failure).
	 */
	int (*run)(const struct rx_config *c, struct rxr_result *r, volatile sig_atomic_t *stop,
		   char *err, size_t errlen);
};

/*
 * Checks shared by every engine, before anything starts (DESIGN.md): ring
 * depth vs caps.max_ring and power of two; batch and burst vs ring slots
 * (a larger batch stalls silently in the field); buffers vs ring depth +
 * batch (the deadlock floor); split vs frame; segments vs max_sges; queues
 * vs caps and cores. Returns 0 or -EINVAL with "<field>: <what>" in err.
 */
int rx_config_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
		       size_t errlen);

/* ---------------------------------------------------------------- cores */

/*
 * Thread placement for a run: which core each role gets. Roles needing a
 * core of their own: the software NIC's threads (sim devices only), one rx
 * worker per queue, and an app thread per queue when c->app is THREAD/EAL
 * (AUTO resolves to THREAD when cores allow, else INLINE).
 *
 * NIC threads (each owns queues q % nic_threads): the count asked for by
 * c->nic_threads or the device option "sim:nics=N" (both set: they must
 * agree), never more than the queues; else auto = min(queues, cores left
 * after the rx workers and app threads), at least 1 (1 on a 2-core
 * machine). AUTO app is resolved first, as if there were one NIC thread
 * (or the count asked for). Cores are handed out in order: NIC threads,
 * rx workers, app threads. needed counts every NIC thread; more than
 * available is an error naming the roles unless c->allow_oversubscribe.
 */
struct rx_placement {
	int nic_core;            /* -1 when no software NIC; = nic_cores[0] */
	int nic_threads;         /* 0 when no software NIC */
	int nic_cores[RX_MAX_QUEUES]; /* core of NIC thread t, -1 past the last */
	int rx_core[RX_MAX_QUEUES];
	int app_core[RX_MAX_QUEUES]; /* -1 = inline in the rx worker */
	enum rx_app app;         /* resolved */
	int needed, available;
	bool oversubscribed;
};
int rx_place(const struct rx_config *c, bool sim_nic, struct rx_placement *pl, char *err,
	     size_t errlen);
/*
 * The same decision on an explicit list of usable cores (no affinity
 * check): what rx_place does after resolving --cores or the mask.
 */
int rx_place_on(const struct rx_config *c, bool sim_nic, const int *cores, int ncores,
		struct rx_placement *pl, char *err, size_t errlen);
/*
 * The NIC thread count asked for: c->nic_threads, or the "nics=N" option
 * of a "sim:..." device string, 0 when neither (auto). 0 or -EINVAL with
 * "nic-threads: ..." / "device: ..." in err (bad nics=, the two disagree,
 * more threads than queues).
 */
int rx_nic_threads_asked(const struct rx_config *c, uint32_t *n, char *err, size_t errlen);
/* Placement as JSON {"nic","nic_threads","nic_cores":[],"rx":[],"app":[],
 * "app_mode","needed","available","oversubscribed"} (new reference). */
json_t *rx_placement_to_json(const struct rx_placement *pl);

/* --------------------------------------------------------------- device */

/*
 * A device string split into kind and options: "sim", "sim:rate=12M",
 * "mlx5:0000:3b:00.0", "dpdk:--vdev=net_null0". kind is the text before
 * the first ':' ("sim", "mlx5", "dpdk"), args the rest ("" when none).
 */
struct rx_dev {
	char kind[16];
	char args[496];
};
/* 0, or -EINVAL with "device: ..." in err (empty, kind too long). */
int rx_dev_parse(const char *device, struct rx_dev *d, char *err, size_t errlen);

/* --------------------------------------------------------------- memory */

/*
 * A memory region. host: page-aligned anonymous memory; huge: mmap with
 * MAP_HUGETLB (fails with a clear line when no hugepages are reserved);
 * gpu: cudaMalloc through libcudart loaded at run time (fails with a clear
 * line when CUDA or a GPU is absent). The engine registers it with its
 * device and stores the key in lkey.
 */
struct rx_mem {
	void *addr;
	size_t len;             /* bytes mapped (rounded up to the page size) */
	size_t page_size;
	enum rx_mem_kind kind;
	uint32_t lkey;          /* set by the engine after registration */
	void *priv;             /* kind-specific (cuda handle) */
};
/*
 * Allocate len bytes of kind, zeroed (host/huge), and touched so pages are
 * resident. 0, or -errno with one line "payload-mem: ..." in err:
 * -ENOMEM (huge: no hugepages), -ENODEV (gpu: no CUDA runtime or device).
 */
int rx_mem_alloc(struct rx_mem *m, enum rx_mem_kind kind, size_t len, char *err, size_t errlen);
/* Release; m is zeroed. NULL and already-freed are fine. */
void rx_mem_free(struct rx_mem *m);
/* True when kind's memory is CPU-addressable (host, huge). */
bool rx_mem_cpu_visible(enum rx_mem_kind kind);

/* -------------------------------------------------------------- workers */

struct rx_worker;
/* A worker's body: runs on its pinned core; returns 0 or -errno. */
typedef int (*rx_worker_fn)(struct rx_worker *w, void *arg);

/*
 * A pinned thread with its own probe. The probe is created by
 * rx_worker_start (role, core, c->sample_shift, c->inject copied in) and
 * reset on the thread after pinning, right before fn runs. Owned by the
 * worker until rx_worker_destroy.
 */
struct rx_worker {
	pthread_t tid;
	int core;               /* -1 = unpinned */
	struct rxr_probe *probe;
	rx_worker_fn fn;
	void *arg;
	int rc;                 /* fn's return (after join) */
	bool started, joined;
	char role[8];
};
/*
 * Start fn(w, arg) on a new thread pinned to core. c may be NULL (no
 * injection, no sampling). 0 or -errno (probe allocation, pthread).
 * A pinning failure is returned by fn's slot: rc = -errno after join.
 */
int rx_worker_start(struct rx_worker *w, const char *role, int core, const struct rx_config *c,
		    rx_worker_fn fn, void *arg);
/* Join; returns the worker's rc (0 or -errno). Idempotent. */
int rx_worker_join(struct rx_worker *w);
/* Join if needed and free the probe. NULL ok. */
void rx_worker_destroy(struct rx_worker *w);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_CORE_H */
