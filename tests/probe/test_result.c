/* Run-result JSON: round trip and rejection of malformed input. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/result.h"

#include "doc_edit.h"

static struct rxr_result *sample_result(void)
{
	cr_assert_eq(rxp_clock_init(20), 0);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	struct rxp_probe *rx = NULL, *nic = NULL;
	rxp_probe_open("rx", 1, 0, 0, &rx, NULL, 0);
	rxp_probe_open("nic", 0, 0, 0, &nic, NULL, 0);
	for (int i = 0; i < 100; i++) {
		rxp_acc_record(&rx->st[RXP_ST_CQE_POLL], 640 + (uint64_t)i, 32);
		rxp_acc_record(&rx->st[RXP_ST_SGE_SETUP], 320, 32);
		rxp_acc_record(&rx->st[RXP_ST_IDLE], 99, 0);
		rxp_acc_record(&nic->st[RXP_ST_HDR_WRITE], 900, 32);
	}
	rx->busy_packets = 3200;
	nic->busy_packets = 3200;
	cr_assert_eq(rxr_result_add_probe(r, nic), 0);
	cr_assert_eq(rxr_result_add_probe(r, rx), 0);
	rxp_probe_free(rx);
	rxp_probe_free(nic);
	r->c = (struct rxr_counters){.offered = 4000, .received = 3200, .out_of_buffer = 700,
				     .nombuf = 50, .app_dropped = 50, .errors = 0};
	rxr_result_set_rates(r, 0.5);
	rxr_result_set_clock(r);
	rxr_result_fill_env(r);
	json_object_set_new(r->config, "frame", json_integer(1064));
	json_object_set_new(r->extra, "trial", json_pack("{s:i}", "n", 3));
	return r;
}

Test(result, round_trip)
{
	struct rxr_result *r = sample_result();
	char path[] = "/tmp/rxray-test-result-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	cr_assert_eq(rxr_result_write(r, path), 0);
	char err[256] = "";
	struct rxr_result *b = NULL;
	rxr_result_read(path, &b, err, sizeof(err));
	cr_assert_not_null(b, "%s", err);
	cr_assert_eq(b->c.offered, 4000);
	cr_assert_eq(b->c.out_of_buffer, 700);
	cr_assert(rxr_counters_conserved(&b->c));
	cr_assert_float_eq(b->rx_mpps, 3200 / 0.5 / 1e6, 1e-9);
	cr_assert_float_eq(b->loss, 0.2, 1e-9);
	cr_assert_str_eq(b->clock.source, r->clock.source);
	cr_assert_float_eq(b->clock.hz, r->clock.hz, 1);
	cr_assert_eq(b->nthreads, 2);
	const struct rxr_thread_result *t = &b->threads[1];
	cr_assert_str_eq(t->role, "rx");
	cr_assert_eq(t->core, 1);
	cr_assert_eq(t->packets, 3200);
	cr_assert_eq(t->busy_cycles, r->threads[1].busy_cycles);
	cr_assert_eq(t->st[RXP_ST_CQE_POLL].cycles, r->threads[1].st[RXP_ST_CQE_POLL].cycles);
	cr_assert_eq(t->st[RXP_ST_CQE_POLL].min, 640);
	cr_assert_eq(t->st[RXP_ST_CQE_POLL].max, 739);
	cr_assert_eq(t->st[RXP_ST_CQE_POLL].p50, r->threads[1].st[RXP_ST_CQE_POLL].p50);
	cr_assert_float_eq(t->st[RXP_ST_SGE_SETUP].cycles_per_packet, 10.0, 1e-9);
	cr_assert(t->stage_mask & (1u << RXP_ST_IDLE));
	cr_assert_not(t->stage_mask & (1u << RXP_ST_FREE));
	/* idle is not busy */
	cr_assert_eq(t->busy_cycles, t->st[RXP_ST_CQE_POLL].cycles + t->st[RXP_ST_SGE_SETUP].cycles);
	cr_assert_eq(json_integer_value(json_object_get(b->config, "frame")), 1064);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(b->extra, "trial"), "n")), 3);
	rxr_result_free(b);
	rxr_result_free(r);
	unlink(path);
}

static const char *good_doc(void)
{
	static char buf[8192];
	struct rxr_result *r = sample_result();
	json_t *j = rxr_result_to_json(r);
	char *s = json_dumps(j, JSON_COMPACT);
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	json_decref(j);
	rxr_result_free(r);
	return buf;
}

char *doc_replace(const char *doc, const char *from, const char *to)
{
	const char *at = strstr(doc, from);
	cr_assert_not_null(at, "fixture lacks %s", from);
	size_t n = strlen(doc) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
	return out;
}

/* Replace the first occurrence of `from` in the good document by `to`. */
static char *mutate(const char *from, const char *to)
{
	return doc_replace(good_doc(), from, to);
}

Test(result, malformed_input_is_rejected_with_the_field)
{
	struct {
		const char *from, *to, *want;
	} cases[] = {
		{"\"schema\":\"rxray.run/1\"", "\"schema\":\"rxray.run/2\"", "schema: expected"},
		{"\"schema\":\"rxray.run/1\",", "", "schema: missing"},
		{"\"offered\":4000", "\"offered\":\"4000\"", "counters.offered: expected integer"},
		{"\"offered\":4000", "\"offered\":-4", "negative"},
		{"\"received\":3200,", "", "counters.received: missing"},
		{"\"rx_mpps\":", "\"rx_mbps\":", "rates.rx_mpps: missing"},
		{"\"source\":", "\"src\":", "clock.source: missing"},
		{"\"role\":\"rx\"", "\"role\":7", "threads[1].role: expected string"},
		{"\"cqe_poll\":", "\"cqe_pol\":", "threads[1].stages.cqe_pol: unknown stage"},
		{"\"p99\":", "\"p98\":", "p99: missing"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *doc = mutate(cases[i].from, cases[i].to);
		char err[256] = "";
		struct rxr_result *r = NULL;
		int rc = rxr_result_parse(doc, "x.jsonl", 4, &r, err, sizeof(err));
		cr_expect_null(r, "case %zu accepted", i);
		cr_expect_eq(rc, -EINVAL, "case %zu: rc %d", i, rc);
		cr_expect(strstr(err, cases[i].want) != NULL, "case %zu: '%s' lacks '%s'", i, err,
			  cases[i].want);
		cr_expect(strncmp(err, "x.jsonl:4: ", 11) == 0, "case %zu: '%s'", i, err);
		rxr_result_free(r);
		free(doc);
	}
	char err[256];
	struct rxr_result sentinel, *bad = &sentinel; /* must come back NULL */
	cr_assert_eq(rxr_result_parse("{\"schema\": ", "y.json", 0, &bad, err, sizeof(err)), -EINVAL);
	cr_assert_null(bad);
	cr_assert(strstr(err, "y.json:1:") != NULL, "%s", err);
	bad = &sentinel;
	cr_assert_eq(rxr_result_parse("[1,2]", "z.json", 0, &bad, err, sizeof(err)), -EINVAL);
	cr_assert_null(bad);
	cr_assert(strstr(err, "expected a JSON object") != NULL, "%s", err);
	bad = &sentinel;
	cr_assert_eq(rxr_result_read("/nonexistent/r.json", &bad, err, sizeof(err)), -ENOENT);
	cr_assert_null(bad);
	cr_assert(strstr(err, "/nonexistent/r.json") != NULL, "%s", err);
}

Test(result, write_is_atomic_and_reports_errors)
{
	struct rxr_result *r = sample_result();
	cr_assert_lt(rxr_result_write(r, "/nonexistent-dir/out.json"), 0);
	cr_assert_eq(access("/nonexistent-dir/out.json", F_OK), -1);
	rxr_result_free(r);
}
