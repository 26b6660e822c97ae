/* SPDX-License-Identifier: MIT */
/*
 * One timeline (rxray flame --format trace): sampled laps nest in their
 * burst on their thread's track, named by stage; GPU records carried in a
 * result's gpu_trace land on "gpu stream" tracks at the time the anchor
 * pair gives them on the laps' clock. Synthetic results: no GPU needed.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "rxray/cupti.h"
#include "rxray/result.h"
#include "rxray/trace.h"

/* The build's paths, or the environment's when run from a bundle
 * (tools/device-bundle.sh): RXRAY_SRC_DIR, RXRAY_BIN, RXRAY_FAKE_CUPTI. */
static const char *env_or(const char *env, const char *built)
{
	const char *v = getenv(env);
	return v && *v ? v : built;
}

static char fixture_path[1024];
#define FIXTURE                                                                                    \
	(snprintf(fixture_path, sizeof(fixture_path), "%s/tests/analyze/data/run_dpdk_hds.json",  \
		  env_or("RXRAY_SRC_DIR", RXRAY_SRC_DIR)),                                         \
	 fixture_path)
#define FAKE_LIB env_or("RXRAY_FAKE_CUPTI", FAKE_CUPTI)
#define BIN env_or("RXRAY_BIN", RXRAY_BIN)

/* The fixture (rx thread: 3 bursts of 6 sampled laps, clock 2 GHz) with
 * gpu_trace added when gpu != NULL (a JSON text for the member). */
static struct rxr_result *load(const char *gpu)
{
	json_error_t je;
	json_t *doc = json_load_file(FIXTURE, 0, &je);
	cr_assert_not_null(doc, "%s", je.text);
	if (gpu) {
		json_t *g = json_loads(gpu, 0, &je);
		cr_assert_not_null(g, "%s", je.text);
		json_object_set_new(doc, "gpu_trace", g);
	}
	char err[256];
	struct rxr_result *r = NULL;
	cr_assert_eq(rxr_result_from_json(doc, FIXTURE, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(r);
	json_decref(doc);
	return r;
}

static json_t *trace_of(const struct rxr_result *r)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	const struct rxr_result *runs[] = {r};
	cr_assert_eq(rxa_trace_write(runs, NULL, 1, m), 0);
	fclose(m);
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);
	cr_assert_not_null(j, "trace is not JSON: %s", je.text);
	free(s);
	return j;
}

static const char *sget(json_t *e, const char *k)
{
	const char *v = json_string_value(json_object_get(e, k));
	return v ? v : "";
}

static double nget(json_t *e, const char *k)
{
	return json_number_value(json_object_get(e, k));
}

static int by_tid_ts(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t tx = json_integer_value(json_object_get(x, "tid"));
	json_int_t ty = json_integer_value(json_object_get(y, "tid"));
	if (tx != ty)
		return tx < ty ? -1 : 1;
	double sx = nget(x, "ts"), sy = nget(y, "ts");
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return nget(x, "dur") > nget(y, "dur") ? -1 : 1; /* parent first */
}

/*
 * Every X event of a track either starts after the one before it ended or
 * lies inside it (what Perfetto needs to stack them); each lap's parent is
 * a burst of the same seq; returns the number of laps.
 */
static size_t check_nesting(json_t *trace)
{
	json_t *evs = json_object_get(trace, "traceEvents");
	size_t n = 0, i, laps = 0;
	json_t *e, **x = calloc(json_array_size(evs) + 1, sizeof(*x));
	json_array_foreach(evs, i, e) {
		if (strcmp(sget(e, "ph"), "X"))
			continue;
		cr_expect_geq(nget(e, "ts"), 0, "%s before the trace's start", sget(e, "name"));
		cr_expect_geq(nget(e, "dur"), 0);
		x[n++] = e;
	}
	qsort(x, n, sizeof(*x), by_tid_ts);
	json_t *stack[8];
	size_t depth = 0;
	for (size_t k = 0; k < n; k++) {
		if (k && json_integer_value(json_object_get(x[k], "tid")) !=
				 json_integer_value(json_object_get(x[k - 1], "tid")))
			depth = 0;
		double ts = nget(x[k], "ts"), end = ts + nget(x[k], "dur");
		while (depth && ts >= nget(stack[depth - 1], "ts") + nget(stack[depth - 1], "dur") - 1e-9)
			depth--;
		if (depth)
			cr_expect_leq(end, nget(stack[depth - 1], "ts") + nget(stack[depth - 1], "dur") + 1e-9,
				      "%s at %f overlaps %s without nesting", sget(x[k], "name"), ts,
				      sget(stack[depth - 1], "name"));
		if (!strcmp(sget(x[k], "cat"), "lap")) {
			laps++;
			cr_expect_geq(rxp_stage_from_name(sget(x[k], "name")), 0, "lap '%s'",
				      sget(x[k], "name"));
			cr_assert_gt(depth, 0, "lap %s outside any burst", sget(x[k], "name"));
			json_t *b = stack[depth - 1];
			cr_expect_str_eq(sget(b, "cat"), "burst");
			cr_expect_eq(json_integer_value(json_object_get(json_object_get(b, "args"), "seq")),
				     json_integer_value(json_object_get(json_object_get(x[k], "args"), "seq")));
		}
		if (depth < 8)
			stack[depth++] = x[k];
	}
	free(x);
	return laps;
}

static size_t count(json_t *trace, const char *key, const char *val)
{
	size_t i, c = 0;
	json_t *e;
	json_array_foreach(json_object_get(trace, "traceEvents"), i, e) c += !strcmp(sget(e, key), val);
	return c;
}

static json_t *find(json_t *trace, const char *name)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(trace, "traceEvents"), i, e) if (!strcmp(sget(e, "name"), name)) return e;
	return NULL;
}

Test(trace, laps_nest_in_bursts_without_gpu)
{
	struct rxr_result *r = load(NULL);
	json_t *t = trace_of(r);
	cr_expect_eq(check_nesting(t), 18);
	cr_expect_eq(count(t, "cat", "burst"), 3);
	cr_expect_eq(count(t, "name", "buf_alloc"), 3);
	/* no GPU records, no GPU track */
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(t, "traceEvents"), i, e) {
		json_t *args = json_object_get(e, "args");
		cr_expect(!strstr(sget(args, "name"), "gpu stream"));
	}
	json_decref(t);
	rxr_result_free(r);
}

/* Anchor: tick 1000260 (buf_alloc of burst 0 ends there: sge_setup starts)
 * is 5e9 ns; a kernel at 5e9 + 1000 ns starts 1 us after sge_setup does. */
#define GPU_OK                                                                                     \
	"{\"source\":\"cupti\",\"clock\":{\"domain\":\"monotonic_ns\",\"anchor_ticks\":1000260,"    \
	"\"anchor_ns\":5000000000},\"fields\":[\"kind\",\"name\",\"start_ns\",\"end_ns\","          \
	"\"stream\",\"bytes\",\"correlation\"],\"data\":["                                           \
	"[\"memcpy\",\"memcpy HtoD\",5000000500,5000000900,13,4096,7],"                            \
	"[\"kernel\",\"rxg_reorder\",5000001000,5000003000,13,0,8]],\"dropped\":0}"

Test(trace, gpu_records_on_their_track_and_clock)
{
	struct rxr_result *r = load(GPU_OK);
	json_t *t = trace_of(r);
	cr_expect_eq(check_nesting(t), 18);
	json_t *track = NULL;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(t, "traceEvents"), i, e) {
		if (!strcmp(sget(json_object_get(e, "args"), "name"), "gpu stream 13"))
			track = e;
	}
	cr_assert_not_null(track, "no gpu stream track");
	json_t *k = find(t, "rxg_reorder"), *c = find(t, "memcpy HtoD");
	json_t *sge = find(t, "sge_setup"); /* the first: burst 0 */
	cr_assert(k && c && sge);
	cr_expect_str_eq(sget(k, "cat"), "gpu_kernel");
	cr_expect_str_eq(sget(c, "cat"), "gpu_copy");
	json_int_t gtid = json_integer_value(json_object_get(track, "tid"));
	cr_expect_eq(json_integer_value(json_object_get(k, "tid")), gtid);
	cr_expect_eq(json_integer_value(json_object_get(c, "tid")), gtid);
	/* the GPU track is not a CPU thread's */
	cr_expect_neq(gtid, json_integer_value(json_object_get(sge, "tid")));
	/* clock-correlated: 1 us after sge_setup starts, 2 us long */
	cr_expect(fabs(nget(k, "ts") - nget(sge, "ts") - 1.0) < 1e-6, "kernel at %f, sge_setup at %f",
		  nget(k, "ts"), nget(sge, "ts"));
	cr_expect(fabs(nget(k, "dur") - 2.0) < 1e-9);
	cr_expect(fabs(nget(c, "ts") - nget(sge, "ts") - 0.5) < 1e-6);
	json_decref(t);
	rxr_result_free(r);
}

/* A record before the first lap moves the time origin: nothing negative. */
Test(trace, gpu_record_before_laps_sets_origin)
{
	struct rxr_result *r = load(
		"{\"clock\":{\"anchor_ticks\":1000000,\"anchor_ns\":100000},\"data\":"
		"[[\"kernel\",\"early\",50000,60000,1,0,1]]}");
	json_t *t = trace_of(r);
	json_t *k = find(t, "early"), *poll = find(t, "cqe_poll");
	cr_assert(k && poll);
	cr_expect(fabs(nget(k, "ts")) < 1e-9, "%f", nget(k, "ts"));
	cr_expect(fabs(nget(poll, "ts") - 50.0) < 1e-6, "%f", nget(poll, "ts"));
	check_nesting(t);
	json_decref(t);
	rxr_result_free(r);
}

Test(trace, malformed_gpu_trace_is_bad_input)
{
	struct rxr_result *r = load("{\"clock\":{\"anchor_ticks\":1,\"anchor_ns\":1},"
				    "\"data\":[[\"kernel\",\"k\",5,4,1,0,1]]}");
	char err[256] = "";
	cr_expect_eq(rxa_trace_gpu_check(r, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "gpu_trace.data[0]"), "%s", err);
	const struct rxr_result *runs[] = {r};
	FILE *m = fopen("/dev/null", "w");
	cr_expect_eq(rxa_trace_write(runs, NULL, 1, m), -EINVAL);
	fclose(m);
	rxr_result_free(r);

	/* the CLI: exit 2, one line naming the file and the field */
	char dir[] = "/tmp/rxray-trace-XXXXXX", path[96], cmd[512];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	json_error_t je;
	json_t *doc = json_load_file(FIXTURE, 0, &je);
	json_object_set_new(doc, "gpu_trace",
			    json_loads("{\"clock\":{\"anchor_ticks\":1,\"anchor_ns\":1},\"data\":[[1]]}",
				       0, NULL));
	cr_assert_eq(json_dump_file(doc, path, 0), 0);
	json_decref(doc);
	snprintf(cmd, sizeof(cmd), "%s flame %s --format trace -o %s/t.json 2>%s/err", BIN,
		 path, dir, dir);
	int st = system(cmd);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "exit %d", WEXITSTATUS(st));
	snprintf(path, sizeof(path), "%s/err", dir);
	FILE *f = fopen(path, "r");
	char line[512] = "";
	cr_assert_not_null(f);
	cr_expect_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	cr_expect(strstr(line, "bad.json") && strstr(line, "gpu_trace.data[0]"), "%s", line);
	snprintf(cmd, sizeof(cmd), "%s/t.json", dir);
	cr_expect_neq(access(cmd, F_OK), 0, "a trace was written for bad input");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/*
 * The run side: rxr_result_add_gpu_trace finds the injection library only
 * when it is loaded, and stores its records with an anchor that puts them
 * just before "now" on the run clock.
 */
Test(trace, gpu_records_from_the_loaded_library)
{
	cr_assert_eq(rxp_clock_init(20), 0);
	struct rxr_result *r = NULL;
	cr_assert_eq(rxr_result_open(&r), 0);
	cr_assert_not_null(r);
	rxr_result_set_clock(r);
	/* named but not loaded: nothing */
	setenv("CUDA_INJECTION64_PATH", FAKE_LIB, 1);
	cr_expect_eq(rxr_result_add_gpu_trace(r, 0), 0);
	cr_expect_null(r->extra ? json_object_get(r->extra, "gpu_trace") : NULL);
	void *h = dlopen(FAKE_LIB, RTLD_NOW);
	cr_assert_not_null(h, "%s", dlerror());
	uint64_t before = rxp_now();
	cr_expect_eq(rxr_result_add_gpu_trace(r, 0), 2);
	uint64_t after = rxp_now();
	char err[256] = "";
	cr_expect_eq(rxa_trace_gpu_check(r, err, sizeof(err)), 0, "%s", err);
	json_t *g = json_object_get(r->extra, "gpu_trace");
	cr_assert_not_null(g);
	cr_expect_eq(json_integer_value(json_object_get(g, "dropped")), 3);
	json_t *clk = json_object_get(g, "clock");
	json_int_t at = json_integer_value(json_object_get(clk, "anchor_ticks"));
	json_int_t an = json_integer_value(json_object_get(clk, "anchor_ns"));
	cr_expect(at >= (json_int_t)before && at <= (json_int_t)after);
	json_t *k = json_array_get(json_object_get(g, "data"), 1);
	cr_expect_str_eq(json_string_value(json_array_get(k, 0)), "kernel");
	cr_expect_str_eq(json_string_value(json_array_get(k, 1)), "rxg_reorder");
	json_int_t kend = json_integer_value(json_array_get(k, 3));
	cr_expect(an - kend >= 1000 && an - kend < 1000000000, "anchor %lld, kernel end %lld",
		  (long long)an, (long long)kend);
	/* and the trace shows it on a gpu stream track, 2 us long */
	json_t *t = trace_of(r);
	json_t *e = find(t, "rxg_reorder");
	cr_assert_not_null(e);
	cr_expect_str_eq(sget(e, "cat"), "gpu_kernel");
	cr_expect(fabs(nget(e, "dur") - 2.0) < 1e-9);
	json_decref(t);
	dlclose(h);
	rxr_result_free(r);
}
