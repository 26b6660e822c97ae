/* SPDX-License-Identifier: MIT */
/*
 * rx_config: defaults, names, JSON, and the checks every engine shares.
 * A violation is an error before anything starts, never a stall later.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

void rx_config_defaults(struct rx_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->engine, sizeof(c->engine), "verbs");
	snprintf(c->device, sizeof(c->device), "sim");
	c->mode = RX_MODE_SINGLE;
	c->frame = 1064;
	c->split = 64;
	c->queues = 1;
	c->ring = 8192;
	c->batch = 64;
	c->burst = 64;
	c->rate_pps = 0;
	c->seconds = 2;
	c->dma = RX_DMA_CACHE;
	c->payload = RX_PAYLOAD_STAMP;
	c->app = RX_APP_AUTO;
	c->free_mode = RX_FREE_MIXED;
	c->discipline = RX_DISC_AUTO;
	c->payload_mem = RX_MEM_HOST;
	c->mempool_cache = 256;
	c->sample_shift = 6;
}

json_t *rx_config_to_json(const struct rx_config *c)
{
	json_t *o = json_object();
	json_t *cores = json_array();
	json_t *inj = json_object();
	if (!o || !cores || !inj)
		goto fail;
	for (int i = 0; i < c->ncores && i < RX_MAX_CORES; i++)
		json_array_append_new(cores, json_integer(c->cores[i]));
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (c->inject[s]) /* 0: an A/A run's stage (RXP_INJECT_NULL) */
			json_object_set_new(
			    inj, rxp_stage_name((enum rxp_stage)s),
			    json_integer((json_int_t)rxp_inject_ticks(c->inject[s])));
	json_object_set_new(o, "engine", json_string(c->engine));
	json_object_set_new(o, "device", json_string(c->device));
	json_object_set_new(o, "mode", json_string(rx_mode_name(c->mode)));
	json_object_set_new(o, "frame", json_integer(c->frame));
	json_object_set_new(o, "split", json_integer(c->mode == RX_MODE_HDS ? c->split : 0));
	json_object_set_new(o, "queues", json_integer(c->queues));
	json_object_set_new(o, "ring", json_integer(c->ring));
	json_object_set_new(o, "batch", json_integer(c->batch));
	json_object_set_new(o, "burst", json_integer(c->burst));
	json_object_set_new(o, "buffers", json_integer(c->buffers));
	json_object_set_new(o, "hring", json_integer(c->hring));
	json_object_set_new(o, "rate_pps", json_real(c->rate_pps));
	json_object_set_new(o, "seconds", json_real(c->seconds));
	json_object_set_new(o, "cores", cores);
	json_object_set_new(o, "dma", json_string(rx_dma_name(c->dma)));
	json_object_set_new(o, "payload", json_string(rx_payload_name(c->payload)));
	json_object_set_new(o, "app", json_string(rx_app_name(c->app)));
	json_object_set_new(o, "free", json_string(rx_free_name(c->free_mode)));
	json_object_set_new(o, "discipline", json_string(rx_discipline_name(c->discipline)));
	json_object_set_new(o, "payload_mem", json_string(rx_mem_kind_name(c->payload_mem)));
	json_object_set_new(o, "mempool_cache", json_integer(c->mempool_cache));
	json_object_set_new(o, "inject", inj);
	if (c->inject_ab)
		json_object_set_new(o, "inject_ab", json_true());
	/* cost-model knobs: present only when set, so keys of ordinary runs stay as they were */
	if (c->coalesce)
		json_object_set_new(o, "coalesce", json_integer(c->coalesce));
	if (rx_op_delays(c))
		json_object_set_new(o, "op_delay",
				    json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "mempool",
					      (int)c->op_delay_mempool, "mr", (int)c->op_delay_mr,
					      "hdr_write", (int)c->op_delay_hdr_write, "repost",
					      (int)c->op_delay_repost, "dbrec",
					      (int)c->op_delay_dbrec, "hdr_read",
					      (int)c->op_delay_hdr_read));
	json_object_set_new(o, "sample_shift", json_integer(c->sample_shift));
	json_object_set_new(o, "allow_oversubscribe", json_boolean(c->allow_oversubscribe));
	json_object_set_new(o, "cqe_comp", json_string(rx_knob_value_name(rx_knob_find("cqe-comp"),
									  (int)c->cqe_comp)));
	json_object_set_new(o, "consumer", json_string(rx_knob_value_name(rx_knob_find("consumer"),
									  (int)c->consumer)));
	json_object_set_new(o, "gpu_work", json_string(rx_knob_value_name(rx_knob_find("gpu-work"),
									  (int)c->gpu_work)));
	json_object_set_new(o, "gpu_launch", json_string(rx_knob_value_name(
						  rx_knob_find("gpu-launch"), (int)c->gpu_launch)));
	json_object_set_new(o, "warmup", json_string(rx_knob_value_name(rx_knob_find("warmup"),
									(int)c->warmup)));
	return o;
fail:
	json_decref(o);
	json_decref(cores);
	json_decref(inj);
	return NULL;
}

json_t *rx_caps_to_json(const struct rx_caps *caps)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(caps->name));
	json_object_set_new(o, "max_ring", json_integer(caps->max_ring));
	json_object_set_new(o, "max_sges", json_integer(caps->max_sges));
	json_object_set_new(o, "max_queues", json_integer(caps->max_queues));
	json_object_set_new(o, "max_frame", json_integer(caps->max_frame));
	json_object_set_new(o, "min_frame", json_integer(caps->min_frame));
	json_object_set_new(o, "min_split", json_integer(caps->min_split));
	json_object_set_new(o, "buffer_split", json_boolean(caps->buffer_split));
	json_object_set_new(o, "gpu_mem", json_boolean(caps->gpu_mem));
	if (caps->gpu_why[0])
		json_object_set_new(o, "gpu_why", json_string(caps->gpu_why));
	json_object_set_new(o, "max_rate_pps", json_real(caps->max_rate_pps));
	/* a device with threads of its own (a software NIC) */
	json_object_set_new(o, "sim_nic", json_boolean(caps->dev != NULL));
	return o;
}

/* one error line, -EINVAL (rxu_errf) */
#define verr(err, errlen, ...) rxu_errf(err, errlen, -EINVAL, __VA_ARGS__)

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int rx_config_validate_fields(const struct rx_config *c, const struct rx_caps *caps, char *err,
			      size_t errlen)
{
	uint32_t min_frame = caps->min_frame ? caps->min_frame : 1;
	if (c->frame < min_frame)
		return verr(err, errlen, "frame: %u bytes is below the device minimum %u", c->frame,
			    min_frame);
	if (caps->max_frame && c->frame > caps->max_frame)
		return verr(err, errlen, "frame: %u bytes exceeds the device maximum %u", c->frame,
			    caps->max_frame);
	if (c->mode == RX_MODE_HDS) {
		uint32_t min_split = caps->min_split ? caps->min_split : 1;
		if (!caps->buffer_split || caps->max_sges < 2)
			return verr(err, errlen,
				    "mode: hds needs header/data split, %s has none (max %u segment%s)",
				    caps->name, caps->max_sges, caps->max_sges == 1 ? "" : "s");
		if (c->split >= c->frame)
			return verr(err, errlen,
				    "split: %u must be smaller than frame %u (nothing left for the payload segment)",
				    c->split, c->frame);
		if (c->split < min_split)
			return verr(err, errlen, "split: %u is below the device minimum %u", c->split,
				    min_split);
	}
	if (c->queues < 1 || c->queues > RX_MAX_QUEUES)
		return verr(err, errlen, "queues: %u out of range 1..%u", c->queues, RX_MAX_QUEUES);
	if (caps->max_queues && c->queues > caps->max_queues)
		return verr(err, errlen, "queues: %u exceeds the device maximum %u", c->queues,
			    caps->max_queues);
	if (!is_pow2(c->ring) || c->ring < 2)
		return verr(err, errlen, "ring: %u must be a power of two >= 2", c->ring);
	if (caps->max_ring && c->ring > caps->max_ring)
		return verr(err, errlen, "ring: depth %u exceeds the device maximum %u (max_qp_wr)",
			    c->ring, caps->max_ring);
	/* the device's own options and thread counts, on the queues and ring
	 * checked above, also where nothing is placed (a sweep's spec check) */
	int rc = caps->dev ? caps->dev->check(c, caps, NULL, err, errlen) : 0;
	if (rc < 0)
		return rc;
	if (c->batch < 1)
		return verr(err, errlen, "batch: must be >= 1");
	if (c->batch > c->ring)
		return verr(err, errlen,
			    "batch: %u exceeds the ring's %u slots (the worker would wait forever for a full batch)",
			    c->batch, c->ring);
	if (c->burst < 1)
		return verr(err, errlen, "burst: must be >= 1");
	if (c->burst > c->ring)
		return verr(err, errlen, "burst: %u exceeds the ring's %u slots", c->burst, c->ring);
	if (c->coalesce > c->burst)
		return verr(err, errlen, "coalesce: %u exceeds the burst of %u", c->coalesce, c->burst);
	if (c->buffers && (uint64_t)c->buffers < (uint64_t)c->ring + c->batch)
		return verr(err, errlen,
			    "buffers: %u is below the floor ring %u + batch %u = %u (the pool would run dry with every buffer posted or in flight)",
			    c->buffers, c->ring, c->batch, c->ring + c->batch);
	if (c->hring && (!is_pow2(c->hring) || c->hring < c->batch))
		return verr(err, errlen, "hring: %u must be a power of two >= batch %u", c->hring,
			    c->batch);
	if (!rx_mempool_cache_fits(c->mempool_cache))
		return verr(err, errlen, "mempool-cache: %u exceeds %u", c->mempool_cache,
			    (unsigned)RX_MEMPOOL_CACHE_MAX);
	if (c->buffers && rx_mempool_cache_flushthresh(c->mempool_cache) > c->buffers)
		return verr(err, errlen, "mempool-cache: %u exceeds buffers %u / 1.5",
			    c->mempool_cache, c->buffers);
	if (!(c->rate_pps >= 0) || c->rate_pps > 1e10)
		return verr(err, errlen, "rate: %g pps out of range", c->rate_pps);
	if (!(c->seconds > 0) || c->seconds > 86400)
		return verr(err, errlen, "seconds: %g out of range (0, 86400]", c->seconds);
	if (c->gpu_work != RX_GPU_WORK_NONE && c->payload_mem != RX_MEM_GPU)
		return verr(err, errlen,
			    "gpu-work: %s reads payloads in GPU memory: add --payload-mem gpu",
			    rx_knob_value_name(rx_knob_find("gpu-work"), (int)c->gpu_work));
	if (c->gpu_launch != RX_GPU_LAUNCH_KERNEL && c->gpu_work == RX_GPU_WORK_NONE)
		return verr(err, errlen,
			    "gpu-launch: %s launches the GPU consumer: add --gpu-work reorder|checksum",
			    rx_knob_value_name(rx_knob_find("gpu-launch"), (int)c->gpu_launch));
	if (c->gpu_work != RX_GPU_WORK_NONE && c->gpu_launch == RX_GPU_LAUNCH_KERNEL &&
	    (c->batch > RX_GPU_PARAM_BATCH_MAX || c->burst > RX_GPU_PARAM_BATCH_MAX))
		return verr(err, errlen,
			    "gpu-launch: kernel carries a batch in its parameters: batch %u / burst "
			    "%u exceeds %u (use graph or persistent)",
			    c->batch, c->burst, RX_GPU_PARAM_BATCH_MAX);
	/* what the host has, after what the options say together */
	if (c->payload_mem == RX_MEM_GPU && !caps->gpu_mem)
		return verr(err, errlen, "payload-mem: gpu is not possible with %s%s%s%s", caps->name,
			    caps->gpu_why[0] ? " (" : "", caps->gpu_why, caps->gpu_why[0] ? ")" : "");
	if (c->sample_shift > 30)
		return verr(err, errlen, "sample-shift: %u exceeds 30", c->sample_shift);
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (c->inject[s] == RXP_INJECT_NULL && !c->inject_ab)
			return verr(err, errlen,
				    "inject: %s=0 spins nothing: it is an A/A run's stage, for "
				    "--inject-ab (the A/B's turns with no change, its null)",
				    rxp_stage_name((enum rxp_stage)s));
	if (c->inject_ab) {
		int ops = rx_op_delays(c);
		bool inj = false;
		for (int s = 0; s < RXP_ST_COUNT; s++)
			inj |= c->inject[s] != 0;
		if (ops > 1 || (ops && inj))
			return verr(err, errlen,
				    "inject-ab: pairs one change at a time: one --op-delay "
				    "operation, or --inject, not both");
	}
	if (c->ncores < 0 || c->ncores > RX_MAX_CORES)
		return verr(err, errlen, "cores: %d entries out of range", c->ncores);
	return 0;
}

int rx_config_check_engine(const struct rx_config *c, char *err, size_t errlen)
{
	struct rx_config def;
	rx_config_defaults(&def);
	for (size_t i = 0; i < rx_knob_count(); i++) {
		const struct rx_knob *k = rx_knob_at(i);
		if (rx_knob_applies(k, c->engine))
			continue;
		const char *a = (const char *)c + k->offset, *b = (const char *)&def + k->offset;
		bool same = k->type == RX_KT_STRING ? !strncmp(a, b, k->size) : !memcmp(a, b, k->size);
		if (!same)
			return verr(err, errlen,
				    "%s: the %s engine does not read it (an option of %s only); leave it "
				    "out",
				    k->name, c->engine, k->engines);
	}
	return 0;
}

int rx_config_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
		       size_t errlen)
{
	struct rx_placement pl;
	int rc = rx_config_validate_fields(c, caps, err, errlen);
	return rc < 0 ? rc : rx_place(c, caps, &pl, err, errlen);
}

void rx_caps_ideal(struct rx_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	snprintf(caps->name, sizeof(caps->name), "any device");
	caps->max_sges = 16;
	caps->buffer_split = true;
	caps->gpu_mem = true;
}

bool rx_dev_caps_offline(const char *device)
{
	struct rx_dev d;
	return rx_dev_parse(device, &d, NULL, 0) == 0 &&
	       (!strcmp(d.kind, "sim") || !strcmp(d.kind, "null"));
}
