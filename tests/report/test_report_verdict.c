/* SPDX-License-Identifier: MIT */
/*
 * The report's verdicts on a synthetic sweep whose answers are known:
 * every stage cost is chosen, so the bottleneck thread and stage, the
 * intervals, the points a fit must leave out and the GPU verdict are
 * known before the report is written.
 *
 *   verbs hds   1064..8064 B clean (rx 80 cycles/pkt), plus 512 B disturbed
 *               with a 3000-cycle cqe_poll (a slowed host): fitted, it
 *               would turn the per-packet verdict into a falling slope
 *   dpdk hds    1064, 2064 clean (rx 500: buf_alloc 300, chain 100, ...),
 *               4064 unresolved, 8064 disturbed: 2 clean points, declined
 *   dpdk single 1064, 4064, 8064 clean, cost falling with bytes: declined,
 *               never a negative share
 *   verbs single 1064 oversubscribed: fast, but never a ceiling
 *   dpdk hds 1064 payload_mem=gpu gpu_work=reorder: gpu_kernel 2000 cycles
 *               at 2 GHz = 1000 ns/packet, the bottleneck: GPU-bound
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <sys/stat.h>

#include "../analyze/testutil.h"
#include "rxray/report.h"

#define HZ 2e9
#define PKTS 1000000

struct st {
	const char *name;
	double cpp;
};

struct th {
	const char *role;
	struct st s[6];
};

static json_t *thread_doc(const struct th *t)
{
	json_t *stages = json_object();
	double busy = 0;
	for (const struct st *s = t->s; s->name; s++) {
		json_int_t cyc = (json_int_t)(s->cpp * PKTS);
		json_object_set_new(stages, s->name,
				    json_pack("{s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I}", "count", (json_int_t)PKTS / 32,
					      "packets", (json_int_t)PKTS, "cycles", cyc, "cycles_per_packet", s->cpp,
					      "min", (json_int_t)s->cpp, "max", (json_int_t)s->cpp * 40, "p50",
					      (json_int_t)s->cpp * 32, "p90", (json_int_t)s->cpp * 34, "p99",
					      (json_int_t)s->cpp * 38));
		if (strcmp(s->name, "gpu_wait") && strcmp(s->name, "idle"))
			busy += s->cpp;
	}
	return json_pack("{s:s,s:i,s:I,s:I,s:o}", "role", t->role, "core", strcmp(t->role, "gpu") ? 1 : -1,
			 "packets", (json_int_t)PKTS, "busy_cycles", (json_int_t)(busy * PKTS), "stages", stages);
}

static json_t *run_doc(json_t *knobs, const struct th *ths, size_t nth, bool oversub)
{
	json_t *threads = json_array();
	for (size_t i = 0; i < nth; i++)
		json_array_append_new(threads, thread_doc(&ths[i]));
	json_t *r = json_pack("{s:s,s:O,s:{s:s,s:i},s:{s:I,s:I,s:I,s:I,s:I,s:I},s:{s:f,s:f,s:f},"
			      "s:{s:s,s:f,s:f},s:o}",
			      "schema", "rxray.run/1", "config", knobs, "env", "cpu", "Synthetic CPU", "cores_online",
			      2, "counters", "offered", (json_int_t)PKTS, "received", (json_int_t)PKTS,
			      "out_of_buffer", (json_int_t)0, "nombuf", (json_int_t)0, "app_dropped", (json_int_t)0,
			      "errors", (json_int_t)0, "rates", "offered_mpps", 1.0, "rx_mpps", 1.0, "loss", 0.0,
			      "clock", "source", "tsc", "hz", HZ, "lap_cost_cycles", 20.0, "threads", threads);
	if (oversub) {
		json_object_set_new(r, "oversubscribed", json_true());
		json_object_set_new(r, "validity", json_pack("{s:b,s:[s]}", "disturbed", 1, "reasons",
							     "oversubscribed: 3 threads on 2 cores"));
	}
	return r;
}

enum flag { CLEAN, DISTURBED, UNRESOLVED, OVERSUB };

static void point(FILE *f, json_t *knobs, double lo, double hi, enum flag fl, const struct th *ths, size_t nth)
{
	char key[256] = "";
	const char *k;
	json_t *v;
	json_object_foreach(knobs, k, v) {
		char b[64];
		snprintf(b, sizeof(b), "%s%s=%s", key[0] ? "," : "", k,
			 json_is_string(v) ? json_string_value(v) : "");
		if (json_is_integer(v))
			snprintf(b, sizeof(b), "%s%s=%lld", key[0] ? "," : "", k, (long long)json_integer_value(v));
		strncat(key, b, sizeof(key) - strlen(key) - 1);
	}
	json_t *run = run_doc(knobs, ths, nth, fl == OVERSUB);
	json_t *s = json_pack("{s:s,s:s,s:O,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:i,s:O,s:O,s:f,s:f,s:b,s:b,s:b}",
			      "schema", "rxray.point/1", "key", key, "knobs", knobs, "status", "ok", "ndr_mpps", lo,
			      "pdr_mpps", lo, "ndr_loss", 0.0, "pdr_loss", 0.005, "max_offered_mpps", 30.0,
			      "nic_max_mpps", 30.0, "generator_limited", 0, "trials", 6, "ndr_run", run, "top_run",
			      run, "ndr_upper_mpps", hi, "pdr_upper_mpps", hi, "resolved", fl != UNRESOLVED,
			      "disturbed", fl == DISTURBED || fl == OVERSUB, "ndr_resolved", fl != UNRESOLVED);
	if (fl == OVERSUB)
		json_object_set_new(s, "oversubscribed", json_true());
	char *line = json_dumps(s, JSON_COMPACT);
	fprintf(f, "%s\n", line);
	free(line);
	json_decref(s);
	json_decref(run);
	json_decref(knobs);
}

static json_t *kn(const char *engine, const char *mode, int frame)
{
	return json_pack("{s:s,s:s,s:i,s:i,s:i}", "engine", engine, "mode", mode, "frame", frame, "queues", 1,
			 "ring", 1024);
}

static const struct th verbs_hds[] = {{"nic", {{"hdr_write", 90}, {0}}},
				      {"rx", {{"cqe_poll", 50}, {"sge_setup", 20}, {"doorbell", 10}, {0}}},
				      {"app", {{"hdr_read", 30}, {"free", 20}, {0}}}};
static const struct th verbs_hds_slow[] = {{"nic", {{"hdr_write", 300}, {0}}},
					   {"rx", {{"cqe_poll", 3000}, {"sge_setup", 20}, {"doorbell", 10}, {0}}},
					   {"app", {{"hdr_read", 30}, {"free", 20}, {0}}}};
static const struct th verbs_single[] = {{"nic", {{"hdr_write", 90}, {0}}},
					 {"rx", {{"cqe_poll", 40}, {"sge_setup", 10}, {"doorbell", 10}, {0}}},
					 {"app", {{"hdr_read", 30}, {"free", 20}, {0}}}};
static const struct th dpdk_hds[] = {
	{"nic", {{"hdr_write", 90}, {0}}},
	{"rx", {{"buf_alloc", 300}, {"chain", 100}, {"cqe_poll", 50}, {"sge_setup", 40}, {"doorbell", 10}, {0}}},
	{"app", {{"hdr_read", 40}, {"free", 60}, {0}}}};
static const struct th gpu_run[] = {
	{"nic", {{"hdr_write", 90}, {"payload_dma", 200}, {0}}},
	{"rx", {{"buf_alloc", 200}, {"cqe_poll", 100}, {0}}},
	{"app", {{"gpu_launch", 200}, {"app", 50}, {"gpu_wait", 400}, {0}}},
	{"gpu", {{"gpu_kernel", 2000}, {0}}}};

/* dpdk single: the rx cost falls with frame size (a slope no receiver has) */
static void dpdk_single(FILE *f, int frame, double cpp)
{
	struct th t[] = {{"nic", {{"hdr_write", 90}, {0}}},
			 {"rx", {{"cqe_poll", cpp / 2}, {"buf_alloc", cpp / 2}, {0}}},
			 {"app", {{"free", 20}, {0}}}};
	point(f, kn("dpdk", "single", frame), 2.0, 2.04, CLEAN, t, 3);
}

static char dir[128];

static void make_sweep(void)
{
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	char p[256];
	snprintf(p, sizeof(p), "%s/sw", dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sw/results.jsonl", dir);
	FILE *f = fopen(p, "w");
	cr_assert(f);
	static const int frames[] = {1064, 2064, 4064, 8064};
	for (int i = 0; i < 4; i++)
		point(f, kn("verbs", "hds", frames[i]), 10.0, 10.2, CLEAN, verbs_hds, 3);
	point(f, kn("verbs", "hds", 512), 0.5, 0.6, DISTURBED, verbs_hds_slow, 3);
	point(f, kn("dpdk", "hds", 1064), 3.8, 3.9, CLEAN, dpdk_hds, 3);
	point(f, kn("dpdk", "hds", 2064), 3.8, 3.9, CLEAN, dpdk_hds, 3);
	point(f, kn("dpdk", "hds", 4064), 3.0, 3.9, UNRESOLVED, dpdk_hds, 3);
	point(f, kn("dpdk", "hds", 8064), 0.9, 1.0, DISTURBED, dpdk_hds, 3);
	dpdk_single(f, 1064, 600);
	dpdk_single(f, 4064, 400);
	dpdk_single(f, 8064, 200);
	point(f, kn("verbs", "single", 1064), 20.0, 20.4, OVERSUB, verbs_single, 3);
	json_t *g = kn("dpdk", "hds", 1064);
	json_object_set_new(g, "payload_mem", json_string("gpu"));
	json_object_set_new(g, "gpu_work", json_string("reorder"));
	point(f, g, 0.95, 0.97, CLEAN, gpu_run, 4);
	fclose(f);
	/* a spec saved with CR LF line ends */
	snprintf(p, sizeof(p), "%s/sw/spec.yaml", dir);
	f = fopen(p, "w");
	cr_assert(f);
	fputs("# synthetic\r\nengines: [verbs, dpdk]\r\nmodes: [single, hds]\r\n", f);
	fclose(f);
}

static char *md, *html;
static json_t *cj;

static void setup(void)
{
	make_sweep();
	char p[256], err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	snprintf(p, sizeof(p), "%s/sw", dir);
	cr_assert_eq(rxa_set_load(p, &s, err, sizeof(err)), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/rep", dir);
	cr_assert_eq(rxo_report_write(s, p, NULL, err, sizeof(err)), 0, "%s", err);
	rxa_set_free(s);
	snprintf(p, sizeof(p), "%s/rep/report.md", dir);
	md = tu_slurp(p);
	snprintf(p, sizeof(p), "%s/rep/report.html", dir);
	html = tu_slurp(p);
	snprintf(p, sizeof(p), "%s/rep/ceiling.json", dir);
	cj = json_load_file(p, 0, NULL);
	cr_assert(md && html && cj);
}

static void teardown(void)
{
	free(md);
	free(html);
	json_decref(cj);
	md = html = NULL;
	cj = NULL;
	if (!getenv("RXRAY_TEST_KEEP")) /* keep the synthetic sweep and report to look at */
		tu_rmrf(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
}

TestSuite(report_verdict, .init = setup, .fini = teardown, .timeout = 120);

/* A fit of ceiling.json's "bounds" by config label; basis "cost" or "measured". */
static json_t *fit_of(const char *label, const char *basis)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(cj, "bounds"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "config")), label))
			return json_object_get(b, basis);
	return NULL;
}

Test(report_verdict, verdicts_come_first_and_name_the_bottleneck_stage)
{
	/* the first section is the verdicts, before the summary and the evidence */
	const char *h = strstr(md, "\n## ");
	cr_assert(h);
	cr_expect(!strncmp(h, "\n## Verdicts", 12), "first section: %.40s", h + 1);
	cr_expect(strstr(md, "## Verdicts") < strstr(md, "## Summary"));
	cr_expect(strstr(md, "## Verdicts") < strstr(md, "## Ceiling"));
	/* dpdk hds 1064: the rx thread (500 cycles), buf_alloc its top stage, with its interval */
	char *l = tu_line_of(strstr(md, "### Configurations"), "- dpdk hds frame=1064:");
	cr_assert(l, "no verdict for dpdk hds 1064:\n%s", md);
	cr_expect(strstr(l, "ceiling NDR [3.80, 3.90] Mpps"), "%s", l);
	cr_expect(strstr(l, "set by the rx thread, 500 cycles/packet: buf_alloc 300 (60%), chain 100 (20%)"), "%s", l);
	cr_expect(!strstr(l, "GPU"), "%s", l);
	free(l);
	/* verbs hds 1064: rx 80 > app 50, cqe_poll first */
	l = tu_line_of(strstr(md, "### Configurations"), "- verbs hds frame=1064:");
	cr_assert(l);
	cr_expect(strstr(l, "set by the rx thread, 80 cycles/packet: cqe_poll 50"), "%s", l);
	cr_expect(strstr(l, "per-packet bound"), "%s", l);
	free(l);
	/* the comparison line: what dpdk adds over verbs at 1064 B, and both ceilings */
	l = tu_line_of(strstr(md, "### Comparisons"), "- dpdk hds frame=1064 vs verbs hds frame=1064:");
	cr_assert(l, "%s", md);
	cr_expect(strstr(l, "+420 cycles/packet on the rx thread, buf_alloc +300, chain +100"), "%s", l);
	cr_expect(strstr(l, "ceiling 10.00 -> 3.80 Mpps"), "%s", l);
	free(l);
	/* A is the faster by NDR: dpdk hds 4064 (NDR >= 3.00, predicted 4
	 * Mpps) over dpdk single 4064 (NDR 2.00, predicted 5) */
	l = tu_line_of(strstr(md, "### Comparisons"), "- dpdk single frame=4064 vs dpdk hds frame=4064:");
	cr_assert(l, "%s", strstr(md, "### Comparisons"));
	cr_expect(strstr(l, "ceiling [3.00, 3.90] (unresolved) -> 2.00 Mpps"), "%s", l);
	free(l);
}

Test(report_verdict, intervals_rendered)
{
	cr_expect(strstr(md, "NDR [10.00, 10.20] Mpps"), "summary/verdict interval");
	/* the ceiling table's NDR and PDR cells */
	cr_expect(strstr(md, "| ok | [3.80, 3.90] | ") &&
		  strstr(md, " | [3.80, 3.90] | "), "%s", strstr(md, "## Ceiling"));
	/* the unresolved point shows both ends and is marked */
	char *l = tu_line_of(strstr(md, "### Configurations"), "- [unresolved");
	cr_assert(l, "no unresolved mark");
	cr_expect(strstr(l, "dpdk hds frame=4064") && strstr(l, "[3.00, 3.90]"), "%s", l);
	cr_expect(strstr(l, "not a ceiling"), "%s", l);
	free(l);
	cr_expect(strstr(html, "[3.80, 3.90]"));
}

Test(report_verdict, disturbed_and_unresolved_marked_and_left_out_of_fits)
{
	char *l = tu_line_of(strstr(md, "### Configurations"), "- [disturbed");
	cr_assert(l, "no disturbed mark");
	cr_expect(strstr(l, "frame=512") || strstr(l, "frame=8064"), "%s", l);
	free(l);
	cr_expect(strstr(md, "engine=verbs mode=hds frame=512 queues=1: [disturbed") ||
		  strstr(md, "[disturbed: the host interfered"), "warning for the disturbed point");
	/* verbs hds: 4 clean points fitted, the disturbed 512 B left out (5 would fit a falling line) */
	json_t *c = fit_of("engine=verbs mode=hds", "cost");
	cr_assert(c, "%s", json_dumps(json_object_get(cj, "bounds"), 0));
	cr_expect_eq(json_integer_value(json_object_get(c, "n")), 4);
	cr_expect_str_eq(json_string_value(json_object_get(c, "bound")), "per-packet");
	cr_expect_float_eq(json_real_value(json_object_get(c, "frame_min")), 1064, 1e-9);
	json_t *m = fit_of("engine=verbs mode=hds", "measured");
	cr_assert(m);
	cr_expect_eq(json_integer_value(json_object_get(m, "n")), 4);
	/* dpdk hds: unresolved 4064 and disturbed 8064 left out: 2 clean points */
	c = fit_of("engine=dpdk mode=hds", "cost");
	cr_assert(c);
	cr_expect_eq(json_integer_value(json_object_get(c, "n")), 2);
	/* ceiling.json says why a point was not fitted */
	size_t i;
	json_t *p;
	int marked = 0;
	json_array_foreach(json_object_get(cj, "points"), i, p) {
		const char *nf = json_string_value(json_object_get(p, "not_fitted"));
		if (nf)
			marked++;
	}
	cr_expect_eq(marked, 4, "512 disturbed, 4064 unresolved, 8064 disturbed, oversubscribed");
}

Test(report_verdict, classifier_declines_with_fewer_than_3_clean_points)
{
	json_t *c = fit_of("engine=dpdk mode=hds", "cost");
	cr_assert(c);
	cr_expect_str_eq(json_string_value(json_object_get(c, "bound")), "unknown");
	cr_expect_str_eq(json_string_value(json_object_get(c, "declined")), "fewer than 3 clean frame sizes");
	cr_expect(strstr(md, "engine=dpdk mode=hds: bound not classified: fewer than 3 clean frame sizes"), "%s", md);
	/* the classifier itself: two points always fit a line, so no verdict */
	double x[] = {1064, 8064}, y[] = {100, 400};
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(x, y, 2, &f), 0);
	cr_expect_eq(f.bound, RXA_BOUND_UNKNOWN);
	cr_expect(f.declined);
	double x3[] = {1064, 4064, 8064}, y3[] = {100, 250, 400};
	cr_assert_eq(rxa_bound_fit(x3, y3, 3, &f), 0);
	cr_expect_eq(f.declined, NULL);
	cr_expect_neq(f.bound, RXA_BOUND_UNKNOWN);
	/* a poor fit declines too */
	double yp[] = {100, 900, 150};
	cr_assert_eq(rxa_bound_fit(x3, yp, 3, &f), 0);
	cr_expect(f.poor && f.declined && f.bound == RXA_BOUND_UNKNOWN);
}

Test(report_verdict, no_negative_share)
{
	/* dpdk single's cost falls with bytes: declined, and no share below zero anywhere */
	json_t *c = fit_of("engine=dpdk mode=single", "cost");
	cr_assert(c);
	cr_expect_str_eq(json_string_value(json_object_get(c, "bound")), "unknown");
	cr_expect(json_is_null(json_object_get(c, "byte_share")));
	cr_expect(strstr(md, "not classified: time/packet falls with frame size"), "%s", strstr(md, "## Bound"));
	regex_t re;
	cr_assert_eq(regcomp(&re, "-[0-9]+(\\.[0-9]+)?%", REG_EXTENDED), 0);
	regmatch_t m;
	cr_expect(regexec(&re, md, 1, &m, 0) != 0, "negative share in report.md: %.40s", md + m.rm_so);
	cr_expect(regexec(&re, html, 1, &m, 0) != 0, "negative share in report.html: %.40s", html + m.rm_so);
	regfree(&re);
	/* the classifier: slight noise below flat reads 0, never negative */
	double x[] = {1064, 4064, 8064}, y[] = {100.5, 100.2, 100.0};
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(x, y, 3, &f), 0);
	cr_expect(f.byte_share >= 0, "share %f", f.byte_share);
	cr_expect_eq(f.bound, RXA_BOUND_PACKET);
}

Test(report_verdict, spec_newlines_render)
{
	cr_expect(strstr(md, "# synthetic\nengines: [verbs, dpdk]\nmodes: [single, hds]\n"), "%s",
		  strstr(md, "## Sweep spec"));
	const char *pre = strstr(html, "<pre># synthetic");
	cr_assert(pre);
	cr_expect(!strncmp(pre, "<pre># synthetic\nengines: [verbs, dpdk]\nmodes: [single, hds]\n</pre>", 66),
		  "%.80s", pre);
}

Test(report_verdict, oversubscribed_marked_never_a_ceiling)
{
	char *l = tu_line_of(strstr(md, "### Configurations"), "- [oversubscribed");
	cr_assert(l, "no oversubscribed mark:\n%s", md);
	cr_expect(strstr(l, "verbs single frame=1064"), "%s", l);
	cr_expect(strstr(l, "3 threads on 2 cores") && strstr(l, "disturbed by construction, not a ceiling"), "%s", l);
	cr_expect(!strstr(l, "ceiling NDR"), "read as a ceiling: %s", l);
	free(l);
	/* the comparison that uses it says so */
	l = tu_line_of(strstr(md, "### Comparisons"), "- verbs hds frame=1064 vs verbs single frame=1064:");
	cr_assert(l, "%s", strstr(md, "### Comparisons"));
	cr_expect(strstr(l, "(oversubscribed)"), "%s", l);
	free(l);
	/* the ceiling table's notes and the warnings */
	cr_expect(strstr(strstr(md, "## Ceiling"), "| oversubscribed (3 threads on 2 cores) | ") &&
		  strstr(strstr(md, "## Ceiling"), "disturbed by construction, not a ceiling"),
		  "%s", strstr(md, "## Ceiling"));
	cr_expect(strstr(md, "## Warnings"));
	char *w = tu_line_of(strstr(md, "## Warnings"), "- engine=verbs mode=single frame=1064");
	cr_expect(w && strstr(w, "[oversubscribed"), "%s", w ? w : "(no warning)");
	free(w);
}

Test(report_verdict, gpu_bound_verdict_and_gpu_stage)
{
	char *l = tu_line_of(strstr(md, "### Configurations"), "- dpdk hds frame=1064 payload_mem=gpu");
	cr_assert(l, "%s", strstr(md, "### Configurations"));
	cr_expect(strstr(l, "GPU-bound: ceiling NDR [0.95, 0.97] Mpps"), "%s", l);
	cr_expect(strstr(l, "set by the gpu thread, 2000 cycles/packet: gpu_kernel 2000 (100%)"), "%s", l);
	cr_expect(strstr(l, "gpu_kernel 1000 ns/packet (GPU alone: 1.00 Mpps)"), "%s", l);
	cr_expect(strstr(l, "gpu_launch 200 and gpu_wait 400 cycles/packet on the CPU"), "%s", l);
	free(l);
	cr_expect(strstr(md, "## GPU stage"));
	cr_expect(strstr(md, "| 1000.0 | 2000 | 1.00 | 200 | 400 | gpu | GPU-bound |"), "%s", strstr(md, "## GPU stage"));
	/* a CPU-bound point is not called GPU-bound */
	l = tu_line_of(strstr(md, "### Configurations"), "- dpdk hds frame=2064");
	cr_assert(l);
	cr_expect(!strstr(l, "GPU"), "%s", l);
	free(l);
}

/*
 * End to end on this host: one core for NIC + RX + app, so the run and
 * the sweep are oversubscribed whatever the machine. `rxray run`'s
 * summary, the sweep's summary line and table, and the report all say so.
 */
Test(report_oversub, run_summary_sweep_table_and_report_mark_it, .timeout = 240)
{
#ifndef RXRAY_TEST_HAVE_SWEEP
	cr_skip_test("needs the sweep verb: this build has no libyaml");
#endif
	char d[128], cmd[1200], *out = NULL;
	cr_assert(tu_tmpdir(d, sizeof(d)));
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine verbs --mode hds --frame 1064 --cores 0 --allow-oversubscribe --seconds 0.2 "
		 "-o %s/run.json",
		 RXRAY_BIN, d);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_expect(out && strstr(out, "OVERSUBSCRIBED"), "run summary: %s", out);
	free(out);
	char spec[256];
	snprintf(spec, sizeof(spec), "%s/spec.yaml", d);
	FILE *f = fopen(spec, "w");
	cr_assert(f);
	fprintf(f, "engines: verbs\nmodes: hds\nframes: 1064\nsplit: 64\nqueues: 1\nrings: 1024\ndevice: sim\n"
		   "cores: [0]\nallow_oversubscribe: true\noutput: %s/sw\nsearch:\n  initial_seconds: 0.1\n"
		   "  trial_seconds: 0.1\n  max_trials: 2\n  max_retries: 0\n  min_rate: 10k\n", d);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s sweep %s 2>&1 && %s report %s/sw -o %s/rep", RXRAY_BIN, spec, RXRAY_BIN, d, d);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	/* the progress line and the table's flags */
	cr_expect(out && strstr(out, "(oversubscribed: not a ceiling)"), "%s", out);
	cr_expect(out && strstr(out, "| oversubscribed"), "sweep table: %s", out);
	free(out);
	char p[256];
	snprintf(p, sizeof(p), "%s/sw/results.jsonl", d);
	char *jl = tu_slurp(p);
	cr_assert(jl);
	cr_expect(strstr(jl, "\"oversubscribed\": true") || strstr(jl, "\"oversubscribed\":true"));
	free(jl);
	snprintf(p, sizeof(p), "%s/rep/report.md", d);
	char *rep = tu_slurp(p);
	cr_assert(rep);
	char *l = tu_line_of(strstr(rep, "### Configurations"), "- [oversubscribed");
	cr_expect(l, "%s", rep);
	cr_expect(l && !strstr(l, "ceiling NDR"), "%s", l);
	free(l);
	free(rep);
	/* a single run's report too */
	snprintf(cmd, sizeof(cmd), "%s report %s/run.json -o %s/rep1", RXRAY_BIN, d, d);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	snprintf(p, sizeof(p), "%s/rep1/report.md", d);
	rep = tu_slurp(p);
	cr_expect(rep && strstr(rep, "- [oversubscribed"), "%s", rep);
	free(rep);
	tu_rmrf(d);
}
