/* SPDX-License-Identifier: MIT */
/*
 * rxray run --sample: the cqe_poll lap of a real DPDK port, split by stack
 * samples. On a real port the PMD is opaque: rte_eth_rx_burst is one lap
 * (cqe_poll when it returned packets, idle when it returned none). rxray
 * attach's BPF sampler (rxray/attach.h) runs on rxray's own rx threads for
 * the measured phase; every sample whose stack holds the port's rx burst
 * function (the rte_eth_fp_ops entry) is a sample of that lap, and the
 * function it was in names its part: the PMD's burst function itself,
 * mempool get/put (the rte_mempool_ops_table entries), a replenish
 * routine, another function the burst called, or the kernel.
 *
 * Every figure here is an estimate from samples, never a counted one:
 * the result names it so ("cqe_poll_sampled", result.h documents the
 * member) with its sample counts, event and frequency beside it.
 *
 * Error rule as in rxray/attach.h: 0 or -errno, one line in err.
 */
#ifndef RXRAY_LAPSPLIT_H
#define RXRAY_LAPSPLIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxray/attach.h"
#include "rxray/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RXB_LAPSPLIT_MAX_PARTS 24 /* parts kept; the rest are one "other functions" part */
#define RXB_LAPSPLIT_DEFAULT_HZ 999
#define RXB_LAPSPLIT_STACK_BYTES 2048 /* dwarf: the rx loop, PMD and mempool frames fit */

/* What a part of the lap is (result.h: "kind"). */
enum rxb_lappart_kind {
	RXB_PART_RX_BURST = 0, /* in the PMD's rx burst function itself */
	RXB_PART_MP_GET,       /* in a mempool driver's dequeue (or below it) */
	RXB_PART_MP_PUT,       /* in a mempool driver's enqueue (or below it) */
	RXB_PART_MEMPOOL,      /* other mempool/ring code (cache paths, other ops) */
	RXB_PART_REPLENISH,    /* a replenish/refill/rearm routine, outside the mempool */
	RXB_PART_CALLEE,       /* another function the burst called (memcpy, ...) */
	RXB_PART_KERNEL,       /* in the kernel (interrupt, fault, syscall) */
	RXB_PART_LAP_SITE,     /* in the burst's caller's own code: rte_eth_rx_burst's
				* inline part around the call and the lap's clock read */
	RXB_PART_REST,         /* functions beyond the table, together */
	RXB_PART_NKINDS,
};
/* "rx_burst", "mempool_get", "mempool_put", "mempool", "replenish", "callee",
 * "kernel", "lap_site", "other"; NULL out of range. */
const char *rxb_lappart_kind_name(enum rxb_lappart_kind k);

/* One frame of a sampled stack, as the classifier sees it. */
struct rxb_lapframe {
	const char *name; /* function name, or dso+0xoffset */
	const char *dso;  /* object basename; "[kernel]" for kernel frames */
	enum rxb_dpdk_role role;
	bool kernel;
};

struct rxb_lappart {
	char name[FRAME_NAME_MAX];
	enum rxb_lappart_kind kind;
	uint64_t samples;
};

struct rxb_lapname {
	char name[FRAME_NAME_MAX];
	uint64_t samples;
};

struct rxb_lapsplit {
	/* samples */
	uint64_t samples;      /* of the rx threads, kept by the sampler */
	uint64_t in_burst;     /* with the rx burst function on the stack */
	uint64_t at_site;      /* in the lap site's own code (RXB_PART_LAP_SITE) */
	uint64_t unplaced;     /* outside the lap, but their stacks never reached the rx
				* loop (cut short or unwound astray): perhaps the lap's */
	size_t nparts;
	struct rxb_lappart parts[RXB_LAPSPLIT_MAX_PARTS]; /* sum = in_burst + at_site */
	char burst_fn[FRAME_NAME_MAX]; /* the rx burst function seen most */
	size_t nbursts, nsites;
	struct rxb_lapname bursts[4]; /* rx burst functions seen (one per port driver) */
	struct rxb_lapname sites[4];  /* their callers: rxray's lap sites (learnt) */
	size_t nloops;
	struct rxb_lapname loops[4];  /* the sites' callers: the rx loops (learnt) */
	/* how they were taken (rxb_lapsamp_fold fills these) */
	char event[16];        /* "cycles" or "cpu-clock" */
	char stacks[8];        /* "dwarf" or "fp" */
	unsigned freq_hz;
	unsigned rx_threads;
	double seconds;        /* the sampled window */
	uint64_t dropped, stack_errors, stacks_cut;
};

/* An empty split (everything zero). */
void rxb_lapsplit_init(struct rxb_lapsplit *sp);

/*
 * First pass over the stacks: learn the lap sites, the functions that
 * call the rx burst function (rxray's, which lap rte_eth_rx_burst), and
 * the rx loops that call them.
 */
void rxb_lapsplit_learn(struct rxb_lapsplit *sp, const struct rxb_lapframe *f, size_t n,
			uint64_t count);
/*
 * Second pass: count one sampled stack of an rx thread, count times.
 * f[0..n) is leaf first, kernel frames before user frames. The innermost
 * user frame with role RXB_ROLE_RX_BURST makes it a sample of the lap; so
 * does an innermost user frame that is a learnt lap site (a lap_site
 * part, or a kernel part when it was in the kernel). Inside the burst the
 * part is,
 * among the frames inside that burst frame: the nearest mempool ops frame
 * (get/put/other role), else mempool/ring code by name, else a replenish
 * routine (its name holds replenish, refill, rearm or alloc_bufs), else
 * the leaf (the burst function itself, or a callee); a kernel leaf makes
 * a kernel part named by its outermost kernel frame. Parts beyond
 * the table go to one RXB_PART_REST part. Other stacks only count in
 * samples, and in unplaced when they never reach a learnt rx loop.
 */
void rxb_lapsplit_add(struct rxb_lapsplit *sp, const struct rxb_lapframe *f, size_t n,
		      uint64_t count);

/* Sort the parts by samples, most first (ties by name). */
void rxb_lapsplit_sort(struct rxb_lapsplit *sp);

/*
 * The result member "cqe_poll_sampled" (result.h documents it) for sp,
 * with the counted figures it stands beside taken from r's rx threads:
 * their cqe_poll and idle cycles, every lapped cycle and their packets.
 * New reference, or NULL (ENOMEM).
 */
json_t *rxb_lapsplit_json(const struct rxb_lapsplit *sp, const struct rxr_result *r);

/* ------------------------------------------------------------ session */

struct rxb_lapsamp; /* the sampler on this process's rx threads */

struct rxb_lapsamp_opts {
	const int *tids;      /* the rx threads (kernel ids, this process) */
	size_t ntids;
	unsigned freq_hz;     /* 1..20000; 0 = RXB_LAPSPLIT_DEFAULT_HZ */
};

/*
 * Set up sampling of the rx threads of this process, before the ports
 * start (what it takes comes out of no counted time): privileges checked,
 * symbols opened, the BPF sampler loaded with its events on those threads
 * only, disabled (dwarf stacks where they load, else frame pointers), and
 * in dwarf mode a thread off the rx cores that drains and unwinds the
 * samples. 0 with *out set, or -errno with *out NULL and a line in err:
 * -EPERM (privileges), -ENOENT (no such thread), the sampler's errors.
 */
int rxb_lapsamp_open(const struct rxb_lapsamp_opts *o, struct rxb_lapsamp **out, char *err,
		     size_t errlen);
/* Sampling starts (the ports started). 0 or -errno with a line in err. */
int rxb_lapsamp_start(struct rxb_lapsamp *ls, char *err, size_t errlen);
/*
 * Sampling ends (idempotent), the ports still running: the drain thread
 * joined, the DPDK tables read (a stopped port's rte_eth_fp_ops entries
 * are ethdev's dummies), the perf events closed.
 */
void rxb_lapsamp_stop(struct rxb_lapsamp *ls);
/*
 * Stop, then fold every sampled stack into sp (initialised here). 0, or
 * -errno with a line in err: -ENOENT (no rx burst function in
 * rte_eth_fp_ops), -ENOMEM, the map walk's errors.
 */
int rxb_lapsamp_fold(struct rxb_lapsamp *ls, struct rxb_lapsplit *sp, char *err, size_t errlen);
/* Stop and free (NULL ok). */
void rxb_lapsamp_close(struct rxb_lapsamp *ls);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_LAPSPLIT_H */
