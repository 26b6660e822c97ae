/* SPDX-License-Identifier: MIT */
/*
 * rxray attach: per-packet attribution of a running, unmodified DPDK
 * process, from outside it.
 *
 *   target     which threads of which process (--pid, --tid, --lcore)
 *   telemetry  the target's DPDK telemetry v2 socket: port and mempool
 *              counters at the start and end of the window
 *   sampler    a BPF perf-event program counting user+kernel stacks of the
 *              target threads (hardware cycles where a PMU exists,
 *              cpu-clock otherwise) and optional uprobes on named symbols
 *   symbols    the target's objects through libdwfl (PIE, shared objects,
 *              CFI unwinding); names from .symtab, a separate debug file
 *              (build-id, .gnu_debuglink), .dynsym, then the DPDK tables
 *              read from the process; unnamed code is dso+0xoffset;
 *              kernel addresses through kallsyms
 *   profile    the window's samples, folded, normalised per packet:
 *              cycles/packet of a frame = its sample share x the threads'
 *              busy cycles / packets received in the window. The findings
 *              and the flame graph are drawn by analyzers/ (attach_findings.h)
 *
 * Error rule (rxray/util.h): functions that can fail return 0 or a
 * negative errno; constructors are int x_open(..., struct x **out, err,
 * errlen), *out NULL on failure. Where an err buffer is taken, a failure
 * also leaves one human line in it. Free/close functions accept
 * NULL. Every table is fixed-size: memory is bounded whatever the target
 * does (stacks beyond the BPF maps' sizes are counted as dropped).
 */
#ifndef RXRAY_ATTACH_H
#define RXRAY_ATTACH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RXB_ATTACH_SCHEMA "rxray.attach/1"
#define RXB_ATTACH_MAX_THREADS 1024 /* = the BPF tid filter's size */
#define RXB_ATTACH_MAX_PORTS 32
#define RXB_ATTACH_MAX_POOLS 64
#define RXB_ATTACH_MAX_UPROBES 16
#define RXB_ATTACH_MAX_FINDINGS 16
#define RXB_ATTACH_MAX_STACKS 16384 /* distinct stacks counted (the BPF count map) */
#define RXB_ATTACH_MAX_DPDK 256 /* DPDK function labels kept (distinct addresses) */
#define FRAME_NAME_MAX 128 /* longest frame name kept (longer ones are cut) */

/* ------------------------------------------------------------- target */

struct rxb_attach_thread {
	int tid;
	char comm[16];
	int pinned_core; /* the single core of its affinity mask; -1: several */
	int last_cpu;    /* /proc/<pid>/task/<tid>/stat field 39 */
};

struct rxb_attach_target {
	int pid;
	char comm[16];
	int lcore;      /* --lcore N, or -1 */
	bool whole;     /* every thread of pid (no tid filter) */
	char how[160];  /* how the threads were chosen, for the output */
	size_t nthreads;
	struct rxb_attach_thread threads[RXB_ATTACH_MAX_THREADS];
};

/*
 * Resolve the threads to sample. ntids > 0: exactly those tids (each must
 * be a thread of pid). lcore >= 0: the thread DPDK named for that lcore
 * ("rte-worker-N", "lcore-worker-N", "dpdk-worker-N"), else the busiest
 * thread whose affinity is exactly core N. Otherwise the whole process.
 * Returns 0; -ESRCH (no such pid), -ENOENT (tid not in pid, no thread on
 * that lcore), -E2BIG (too many threads), -EINVAL (tids and lcore both).
 * err gets one line naming what was wrong.
 */
int rxb_attach_target_resolve(int pid, const int *tids, size_t ntids, int lcore,
			      struct rxb_attach_target *t, char *err, size_t errlen);

/*
 * Time the target threads spent on a CPU so far, in ns (sum of
 * /proc/<pid>/task/<tid>/schedstat; the whole process: every live
 * thread). 0, or -ESRCH when the process is gone.
 */
int rxb_attach_target_cpu_ns(const struct rxb_attach_target *t, uint64_t *ns);

/* True while the process exists. */
bool rxb_attach_target_alive(const struct rxb_attach_target *t);

/*
 * Check this process may load BPF and open perf events: root with
 * CAP_SYS_ADMIN, or CAP_BPF + CAP_PERFMON. 0, or -EPERM with the missing
 * capabilities named in missing ("CAP_BPF, CAP_PERFMON").
 */
int rxb_attach_caps_check(char *missing, size_t len);

/* ---------------------------------------------------------- telemetry */

struct rxb_tele; /* an open telemetry v2 connection */

struct rxb_tele_port {
	uint16_t id;
	char name[64];
	uint32_t nb_rx_queues;
	uint64_t rx_mbuf_size_min; /* smallest data room among its RX pools */
	uint64_t ipackets, imissed, ierrors, rx_nombuf;
};

struct rxb_tele_pool {
	char name[64];
	uint64_t size, cache_size, elt_size, header_size, private_data_size, populated_size;
};

struct rxb_tele_snap {
	double t; /* CLOCK_MONOTONIC seconds when read */
	size_t nports;
	struct rxb_tele_port ports[RXB_ATTACH_MAX_PORTS];
	size_t npools;
	struct rxb_tele_pool pools[RXB_ATTACH_MAX_POOLS];
};

/*
 * Connect to the telemetry v2 socket of process pid. prefix = the
 * target's --file-prefix (NULL: find the socket whose greeting names pid
 * among <runtime dir>/dpdk/<any prefix>/dpdk_telemetry.v2*). The runtime
 * dir is /var/run for root, else $XDG_RUNTIME_DIR or /tmp, as EAL does.
 * 0 with the connection in *out (close with rxb_tele_close), or with
 * *out NULL: -ENOENT (no socket for that prefix / none for pid), -ESRCH
 * (the prefix's socket belongs to another process), -EPROTO (bad
 * greeting), -ENOMEM; err names the path.
 */
int rxb_tele_open(int pid, const char *prefix, struct rxb_tele **out, char *err, size_t errlen);
void rxb_tele_close(struct rxb_tele *tl);
/* Socket path, DPDK version string ("DPDK 22.11.11"), file prefix. */
const char *rxb_tele_path(const struct rxb_tele *tl);
const char *rxb_tele_version(const struct rxb_tele *tl);
const char *rxb_tele_prefix(const struct rxb_tele *tl);

/*
 * Send one command ("/ethdev/stats,0") and return the value under the
 * command's key in *out (new reference; JSON null -> -ENOENT).
 * 0, -EIO (socket), -EPROTO (not JSON / wrong key), -ENOENT.
 */
int rxb_tele_query(struct rxb_tele *tl, const char *cmd, json_t **out);

/*
 * Read every port (/ethdev/list, /ethdev/stats, /ethdev/info; imissed
 * falls back to /ethdev/xstats rx_missed_errors) and every mempool
 * (/mempool/list, /mempool/info). Ports/pools beyond the fixed tables are
 * left out. 0, -EIO, -EPROTO.
 */
int rxb_tele_snapshot(struct rxb_tele *tl, struct rxb_tele_snap *s);

/*
 * @param s  a snapshot, or NULL
 * @return   the port whose DPDK port id is id in s, or NULL (s NULL, or no
 *           such port: it left between two snapshots or was beyond the table)
 */
const struct rxb_tele_port *rxb_tele_port_find(const struct rxb_tele_snap *s, uint16_t id);

/* How much a counter read as a, then b, rose; 0 when it fell (reset between). */
static inline uint64_t rxb_tele_delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

/* ------------------------------------------------------------ sampler */

struct rxb_sampler; /* the loaded BPF object, its perf events and links */

enum rxb_stack_mode {
	RXB_STACKS_FP = 0, /* kernel frame-pointer walk, counted in a BPF map */
	RXB_STACKS_DWARF,  /* registers + 8 KiB of user stack per sample through
			    * a BPF ring buffer, unwound in user space with the
			    * objects' CFI (x86-64 only) */
};

/*
 * dwarf mode's unwinder: fill ips (leaf first) from the 17 x86-64 DWARF
 * registers and a copy of len stack bytes starting at regs[7] (rsp).
 * Returns the number of ips (0 when nothing could be unwound); *cut is
 * set when the walk stopped because it needed stack beyond the copy (the
 * outer frames are missing: --stack-bytes was too small for this stack).
 */
typedef size_t (*rxb_unwind_fn)(void *ctx, uint32_t tid, const uint64_t *regs,
				const uint8_t *stack, size_t len, uint64_t *ips, size_t max,
				bool *cut);

/*
 * Where the perf events live. Per thread: one event per target thread,
 * following it across CPUs, so no other CPU is interrupted (needs a tid
 * list: not for a whole process). Per CPU: one event per online CPU,
 * the BPF program drops samples of other processes.
 */
enum rxb_sample_scope {
	RXB_SCOPE_AUTO = 0, /* threads when the target names them, else CPUs */
	RXB_SCOPE_THREADS,
	RXB_SCOPE_CPUS,
};

struct rxb_sampler_opts {
	const struct rxb_attach_target *target;
	unsigned freq_hz; /* samples per second per event, 1..100000 */
	enum rxb_stack_mode mode;
	enum rxb_sample_scope scope;
	unsigned stack_bytes; /* dwarf mode: user stack bytes copied per sample,
			       * 512..8192, multiple of 512; 0 = 8192 */
	rxb_unwind_fn unwind; /* dwarf mode: required */
	void *unwind_ctx;
	bool start_disabled;  /* events open disabled: no sample before
			       * rxb_sampler_enable */
};

struct rxb_sampler_stats {
	uint64_t samples;      /* kept */
	uint64_t dropped;      /* lost to a full count map / ring buffer / table */
	uint64_t stack_errors; /* user stack not captured */
	unsigned ncpus;        /* perf events attached (per CPU or per thread) */
	bool per_thread;       /* events follow the target threads */
	unsigned stack_bytes;  /* dwarf mode: stack bytes copied per sample */
	uint64_t stacks_cut;   /* dwarf mode: samples whose unwinding needed
				* more stack than was copied (outer frames lost) */
};

struct rxb_uprobe_stat {
	uint64_t calls, returns, ret_sum, ret_zero;
};

/*
 * Load the BPF object (filtered to the target's pid and, unless whole,
 * its tids), open one sampling perf event per online CPU (hardware
 * cycles, falling back to the cpu-clock software event) and attach the
 * program through BPF links (never pinned). Sampling starts on return.
 * 0 with the sampler in *out (rxb_sampler_close), or with *out NULL and
 * a line in err: -EPERM, -ENOENT (no CPU event), -EINVAL (bad options),
 * -ENOMEM, or libbpf's -errno. With o->start_disabled the events wait
 * for rxb_sampler_enable.
 */
int rxb_sampler_open(const struct rxb_sampler_opts *o, struct rxb_sampler **out, char *err,
		     size_t errlen);
/*
 * Wait up to ms for samples: dwarf mode drains and unwinds the ring
 * buffer every 10 ms (samples are submitted without a wakeup, which would
 * cost the sampled CPU an irq_work each); fp mode just sleeps (the kernel
 * counts). Returns early on a signal. 0 or -errno.
 */
int rxb_sampler_poll(struct rxb_sampler *s, int ms);

/* Start sampling when opened with start_disabled. 0 or -errno (ioctl). */
int rxb_sampler_enable(struct rxb_sampler *s);

/* "cycles" or "cpu-clock". */
const char *rxb_sampler_event(const struct rxb_sampler *s);
/*
 * Stop sampling: destroy the perf links and events (maps stay readable);
 * dwarf mode then drains what is left in the ring buffer.
 */
void rxb_sampler_stop(struct rxb_sampler *s);
void rxb_sampler_stats(const struct rxb_sampler *s, struct rxb_sampler_stats *st);

/*
 * Call fn once per counted (tid, user stack, kernel stack): ips are leaf
 * first; nu/nk may be 0. A non-zero return from fn stops the walk and is
 * returned. 0 or -errno from the map walk.
 */
typedef int (*rxb_stack_fn)(void *ctx, uint32_t tid, const uint64_t *uip, size_t nu,
			    const uint64_t *kip, size_t nk, uint64_t count);
int rxb_sampler_foreach(struct rxb_sampler *s, rxb_stack_fn fn, void *ctx);

/*
 * Register an entry + return uprobe on path at file offset off (not yet
 * attached). Returns the slot (>= 0), -ENOSPC (RXB_ATTACH_MAX_UPROBES).
 */
int rxb_sampler_uprobe_add(struct rxb_sampler *s, const char *path, uint64_t off);
/*
 * Attach (on) or detach (off) every registered uprobe, as perf-event BPF
 * links owned by this process (nothing pinned; they die with it). 0,
 * -EOPNOTSUPP when the kernel has no uprobe PMU (libbpf's legacy tracefs
 * uprobes would outlive a killed rxray, so they are never used), or
 * -errno of the first attach that failed (the others are then detached).
 */
int rxb_sampler_uprobes_set(struct rxb_sampler *s, bool on);
int rxb_sampler_uprobe_stat(struct rxb_sampler *s, int slot, struct rxb_uprobe_stat *st);

/* Detach everything still attached and free. */
void rxb_sampler_close(struct rxb_sampler *s);

/* ------------------------------------------------------------ symbols */

struct rxb_syms; /* libdwfl session on the target + kallsyms */

/* Where a frame's name came from, tried in this order for user code. */
enum rxb_name_src {
	RXB_NAME_NONE = 0,  /* no name: dso+0xoffset of the function start */
	RXB_NAME_SYMTAB,    /* the object's own .symtab */
	RXB_NAME_DEBUGINFO, /* .symtab of a separate debug file (build-id, debuglink) */
	RXB_NAME_DYNSYM,    /* .dynsym, the address within the symbol's size */
	RXB_NAME_DPDK,      /* the DPDK tables read from the process (below) */
	RXB_NAME_KALLSYMS,  /* kernel frames */
};
/* "none", "symtab", "debuginfo", "dynsym", "dpdk", "kallsyms". */
const char *rxb_name_src_str(enum rxb_name_src s);

/*
 * What a function is to DPDK, whichever source named it: its entry is a
 * pointer in rte_eth_fp_ops or rte_mempool_ops_table.
 */
enum rxb_dpdk_role {
	RXB_ROLE_NONE = 0,
	RXB_ROLE_RX_BURST,  /* rte_eth_fp_ops[port].rx_pkt_burst */
	RXB_ROLE_TX_BURST,  /* .tx_pkt_burst */
	RXB_ROLE_ETH_OTHER, /* queue count, descriptor status, tx prepare */
	RXB_ROLE_MP_GET,    /* mempool ops dequeue, dequeue_contig_blocks */
	RXB_ROLE_MP_PUT,    /* mempool ops enqueue */
	RXB_ROLE_MP_OTHER,  /* alloc, free, get_count, populate, ... */
};

struct rxb_frame {
	const char *sym;  /* name (owned by the session) or NULL */
	const char *dso;  /* object basename, "[kernel]", or NULL: unmapped */
	uint64_t off;     /* address in the object's ELF address space */
	enum rxb_name_src src;
	enum rxb_dpdk_role role;
};

/* One function the DPDK tables name ("net_null rx_pkt_burst (port 0)"). */
struct rxb_dpdk_label {
	uint64_t addr; /* entry in the target's address space */
	char dso[64];  /* object basename ("" when unmapped) */
	uint64_t off;  /* entry in the object's ELF address space */
	enum rxb_dpdk_role role;
	char label[FRAME_NAME_MAX];
};

/*
 * Report the target's mappings to libdwfl. debug_dir: the distribution's
 * debug directory for separate debug files (NULL = /usr/lib/debug): by
 * build-id <debug_dir>/.build-id/xx/yyyy.debug, and by .gnu_debuglink in
 * the object's directory, its .debug/ and <debug_dir>/<object's dir>/.
 * 0 with the table in *out (rxb_syms_close), or -errno with *out NULL
 * and err saying why.
 */
int rxb_syms_open(int pid, const char *debug_dir, struct rxb_syms **out, char *err,
		  size_t errlen);
void rxb_syms_close(struct rxb_syms *sy);
/*
 * A user address: its object, the name from the first source that has
 * one (.symtab, debug file, .dynsym within the symbol's size, the DPDK
 * labels), and its DPDK role. 0, or -ENOENT (no object mapped there).
 */
int rxb_syms_user(struct rxb_syms *sy, uint64_t addr, struct rxb_frame *f);

/*
 * Read the DPDK fast-path tables from the live process with
 * process_vm_readv at the exported symbols rte_eth_fp_ops (librte_ethdev)
 * and rte_mempool_ops_table (librte_mempool), laid out as in DPDK 21.11 ..
 * 23.x (checked against the symbols' sizes), and label every function
 * they point to. ports: the ports telemetry listed (NULL: every port
 * whose pointers lie outside librte_ethdev, i.e. not its dummies).
 * Returns the number of labels (>= 0); -ENOENT (no DPDK symbols in the
 * target), -EPROTO (sizes of another layout), -EPERM/-ESRCH from the read;
 * err says why. Labels from an earlier call are replaced.
 */
int rxb_syms_dpdk_read(struct rxb_syms *sy, const struct rxb_tele_snap *ports, char *err,
		       size_t errlen);
/* The labels read (sorted by address); *n receives their number. */
const struct rxb_dpdk_label *rxb_syms_dpdk_labels(const struct rxb_syms *sy, size_t *n);
/* A kernel address through /proc/kallsyms (loaded on first use). 0/-ENOENT. */
int rxb_syms_kernel(struct rxb_syms *sy, uint64_t addr, struct rxb_frame *f);
/*
 * Unwind one dwarf-mode sample of thread tid (matches rxb_unwind_fn, ctx =
 * the session): the target's CFI (.eh_frame / .debug_frame) applied to
 * the copied registers and stack. Reads nothing of the live process.
 */
size_t rxb_syms_unwind(void *sy, uint32_t tid, const uint64_t *regs, const uint8_t *stack,
		       size_t len, uint64_t *ips, size_t max, bool *cut);

/*
 * Resolve a --uprobes spec: a DPDK label read by rxb_syms_dpdk_read
 * ("net_null rx_pkt_burst (port 0)"), "sym", "dso:sym" or "dso+0xOFF"
 * (dso matched against mapped objects' basenames by prefix) to a file
 * path and file offset. 0; -ENOENT (no such symbol/object) or -EINVAL
 * with err set.
 */
int rxb_syms_locate(struct rxb_syms *sy, const char *spec, char *path, size_t pathlen,
		    uint64_t *file_off, char *err, size_t errlen);

/* ------------------------------------------------------------ profile */

struct rxb_profile_stack {
	char *folded; /* "comm;thread;outer;...;leaf" (owned) */
	uint64_t count;
};

struct rxb_profile_func {
	char *name; /* leaf frame name (owned) */
	char dso[64];
	enum rxb_name_src src;
	enum rxb_dpdk_role role;
	uint64_t self;  /* samples with this leaf */
	uint64_t total; /* samples with it anywhere in the stack */
};

struct rxb_profile_uprobe {
	char spec[96];
	struct rxb_uprobe_stat st;
};

struct rxb_profile {
	/* what was sampled */
	int pid;
	char comm[16];
	char how[160];
	int lcore;
	size_t nthreads;
	int tids[RXB_ATTACH_MAX_THREADS];
	unsigned freq_hz;
	char event[16];
	char stack_mode[8]; /* "fp" or "dwarf" */
	/* the window */
	double seconds;
	bool interrupted;    /* SIGINT/SIGTERM ended it early */
	uint64_t busy_ns;    /* CPU time of the sampled threads */
	double clock_hz;     /* cycles per second of the rxray clock */
	char clock_source[16];
	double busy_cycles;
	/* samples */
	struct rxb_sampler_stats sst;
	size_t nstacks;
	struct rxb_profile_stack *stacks; /* owned, sorted by count desc */
	size_t nfuncs;
	struct rxb_profile_func *funcs;   /* owned, sorted by self desc */
	double mempool_share;             /* leaf in a mempool object/function */
	/* the frames right above mempool leaves (who allocates/frees), by samples */
	size_t nmempool_callers;
	struct {
		char name[FRAME_NAME_MAX];
		uint64_t samples;
	} mempool_callers[8];
	double pmd_share;                 /* leaf in a PMD (librte_net_*) */
	/*
	 * Mempool samples split by the DPDK role of the nearest mempool ops
	 * frame (leaf first): get = dequeue, put = enqueue; the rest is
	 * mempool code under neither (cache paths, other library calls).
	 */
	double mempool_get_share, mempool_put_share;
	char mempool_get_top[FRAME_NAME_MAX], mempool_put_top[FRAME_NAME_MAX];
	/* samples with an rx_pkt_burst frame in the stack, and the hottest one */
	double rx_burst_share;
	char rx_burst_top[FRAME_NAME_MAX];
	/* the DPDK labels read from the target (for attach.json) */
	size_t ndpdk;
	struct rxb_dpdk_label dpdk[RXB_ATTACH_MAX_DPDK];
	char dpdk_note[160];              /* why there are none, when none */
	char debug_dir[128];
	/* packets (telemetry) */
	bool have_tele;
	char tele_path[108];
	char tele_version[32];
	struct rxb_tele_snap t0, t1;
	uint64_t packets, imissed, rx_nombuf, ierrors; /* window deltas */
	double cycles_per_packet; /* 0 when packets unknown or 0 */
	/* uprobes */
	size_t nuprobes;
	struct rxb_profile_uprobe uprobes[RXB_ATTACH_MAX_UPROBES];
	double uprobe_attached_s;  /* time they were attached */
	double uprobe_rate_on_pps, uprobe_rate_off_pps; /* packet rate on/off */
	/* findings */
	size_t nfindings;
	char findings[RXB_ATTACH_MAX_FINDINGS][512];
};

/* Zeroed profile into *out (the caller owns it: rxb_profile_free). 0, or
 * -ENOMEM with *out NULL (nothing the caller passes can fail it: no err). */
int rxb_profile_open(struct rxb_profile **out);
void rxb_profile_free(struct rxb_profile *p);

/*
 * Fold the sampler's stacks through sy into p->stacks and p->funcs (root
 * frame = process name, then thread name, then outermost..leaf) and set
 * the mempool/PMD shares. Frames after the first address that maps to no
 * object are cut (a frame-pointer walk through code built without frame
 * pointers). 0, -ENOMEM.
 */
int rxb_profile_fold(struct rxb_profile *p, struct rxb_sampler *s, struct rxb_syms *sy,
		     const struct rxb_attach_target *t);

/*
 * Window deltas from p->t0/p->t1 (when have_tele) and cycles per packet.
 * Clears p->findings: analyzers/ (rxa_attach_findings) fills them.
 */
void rxb_profile_finish(struct rxb_profile *p);

/* The "rxray.attach/1" document (new reference) or NULL (ENOMEM). */
json_t *rxb_profile_to_json(const struct rxb_profile *p, size_t top);

/*
 * Write into dir (created if needed): stacks.folded (sample counts) and
 * attach.json. Each file is written to a temp name and renamed. 0 or
 * -errno with err naming the file. (flame.svg: rxa_attach_flame_write.)
 */
int rxb_profile_write(const struct rxb_profile *p, const char *dir, char *err, size_t errlen);
/*
 * Write one file dir/name through a temp name + rename, its content from
 * fn(ctx, FILE *) (0 or -errno). 0 or -errno with err naming the file.
 */
int rxb_profile_file_write(const char *dir, const char *name, int (*fn)(const void *, FILE *),
			   const void *ctx, char *err, size_t errlen);

/* One screen: window, packets, cycles/packet, top functions, findings. */
void rxb_profile_print(const struct rxb_profile *p, FILE *out, size_t top);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_ATTACH_H */
