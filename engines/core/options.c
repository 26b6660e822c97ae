/* SPDX-License-Identifier: MIT */
/*
 * rx_config fields by name: one table for `rxray run`, `rxray caps` and
 * sweep specs, so an option means the same thing everywhere.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

const struct rx_config_key rx_config_keys[] = {
	{"engine", true, "NAME", "engine: verbs | dpdk (default verbs)"},
	{"device", true, "DEV", "sim[:rate=R,flows=N,cq=N,nics=N] | mlx5:<pci> | dpdk:<eal args> (default sim)"},
	{"mode", true, "MODE", "single | hds (header/data split) (default single)"},
	{"frame", true, "BYTES", "frame size without FCS (default 1064)"},
	{"split", true, "BYTES", "hds: bytes into the header segment (default 64)"},
	{"queues", true, "N", "receive queues, one RX worker each (default 1)"},
	{"nic-threads", true, "N", "sim: software NIC threads, each owning queues q % N, 1..queues or auto (default auto: spare cores, at most queues)"},
	{"ring", true, "N", "receive WQEs per queue, power of two (default 8192)"},
	{"batch", true, "N", "packets per hand-off to the app (default 64)"},
	{"burst", true, "N", "completions polled per burst (default 64)"},
	{"buffers", true, "N", "dpdk: mbufs per pool, 0 = derived (default 0)"},
	{"hring", true, "N", "hand-off ring slots, 0 = derived (default 0)"},
	{"rate", true, "PPS", "offered rate, e.g. 12M, or max (default max)"},
	{"seconds", true, "T", "run length, e.g. 2, 500ms (default 2)"},
	{"cores", true, "LIST", "cores to use in order, e.g. 0,1 or 2-5 (default: affinity)"},
	{"dma", true, "WHERE", "header placement: cache | memory (default cache)"},
	{"payload", true, "WHAT", "payload writes: none | stamp | full (default stamp)"},
	{"app", true, "WHERE", "auto | thread | inline | eal | non-eal | same-core (default auto)"},
	{"free", true, "MODE", "dpdk: mixed | per-pool (default mixed)"},
	{"discipline", true, "D", "dpdk sim: auto | scalar | vector (default auto)"},
	{"mempool-cache", true, "N", "dpdk: per-lcore cache size 0..512 (default 256)"},
	{"payload-mem", true, "KIND", "host | huge | gpu (default host)"},
	{"inject", true, "STAGE=CYC", "add CYC cycles per packet to STAGE (repeatable; not idle)"},
	{"coalesce", true, "B", "calibration: rx waits (idle) for B completions before it polls, 0 = off (default 0)"},
	{"op-delay", true, "OP=CYC", "spin CYC cycles inside each operation: mempool=K,mr=K,hdr_write=K (sim; default off)"},
	{"sample-shift", true, "K", "full probes: sample 1 burst in 2^K (default 6)"},
	{"allow-oversubscribe", false, NULL, "let threads share cores (measures the scheduler too)"},
};
const size_t rx_config_nkeys = sizeof(rx_config_keys) / sizeof(rx_config_keys[0]);

/* one error line, -EINVAL (rxr_errf) */
#define oerr(err, errlen, ...) rxr_errf(err, errlen, -EINVAL, __VA_ARGS__)

static int opt_u32(const char *key, const char *val, uint64_t min, uint64_t max, uint32_t *out,
		   char *err, size_t errlen)
{
	uint64_t v = 0;
	int rc = rxr_parse_u64(val, min, max, &v);
	if (rc == -ERANGE)
		return oerr(err, errlen, "%s: '%s' out of range %llu..%llu", key, val,
			    (unsigned long long)min, (unsigned long long)max);
	if (rc < 0)
		return oerr(err, errlen, "%s: '%s' is not a number", key, val);
	*out = (uint32_t)v;
	return 0;
}

/* Look val up in names[]; the index into *out. */
static int opt_enum(const char *key, const char *val, const char *const *names, const int *vals,
		    size_t n, int *out, char *err, size_t errlen)
{
	char list[160] = "";
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(val, names[i])) {
			*out = vals[i];
			return 0;
		}
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s%s", i ? " | " : "", names[i]);
	}
	return oerr(err, errlen, "%s: '%s' is not one of %s", key, val, list);
}

#define OPT_ENUM(key, val, names, vals, field)                                                   \
	do {                                                                                     \
		int v_ = 0;                                                                        \
		if (opt_enum(key, val, names, vals, sizeof(vals) / sizeof(vals[0]), &v_, err,     \
			     errlen) < 0)                                                        \
			return -EINVAL;                                                          \
		field = v_;                                                                      \
	} while (0)

static int opt_cores(struct rx_config *c, const char *val, char *err, size_t errlen)
{
	char buf[1024];
	int n = 0;
	if (strlen(val) >= sizeof(buf) || !*val)
		return oerr(err, errlen, "cores: '%s' is not a core list (e.g. 0,1 or 2-5)", val);
	snprintf(buf, sizeof(buf), "%s", val);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo = 0, hi = 0;
		if (dash)
			*dash = '\0';
		if (rxr_parse_u64(tok, 0, 4095, &lo) < 0 ||
		    (dash && rxr_parse_u64(dash + 1, 0, 4095, &hi) < 0))
			return oerr(err, errlen, "cores: '%s' is not a core list (e.g. 0,1 or 2-5)",
				    val);
		if (!dash)
			hi = lo;
		if (hi < lo)
			return oerr(err, errlen, "cores: range %llu-%llu runs backwards",
				    (unsigned long long)lo, (unsigned long long)hi);
		for (uint64_t k = lo; k <= hi; k++) {
			if (n >= RX_MAX_CORES)
				return oerr(err, errlen, "cores: more than %d cores", RX_MAX_CORES);
			c->cores[n++] = (int)k;
		}
	}
	c->ncores = n;
	return 0;
}

static int opt_string(const char *key, const char *val, char *dst, size_t cap, char *err,
		      size_t errlen)
{
	if (!*val)
		return oerr(err, errlen, "%s: empty", key);
	if (strlen(val) >= cap)
		return oerr(err, errlen, "%s: longer than %zu characters", key, cap - 1);
	memcpy(dst, val, strlen(val) + 1);
	return 0;
}

/* "mempool=K,mr=K,hdr_write=K" (any subset, accumulates). */
static int opt_op_delay(struct rx_config *c, const char *val, char *err, size_t errlen)
{
	char buf[256];
	if (!*val || strlen(val) >= sizeof(buf))
		return oerr(err, errlen, "op-delay: '%s' is not OP=CYCLES[,...] (mempool, mr, hdr_write)", val);
	snprintf(buf, sizeof(buf), "%s", val);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 0;
		if (!eq || rxr_parse_u64(eq + 1, 0, 1000000, &v) < 0)
			return oerr(err, errlen, "op-delay: '%s' is not OP=CYCLES (0..1M)", t);
		*eq = '\0';
		if (!strcmp(t, "mempool"))
			c->op_delay_mempool = (uint32_t)v;
		else if (!strcmp(t, "mr"))
			c->op_delay_mr = (uint32_t)v;
		else if (!strcmp(t, "hdr_write"))
			c->op_delay_hdr_write = (uint32_t)v;
		else
			return oerr(err, errlen, "op-delay: unknown operation '%s' (mempool, mr, hdr_write)", t);
	}
	return 0;
}

int rx_config_set(struct rx_config *c, const char *key, const char *val, char *err,
		  size_t errlen)
{
	static const char *const modes[] = {"single", "hds"};
	static const int modev[] = {RX_MODE_SINGLE, RX_MODE_HDS};
	static const char *const dmas[] = {"cache", "memory"};
	static const int dmav[] = {RX_DMA_CACHE, RX_DMA_MEMORY};
	static const char *const pays[] = {"none", "stamp", "full"};
	static const int payv[] = {RX_PAYLOAD_NONE, RX_PAYLOAD_STAMP, RX_PAYLOAD_FULL};
	static const char *const apps[] = {"auto", "thread", "inline", "eal", "non-eal",
					   "same-core"};
	static const int appv[] = {RX_APP_AUTO,   RX_APP_THREAD, RX_APP_INLINE,
				   RX_APP_EAL,    RX_APP_THREAD, RX_APP_INLINE};
	static const char *const frees[] = {"mixed", "per-pool"};
	static const int freev[] = {RX_FREE_MIXED, RX_FREE_PER_POOL};
	static const char *const discs[] = {"auto", "scalar", "vector"};
	static const int discv[] = {RX_DISC_AUTO, RX_DISC_SCALAR, RX_DISC_VECTOR};
	static const char *const mems[] = {"host", "huge", "gpu"};
	static const int memv[] = {RX_MEM_HOST, RX_MEM_HUGE, RX_MEM_GPU};

	if (!strcmp(key, "allow-oversubscribe")) {
		c->allow_oversubscribe = true;
		return 0;
	}
	if (!val)
		return oerr(err, errlen, "%s: needs a value", key);
	if (!strcmp(key, "engine"))
		return opt_string(key, val, c->engine, sizeof(c->engine), err, errlen);
	if (!strcmp(key, "device"))
		return opt_string(key, val, c->device, sizeof(c->device), err, errlen);
	if (!strcmp(key, "mode"))
		OPT_ENUM(key, val, modes, modev, c->mode);
	else if (!strcmp(key, "frame"))
		return opt_u32(key, val, 1, 65535, &c->frame, err, errlen);
	else if (!strcmp(key, "split"))
		return opt_u32(key, val, 1, 65535, &c->split, err, errlen);
	else if (!strcmp(key, "queues"))
		return opt_u32(key, val, 1, RX_MAX_QUEUES, &c->queues, err, errlen);
	else if (!strcmp(key, "nic-threads")) {
		if (!strcmp(val, "auto")) {
			c->nic_threads = 0;
			return 0;
		}
		return opt_u32(key, val, 1, RX_MAX_QUEUES, &c->nic_threads, err, errlen);
	} else if (!strcmp(key, "ring"))
		return opt_u32(key, val, 1, 1u << 24, &c->ring, err, errlen);
	else if (!strcmp(key, "batch"))
		return opt_u32(key, val, 1, 1u << 24, &c->batch, err, errlen);
	else if (!strcmp(key, "burst"))
		return opt_u32(key, val, 1, 1u << 24, &c->burst, err, errlen);
	else if (!strcmp(key, "buffers"))
		return opt_u32(key, val, 0, 1u << 30, &c->buffers, err, errlen);
	else if (!strcmp(key, "hring"))
		return opt_u32(key, val, 0, 1u << 24, &c->hring, err, errlen);
	else if (!strcmp(key, "mempool-cache"))
		return opt_u32(key, val, 0, 512, &c->mempool_cache, err, errlen);
	else if (!strcmp(key, "rate")) {
		if (rxr_parse_rate(val, &c->rate_pps) < 0)
			return oerr(err, errlen, "rate: '%s' is not a rate (e.g. 12M, 500k, max)", val);
	} else if (!strcmp(key, "seconds")) {
		if (rxr_parse_seconds(val, 0.001, 86400, &c->seconds) < 0)
			return oerr(err, errlen, "seconds: '%s' is not a duration in 1ms..24h", val);
	} else if (!strcmp(key, "cores"))
		return opt_cores(c, val, err, errlen);
	else if (!strcmp(key, "dma"))
		OPT_ENUM(key, val, dmas, dmav, c->dma);
	else if (!strcmp(key, "payload"))
		OPT_ENUM(key, val, pays, payv, c->payload);
	else if (!strcmp(key, "app"))
		OPT_ENUM(key, val, apps, appv, c->app);
	else if (!strcmp(key, "free"))
		OPT_ENUM(key, val, frees, freev, c->free_mode);
	else if (!strcmp(key, "discipline"))
		OPT_ENUM(key, val, discs, discv, c->discipline);
	else if (!strcmp(key, "payload-mem"))
		OPT_ENUM(key, val, mems, memv, c->payload_mem);
	else if (!strcmp(key, "inject")) {
		enum rxr_stage s;
		uint64_t cyc;
		if (rxr_inject_parse(val, &s, &cyc) < 0)
			return oerr(err, errlen,
				    "inject: '%s' is not STAGE=CYCLES (e.g. app=500, hdr_read=2k)",
				    val);
		if (s == RXR_ST_IDLE)
			return oerr(err, errlen, "inject: idle is waiting, not work: inject into a stage that handles packets");
		c->inject[s] = cyc;
	} else if (!strcmp(key, "coalesce"))
		return opt_u32(key, val, 0, 1u << 16, &c->coalesce, err, errlen);
	else if (!strcmp(key, "op-delay"))
		return opt_op_delay(c, val, err, errlen);
	else if (!strcmp(key, "sample-shift")) {
		uint32_t v = 0;
		if (opt_u32(key, val, 0, 30, &v, err, errlen) < 0)
			return -EINVAL;
		c->sample_shift = v;
	} else
		return oerr(err, errlen, "%s: unknown option", key);
	return 0;
}
