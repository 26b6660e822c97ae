/* SPDX-License-Identifier: MIT */
/*
 * A real `rxray run` on the software NIC under an NVTX listener
 * (librxray_nvtx.so through NVTX_INJECTION64_PATH; no GPU needed): the run
 * is one range; in a full-probe build every sampled burst is a range
 * "burst" holding ranges named by the stages the run result lapped
 * (buf_alloc, sge_setup, chain, doorbell, ...), each inside its burst in
 * time; a counters build opens no burst range at all (its lap path does no
 * NVTX work). With a GPU, each GPU batch is a range and, under the CUPTI
 * injection library, the reorder kernels are recorded, one per batch.
 * Paths come from the build, or from the environment when run from a
 * bundle (tools/device-bundle.sh): RXRAY_BIN, RXRAY_NVTX_LIB,
 * RXRAY_CUPTI_LIB.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/engines.h"
#include "rxray/probe.h"
#ifdef RXRAY_HAVE_GPU_TEST
#include "rxray/gpu.h"
#endif

static const char *path_of(const char *env, const char *built)
{
	const char *v = getenv(env);
	return v && *v ? v : built;
}

struct cap {
	char dir[64];
	char nvtx[96], run[96], cupti[96];
	json_t *ranges; /* borrowed from doc */
	json_t *doc;
	json_t *result;
};

/* rxray run ARGS under the listener (and CUPTI when cupti != NULL). */
static void capture(struct cap *c, const char *args, const char *cupti)
{
	snprintf(c->dir, sizeof(c->dir), "/tmp/rxray-nvtx-XXXXXX");
	cr_assert_not_null(mkdtemp(c->dir));
	snprintf(c->nvtx, sizeof(c->nvtx), "%s/nvtx.json", c->dir);
	snprintf(c->run, sizeof(c->run), "%s/run.json", c->dir);
	snprintf(c->cupti, sizeof(c->cupti), "%s/cupti.json", c->dir);
	char cmd[2048], inj[512] = "";
	if (cupti)
		snprintf(inj, sizeof(inj), "CUDA_INJECTION64_PATH=%s RXRAY_CUPTI_OUT=%s ", cupti,
			 c->cupti);
	snprintf(cmd, sizeof(cmd),
		 "%sNVTX_INJECTION64_PATH=%s RXRAY_NVTX_OUT=%s %s run --device sim --rate 1M "
		 "--seconds 0.3 --sample-shift 2 --allow-oversubscribe %s -o %s > %s/stdout 2>&1",
		 inj, path_of("RXRAY_NVTX_LIB", NVTX_LIB), c->nvtx, path_of("RXRAY_BIN", RXRAY_BIN),
		 args, c->run, c->dir);
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char path[128], said[1024] = "";
		snprintf(path, sizeof(path), "%s/stdout", c->dir);
		FILE *f = fopen(path, "r");
		if (f) {
			said[fread(said, 1, sizeof(said) - 1, f)] = 0;
			fclose(f);
		}
		cr_assert_fail("rxray run failed (%d): %s\n%s", st, cmd, said);
	}
	json_error_t je;
	c->doc = json_load_file(c->nvtx, 0, &je);
	cr_assert_not_null(c->doc, "the listener wrote nothing: %s", je.text);
	cr_assert_str_eq(json_string_value(json_object_get(c->doc, "schema")), "rxray.nvtx/1");
	cr_assert_eq(json_integer_value(json_object_get(c->doc, "dropped")), 0);
	c->ranges = json_object_get(c->doc, "ranges");
	cr_assert(json_is_array(c->ranges));
	c->result = json_load_file(c->run, 0, &je);
	cr_assert_not_null(c->result, "no run result: %s", je.text);
}

static void cap_free(struct cap *c)
{
	json_decref(c->doc);
	json_decref(c->result);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	cr_expect_eq(system(cmd), 0);
}

static const char *rname(json_t *r)
{
	return json_string_value(json_object_get(r, "name"));
}

__attribute__((unused)) static size_t count_named(const struct cap *c, const char *name)
{
	size_t i, n = 0;
	json_t *r;
	json_array_foreach(c->ranges, i, r) n += !strcmp(rname(r), name);
	return n;
}

/* The run itself is one range of domain rxray, at depth 0, closed. */
static void check_run_range(const struct cap *c)
{
	size_t i, n = 0;
	json_t *r;
	json_array_foreach(c->ranges, i, r) {
		if (strcmp(rname(r), "run"))
			continue;
		n++;
		cr_expect_str_eq(json_string_value(json_object_get(r, "domain")), "rxray");
		cr_expect_eq(json_integer_value(json_object_get(r, "depth")), 0);
		cr_expect_gt(json_integer_value(json_object_get(r, "end_ns")),
			     json_integer_value(json_object_get(r, "start_ns")));
	}
	cr_expect_eq(n, 1, "run ranges: %zu", n);
}

/* Stages some thread of the run result lapped in its sampled laps. */
__attribute__((unused)) static uint32_t sampled_stages(const struct cap *c)
{
	uint32_t mask = 0;
	size_t i, k;
	json_t *t, *row;
	json_array_foreach(json_object_get(c->result, "threads"), i, t) {
		json_t *data = json_object_get(json_object_get(t, "samples"), "data");
		json_array_foreach(data, k, row) {
			/* samples.data rows: [start, cycles, stage name, seq] */
			int s = rxr_stage_from_name(json_string_value(json_array_get(row, 2)));
			if (s >= 0)
				mask |= 1u << s;
		}
	}
	return mask;
}

__attribute__((unused)) static const char *engine_or_skip(const char *want,
						    const char *fallback)
{
	if (rx_engine_find(want))
		return want;
	if (fallback && rx_engine_find(fallback))
		return fallback;
	cr_skip_test("needs the %s engine in this build", want);
	return NULL;
}

/*
 * Full mode: the stage ranges, their names and nesting. DPDK's scalar
 * discipline (hds) laps buf_alloc, sge_setup, chain and doorbell.
 */
Test(nvtx_run, stage_ranges_nest_in_bursts)
{
#if RXRAY_PROBE_MODE != RXR_MODE_FULL || !defined(RXRAY_HAVE_NVTX)
	cr_skip_test("needs a full-probe build with NVTX headers (-DRXRAY_PROBES=full)");
#else
	const char *eng = engine_or_skip("dpdk", "verbs");
	char args[128];
	snprintf(args, sizeof(args), "--engine %s --mode hds", eng);
	struct cap c;
	capture(&c, args, NULL);
	check_run_range(&c);
	size_t n = json_array_size(c.ranges), bursts = 0, staged = 0;
	uint32_t seen = 0, lapped = sampled_stages(&c);
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(c.ranges, i);
		json_int_t parent = json_integer_value(json_object_get(r, "parent"));
		if (!strcmp(rname(r), "burst")) {
			bursts++;
			/* sampled bursts carry their number; they sit at depth >= 1
			 * on worker threads (not inside another burst) */
			cr_expect(json_is_integer(json_object_get(r, "payload")));
			if (parent >= 0)
				cr_expect_str_neq(rname(json_array_get(c.ranges, parent)), "burst");
			continue;
		}
		if (parent < 0 || strcmp(rname(json_array_get(c.ranges, parent)), "burst"))
			continue;
		/* a child of a burst: a stage, by name, inside the burst in time */
		json_t *b = json_array_get(c.ranges, parent);
		int s = rxr_stage_from_name(rname(r));
		cr_expect_geq(s, 0, "range '%s' in a burst is not a stage", rname(r));
		if (s >= 0)
			seen |= 1u << s;
		staged++;
		cr_expect_geq(json_integer_value(json_object_get(r, "start_ns")),
			      json_integer_value(json_object_get(b, "start_ns")));
		cr_expect_leq(json_integer_value(json_object_get(r, "end_ns")),
			      json_integer_value(json_object_get(b, "end_ns")));
		cr_expect_eq(json_integer_value(json_object_get(r, "tid")),
			     json_integer_value(json_object_get(b, "tid")));
	}
	cr_expect_gt(bursts, 10, "burst ranges: %zu", bursts);
	cr_expect_gt(staged, 10, "stage ranges: %zu in %zu bursts", staged, bursts);
	/* an empty poll opens no burst range (most sampled bursts at light
	 * load are empty polls: a range each flooded the listener on a fast
	 * host, 1M ranges in 0.3 s); a burst with work holds its stages */
	cr_expect_geq(staged, bursts / 2, "%zu stage ranges in %zu bursts: empty polls open ranges",
		      staged, bursts);
	/* every stage Nsight shows is one the result lapped in sampled bursts
	 * (idle laps are not kept in the samples: leave idle out) */
	uint32_t idle = 1u << RXR_ST_IDLE;
	cr_expect_eq(seen & ~lapped & ~idle, 0, "NVTX stages %#x, lapped %#x", seen, lapped);
	if (!strcmp(eng, "dpdk")) {
		const enum rxr_stage want[] = {RXR_ST_BUF_ALLOC, RXR_ST_SGE_SETUP, RXR_ST_CHAIN,
					       RXR_ST_DOORBELL};
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			cr_expect(seen & (1u << want[k]), "no %s range in a burst",
				  rxr_stage_name(want[k]));
	}
	cap_free(&c);
#endif
}

/* Counters mode keeps its lap path free of NVTX: the run's range only. */
Test(nvtx_run, counters_build_has_run_range_only)
{
#if RXRAY_PROBE_MODE != RXR_MODE_COUNTERS || !defined(RXRAY_HAVE_NVTX)
	cr_skip_test("needs a counters-probe build with NVTX headers (the default)");
#else
	struct cap c;
	capture(&c, "--engine verbs", NULL);
	check_run_range(&c);
	cr_expect_eq(count_named(&c, "burst"), 0);
	for (int s = 0; s < RXR_ST_COUNT; s++)
		cr_expect_eq(count_named(&c, rxr_stage_name((enum rxr_stage)s)), 0, "%s",
			     rxr_stage_name((enum rxr_stage)s));
	cap_free(&c);
#endif
}

/* With a GPU: a range per GPU batch; under CUPTI, one reorder kernel each. */
Test(nvtx_run, gpu_batches_and_kernels)
{
#ifndef RXRAY_HAVE_GPU_TEST
	cr_skip_test("needs a build with the CUDA toolkit (rxray_gpu)");
#else
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		cr_skip_test("needs a CUDA GPU: %s", why);
	const char *cupti = NULL;
#ifdef CUPTI_LIB
	cupti = path_of("RXRAY_CUPTI_LIB", CUPTI_LIB);
#endif
	struct cap c;
	capture(&c,
		"--engine verbs --mode hds --payload-mem gpu --payload full --gpu-work reorder",
		cupti);
	check_run_range(&c);
	size_t i, batches = 0;
	json_t *r;
	json_array_foreach(c.ranges, i, r) {
		if (strcmp(rname(r), "gpu_batch"))
			continue;
		batches += json_integer_value(json_object_get(r, "end_ns")) > 0;
	}
	cr_expect_gt(batches, 0, "no gpu_batch range");
	if (!cupti) {
		cap_free(&c);
		cr_skip_test("CUPTI part: librxray_cupti.so not built");
	}
	json_error_t je;
	json_t *doc = json_load_file(c.cupti, 0, &je);
	cr_assert_not_null(doc, "CUPTI wrote no trace: %s", je.text);
	size_t kernels = 0;
	json_array_foreach(json_object_get(doc, "traceEvents"), i, r) {
		const char *cat = json_string_value(json_object_get(r, "cat"));
		/* the consumer's kernels (rxg_k_param<N> in kernel mode), not the
		 * software NIC's copies into GPU memory (rxg_scatter) */
		if (cat && !strcmp(cat, "kernel") && strstr(rname(r), "rxg_k_param"))
			kernels++;
	}
	cr_expect_eq(kernels, batches, "consumer kernels %zu, gpu_batch ranges %zu", kernels,
		     batches);
	json_decref(doc);
	cap_free(&c);
#endif
}
