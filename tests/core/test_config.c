/* SPDX-License-Identifier: MIT */
/* rx_config validation and thread placement. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

static struct rx_caps sim_caps(void)
{
	struct rx_caps c;
	memset(&c, 0, sizeof(c));
	snprintf(c.name, sizeof(c.name), "testnic");
	c.max_ring = 32768;
	c.max_sges = 2;
	c.max_queues = 64;
	c.max_frame = 9216;
	c.min_frame = 64;
	c.min_split = 54;
	c.buffer_split = true;
	c.dev = NULL; /* placement tested separately */
	return c;
}

/* Validate c and expect -EINVAL with an error starting "<field>:". */
static void expect_reject(const struct rx_config *c, const struct rx_caps *caps, const char *field)
{
	char err[256] = "";
	int rc = rx_config_validate(c, caps, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL, "expected %s to be rejected (rc %d)", field, rc);
	size_t n = strlen(field);
	cr_assert(strncmp(err, field, n) == 0 && err[n] == ':', "error names '%s': %s", field, err);
}

static void one_core_config(struct rx_config *c)
{
	rx_config_defaults(c);
	c->cores[0] = rxu_core_nth(0);
	c->ncores = 1;
}

Test(config, defaults_are_valid)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	char err[256] = "";
	one_core_config(&c);
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(c.engine, "verbs");
	cr_assert_eq(c.frame, 1064);
}

Test(config, rejects_batch_above_ring)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	one_core_config(&c);
	c.ring = 64;
	c.batch = 128;
	c.burst = 32;
	expect_reject(&c, &caps, "batch");
}

Test(config, rejects_depth_above_max)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	one_core_config(&c);
	caps.max_ring = 4096;
	c.ring = 8192;
	expect_reject(&c, &caps, "ring");
	c.ring = 1000;
	expect_reject(&c, &caps, "ring");
}

Test(config, rejects_split_not_below_frame)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	one_core_config(&c);
	c.mode = RX_MODE_HDS;
	c.frame = 256;
	c.split = 256;
	expect_reject(&c, &caps, "split");
	c.split = 32; /* below the device minimum */
	expect_reject(&c, &caps, "split");
	c.split = 64;
	caps.buffer_split = false;
	expect_reject(&c, &caps, "mode");
}

Test(config, rejects_too_many_queues)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	one_core_config(&c);
	caps.max_queues = 4;
	c.queues = 8;
	expect_reject(&c, &caps, "queues");
	caps.max_queues = 64;
	c.queues = 2; /* two RX workers on one core */
	expect_reject(&c, &caps, "queues");
}

Test(config, rejects_buffers_below_floor)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	one_core_config(&c);
	c.ring = 1024;
	c.batch = 64;
	c.buffers = 1024 + 63;
	expect_reject(&c, &caps, "buffers");
	c.buffers = 1024 + 64;
	c.mempool_cache = 0;
	char err[256] = "";
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), 0, "%s", err);
}

Test(config, rejects_other_fields)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	one_core_config(&c);
	c.frame = 32;
	expect_reject(&c, &caps, "frame");
	one_core_config(&c);
	c.burst = 0;
	expect_reject(&c, &caps, "burst");
	one_core_config(&c);
	c.mempool_cache = 600;
	expect_reject(&c, &caps, "mempool-cache");
	one_core_config(&c);
	c.payload_mem = RX_MEM_GPU;
	expect_reject(&c, &caps, "payload-mem");
	one_core_config(&c);
	c.seconds = 0;
	expect_reject(&c, &caps, "seconds");
	one_core_config(&c);
	c.cores[0] = 100000;
	expect_reject(&c, &caps, "cores");
}

Test(config, json_names)
{
	struct rx_config c;
	rx_config_defaults(&c);
	c.mode = RX_MODE_HDS;
	c.inject[RXP_ST_APP] = 500;
	json_t *o = rx_config_to_json(&c);
	cr_assert_not_null(o);
	cr_assert_str_eq(json_string_value(json_object_get(o, "mode")), "hds");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(o, "inject"), "app")), 500);
	cr_assert_eq(json_integer_value(json_object_get(o, "split")), 64);
	json_decref(o);
	cr_assert_str_eq(rx_payload_name(RX_PAYLOAD_FULL), "full");
	cr_assert_str_eq(rx_mem_kind_name(RX_MEM_HUGE), "huge");
	cr_assert_str_eq(rx_free_name(RX_FREE_PER_POOL), "per-pool");
}

/* ----------------------------------------------------------- placement */

static const int eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};

/*
 * A device with threads of its own, as the core sees one: it asks for
 * the knobs and sizes auto as one thread of one writer. The software
 * NIC's own rules (auto from the spare cores, its limits, its device
 * options) are tests/simnic's.
 */
static int fake_check(const struct rx_config *c, const struct rx_caps *caps,
		      struct rx_dev_threads *asked, char *err, size_t errlen)
{
	(void)caps;
	(void)err;
	(void)errlen;
	if (asked)
		*asked = (struct rx_dev_threads){c->nic_threads, c->dma_writers};
	return 0;
}

static int fake_size(const struct rx_config *c, const struct rx_caps *caps,
		     const struct rx_dev_threads *asked, int spare, struct rx_dev_threads *out,
		     char *err, size_t errlen)
{
	(void)c;
	(void)caps;
	(void)spare;
	(void)err;
	(void)errlen;
	out->threads = asked->threads ? asked->threads : 1;
	out->writers = asked->writers ? asked->writers : 1;
	return 0;
}

static const struct rx_dev_ops fake_dev = {"fakenic", fake_check, fake_size, NULL};

/* caps of a device with threads (with_threads) or without */
static const struct rx_caps *dev_caps(bool with_threads)
{
	static struct rx_caps k[2];
	snprintf(k[0].name, sizeof(k[0].name), "mlx5_0");
	snprintf(k[1].name, sizeof(k[1].name), "fakenic");
	k[1].dev = &fake_dev;
	return &k[with_threads];
}

Test(place, two_cores_nic_and_inline_worker)
{
	struct rx_config c;
	struct rx_placement pl;
	char err[256] = "";
	rx_config_defaults(&c);
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 2, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(pl.nic_core, 0);
	cr_assert_eq(pl.rx_core[0], 1);
	cr_assert_eq(pl.app, RX_APP_INLINE);
	cr_assert_eq(pl.app_core[0], -1);
	cr_assert_eq(pl.needed, 2);
	cr_assert(!pl.oversubscribed);
}

Test(place, more_cores_give_app_threads)
{
	struct rx_config c;
	struct rx_placement pl;
	char err[256] = "";
	rx_config_defaults(&c);
	c.queues = 2;
	c.nic_threads = 1; /* auto would give the spare cores to NIC threads */
	c.dma_writers = 1; /* and to DMA writers */
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 8, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(pl.app, RX_APP_THREAD);
	cr_assert_eq(pl.nic_core, 0);
	cr_assert_eq(pl.rx_core[0], 1);
	cr_assert_eq(pl.rx_core[1], 2);
	cr_assert_eq(pl.app_core[0], 3);
	cr_assert_eq(pl.app_core[1], 4);
	cr_assert_eq(pl.needed, 5);
	/* no NIC thread on a real device (and none may be asked for) */
	cr_assert_eq(rx_place_on(&c, dev_caps(false), eight, 4, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "nic-threads:", 12) == 0, "%s", err);
	c.nic_threads = 0;
	cr_assert_eq(rx_place_on(&c, dev_caps(false), eight, 4, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(pl.nic_core, -1);
	cr_assert_eq(pl.app, RX_APP_THREAD);
	cr_assert_eq(pl.app_core[1], 3);
}

Test(place, infeasible_is_an_error_unless_oversubscribe)
{
	struct rx_config c;
	struct rx_placement pl;
	char err[256] = "";
	rx_config_defaults(&c);
	c.app = RX_APP_THREAD;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 2, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "app:", 4) == 0, "%s", err);
	c.app = RX_APP_INLINE;
	c.queues = 2;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 2, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "queues:", 7) == 0, "%s", err);
	c.queues = 1;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 1, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "cores:", 6) == 0, "%s", err);
	c.queues = 2;
	c.allow_oversubscribe = true;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 2, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert(pl.oversubscribed);
	cr_assert_eq(pl.rx_core[1], 0, "round robin onto the NIC's core");
	json_t *j = rx_placement_to_json(&pl);
	cr_assert(json_is_true(json_object_get(j, "oversubscribed")));
	json_decref(j);
}

Test(place, explicit_cores_checked)
{
	struct rx_config c;
	struct rx_placement pl;
	char err[256] = "";
	rx_config_defaults(&c);
	c.cores[0] = rxu_core_nth(0);
	c.cores[1] = rxu_core_nth(0);
	c.ncores = 2;
	cr_assert_eq(rx_place(&c, dev_caps(true), &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "twice") != NULL, "%s", err);
}

Test(dev, parse)
{
	struct rx_dev d;
	char err[128];
	cr_assert_eq(rx_dev_parse("sim", &d, err, sizeof(err)), 0);
	cr_assert_str_eq(d.kind, "sim");
	cr_assert_str_eq(d.args, "");
	cr_assert_eq(rx_dev_parse("mlx5:0000:3b:00.0", &d, err, sizeof(err)), 0);
	cr_assert_str_eq(d.kind, "mlx5");
	cr_assert_str_eq(d.args, "0000:3b:00.0");
	cr_assert_eq(rx_dev_parse("", &d, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "device:", 7) == 0);
}

Test(mem, host_and_clear_failures)
{
	struct rx_mem m;
	char err[256] = "";
	cr_assert_eq(rx_mem_alloc(&m, RX_MEM_HOST, 100000, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(m.addr);
	cr_assert_geq(m.len, 100000);
	memset(m.addr, 1, m.len);
	rx_mem_free(&m);
	cr_assert_null(m.addr);
	/* GPU: there is none here unless CUDA and a device exist */
	int rc = rx_mem_alloc(&m, RX_MEM_GPU, 4096, err, sizeof(err));
	if (rc < 0)
		cr_assert(strncmp(err, "payload-mem: gpu:", 17) == 0, "%s", err);
	rx_mem_free(&m);
	rc = rx_mem_alloc(&m, RX_MEM_HUGE, 4096, err, sizeof(err));
	if (rc < 0)
		cr_assert(strncmp(err, "payload-mem: huge:", 18) == 0, "%s", err);
	else
		cr_assert_geq(m.page_size, 2u << 20);
	rx_mem_free(&m);
}

static int worker_body(struct rx_worker *w, void *arg)
{
	int *ran = arg;
	rxp_lap_start(w->probe);
	rxp_lap(w->probe, RXP_ST_APP, 1);
	*ran = 1;
	return 7;
}

Test(worker, runs_pinned_with_probe)
{
	struct rx_worker w;
	struct rx_config c;
	int ran = 0;
	cr_assert_eq(rxp_clock_init(20), 0);
	rx_config_defaults(&c);
	cr_assert_eq(rx_worker_start(&w, "rx", rxu_core_nth(0), &c, worker_body, &ran), 0);
	cr_assert_eq(rx_worker_join(&w), 7);
	cr_assert_eq(ran, 1);
	cr_assert_str_eq(w.probe->role, "rx");
	rx_worker_destroy(&w);
}

/* ------------------------------------------------------- NIC threads */

Test(place, asked_nic_threads_are_counted_and_checked)
{
	struct rx_config c;
	struct rx_placement pl;
	char err[256] = "";
	rx_config_defaults(&c);
	c.queues = 2;
	c.nic_threads = 2;
	/* 4 cores: 2 + 2 + 2 app do not fit, so auto app runs inline */
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 4, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(pl.app, RX_APP_INLINE);
	cr_assert_eq(pl.needed, 4);
	cr_assert_eq(pl.nic_cores[0], 0);
	cr_assert_eq(pl.nic_cores[1], 1);
	cr_assert_eq(pl.rx_core[0], 2);
	cr_assert_eq(pl.rx_core[1], 3);
	json_t *j = rx_placement_to_json(&pl);
	cr_assert_eq(json_array_size(json_object_get(j, "nic_cores")), 2);
	/* the counts are the device's record, not the placement's */
	cr_assert_null(json_object_get(j, "nic_threads"));
	cr_assert_null(json_object_get(j, "dma_writers"));
	cr_assert_eq(json_integer_value(json_object_get(j, "nic")), 0);
	json_decref(j);
	/* 3 cores: one NIC thread would fit, two do not */
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 3, &pl, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "nic-threads: 2 NIC threads need 4 cores (NIC 2 + RX 2 + app 0), 3 "
			      "available; use fewer --nic-threads, more --cores, or "
			      "--allow-oversubscribe");
	/* 2 cores: the queues themselves do not fit */
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 2, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "queues: 2 queues need 4 cores (NIC 2 + RX 2)", 44) == 0, "%s",
		  err);
	c.allow_oversubscribe = true;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 3, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert(pl.oversubscribed);
	cr_assert_eq(pl.needed, 4);
	cr_assert_eq(pl.rx_core[1], 0, "round robin onto NIC thread 0's core");
	c.allow_oversubscribe = false;
	/* a device's writers each take a core: threads x writers of them */
	c.queues = 1;
	c.nic_threads = 2;
	c.dma_writers = 3;
	c.allow_oversubscribe = true;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 8, &pl, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(pl.nic_all, 6);
	cr_assert_eq(pl.nic_cores[5], 5);
	cr_assert_eq(pl.rx_core[0], 6);
	c.dma_writers = 0;
	/* --app non-eal (an app thread) on 2 cores: named as what it is */
	snprintf(c.device, sizeof(c.device), "sim");
	c.allow_oversubscribe = false;
	c.queues = 1;
	c.nic_threads = 0;
	c.app = RX_APP_THREAD;
	cr_assert_eq(rx_place_on(&c, dev_caps(true), eight, 2, &pl, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "app: an app thread on a core of its own per queue (--app thread, "
			      "non-eal) needs 3 cores (NIC 1 + RX 1 + app 1), 2 available; use "
			      "--app inline, fewer queues, or --allow-oversubscribe");
}

Test(config, nic_threads_option_and_validation)
{
	struct rx_config c;
	char err[256] = "";
	rx_config_defaults(&c);
	cr_assert_eq(c.nic_threads, 0, "auto by default");
	cr_assert_eq(rx_config_set(&c, "nic-threads", "2", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.nic_threads, 2);
	cr_assert_eq(rx_config_set(&c, "nic-threads", "auto", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.nic_threads, 0);
	cr_assert_eq(rx_config_set(&c, "nic-threads", "0", err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "nic-threads:", 12) == 0, "%s", err);
	cr_assert_eq(rx_config_set(&c, "nic-threads", "65", err, sizeof(err)), -EINVAL);
	cr_assert_eq(rx_config_set(&c, "nic-threads", "two", err, sizeof(err)), -EINVAL);
	cr_assert_eq(rx_config_set(&c, "nic-threads", NULL, err, sizeof(err)), -EINVAL);
	/* what was asked is the device's record (.nic), not the config's */
	json_t *j = rx_config_to_json(&c);
	cr_assert_null(json_object_get(j, "nic_threads"));
	cr_assert_null(json_object_get(j, "dma_writers"));
	json_decref(j);
	/* only the software NIC has NIC threads */
	struct rx_caps caps;
	memset(&caps, 0, sizeof(caps));
	snprintf(caps.name, sizeof(caps.name), "mlx5_0");
	c.nic_threads = 1;
	c.allow_oversubscribe = true;
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "nic-threads:", 12) == 0, "%s", err);
}

/* The cache check is rte_mempool's own: a pool of n objects takes a cache
 * whose flush threshold (cache x 1.5, rounded down) is at most n. */
Test(config, mempool_cache_flush_threshold_is_dpdks)
{
	struct rx_config c;
	struct rx_caps caps = sim_caps();
	char err[256] = "";
	one_core_config(&c);
	c.ring = 64;
	c.batch = 32;
	c.mempool_cache = 101; /* flush threshold 151 */
	c.buffers = 151;
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), 0, "%s", err);
	c.buffers = 150;
	expect_reject(&c, &caps, "mempool-cache");
	one_core_config(&c);
	c.mempool_cache = RX_MEMPOOL_CACHE_MAX;
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), 0, "%s", err);
	c.mempool_cache = RX_MEMPOOL_CACHE_MAX + 1;
	expect_reject(&c, &caps, "mempool-cache");
	cr_assert(rx_mempool_cache_fits(RX_MEMPOOL_CACHE_MAX));
	cr_assert_not(rx_mempool_cache_fits(RX_MEMPOOL_CACHE_MAX + 1));
}
