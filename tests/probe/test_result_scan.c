/*
 * The fast run-result reader (rxr_result_scan, rxr_json_scan_runs) against
 * the checked one (json_loadb + rxr_result_from_json): it may give up, but
 * whatever it accepts the checked path accepts with the same result.
 */
#include <errno.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/result.h"

#include "doc_edit.h"

/* A result as the writer makes it: lap sums and fits, extra members, a coarse stage. */

/* the fast reader as a value: the document, or NULL where it declines */
static struct rxr_result *scan(const char *text, size_t len, size_t *used)
{
	struct rxr_result *r = NULL;
	int rc = rxr_result_scan(text, len, used, &r);
	cr_assert(rc == 0 ? r != NULL : r == NULL, "rc %d with out %p", rc, (void *)r);
	cr_assert(rc == 0 || rc == -EINVAL, "rc %d", rc);
	return r;
}

static char *writer_doc(void)
{
	cr_assert_eq(rxp_clock_init(20), 0);
	struct rxr_result *r = NULL;
	struct rxp_probe *rx = NULL, *nic = NULL;
	char perr[256];
	cr_assert_eq(rxr_result_open(&r), 0);
	cr_assert_eq(rxp_probe_open("rx", 1, 0, 0, &rx, perr, sizeof(perr)), 0, "%s", perr);
	cr_assert_eq(rxp_probe_open("nic", 0, 0, 0, &nic, perr, sizeof(perr)), 0, "%s", perr);
	for (int i = 0; i < 100; i++) {
		rxp_acc_record(&rx->st[RXP_ST_CQE_POLL], 640 + (uint64_t)i, 1 + (unsigned)i % 32);
		rxp_acc_record(&rx->st[RXP_ST_SGE_SETUP], 320, 32);
		rxp_acc_record(&rx->st[RXP_ST_IDLE], 3, 0);
		rxp_acc_record(&nic->st[RXP_ST_HDR_WRITE], 900, 32);
	}
	rx->busy_packets = nic->busy_packets = 3200;
	cr_assert_eq(rxr_result_add_probe(r, nic), 0);
	cr_assert_eq(rxr_result_add_probe(r, rx), 0);
	rxp_probe_free(rx);
	rxp_probe_free(nic);
	r->c = (struct rxr_counters){.offered = 4000, .received = 3200, .out_of_buffer = 700,
				     .nombuf = 50, .app_dropped = 50};
	rxr_result_set_rates(r, 0.5);
	rxr_result_set_clock(r);
	rxr_result_fill_env(r);
	json_object_set_new(r->config, "frame", json_integer(1064));
	json_object_set_new(r->config, "mode", json_string("hds"));
	json_object_set_new(r->extra, "trial",
			    json_pack("{s:s,s:i,s:f,s:[i,b,n]}", "key", "mode=hds", "n", 3,
				      "target_pps", 2.5e6, "list", 1, 1));
	json_object_set_new(r->extra, "nic", json_pack("{s:f}", "achieved_mpps", 7.25));
	json_t *j = rxr_result_to_json(r);
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	rxr_result_free(r);
	return s;
}

static char *dump(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void same_json(const json_t *a, const json_t *b, const char *what, const char *ctx)
{
	char *x = dump(a), *y = dump(b);
	cr_expect_str_eq(x, y, "%s: %s differs", ctx, what);
	free(x);
	free(y);
}

/* Every field the reader fills, compared exactly (doubles bit for bit). */
static void same_result(const struct rxr_result *a, const struct rxr_result *b, const char *ctx)
{
	cr_expect(!memcmp(&a->c, &b->c, sizeof(a->c)), "%s: counters differ", ctx);
	cr_expect(!memcmp(&a->offered_mpps, &b->offered_mpps, sizeof(double)) &&
		      !memcmp(&a->rx_mpps, &b->rx_mpps, sizeof(double)) &&
		      !memcmp(&a->loss, &b->loss, sizeof(double)) &&
		      !memcmp(&a->seconds, &b->seconds, sizeof(double)),
		  "%s: rates differ", ctx);
	cr_expect(!memcmp(&a->clock, &b->clock, sizeof(a->clock)), "%s: clock differs", ctx);
	cr_assert_eq(a->nthreads, b->nthreads, "%s: threads differ", ctx);
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct rxr_thread_result *x = &a->threads[i], *y = &b->threads[i];
		cr_expect_str_eq(x->role, y->role, "%s", ctx);
		cr_expect(x->core == y->core && x->packets == y->packets &&
			      x->busy_cycles == y->busy_cycles && x->stage_mask == y->stage_mask,
			  "%s: thread %zu differs", ctx, i);
		cr_expect(!memcmp(x->st, y->st, sizeof(x->st)), "%s: thread %zu stages differ", ctx, i);
		cr_expect_eq(x->nsamples, y->nsamples, "%s", ctx);
	}
	same_json(a->config, b->config, "config", ctx);
	same_json(a->env, b->env, "env", ctx);
	same_json(a->extra, b->extra, "extra (members and order)", ctx);
}

static struct rxr_result *checked(const char *doc)
{
	json_error_t je;
	json_t *j = json_loads(doc, JSON_REJECT_DUPLICATES, &je);
	char err[256];
	struct rxr_result *r = NULL;
	if (j)
		(void)rxr_result_from_json(j, "t", &r, err, sizeof(err)); /* rejected: r NULL */
	json_decref(j);
	return r;
}

Test(result_scan, reads_the_writers_documents_as_the_checked_path_does)
{
	char *doc = writer_doc();
	/* the fixture must hold what the fast path has to get right */
	cr_assert(strstr(doc, "\"lap_sums\"") && strstr(doc, "\"p90\"") && strstr(doc, "\"nic\""));
	struct rxr_result *a = checked(doc), *b = scan(doc, strlen(doc), NULL);
	cr_assert_not_null(a);
	/* the writer's own output is the common case: giving up on it is no fast path */
	cr_assert_not_null(b, "fast path gave up on the writer's output");
	same_result(a, b, "writer");
	rxr_result_free(a);
	rxr_result_free(b);
	/* embedded in a line: *used is where the document ends */
	size_t n = strlen(doc), used = 0;
	char *line = malloc(n + 8);
	snprintf(line, n + 8, "%s ,\"x\"", doc);
	b = scan(line, strlen(line), &used);
	cr_assert_not_null(b);
	cr_expect_eq(used, n);
	rxr_result_free(b);
	cr_expect_null(scan(line, strlen(line), NULL), "trailing text accepted");
	free(line);
	free(doc);
}

/*
 * Variants: each either rejected by both, or read alike. The comment
 * names the fast-path bug each catches.
 */
Test(result_scan, never_accepts_what_the_checked_path_rejects)
{
	char *doc = writer_doc();
	static const struct {
		const char *from, *to;
	} cases[] = {
		{"\"schema\":\"rxray.run/1\"", "\"schema\":\"rxray.run/2\""}, /* schema not compared */
		{"\"offered\":4000", "\"offered\":4000,\"offered\":4000"},    /* duplicate key */
		{"\"frame\":1064", "\"frame\":1064,\"frame\":1"},             /* duplicate in config */
		{"\"n\":3", "\"n\":3,\"n\":3"},                               /* duplicate in extra */
		{"\"count\":", "\"count\":1,\"count\":"},                     /* duplicate in a stage */
		{"\"offered\":4000", "\"offered\":-4"},                       /* negative count */
		{"\"offered\":4000", "\"offered\":4000.0"},                   /* real as integer */
		{"\"offered\":4000", "\"offered\":99999999999999999999"},     /* integer overflow */
		{"\"loss\":", "\"loss\":7,\"x\":"},                           /* loss out of [0,1] */
		{"\"hz\":", "\"hz\":0,\"hz2\":"},                             /* hz 0 */
		{"\"lap_cost_cycles\":", "\"lap_cost_cycles\":-1,\"y\":"},    /* range */
		{"\"core\":1", "\"core\":1099511627776"},                     /* core beyond CPU_SETSIZE */
		{"\"role\":\"rx\"", "\"role\":\"receiver\""},                 /* role too long */
		{"\"role\":\"rx\"", "\"role\":\"r\\u0078\""},                 /* escapes */
		{"\"cqe_poll\":", "\"cqe_pol\":"},                            /* unknown stage */
		{"\"p99\":", "\"p98\":"},                                     /* missing field */
		{"\"packets_sq\":", "\"packets_sq\":-1,\"z\":"},              /* negative lap sum */
		{"\"cycles_sq\":", "\"cycles_s\":"},                          /* missing lap sum */
		{"\"threads\":[", "\"threads\":[5,"},                         /* thread not an object */
		{"\"config\":{", "\"config\":[{"},                            /* config not an object */
		{"\"seconds\":", "\"seconds\":null,\"s2\":"},                 /* optional but typed */
		{"\"mode\":\"hds\"", "\"mode\":\"h\xc3\xa9s\""},              /* non-ASCII string */
		{"\"mode\":\"hds\"", "\"mode\":\"h\xff\""},                   /* invalid UTF-8 */
		{"\"mode\":\"hds\"", "\"mode\":01"},                          /* bad number */
		{"\"mode\":\"hds\"", "\"mode\":1e999"},                       /* real overflow */
		{"\"mode\":\"hds\"", "\"mode\":tru"},                         /* bad literal */
		{"\"n\":3", "\"n\":[1,{\"a\":{}}],\"m\":[]"},                 /* nesting read alike */
		{"\"p90\":", "\"p90\":1.5,\"q\":"},                           /* p90 a count, as p99 */
		{"\"resolution_ns\":", "\"resolution_ns\":\"x\",\"r2\":"},     /* typed optional: 0 */
		{"\"source\":\"", "\"source\":\"abcdefghijklmnopqrstuvwxyz"}, /* source truncated */
		{"\"offered\":4000", "\"offered\" : 4000 , \"w\" :\t-0"},      /* whitespace, -0 */
		{"\"offered\":4000", "\"offered\":4000,\"samples\":[]"},       /* unknown member */
		{"\"busy_cycles\":", "\"samples\":{\"data\":[]},\"busy_cycles\":"}, /* samples */
	};
	size_t fast_ok = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *v = doc_replace(doc, cases[i].from, cases[i].to), ctx[64];
		snprintf(ctx, sizeof(ctx), "case %zu", i);
		struct rxr_result *a = checked(v), *b = scan(v, strlen(v), NULL);
		if (!a)
			cr_expect_null(b, "%s: fast path accepted what the checked path rejects", ctx);
		else if (b)
			same_result(a, b, ctx);
		fast_ok += b != NULL;
		if (getenv("SCAN_DEBUG"))
			fprintf(stderr, "%s: checked %d fast %d\n", ctx, a != NULL, b != NULL);
		rxr_result_free(a);
		rxr_result_free(b);
		free(v);
	}
	/* the plain variants (nesting, resolution, source, whitespace, unknown member) */
	cr_expect_geq(fast_ok, 5, "fast path gave up on plain variants (%zu read)", fast_ok);
	/* cut anywhere: never accepted, never read past the end */
	size_t n = strlen(doc);
	for (size_t cut = 0; cut < n; cut += 7) {
		char *part = malloc(cut + 1);
		memcpy(part, doc, cut);
		part[cut] = '\0';
		struct rxr_result *b = scan(part, cut, NULL);
		cr_expect_null(b, "prefix of %zu bytes accepted", cut);
		rxr_result_free(b);
		free(part);
	}
	free(doc);
}

Test(result_scan, summary_line_runs_are_taken_out)
{
	char *doc = writer_doc();
	size_t n = strlen(doc) * 2 + 256;
	char *line = malloc(n);
	static const char *const keys[] = {"ndr_run", "top_run"};
	struct rxr_result *runs[2];
	snprintf(line, n, "{\"schema\":\"rxray.point/1\",\"key\":\"k\",\"ndr_run\":%s,\"trials\":3,"
			  "\"top_run\":null,\"knobs\":{\"a\":1}}\n",
		 doc);
	json_t *o = rxr_json_scan_runs(line, strlen(line), keys, 2, runs);
	cr_assert_not_null(o);
	cr_expect_null(runs[1]);
	cr_assert_not_null(runs[0]);
	struct rxr_result *a = checked(doc);
	same_result(a, runs[0], "ndr_run");
	char *s = dump(o);
	cr_expect_str_eq(s, "{\"schema\":\"rxray.point/1\",\"key\":\"k\",\"trials\":3,\"knobs\":{\"a\":1}}");
	free(s);
	json_decref(o);
	rxr_result_free(runs[0]);
	rxr_result_free(a);
	/* a run repeated, a run that is not an object, a bad run: all given up */
	const char *bad[] = {"{\"ndr_run\":null,\"ndr_run\":null}", "{\"top_run\":5}",
			     "{\"top_run\":{\"schema\":\"rxray.run/1\"}}", "{\"a\":1} x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_null(rxr_json_scan_runs(bad[i], strlen(bad[i]), keys, 2, runs), "%s", bad[i]);
		cr_expect(!runs[0] && !runs[1]);
	}
	free(line);
	free(doc);
}
