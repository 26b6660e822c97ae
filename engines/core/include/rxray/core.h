/* SPDX-License-Identifier: MIT */
/*
 * The object graph every engine is driven through (docs/design.md "One object
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

#include "rxray/inject.h" /* rx_config carries injections and op delays */
#include "rxray/probe.h"
#include "rxray/result.h"
#include "rxray/validity.h"

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
/* auto: the run first runs at its rate until every WQE was used at least
 * once (and at least RX_WARMUP_MIN_S), then counters and laps start */
enum rx_warmup { RX_WARMUP_AUTO = 0, RX_WARMUP_OFF };
/* The GPU consumer stage (engines/gpu): what a kernel does with each
 * batch of payloads in GPU memory; none = no GPU stage. */
enum rx_gpu_work { RX_GPU_WORK_NONE = 0, RX_GPU_WORK_REORDER, RX_GPU_WORK_CHECKSUM };
enum rx_gpu_launch { RX_GPU_LAUNCH_KERNEL = 0, RX_GPU_LAUNCH_GRAPH, RX_GPU_LAUNCH_PERSISTENT };
/* Kernel launches carry a batch in their parameters: this many packets at most. */
#define RX_GPU_PARAM_BATCH_MAX 1024u
#define RX_WARMUP_MIN_S 0.05
#define RX_WARMUP_MAX_S 2.0
/* sim: compressed CQE sessions; auto = as the engine's driver asks (dpdk:
 * on, as the mlx5 PMD; verbs: off, its DevX consumer does not ask). */
enum rx_cqe_comp { RX_CQE_COMP_AUTO = 0, RX_CQE_COMP_ON, RX_CQE_COMP_OFF };
/* verbs: which CQ consumer's barrier per CQE (verbs_dp.c). */
enum rx_consumer { RX_CONSUMER_DEVX = 0, RX_CONSUMER_RDMA_CORE };

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
	uint32_t nic_threads;   /* device threads (software NIC), 0 = auto: rx_dev_ops */
	uint32_t dma_writers;   /* DMA writers per NIC thread, 0 = auto: rx_dev_ops */
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
	uint32_t mempool_cache; /* dpdk: per-lcore cache size, 0..RX_MEMPOOL_CACHE_MAX */
	enum rx_cqe_comp cqe_comp; /* sim: CQE compression (default auto) */
	enum rx_consumer consumer; /* verbs: CQ consumer (default devx) */
	uint64_t inject[RXP_ST_COUNT]; /* cycles spun inside a stage */
	bool inject_ab;		       /* verification: inject one lap in four, report
					* the halves apart (rxp_probe_set_inject_ab);
					* with an op_delay, delay the operations of
					* one lap in four (rx_op_gate_stage) */
	uint32_t coalesce;      /* calibration: the rx worker waits (lapped idle)
				 * until this many completions are ready before it
				 * polls; 0 = off (cost model, docs/method.md) */
	/* attribution ground truth (off = 0): cycles spun inside operations */
	uint32_t op_delay_mempool;  /* dpdk sim: per mempool driver get and put */
	uint32_t op_delay_mr;       /* dpdk sim: per MR (lkey) lookup */
	uint32_t op_delay_hdr_write;/* sim NIC: per header written */
	uint32_t op_delay_repost;   /* verbs: per slot reposted (sge_setup) */
	uint32_t op_delay_dbrec;    /* verbs: per RQ doorbell record written */
	uint32_t op_delay_hdr_read; /* verbs: per header the app reads */
	unsigned sample_shift;  /* full probes: sample 1 in 2^k bursts */
	bool allow_oversubscribe;
	enum rx_warmup warmup;  /* warm-up phase before the measured one */
	enum rx_gpu_work gpu_work; /* GPU consumer stage (payload-mem gpu) */
	enum rx_gpu_launch gpu_launch; /* how the consumer reaches the GPU per batch */
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
 * The knob table (options.c): one row per rx_config field, driving `rxray
 * run`/`caps` options and help, the sweep spec's value checks and the enum
 * names. Names use '-' ("mempool-cache"); lookups also take '_'.
 */
enum rx_knob_type {
	RX_KT_STRING,   /* char[] field */
	RX_KT_UINT,     /* uint32_t/unsigned field in [min, max] */
	RX_KT_ENUM,     /* int-sized enum field, values in names[] */
	RX_KT_RATE,     /* double pps: "12M", "500k", "max" (= 0) */
	RX_KT_SECONDS,  /* double seconds: "2", "500ms" */
	RX_KT_CORES,    /* cores[] + ncores: "0,2-3" */
	RX_KT_INJECT,   /* inject[]: "STAGE=CYC[,STAGE=CYC]", accumulates */
	RX_KT_OPDELAY,  /* op_delay_*: "mempool=K,mr=K,hdr_write=K" */
	RX_KT_FLAG,     /* bool, takes no value */
};
#define RX_KNOB_POW2     0x1u /* UINT: a power of two */
#define RX_KNOB_AUTO0    0x2u /* UINT: "auto" stores 0 */
#define RX_KNOB_HDS_ONLY 0x4u /* applies to mode hds only */

struct rx_knob_name {
	const char *name;  /* the first name of a value is its canonical one */
	int value;
};

struct rx_knob {
	const char *name;       /* "frame": --frame, spec "frame"/"frames" */
	enum rx_knob_type type;
	const char *arg;        /* "BYTES" in help; NULL for flags */
	uint64_t min, max;      /* UINT */
	const struct rx_knob_name *names; /* ENUM, NULL-terminated */
	size_t offset, size;    /* the field in struct rx_config */
	unsigned flags;         /* RX_KNOB_* */
	const char *engines;    /* "dpdk" or "a,b": only these take it; NULL all */
	const char *help;       /* one line, with the default */
	unsigned sweep;         /* position in a sweep point's key (1 first, at most
				 * RX_KNOB_SWEEP_MAX); 0 = no sweep axis */
	const char *spec;       /* a sweep spec's other names for it ("frames"), comma-joined */
};

/*
 * Sweep positions at most: the sweep's per-point arrays hold this many
 * knobs (sweeps/, which sizes them from it). The table's rows and the
 * registered ones together stay within it; the sweep refuses to load a
 * spec when they do not (sweep_knobs_check).
 */
#define RX_KNOB_SWEEP_MAX 32

/* Knobs in the table, registered ones included. */
size_t rx_knob_count(void);
/* Knob i, 0 <= i < rx_knob_count() (table order, then registration order); NULL past it. */
const struct rx_knob *rx_knob_at(size_t i);
/*
 * Add a row after the table (a test's knob, an engine built out of tree):
 * `rxray run`/`caps` options, rx_config_set and sweep specs take it as a
 * row of the table. k is borrowed and must outlive every use; not thread
 * safe (register before anything reads the table).
 * @return 0; -EINVAL when k has no name, its field lies outside struct
 *         rx_config, or its sweep position is not 0 or the next free one;
 *         -EEXIST when its name is taken; -ENOSPC past RX_KNOB_EXTRA_MAX
 *         registered rows, or when its sweep position would be past
 *         RX_KNOB_SWEEP_MAX (the sweep has no room for another axis)
 */
#define RX_KNOB_EXTRA_MAX 16
int rx_knob_register(const struct rx_knob *k);

/* The knob called name ('-' or '_'), NULL when none. */
const struct rx_knob *rx_knob_find(const char *name);
/* Canonical name of an ENUM knob's value ("?" when none). */
const char *rx_knob_value_name(const struct rx_knob *k, int value);
/* Whether engine takes knob k (its engines list, or every engine). */
bool rx_knob_applies(const struct rx_knob *k, const char *engine);
/*
 * An option c's engine does not read (its knob names other engines) set
 * away from its default: it would be recorded as if it changed the run.
 * A sweep drops such knobs per point (sweeps/matrix.c), so only an
 * explicit value is caught. 0, or -EINVAL with "<knob>: the <engine>
 * engine does not read it ..." in err. rx_run_check calls it.
 */
int rx_config_check_engine(const struct rx_config *c, char *err, size_t errlen);

/*
 * Set one field from its knob name and text value, e.g. ("frame", "1064"),
 * ("rate", "12M"), ("cores", "0,2-3"), ("inject", "app=500" — accumulates),
 * ("allow-oversubscribe", NULL). 0, or -EINVAL with "<knob>: <what>" in err
 * (unknown key, bad value, out of range). The same messages for the CLI
 * and sweep specs. Only syntax and ranges here; cross-field checks are
 * rx_config_validate's.
 */
int rx_config_set(struct rx_config *c, const char *key, const char *val, char *err,
		  size_t errlen);

/* ----------------------------------------------------------------- caps */

/*
 * A device that runs threads of its own (the software NIC: NIC threads,
 * each with DMA writers) owns their rules: its device-string options, the
 * limits on the counts and what auto means. The core asks it through this
 * table, found on its caps (rx_caps.dev, NULL: a device without threads),
 * and only hands out the cores. The device's library defines the one
 * instance (engines/simnic: rxs_dev_ops, set by rxs_caps).
 */
struct rx_caps;
struct rx_dev_threads {
	uint32_t threads;       /* NIC threads */
	uint32_t writers;       /* DMA writers per NIC thread */
};
/* What a run asked for (0 = auto), what the placement resolved it to and
 * what the device ran, as its result records them. */
struct rx_dev_record {
	struct rx_dev_threads asked, resolved, actual;
};
struct rx_dev_ops {
	const char *name;
	/* The device's checks of c before anything is placed: its own
	 * device-string options, the knobs and those options agreeing, and
	 * every rule on the counts taken alone. asked (may be NULL): the
	 * counts asked for, 0 = auto. 0, or -EINVAL with one "<knob>: ..."
	 * or "device: ..." line. Pure and cheap: it runs more than once. */
	int (*check)(const struct rx_config *c, const struct rx_caps *caps,
		     struct rx_dev_threads *asked, char *err, size_t errlen);
	/* Auto resolved, given spare = the cores the rx workers and app
	 * threads leave (may be <= 0), then the rules on the pair. out has
	 * no 0. 0, or -EINVAL with one line. */
	int (*size)(const struct rx_config *c, const struct rx_caps *caps,
		    const struct rx_dev_threads *asked, int spare, struct rx_dev_threads *out,
		    char *err, size_t errlen);
	/* The counts as r records them, in this build's shape or an earlier
	 * one. 0, or -ENOENT when r has no record of the device. */
	int (*record)(const struct rxr_result *r, struct rx_dev_record *out);
};

struct rx_caps {
	char name[64];          /* "simnic", "mlx5_0", "net_null0" */
	uint32_t max_ring;      /* max WQEs per RQ (max_qp_wr) */
	uint32_t max_sges;      /* max data segments per WQE */
	uint32_t max_queues;
	uint32_t max_frame;
	bool buffer_split;      /* header/data split supported */
	bool gpu_mem;           /* payload in GPU memory possible */
	char gpu_why[96];       /* why not, where the device knows ("" else) */
	double max_rate_pps;    /* device/generator ceiling if known, else 0 */
	uint32_t min_frame;     /* smallest frame (0 = no limit) */
	uint32_t min_split;     /* hds: smallest header segment (0 = 1) */
	/* threads of the device's own, each needing a core (the software
	 * NIC); NULL: none */
	const struct rx_dev_ops *dev;
	/* the RQ counts its descriptors in segments (the mlx5 PMD): a ring of
	 * N with two segments per packet holds N/2 WQEs */
	bool rq_segments;
};

/* Caps as a JSON object (new reference, NULL on ENOMEM). */
json_t *rx_caps_to_json(const struct rx_caps *caps);

/*
 * Checks shared by every engine, before anything starts (docs/design.md
 * "Validation against caps"): ring depth vs caps.max_ring and power of two;
 * batch and burst vs ring slots (a larger batch stalls silently in the field);
 * buffers vs ring depth + batch (the deadlock floor); split vs frame; segments
 * vs max_sges; queues vs caps and cores. Returns 0 or -EINVAL with "<field>:
 * <what>" in err.
 */
int rx_config_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
		       size_t errlen);
/* The same checks without the placement (callers that place threads
 * themselves, like sweeps). */
int rx_config_validate_fields(const struct rx_config *c, const struct rx_caps *caps, char *err,
			      size_t errlen);
/* Caps of a device with no limits (split possible, any ring, any frame):
 * what is left to check when the real device cannot be asked. */
void rx_caps_ideal(struct rx_caps *caps);
/* True when the device's caps can be read without opening anything (the
 * software NIC "sim", the null device); real devices ("mlx5:", "dpdk:")
 * are opened by their caps. */
bool rx_dev_caps_offline(const char *device);

/* ---------------------------------------------------------------- cores */

/*
 * Thread placement for a run: which core each role gets. Roles needing a
 * core of their own: the device's threads (caps->dev, the software NIC),
 * one rx worker per queue, and an app thread per queue when c->app is
 * THREAD/EAL (AUTO resolves to THREAD when cores allow, else INLINE).
 *
 * The device's threads: caps->dev->check gives the counts asked for, and
 * AUTO app is resolved as if there were that many NIC threads (auto: 1).
 * caps->dev->size then resolves auto from the cores the rx workers and
 * app threads leave. Cores are handed out in order: the device's threads
 * (NIC thread t's writer w on nic_cores[t * dma_writers + w]), rx
 * workers, app threads. needed counts every device thread; more than
 * available is an error naming the roles unless c->allow_oversubscribe.
 * A device without threads refuses --nic-threads and --dma-writers > 1.
 */
struct rx_placement {
	int nic_core;            /* -1 when the device has no threads; = nic_cores[0] */
	int nic_threads;         /* resolved NIC threads, 0 when none */
	int dma_writers;         /* resolved writers per NIC thread, 0 when none */
	int nic_all;             /* nic_threads x dma_writers: the entries of nic_cores */
	int nic_cores[RX_MAX_QUEUES]; /* core of device thread i, -1 past the last */
	int rx_core[RX_MAX_QUEUES];
	int app_core[RX_MAX_QUEUES]; /* -1 = inline in the rx worker */
	enum rx_app app;         /* resolved */
	int needed, available;
	bool oversubscribed;
};
int rx_place(const struct rx_config *c, const struct rx_caps *caps, struct rx_placement *pl,
	     char *err, size_t errlen);
/*
 * The same decision on an explicit list of usable cores (no affinity
 * check): what rx_place does after resolving --cores or the mask.
 */
int rx_place_on(const struct rx_config *c, const struct rx_caps *caps, const int *cores,
		int ncores, struct rx_placement *pl, char *err, size_t errlen);
/* Placement as JSON {"nic","nic_cores":[],"rx":[],"app":[],"app_mode",
 * "needed","available","oversubscribed"} (new reference). The counts
 * asked, resolved and run are the device's record (rx_dev_ops.record). */
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
	struct rxp_probe *probe;
	rx_worker_fn fn;
	void *arg;
	int rc;                 /* fn's return (after join) */
	int finished;           /* set (atomically) once the thread is done,
				 * fn run or not: read with __atomic_load_n */
	int entered;            /* set (atomically) just before fn runs: the
				 * core starts the device only once every
				 * worker has (run_phase), so no traffic
				 * arrives before its receiver polls */
	struct rxr_valid_thread valid; /* switches, migrations, run-queue wait
					* over fn's window (rxray/validity.h) */
	bool valid_ok;          /* valid was begun and ended on the thread */
	bool started, joined;
	char role[8];
	int ktid;               /* the thread's kernel id, set (atomically) on
				 * the thread before it pins: read with
				 * __atomic_load_n; 0 until then */
};
/*
 * --op-delay with --inject-ab: the stage of a worker of this role whose
 * laps perform the delayed operation and gate it (rxp_probe_set_op_gate):
 * mempool: the rx refill (buf_alloc) and the app thread's free; mr: the
 * rx SGE set-up. -1: none (no A/B, no such operation, or another role).
 * *k (may be NULL): the gated operation's delay, 0 with no gate.
 */
int rx_op_gate_stage(const struct rx_config *c, const char *role, uint32_t *k);
/* The --op-delay operations, as the option names them. */
#define RX_OP_DELAY_OPS "mempool, mr, hdr_write, repost, dbrec, hdr_read"
/* How many --op-delay operations c delays (0: none). */
/*
 * DPDK's mempool cache rules, stated once for every layer (engines/core
 * may not include DPDK headers; the dpdk engine asserts at compile time
 * that RX_MEMPOOL_CACHE_MAX equals RTE_MEMPOOL_CACHE_MAX_SIZE).
 */
#define RX_MEMPOOL_CACHE_MAX 512 /* largest per-lcore cache rte_mempool takes */

/* Whether rte_mempool accepts a per-lcore cache of cache objects. */
static inline bool rx_mempool_cache_fits(uint32_t cache)
{
	return cache <= RX_MEMPOOL_CACHE_MAX;
}

/*
 * Objects one lcore's cache of size cache may hold before it flushes to
 * the pool (rte_mempool.c's flush threshold, cache x 1.5 rounded down).
 * rte_mempool refuses a pool of n objects when this exceeds n.
 */
static inline uint64_t rx_mempool_cache_flushthresh(uint32_t cache)
{
	return (uint64_t)cache * 3 / 2;
}

static inline int rx_op_delays(const struct rx_config *c)
{
	return !!c->op_delay_mempool + !!c->op_delay_mr + !!c->op_delay_hdr_write +
	       !!c->op_delay_repost + !!c->op_delay_dbrec + !!c->op_delay_hdr_read;
}
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

/* -------------------------------------------------------------- engines */

struct rx_run;
struct rx_queue;
struct rx_run_watch;

/*
 * An engine: one folder under engines/ exporting a const ops table, listed
 * in one line of engines/registry/registry.c. engines/core owns the run
 * sequence (rx_run_exec below); the engine fills hooks, NULL where it has
 * nothing special to do (testpmd's struct fwd_engine). Every hook that
 * can fail returns 0 or -errno with one line in err.
 *
 * How to add an engine (engines/null is the template):
 *   1. engines/<name>/CMakeLists.txt builds the static library rxray_<name>
 *      (linking rxray_core) and exports `const struct rx_engine_ops
 *      rx_engine_<name>`.
 *   2. One line in engines/registry/registry.c's table.
 * Its knobs come from the one knob table (options.c): a knob that only
 * some engines take names them in its `engines` field.
 *
 * The sequence, in order (rx_run_exec):
 *   caps -> rx_config_validate -> validate -> rx_place -> clock -> open ->
 *   queue_setup (each queue) -> app and rx workers started (pinned, with
 *   probes) -> start -> wait -> stop -> workers joined -> collect -> the
 *   result assembled once -> queue_teardown (each) -> close.
 */
struct rx_engine_ops {
	const char *name;
	const char *summary;
	bool test_only;         /* runs by name, left out of lists and help */
	/* Caps of the device named in c->device, before anything opens.
	 * Required. */
	int (*caps)(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen);
	/* Engine-specific checks beyond rx_config_validate (-EINVAL, one
	 * "<field>: <what>" line). NULL: none. */
	int (*validate)(const struct rx_config *c, const struct rx_caps *caps, char *err,
			size_t errlen);
	/* Device, memory, pools; run->priv and every run->q[i].priv set here.
	 * Required. */
	int (*open)(struct rx_run *run, char *err, size_t errlen);
	/* Per-queue rings and loop variants (chosen here, once). NULL: open
	 * did it all. */
	int (*queue_setup)(struct rx_run *run, struct rx_queue *q, char *err, size_t errlen);
	/* Worker bodies, run on the queue's pinned core with arg = q->priv.
	 * rx_loop is required; it returns once the device is quiet (after
	 * stop) and its queue drained. app_loop: the app thread's body when
	 * the placement gives it a core (NULL: this engine runs the app
	 * inline only); it returns once its rx side is done and its input
	 * empty. */
	rx_worker_fn rx_loop;
	rx_worker_fn app_loop;
	/* Let traffic flow. NULL: nothing to start. */
	int (*start)(struct rx_run *run, char *err, size_t errlen);
	/* Block until the run's traffic is over (the software NIC ended, or
	 * c->seconds passed, or *run->stop), setting run->seconds to how long
	 * traffic flowed. NULL: the core's timer (c->seconds or *run->stop). */
	int (*wait)(struct rx_run *run, char *err, size_t errlen);
	/* Tell the device and the loops to wind down: no new packets, rx
	 * loops drain and return. abort: something failed (a worker could not
	 * start or pin): end every loop now, app loops included. Required. */
	void (*stop)(struct rx_run *run, bool abort);
	/* After every worker ended: counters into r->c, the engine's extras
	 * (r->extra, config fields), extra probes (the software NIC's). The
	 * core adds the rx/app workers' probes, config, placement, env,
	 * clock and rates. Required. */
	int (*collect)(struct rx_run *run, struct rxr_result *r, char *err, size_t errlen);
	/* Between the warm-up phase and the measured one, after every worker
	 * ended: reset the engine's and the device's counters (rings, buffers
	 * and sequence numbers stay as they are, warm), so start/wait/stop
	 * can run again. Only called when open set run->warmup_s > 0. */
	int (*rearm)(struct rx_run *run, char *err, size_t errlen);
	/* Undo queue_setup (NULL-safe on a partial setup). NULL: nothing. */
	void (*queue_teardown)(struct rx_run *run, struct rx_queue *q);
	/* Undo open (NULL-safe on a partial open). NULL: nothing. */
	void (*close)(struct rx_run *run);
};

/* ---------------------------------------------------------------- a run */

/* One receive queue as the core sees it: its threads and the engine's
 * per-queue state. */
struct rx_queue {
	uint32_t index;
	struct rx_run *run;
	int rx_core;            /* from the placement */
	int app_core;           /* -1: the app runs inline in the rx worker */
	bool inline_app;
	struct rx_worker rxw, appw; /* appw unused when inline_app */
	void *priv;             /* the engine's, set in open */
};

struct rx_run {
	const struct rx_config *c;
	const struct rx_engine_ops *ops;
	struct rx_dev dev;
	struct rx_caps caps;
	struct rx_placement pl;
	uint32_t nq;
	struct rx_queue *q;     /* nq entries, owned by the core */
	void *priv;             /* the engine's run state (open/close) */
	volatile sig_atomic_t *stop; /* never NULL inside hooks */
	const struct rx_run_watch *watch; /* measured phase only; NULL: none */
	double seconds;         /* traffic time, set by wait */
	/* Warm-up: the core sets warmup_s (0 = none) before open from the
	 * config; open sets it to 0 when the device cannot warm up (a real
	 * port whose traffic it does not control). While warming is true,
	 * start/wait run the device for warmup_s seconds instead of
	 * c->seconds. */
	double warmup_s;
	bool warming;
	/* Packets one queue's ring holds: its WQEs, or its CQ where that is
	 * shallower (DPDK counts an RQ's descriptors in segments, so a ring
	 * of N with two segments per packet holds N/2). open sets it; 0 =
	 * c->ring. The validity's ring cover is this over the queue's rate. */
	uint32_t ring_pkts;
};

/*
 * Everything rx_run_exec checks before it starts anything: device string,
 * caps, shared and engine validation, placement (flags RX_CHECK_* leave
 * parts out). caps and pl may be NULL when the caller does not need them. 0, -EINVAL (bad config: one
 * "<field>: <what>" line), or another -errno from caps (device absent:
 * a runtime failure).
 */
#define RX_CHECK_NO_PLACE  0x1u /* skip the placement (the caller places) */
#define RX_CHECK_NO_DEVICE 0x2u /* do not ask the device: rx_caps_ideal */
int rx_run_check(const struct rx_engine_ops *ops, const struct rx_config *c, unsigned flags,
		 struct rx_caps *caps, struct rx_placement *pl, char *err, size_t errlen);

/*
 * One run: the sequence above, then the result assembled into r (from
 * rxr_result_open: config, env, counters, threads, clock, rates, and
 * extra.caps / extra.interrupted / extra.oversubscribed). stop may be
 * NULL. 0, -EINVAL (bad config, nothing started), or -errno (runtime).
 */
int rx_run_exec(const struct rx_engine_ops *ops, const struct rx_config *c, struct rxr_result *r,
		volatile sig_atomic_t *stop, char *err, size_t errlen);

/*
 * Someone watching the measured phase from outside the engine (rxray run
 * --sample: a BPF stack sampler on the rx threads). begin is called once
 * the workers run and before the device starts (what it takes to set up
 * comes out of no counted time), with the kernel thread ids of the rx
 * workers (one per queue whose worker runs); started (NULL: none) right
 * after the device started; end once wait returned (every rx loop done),
 * before stop, the device still started: so the watch covers the rx
 * threads' counted laps, start to drain. A failure of begin or started
 * (-errno, one line in err) ends the run as a runtime failure. None runs
 * for the warm-up phase. end is called whenever begin succeeded.
 */
struct rx_run_watch {
	int (*begin)(void *ctx, const int *rx_tids, uint32_t n, char *err, size_t errlen);
	int (*started)(void *ctx, char *err, size_t errlen);
	void (*end)(void *ctx);
	void *ctx;
};
/* rx_run_exec with a watch on the measured phase (w NULL: rx_run_exec). */
int rx_run_exec_watched(const struct rx_engine_ops *ops, const struct rx_config *c,
			struct rxr_result *r, volatile sig_atomic_t *stop,
			const struct rx_run_watch *w, char *err, size_t errlen);

/* Calibration length of the one clock calibration a process makes. */
#define RX_CLOCK_CALIB_MS 50u
/* Calibrate the probe clock once per process (no-op when done). 0/-errno. */
int rx_clock_once(char *err, size_t errlen);

/* --------------------------------------------------------------- GPU */

/* What a GPU consumer did in a run (engines/gpu's rxg_stats, in plain
 * numbers so the core needs no CUDA). */
struct rx_gpu_tally {
	const char *work;       /* "reorder" | "checksum" */
	uint64_t batches, packets, gaps, dups, checksum;
	double kernel_ms, max_batch_ms;
	const char *launch;     /* "kernel" | "graph" | "persistent" */
};
/*
 * Add queue's GPU consumer to r as a thread with role "gpu" (stage
 * gpu_kernel, its time from the GPU's timer in clock ticks, core -1) and an
 * entry of r->extra's "gpu" array. 0, -EINVAL (no clock), -ENOMEM.
 */
int rx_gpu_result_add(struct rxr_result *r, const struct rx_gpu_tally *g, uint32_t queue);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_CORE_H */
