/* SPDX-License-Identifier: MIT */
/*
 * The knob table: every rx_config field by name, its type, range, value
 * names, the engines that take it, its help line and its place in a
 * sweep. `rxray run` and `rxray caps` build their options from it, sweep
 * specs take their fields and check their values with it (sweeps/spec.c),
 * and the enum name functions read it, so a knob means, accepts and
 * rejects the same thing everywhere, with the same message. It is the
 * only list of knobs.
 *
 * Adding a knob (docs/extending.md): a field in struct rx_config
 * (core.h), a default in rx_config_defaults and the JSON in
 * rx_config_to_json (config.c), one row here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

#define KNOB_STR_(x) #x
#define KNOB_STR(x) KNOB_STR_(x)
#define FIELD(f) offsetof(struct rx_config, f), sizeof(((struct rx_config *)0)->f)

static const struct rx_knob_name mode_names[] = {
	{"single", RX_MODE_SINGLE}, {"hds", RX_MODE_HDS}, {NULL, 0}};
static const struct rx_knob_name dma_names[] = {
	{"cache", RX_DMA_CACHE}, {"memory", RX_DMA_MEMORY}, {NULL, 0}};
static const struct rx_knob_name payload_names[] = {
	{"none", RX_PAYLOAD_NONE}, {"stamp", RX_PAYLOAD_STAMP}, {"full", RX_PAYLOAD_FULL},
	{NULL, 0}};
/* the first name of a value is its canonical one; dpdk's words follow */
static const struct rx_knob_name app_names[] = {
	{"auto", RX_APP_AUTO},	  {"thread", RX_APP_THREAD},   {"inline", RX_APP_INLINE},
	{"eal", RX_APP_EAL},	  {"non-eal", RX_APP_THREAD},  {"same-core", RX_APP_INLINE},
	{NULL, 0}};
static const struct rx_knob_name free_names[] = {
	{"mixed", RX_FREE_MIXED}, {"per-pool", RX_FREE_PER_POOL}, {NULL, 0}};
static const struct rx_knob_name disc_names[] = {
	{"auto", RX_DISC_AUTO}, {"scalar", RX_DISC_SCALAR}, {"vector", RX_DISC_VECTOR},
	{NULL, 0}};
static const struct rx_knob_name cqe_comp_names[] = {
	{"auto", RX_CQE_COMP_AUTO}, {"on", RX_CQE_COMP_ON}, {"off", RX_CQE_COMP_OFF}, {NULL, 0}};
static const struct rx_knob_name consumer_names[] = {
	{"devx", RX_CONSUMER_DEVX}, {"rdma-core", RX_CONSUMER_RDMA_CORE}, {NULL, 0}};
static const struct rx_knob_name gpu_work_names[] = {
	{"none", RX_GPU_WORK_NONE}, {"reorder", RX_GPU_WORK_REORDER},
	{"checksum", RX_GPU_WORK_CHECKSUM}, {NULL, 0}};
static const struct rx_knob_name gpu_launch_names[] = {
	{"kernel", RX_GPU_LAUNCH_KERNEL}, {"graph", RX_GPU_LAUNCH_GRAPH},
	{"persistent", RX_GPU_LAUNCH_PERSISTENT}, {NULL, 0}};
static const struct rx_knob_name warmup_names[] = {
	{"auto", RX_WARMUP_AUTO}, {"off", RX_WARMUP_OFF}, {NULL, 0}};
static const struct rx_knob_name mem_names[] = {
	{"host", RX_MEM_HOST}, {"huge", RX_MEM_HUGE}, {"gpu", RX_MEM_GPU}, {NULL, 0}};

static const struct rx_knob rx_knobs[] = {
    {"engine", RX_KT_STRING, "NAME", 0, 0, NULL, FIELD(engine), 0, NULL,
     "engine: verbs | dpdk (default verbs)",
     1, "engines"},
    {"device", RX_KT_STRING, "DEV", 0, 0, NULL, FIELD(device), 0, NULL,
     "sim[:rate=R,flows=N,cq=N,nics=N,writers=W] | mlx5:<pci> | dpdk:<eal args> (default sim)",
     19, "devices"},
    {"mode", RX_KT_ENUM, "MODE", 0, 0, mode_names, FIELD(mode), 0, NULL,
     "single | hds (header/data split) (default single)",
     2, "modes"},
    {"frame", RX_KT_UINT, "BYTES", 1, 65535, NULL, FIELD(frame), 0, NULL,
     "frame size without FCS (default 1064)",
     3, "frames"},
    {"split", RX_KT_UINT, "BYTES", 1, 65535, NULL, FIELD(split), RX_KNOB_HDS_ONLY, NULL,
     "hds: bytes into the header segment (default 64)",
     4, "splits"},
    {"queues", RX_KT_UINT, "N", 1, RX_MAX_QUEUES, NULL, FIELD(queues), 0, NULL,
     "receive queues, one RX worker each (default 1)",
     5, "queue"},
    {"nic-threads", RX_KT_UINT, "N", 1, RX_MAX_QUEUES, NULL, FIELD(nic_threads), RX_KNOB_AUTO0,
     NULL,
     "sim: software NIC threads, each owning queues q % N, 1..queues or auto (default auto: "
     "spare cores, at most queues)", 0, NULL},
    /* the range is nic_cores[]'s, the core's own bound; the device owns
     * its limits and what auto means (rx_dev_ops) */
    {"dma-writers", RX_KT_UINT, "W", 1, RX_MAX_QUEUES, NULL, FIELD(dma_writers), RX_KNOB_AUTO0,
     NULL,
     "sim: DMA writer threads per NIC thread, all writing its queues in claimed runs, W or "
     "auto (the spare cores, within the software NIC's limits; the run records what was "
     "asked, resolved and run) (default auto)", 0, NULL},
    {"ring", RX_KT_UINT, "N", 2, 1u << 24, NULL, FIELD(ring), RX_KNOB_POW2, NULL,
     "receive WQEs per queue, power of two (default 8192)",
     6, "rings"},
    {"batch", RX_KT_UINT, "N", 1, 1u << 24, NULL, FIELD(batch), 0, NULL,
     "packets per hand-off to the app (verbs: at most per app lap, and the refill batch) "
     "(default 64)",
     7, "batches"},
    {"burst", RX_KT_UINT, "N", 1, 1u << 24, NULL, FIELD(burst), 0, NULL,
     "completions polled per burst (default 64)",
     8, "bursts"},
    {"buffers", RX_KT_UINT, "N", 0, 1u << 30, NULL, FIELD(buffers), 0, "dpdk",
     "dpdk: mbufs per pool, 0 = derived (default 0)",
     9, "buffer"},
    {"hring", RX_KT_UINT, "N", 0, 1u << 24, NULL, FIELD(hring), 0, NULL,
     "hand-off ring slots, 0 = derived (default 0)", 0, NULL},
    {"rate", RX_KT_RATE, "PPS", 0, 0, NULL, FIELD(rate_pps), 0, NULL,
     "offered rate, e.g. 12M, or max (default max)", 0, NULL},
    {"seconds", RX_KT_SECONDS, "T", 0, 0, NULL, FIELD(seconds), 0, NULL,
     "run length, e.g. 2, 500ms (default 2)", 0, NULL},
    {"cores", RX_KT_CORES, "LIST", 0, 0, NULL, FIELD(cores), 0, NULL,
     "cores to use in order, e.g. 0,1 or 2-5 (default: affinity)", 0, NULL},
    {"dma", RX_KT_ENUM, "WHERE", 0, 0, dma_names, FIELD(dma), 0, NULL,
     "header placement: cache | memory (default cache)",
     14, NULL},
    {"payload", RX_KT_ENUM, "WHAT", 0, 0, payload_names, FIELD(payload), 0, NULL,
     "payload writes: none | stamp | full (default stamp)",
     15, "payloads"},
    {"app", RX_KT_ENUM, "WHERE", 0, 0, app_names, FIELD(app), 0, NULL,
     "auto | thread | inline | eal | non-eal | same-core (default auto)",
     12, "apps"},
    {"free", RX_KT_ENUM, "MODE", 0, 0, free_names, FIELD(free_mode), 0, "dpdk",
     "dpdk: mixed | per-pool (default mixed)",
     11, "free_mode,free_modes"},
    {"discipline", RX_KT_ENUM, "D", 0, 0, disc_names, FIELD(discipline), 0, "dpdk",
     "dpdk sim: auto | scalar | vector (default auto)",
     13, "disciplines"},
    {"mempool-cache", RX_KT_UINT, "N", 0, RX_MEMPOOL_CACHE_MAX, NULL, FIELD(mempool_cache), 0,
     "dpdk", "dpdk: per-lcore cache size 0.." KNOB_STR(RX_MEMPOOL_CACHE_MAX) " (default 256)",
     10, "mempool_caches"},
    {"payload-mem", RX_KT_ENUM, "KIND", 0, 0, mem_names, FIELD(payload_mem), 0, NULL,
     "host | huge | gpu (default host)",
     17, "payload_mems"},
    {"gpu-work", RX_KT_ENUM, "WORK", 0, 0, gpu_work_names, FIELD(gpu_work), 0, NULL,
     "GPU consumer per batch of payloads (payload-mem gpu): none | reorder | checksum "
     "(default none)",
     18, "gpu_works"},
    {"gpu-launch", RX_KT_ENUM, "HOW", 0, 0, gpu_launch_names, FIELD(gpu_launch), 0, NULL,
     "GPU consumer's launch per batch: kernel | graph (a replayed CUDA graph) | persistent "
     "(a resident kernel fed through a doorbell) (default kernel)", 0, NULL},
    {"inject", RX_KT_INJECT, "STAGE=CYC", 0, 0, NULL, FIELD(inject), 0, NULL,
     "add CYC cycles per packet to STAGE (repeatable; STAGE=CYC,STAGE=CYC; not idle; "
     "STAGE=0 with --inject-ab: an A/A run, the turns kept and nothing spun)",
     16, NULL},
    {"inject-ab", RX_KT_FLAG, NULL, 0, 0, NULL, FIELD(inject_ab), 0, NULL,
     "verification: inject one lap in four only (with --op-delay: delay the operations of one "
     "lap in four of the stage performing them) and report injected and plain laps two turns "
     "apart, paired, which of the two comes first drawn at random each period (inject_ab in "
     "the result)", 0, NULL},
    {"coalesce", RX_KT_UINT, "B", 0, 1u << 16, NULL, FIELD(coalesce), 0, NULL,
     "calibration: rx waits (idle) for B completions before it polls, 0 = off (default 0)", 0, NULL},
    {"op-delay", RX_KT_OPDELAY, "OP=CYC", 0, 0, NULL, FIELD(op_delay_mempool), 0, NULL,
     "each operation adds CYC cycles to the lap it runs in: " RX_OP_DELAY_OPS
     " (=K each; dpdk mempool, mr; verbs repost, dbrec, hdr_read; the software NIC's "
     "hdr_write; default off)", 0, NULL},
    {"sample-shift", RX_KT_UINT, "K", 0, 30, NULL, FIELD(sample_shift), 0, NULL,
     "full probes: sample 1 burst in 2^K (default 6)", 0, NULL},
    {"cqe-comp", RX_KT_ENUM, "WHEN", 0, 0, cqe_comp_names, FIELD(cqe_comp), 0, NULL,
     "sim: compressed CQE sessions auto | on | off (default auto: dpdk on, verbs off)", 0, NULL},
    {"consumer", RX_KT_ENUM, "WHO", 0, 0, consumer_names, FIELD(consumer), 0, "verbs",
     "verbs: CQ consumer devx | rdma-core (rdma-core: a read barrier per CQE) (default "
     "devx)", 0, NULL},
    {"warmup", RX_KT_ENUM, "MODE", 0, 0, warmup_names, FIELD(warmup), 0, NULL,
     "auto: run at the rate until every WQE was used once (>= 50 ms) before counting | off "
     "(default auto)", 0, NULL},
    {"allow-oversubscribe", RX_KT_FLAG, NULL, 0, 0, NULL, FIELD(allow_oversubscribe), 0, NULL,
     "let threads share cores (measures the scheduler too)", 0, NULL},
};
static const size_t rx_nknobs = sizeof(rx_knobs) / sizeof(rx_knobs[0]);

/* rows added after the table (rx_knob_register) */
static const struct rx_knob *knob_extra[RX_KNOB_EXTRA_MAX];
static size_t knob_nextra;

size_t rx_knob_count(void)
{
	return rx_nknobs + knob_nextra;
}

const struct rx_knob *rx_knob_at(size_t i)
{
	if (i < rx_nknobs)
		return &rx_knobs[i];
	return i - rx_nknobs < knob_nextra ? knob_extra[i - rx_nknobs] : NULL;
}

int rx_knob_register(const struct rx_knob *k)
{
	if (!k || !k->name || k->offset + k->size > sizeof(struct rx_config))
		return -EINVAL;
	if (rx_knob_find(k->name))
		return -EEXIST;
	/* sweep positions stay dense: a new axis takes the next one */
	unsigned last = 0;
	for (size_t i = 0; i < rx_knob_count(); i++)
		if (rx_knob_at(i)->sweep > last)
			last = rx_knob_at(i)->sweep;
	if (k->sweep && k->sweep != last + 1)
		return -EINVAL;
	/* the sweep's arrays have no room for it: refused here, not dropped
	 * by the sweep later */
	if (k->sweep > RX_KNOB_SWEEP_MAX)
		return -ENOSPC;
	if (knob_nextra == RX_KNOB_EXTRA_MAX)
		return -ENOSPC;
	knob_extra[knob_nextra++] = k;
	return 0;
}

/* one error line, -EINVAL (rxu_errf) */
#define oerr(err, errlen, ...) rxu_errf(err, errlen, -EINVAL, __VA_ARGS__)

const struct rx_knob *rx_knob_find(const char *name)
{
	char norm[32];
	size_t n = name ? strlen(name) : 0;
	if (!n || n >= sizeof(norm))
		return NULL;
	/* spec fields spell '-' as '_' (mempool_cache) */
	for (size_t i = 0; i <= n; i++)
		norm[i] = name[i] == '_' ? '-' : name[i];
	for (size_t i = 0; i < rx_knob_count(); i++)
		if (!strcmp(rx_knob_at(i)->name, norm))
			return rx_knob_at(i);
	return NULL;
}

const char *rx_knob_value_name(const struct rx_knob *k, int value)
{
	for (const struct rx_knob_name *n = k ? k->names : NULL; n && n->name; n++)
		if (n->value == value)
			return n->name;
	return "?";
}

/* Names come from the knob table (options.c): one list per enum. */
static const char *knob_value(const char *knob, int v)
{
	return rx_knob_value_name(rx_knob_find(knob), v);
}

const char *rx_mode_name(enum rx_mode m)
{
	return knob_value("mode", (int)m);
}

const char *rx_app_name(enum rx_app a)
{
	return knob_value("app", (int)a);
}

const char *rx_free_name(enum rx_free f)
{
	return knob_value("free", (int)f);
}

const char *rx_discipline_name(enum rx_discipline d)
{
	return knob_value("discipline", (int)d);
}

const char *rx_dma_name(enum rx_dma d)
{
	return knob_value("dma", (int)d);
}

const char *rx_payload_name(enum rx_payload p)
{
	return knob_value("payload", (int)p);
}

const char *rx_mem_kind_name(enum rx_mem_kind k)
{
	return knob_value("payload-mem", (int)k);
}

bool rx_knob_applies(const struct rx_knob *k, const char *engine)
{
	if (!k->engines || !engine)
		return true;
	size_t n = strlen(engine);
	for (const char *p = strstr(k->engines, engine); p; p = strstr(p + 1, engine))
		if ((p == k->engines || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* The value names as "a | b | c" (aliases included). */
static const char *knob_name_list(const struct rx_knob *k, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const struct rx_knob_name *n = k->names; n && n->name; n++) {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "%s%s", n == k->names ? "" : " | ", n->name);
	}
	return buf;
}

static int knob_uint(const struct rx_knob *k, const char *val, void *field, char *err,
		     size_t errlen)
{
	uint64_t v = 0;
	if ((k->flags & RX_KNOB_AUTO0) && !strcmp(val, "auto")) {
		*(uint32_t *)field = 0;
		return 0;
	}
	int rc = rxu_parse_u64(val, k->min, k->max, &v);
	if (rc == -ERANGE)
		return oerr(err, errlen, "%s: %s is out of range [%llu, %llu]", k->name, val,
			    (unsigned long long)k->min, (unsigned long long)k->max);
	if (rc < 0)
		return oerr(err, errlen, "%s: expected an integer, got '%s'", k->name, val);
	if ((k->flags & RX_KNOB_POW2) && (v & (v - 1)))
		return oerr(err, errlen, "%s: %s is not a power of two", k->name, val);
	if (k->size == sizeof(unsigned))
		*(unsigned *)field = (unsigned)v;
	else
		*(uint64_t *)field = v;
	return 0;
}

static int knob_enum(const struct rx_knob *k, const char *val, void *field, char *err,
		     size_t errlen)
{
	char list[200];
	for (const struct rx_knob_name *n = k->names; n->name; n++)
		if (!strcmp(val, n->name)) {
			/* every enum field of rx_config is an int-sized enum */
			*(int *)field = n->value;
			return 0;
		}
	return oerr(err, errlen, "%s: unknown value '%s' (expected %s)", k->name, val,
		    knob_name_list(k, list, sizeof(list)));
}

static int knob_cores(const char *val, struct rx_config *c, char *err, size_t errlen)
{
	int n = rxu_cores_parse(val, c->cores, RX_MAX_CORES, err, errlen);
	if (n < 0)
		return -EINVAL;
	c->ncores = n;
	return 0;
}

/* "STAGE=CYC[,STAGE=CYC...]", each accumulating into c->inject. */
static int knob_inject(const char *val, struct rx_config *c, char *err, size_t errlen)
{
	char buf[512];
	if (strlen(val) >= sizeof(buf))
		return oerr(err, errlen, "inject: longer than %zu characters", sizeof(buf) - 1);
	snprintf(buf, sizeof(buf), "%s", val);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",+", &save); tok; tok = strtok_r(NULL, ",+", &save)) {
		enum rxp_stage s;
		uint64_t cyc;
		if (rxp_inject_parse(tok, &s, &cyc) < 0)
			return oerr(err, errlen,
				    "inject: '%s' is not STAGE=CYCLES with a known stage", tok);
		if (s == RXP_ST_IDLE)
			return oerr(err, errlen,
				    "inject: idle is waiting, not work: inject into a stage that "
				    "handles packets");
		/* 0: an A/A run's stage (with --inject-ab; rx_config_validate) */
		c->inject[s] = cyc ? cyc : RXP_INJECT_NULL;
	}
	return 0;
}

/* "OP=CYC[,OP=CYC]": spins inside the operations themselves (ground truth
 * for attribution: the stage that performs the operation must rise). */
static int knob_op_delay(const char *val, struct rx_config *c, char *err, size_t errlen)
{
	char buf[256];
	if (!*val || strlen(val) >= sizeof(buf))
		return oerr(err, errlen,
			    "op-delay: '%s' is not OP=CYCLES[,...] (" RX_OP_DELAY_OPS ")", val);
	snprintf(buf, sizeof(buf), "%s", val);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 0;
		if (!eq || rxu_parse_u64(eq + 1, 0, 1000000, &v) < 0)
			return oerr(err, errlen, "op-delay: '%s' is not OP=CYCLES (0..1M)", t);
		*eq = '\0';
		if (!strcmp(t, "mempool"))
			c->op_delay_mempool = (uint32_t)v;
		else if (!strcmp(t, "mr"))
			c->op_delay_mr = (uint32_t)v;
		else if (!strcmp(t, "hdr_write"))
			c->op_delay_hdr_write = (uint32_t)v;
		else if (!strcmp(t, "repost"))
			c->op_delay_repost = (uint32_t)v;
		else if (!strcmp(t, "dbrec"))
			c->op_delay_dbrec = (uint32_t)v;
		else if (!strcmp(t, "hdr_read"))
			c->op_delay_hdr_read = (uint32_t)v;
		else
			return oerr(err, errlen,
				    "op-delay: unknown operation '%s' (" RX_OP_DELAY_OPS ")", t);
	}
	return 0;
}

int rx_config_set(struct rx_config *c, const char *key, const char *val, char *err,
		  size_t errlen)
{
	const struct rx_knob *k = rx_knob_find(key);
	if (!k)
		return oerr(err, errlen, "%s: unknown option", key);
	void *field = (char *)c + k->offset;
	if (k->type == RX_KT_FLAG) {
		*(bool *)field = true;
		return 0;
	}
	if (!val)
		return oerr(err, errlen, "%s: needs a value", k->name);
	switch (k->type) {
	case RX_KT_STRING:
		if (!*val)
			return oerr(err, errlen, "%s: empty", k->name);
		if (strlen(val) >= k->size)
			return oerr(err, errlen, "%s: longer than %zu characters", k->name,
				    k->size - 1);
		memcpy(field, val, strlen(val) + 1);
		return 0;
	case RX_KT_UINT:
		return knob_uint(k, val, field, err, errlen);
	case RX_KT_ENUM:
		return knob_enum(k, val, field, err, errlen);
	case RX_KT_RATE:
		if (rxu_parse_rate(val, (double *)field) < 0)
			return oerr(err, errlen,
				    "%s: expected a rate in packets/s like 500k or 12M, or max, got "
				    "'%s'",
				    k->name, val);
		return 0;
	case RX_KT_SECONDS:
		if (rxu_parse_seconds(val, 0.001, 86400, (double *)field) < 0)
			return oerr(err, errlen,
				    "%s: expected a duration in [1ms, 24h] like 2, 500ms, got '%s'",
				    k->name, val);
		return 0;
	case RX_KT_CORES:
		return knob_cores(val, c, err, errlen);
	case RX_KT_INJECT:
		return knob_inject(val, c, err, errlen);
	case RX_KT_OPDELAY:
		return knob_op_delay(val, c, err, errlen);
	case RX_KT_FLAG:
		break;
	}
	return oerr(err, errlen, "%s: unknown option", key);
}
