/* SPDX-License-Identifier: MIT */
/*
 * The software NIC's parameters and every rule on them, each written
 * once: the device string's options ("sim:rate=12M,nics=2,writers=4"),
 * the NIC threads and DMA writers a run asks for (the knobs and the
 * device options agreeing), their limits, what auto means, the ring the
 * NIC gets, and the NIC parameters of a run. engines/core asks through
 * rxs_dev_ops, on the caps rxs_caps fills, and parses no sim option.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_priv.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif
#include "rxray/util.h"

/* one error line, -EINVAL (rxu_errf) */
#define perr(err, errlen, ...) rxu_errf(err, errlen, -EINVAL, __VA_ARGS__)

/* One "key=value" device option into p; nics= and writers= into *dev
 * (their limits: rxs_threads_check). */
static int params_dev_option(struct rxs_params *p, struct rx_dev_threads *dev, const char *key,
			     const char *val, char *err, size_t errlen)
{
	uint64_t v;
	if (!strcmp(key, "rate")) {
		if (rxu_parse_rate(val, &p->rate_pps) < 0)
			return perr(err, errlen, "device: rate=%s is not a rate (e.g. 12M, max)",
				    val);
	} else if (!strcmp(key, "flows")) {
		if (rxu_parse_u64(val, 1, 1u << 20, &v) < 0)
			return perr(err, errlen, "device: flows=%s out of range 1..1Mi", val);
		p->flows = (uint32_t)v;
	} else if (!strcmp(key, "cq")) {
		if (rxu_parse_u64(val, 2, 1u << 22, &v) < 0 || (v & (v - 1)))
			return perr(err, errlen, "device: cq=%s must be a power of two 2..4Mi",
				    val);
		p->cq_depth = (uint32_t)v;
	} else if (!strcmp(key, "nics")) {
		if (rxu_parse_u64(val, 1, UINT32_MAX, &v) < 0)
			return perr(err, errlen, "device: nics=%s is not a count (1 or more)", val);
		dev->threads = (uint32_t)v;
	} else if (!strcmp(key, "line")) {
		/* Gb/s, the unit written or not: 400G, 100 */
		char *end = NULL;
		errno = 0;
		double g = strtod(val, &end);
		if (end == val || errno ||
		    (strcmp(end, "") && strcmp(end, "G") && strcmp(end, "g")) ||
		    !(g >= RXS_MIN_LINE_GBPS && g <= RXS_MAX_LINE_GBPS))
			return perr(err, errlen,
				    "device: line=%s is not a line rate %g..%gG (e.g. 400G, 100G)",
				    val, RXS_MIN_LINE_GBPS, RXS_MAX_LINE_GBPS);
		p->line_gbps = g;
	} else if (!strcmp(key, "train")) {
		if (rxu_parse_u64(val, 1, RXS_BURST, &v) < 0)
			return perr(err, errlen, "device: train=%s out of range 1..%u packets", val,
				    RXS_BURST);
		p->train = (uint32_t)v;
	} else if (!strcmp(key, "writers")) {
		if (!strcmp(val, "auto")) {
			dev->writers = 0; /* the spare cores decide (rxs_dev_ops.size) */
			return 0;
		}
		if (rxu_parse_u64(val, 1, UINT32_MAX, &v) < 0)
			return perr(err, errlen,
				    "device: writers=%s is not a count (1 or more) or auto", val);
		dev->writers = (uint32_t)v;
	} else if (!strcmp(key, "gpu_dma")) {
		/* how GPU payloads' copies start (rxray/gpu.h rxg_dma_mode) */
		if (!strcmp(val, "resident"))
			p->gpu_dma_launch = false;
		else if (!strcmp(val, "launch"))
			p->gpu_dma_launch = true;
		else
			return perr(err, errlen, "device: gpu_dma=%s is not resident or launch",
				    val);
	} else if (!strcmp(key, "fault")) {
		/* tests and benches: the NIC breaks a rule a consumer must catch */
		if (!strcmp(val, "publish_before_landing")) {
			p->fault_publish_early = 64; /* GPU copies: every 64th run */
		} else if (!strcmp(val, "writer_stall")) {
			p->fault_stall_train = 64; /* each queue's 64th train waits 20 ms */
			p->fault_stall_us = 20000;
		} else {
			return perr(
			    err, errlen,
			    "device: fault=%s is not publish_before_landing or writer_stall", val);
		}
	} else {
		return perr(
		    err, errlen,
		    "device: unknown sim option '%s' (rate, flows, cq, nics, writers, line, "
		    "train, gpu_dma, fault)",
		    key);
	}
	return 0;
}

/* The device string's options into p, and the counts it asks for into
 * *dev (0: not asked). */
static int params_dev_parse(const char *device, struct rxs_params *p, struct rx_dev_threads *dev,
			    char *err, size_t errlen)
{
	struct rx_dev d;
	*dev = (struct rx_dev_threads){0, 0};
	int rc = rx_dev_parse(device, &d, err, errlen);
	if (rc < 0)
		return rc;
	if (strcmp(d.kind, "sim") != 0)
		return perr(err, errlen, "device: '%s' is not a software NIC (sim[:opts])", device);
	char *save = NULL;
	for (char *tok = strtok_r(d.args, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return perr(err, errlen, "device: sim option '%s' needs key=value", tok);
		*eq = '\0';
		rc = params_dev_option(p, dev, tok, eq + 1, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int rxs_threads_check(uint32_t queues, uint32_t wqes, const struct rx_dev_threads *t,
		      unsigned from_dev, char *err, size_t errlen)
{
	const char *tp = from_dev & RXS_ASKED_NICS_DEV ? "device: nics=" : "nic-threads: ";
	const char *wp = from_dev & RXS_ASKED_WRITERS_DEV ? "device: writers=" : "dma-writers: ";
	/* auto is 1 at least: the rules on a count not known yet take that */
	uint32_t th = t->threads ? t->threads : 1, w = t->writers ? t->writers : 1;
	if (t->writers > RXS_MAX_WRITERS)
		return perr(err, errlen, "%s%u out of range 1..%u", wp, t->writers,
			    RXS_MAX_WRITERS);
	if (t->threads > queues)
		return perr(
		    err, errlen,
		    "%s%u NIC threads for %u queues; each NIC thread owns at least one queue", tp,
		    t->threads, queues);
	/* a writer claims runs of RXS_MIN_RUN WQEs at least */
	if ((uint64_t)w * RXS_MIN_RUN > wqes)
		return perr(err, errlen,
			    "%s%u writer%s a ring of at least %u WQEs (%u each), the NIC's ring "
			    "has %u",
			    wp, w, w == 1 ? " needs" : "s need", w * RXS_MIN_RUN, RXS_MIN_RUN,
			    wqes);
	if ((uint64_t)th * w > RXS_MAX_QUEUES)
		return perr(err, errlen, "%s%u writers x %u NIC threads exceed %u threads", wp, w,
			    th, RXS_MAX_QUEUES);
	return 0;
}

uint32_t rxs_ring_wqes(const struct rx_config *c, const struct rx_caps *caps)
{
	/* RXRAY_SIM_LEGACY=ringwqes: N WQEs of two segments, as before */
	bool halve =
	    caps && caps->rq_segments && c->mode == RX_MODE_HDS && !rxs_sim_legacy("ringwqes");
	return halve ? c->ring / 2 : c->ring;
}

/* Which asked count came from the device string (the knob was auto). */
static unsigned params_from(const struct rx_config *c, const struct rx_dev_threads *a)
{
	return (!c->nic_threads && a->threads ? RXS_ASKED_NICS_DEV : 0) |
	       (!c->dma_writers && a->writers ? RXS_ASKED_WRITERS_DEV : 0);
}

/* c's device options into p, the counts c asks for into *a (the knobs
 * and the device's options must agree), and the rules on them alone. */
static int params_asked(const struct rx_config *c, const struct rx_caps *caps, struct rxs_params *p,
			struct rx_dev_threads *a, char *err, size_t errlen)
{
	struct rx_dev_threads dev;
	int rc = params_dev_parse(c->device, p, &dev, err, errlen);
	if (rc < 0)
		return rc;
	/* both given: they must agree (auto, 0, yields) */
	if (dev.threads && c->nic_threads && dev.threads != c->nic_threads)
		return perr(err, errlen, "nic-threads: %u disagrees with the device option nics=%u",
			    c->nic_threads, dev.threads);
	if (dev.writers && c->dma_writers && dev.writers != c->dma_writers)
		return perr(err, errlen,
			    "dma-writers: %u disagrees with the device option writers=%u",
			    c->dma_writers, dev.writers);
	a->threads = c->nic_threads ? c->nic_threads : dev.threads;
	a->writers = c->dma_writers ? c->dma_writers : dev.writers;
	return rxs_threads_check(c->queues, rxs_ring_wqes(c, caps), a, params_from(c, a), err,
				 errlen);
}

static int params_check(const struct rx_config *c, const struct rx_caps *caps,
			struct rx_dev_threads *asked, char *err, size_t errlen)
{
	struct rxs_params p;
	struct rx_dev_threads a;
	memset(&p, 0, sizeof(p));
	int rc = params_asked(c, caps, &p, &a, err, errlen);
	if (!rc && asked)
		*asked = a;
	return rc;
}

static int params_size(const struct rx_config *c, const struct rx_caps *caps,
		       const struct rx_dev_threads *asked, int spare, struct rx_dev_threads *out,
		       char *err, size_t errlen)
{
	uint32_t q = c->queues, wqes = rxs_ring_wqes(c, caps);
	struct rx_dev_threads t = *asked;
	/* auto NIC threads: the spare cores, 1..queues */
	if (!t.threads)
		t.threads = spare < 1 ? 1 : (uint32_t)spare > q ? q : (uint32_t)spare;
	if (!t.writers) {
		/* auto: the cores every other role leaves, shared by the NIC
		 * threads, at most RXS_AUTO_WRITERS each (a writer the
		 * hypervisor stops holds back the packets behind its run, so
		 * no more than the rate needs), RXS_MIN_RUN WQEs a writer */
		int left = spare - (int)t.threads;
		uint32_t cap =
		    wqes / RXS_MIN_RUN < RXS_AUTO_WRITERS ? wqes / RXS_MIN_RUN : RXS_AUTO_WRITERS;
		t.writers = 1 + (left > 0 ? (uint32_t)left / t.threads : 0);
		if (t.writers > cap)
			t.writers = cap ? cap : 1;
		if (t.threads <= RXS_MAX_QUEUES && t.writers > RXS_MAX_QUEUES / t.threads)
			t.writers = RXS_MAX_QUEUES / t.threads;
	}
	int rc = rxs_threads_check(q, wqes, &t, params_from(c, asked), err, errlen);
	if (!rc)
		*out = t;
	return rc;
}

const struct rx_dev_ops rxs_dev_ops = {
    .name = "simnic",
    .check = params_check,
    .size = params_size,
    .record = rxs_nic_record,
};

int rxs_params_of_run(const struct rx_config *c, const struct rx_caps *caps,
		      const struct rx_placement *pl, struct rxs_params *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->queues = c->queues;
	p->ring = rxs_ring_wqes(c, caps);
	p->sges = c->mode == RX_MODE_HDS ? 2 : 1;
	p->frame = c->frame;
	p->rate_pps = c->rate_pps; /* the device's rate= overrides it */
	p->seconds = c->seconds;
	p->dma = c->dma;
	p->payload = c->payload;
	p->sample_shift = c->sample_shift;
	/* the engine's backend decides what auto means (dpdk: on) */
	p->cqe_comp = c->cqe_comp == RX_CQE_COMP_ON;
	static const enum rxp_stage nic_stages[] = {RXP_ST_HDR_WRITE, RXP_ST_PAYLOAD_WRITE,
						    RXP_ST_CQE_WRITE};
	for (size_t i = 0; i < sizeof(nic_stages) / sizeof(nic_stages[0]); i++)
		p->inject[nic_stages[i]] = c->inject[nic_stages[i]];
	p->inject_ab = c->inject_ab;
	p->op_delay_hdr = c->op_delay_hdr_write;
	p->core = -1;
	for (uint32_t i = 0; i < RXS_MAX_QUEUES; i++)
		p->thread_core[i] = -1;
	int rc = params_asked(c, caps, p, &p->asked, err, errlen);
	if (rc < 0)
		return rc;
	if (!pl) {
		/* unplaced: auto is one thread of one writer */
		p->threads = p->asked.threads ? p->asked.threads : 1;
		p->writers = p->asked.writers ? p->asked.writers : 1;
		return 0;
	}
	p->threads = pl->nic_threads > 0 ? (uint32_t)pl->nic_threads : 1;
	p->writers = pl->dma_writers > 0 ? (uint32_t)pl->dma_writers : 1;
	p->core = pl->nic_cores[0];
	for (uint32_t i = 1; i < RXS_MAX_QUEUES; i++)
		p->thread_core[i] = (int)i < pl->nic_all ? pl->nic_cores[i] : -1;
	return 0;
}

void rxs_params_defaults(struct rxs_params *p)
{
	struct rx_config c;
	/* a run's defaults, never a second set of them */
	rx_config_defaults(&c);
	(void)rxs_params_of_run(&c, NULL, NULL, p, NULL, 0);
}

void rxs_caps(struct rx_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	snprintf(caps->name, sizeof(caps->name), "simnic");
	caps->max_ring = RXS_MAX_RING;
	caps->max_sges = RXS_MAX_SGES;
	caps->max_queues = RXS_MAX_QUEUES;
	caps->max_frame = RXS_MAX_FRAME;
	caps->min_frame = RXS_MIN_FRAME;
	caps->min_split = RXS_HDR_LEN;
	caps->buffer_split = true;
#ifdef RXRAY_HAVE_GPU
	/* payloads staged and copied (rxs_mr_reg_gpu): built in, and a GPU
	 * with its driver on this host (asked once per process) */
	static int gpu = -1;
	static char why[sizeof(caps->gpu_why)];
	if (gpu < 0)
		gpu = rxg_available(why, sizeof(why));
	caps->gpu_mem = gpu > 0;
	if (!caps->gpu_mem)
		snprintf(caps->gpu_why, sizeof(caps->gpu_why), "%s", why);
#else
	caps->gpu_mem = false;
#endif
	caps->max_rate_pps = 0;
	caps->dev = &rxs_dev_ops; /* its threads' rules are this file's */
}
