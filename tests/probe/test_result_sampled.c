/* SPDX-License-Identifier: MIT */
/*
 * The run result's "cqe_poll_sampled" member (rxray run --sample): a
 * result that carries a consistent one reads back on both paths (checked
 * and fast) and writes out the same; each way a member can lie is
 * refused by every reader, naming the field. No BPF, no root: the member
 * is built here.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/result.h"

#define FIXTURE RXRAY_SRC_DIR "/tests/analyze/data/run_dpdk_single.json"

/* A member whose every figure agrees: 200 samples, 150 in the lap (140 in
 * the PMD's burst + 10 at the lap site), four parts adding up to 150. */
static json_t *member(void)
{
	static const struct {
		const char *name, *kind;
		int samples;
	} p[] = {{"net_null rx_pkt_burst (port 0)", "rx_burst", 90},
		 {"librte_net_null.so.23.0+0x1d20", "callee", 40},
		 {"eth_burst", "lap_site", 10},
		 {"mpops_dequeue", "mempool_get", 10}};
	json_t *parts = json_array();
	for (size_t i = 0; i < 4; i++)
		json_array_append_new(
		    parts, json_pack("{s:s,s:s,s:i,s:f,s:f}", "name", p[i].name, "kind", p[i].kind,
				     "samples", p[i].samples, "share", p[i].samples / 150.0,
				     "est_cycles_per_packet", p[i].samples / 200.0 * 1e9 / 1e7));
	json_t *counted = json_pack(
	    "{s:I,s:I,s:I,s:I,s:f,s:f}", "cqe_poll_cycles", (json_int_t)600000000, "idle_cycles",
	    (json_int_t)150000000, "thread_cycles", (json_int_t)1000000000, "packets",
	    (json_int_t)10000000, "lap_share_of_thread", 0.75, "cqe_poll_share_of_lap", 0.8);
	json_t *m = json_pack(
	    "{s:s,s:s,s:s,s:i,s:s,s:i,s:f,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:f,s:i,s:i,s:i,s:o,s:o}",
	    "lap", "cqe_poll", "what", "estimates from BPF stack samples, not counted cycles",
	    "event", "cpu-clock", "freq_hz", 999, "stacks", "dwarf", "rx_threads", 1, "seconds",
	    0.5, "samples", 200, "lap_samples", 150, "in_rx_burst", 140, "at_lap_site", 10,
	    "unplaced", 5, "rx_burst_function", "net_null rx_pkt_burst (port 0)",
	    "lap_site_function", "eth_burst", "sampled_share_of_thread", 0.75, "dropped", 0,
	    "stack_errors", 0, "stacks_cut", 200, "counted", counted, "parts", parts);
	cr_assert_not_null(m);
	return m;
}

/* The fixture run with m as its member (m stolen), as text. */
static char *doc_with(json_t *m)
{
	json_error_t je;
	json_t *d = json_load_file(FIXTURE, 0, &je);
	cr_assert_not_null(d, "%s: %s", FIXTURE, je.text);
	json_object_set_new(d, RXR_RESULT_SAMPLED, m);
	char *s = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	cr_assert_not_null(s);
	return s;
}

Test(result_sampled, a_consistent_member_reads_back_on_both_paths_and_round_trips)
{
	json_t *want = member();
	char *text = doc_with(json_incref(want)), err[256] = "";
	struct rxr_result *r = NULL, *f = NULL;
	/* the checked path */
	cr_assert_eq(rxr_result_parse(text, "t", 1, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert(json_equal(json_object_get(r->extra, RXR_RESULT_SAMPLED), want),
		  "the member changed on the way in");
	/* the fast path takes it too (plain ASCII, as the writer emits it) */
	cr_assert_eq(rxr_result_scan(text, strlen(text), NULL, &f), 0,
		     "the fast scanner refused a valid sampled member");
	cr_assert(json_equal(json_object_get(f->extra, RXR_RESULT_SAMPLED), want));
	/* written out again: the same member */
	json_t *out = rxr_result_to_json(r);
	cr_assert(json_equal(json_object_get(out, RXR_RESULT_SAMPLED), want),
		  "the writer changed the member");
	json_decref(out);
	rxr_result_free(r);
	rxr_result_free(f);
	free(text);
	json_decref(want);
}

/* One way a member can lie: an edit of a valid one, and the field a reader
 * must name when it refuses it. */
struct lie {
	const char *bug;   /* what a reader that took it would let through */
	const char *field; /* the path the refusal names */
	void (*edit)(json_t *m);
};

static json_t *part(json_t *m, size_t i)
{
	return json_array_get(json_object_get(m, "parts"), i);
}

static void share_above_one(json_t *m)
{
	json_object_set_new(part(m, 0), "share", json_real(1.5));
}
static void share_not_its_ratio(json_t *m)
{
	json_object_set_new(part(m, 1), "share", json_real(0.5));
}
static void negative_share(json_t *m)
{
	json_object_set_new(part(m, 2), "share", json_real(-0.0667));
}
static void parts_short_of_lap(json_t *m)
{
	json_array_remove(json_object_get(m, "parts"), 3);
}
static void parts_beyond_lap(json_t *m)
{
	/* a fifth part: its samples push the sum past the lap's */
	json_array_append_new(json_object_get(m, "parts"),
			      json_pack("{s:s,s:s,s:i,s:f,s:n}", "name", "x", "kind", "callee",
					"samples", 0, "share", 0.0, "est_cycles_per_packet"));
	json_object_set_new(part(m, 4), "samples", json_integer(15));
	json_object_set_new(part(m, 4), "share", json_real(0.1));
}
static void lap_more_than_samples(json_t *m)
{
	json_object_set_new(m, "samples", json_integer(100));
	json_object_set_new(m, "sampled_share_of_thread", json_real(1.0));
}
static void lap_not_burst_plus_site(json_t *m)
{
	json_object_set_new(m, "at_lap_site", json_integer(20));
}
static void unplaced_beyond_outside(json_t *m)
{
	json_object_set_new(m, "unplaced", json_integer(51));
}
static void thread_share_wrong(json_t *m)
{
	json_object_set_new(m, "sampled_share_of_thread", json_real(0.9));
}
static void unknown_kind(json_t *m)
{
	json_object_set_new(part(m, 1), "kind", json_string("cqe_poll"));
}
static void samples_as_real(json_t *m)
{
	json_object_set_new(m, "samples", json_real(200.0));
}
static void no_frequency(json_t *m)
{
	json_object_del(m, "freq_hz");
}
static void frequency_zero(json_t *m)
{
	json_object_set_new(m, "freq_hz", json_integer(0));
}
static void no_event(json_t *m)
{
	json_object_del(m, "event");
}
static void other_lap(json_t *m)
{
	json_object_set_new(m, "lap", json_string("app"));
}
static void counted_lap_beyond_thread(json_t *m)
{
	json_t *c = json_object_get(m, "counted");
	json_object_set_new(c, "idle_cycles", json_integer(900000000));
	json_object_set_new(c, "lap_share_of_thread", json_real(1.0));
	json_object_set_new(c, "cqe_poll_share_of_lap", json_real(0.4));
}
static void counted_share_wrong(json_t *m)
{
	json_object_set_new(json_object_get(m, "counted"), "cqe_poll_share_of_lap", json_real(1.0));
}
static void share_of_nothing(json_t *m)
{
	/* no samples at all, yet a share of them */
	json_object_set_new(m, "samples", json_integer(0));
	json_object_set_new(m, "lap_samples", json_integer(0));
	json_object_set_new(m, "in_rx_burst", json_integer(0));
	json_object_set_new(m, "at_lap_site", json_integer(0));
	json_object_set_new(m, "unplaced", json_integer(0));
	json_object_set_new(m, "parts", json_array());
}
static void negative_estimate(json_t *m)
{
	json_object_set_new(part(m, 0), "est_cycles_per_packet", json_real(-3));
}
static void unnamed_part(json_t *m)
{
	json_object_set_new(part(m, 0), "name", json_string(""));
}
static void not_an_object(json_t *m)
{
	json_object_clear(m);
	json_object_set_new(m, "lap", json_string("cqe_poll"));
}

static const struct lie lies[] = {
    {"a share above the whole lap", "cqe_poll_sampled.parts[0].share", share_above_one},
    {"a share that is not its samples over the lap's", "cqe_poll_sampled.parts[1].share",
     share_not_its_ratio},
    {"a negative share", "cqe_poll_sampled.parts[2].share", negative_share},
    {"parts that leave lap samples unnamed", "cqe_poll_sampled.parts", parts_short_of_lap},
    {"parts that name more samples than the lap had", "cqe_poll_sampled.parts", parts_beyond_lap},
    {"more lap samples than samples taken", "cqe_poll_sampled.lap_samples", lap_more_than_samples},
    {"a lap count that is not burst + site", "cqe_poll_sampled.lap_samples",
     lap_not_burst_plus_site},
    {"more unplaced samples than were outside the lap", "cqe_poll_sampled.unplaced",
     unplaced_beyond_outside},
    {"a thread share that is not lap/samples", "cqe_poll_sampled.sampled_share_of_thread",
     thread_share_wrong},
    {"a part kind no reader knows", "cqe_poll_sampled.parts[1]", unknown_kind},
    {"a sample count that is no count", "cqe_poll_sampled.samples", samples_as_real},
    {"samples without their frequency", "cqe_poll_sampled.freq_hz", no_frequency},
    {"a frequency of 0 Hz", "cqe_poll_sampled.freq_hz", frequency_zero},
    {"samples without their event", "cqe_poll_sampled.event", no_event},
    {"another lap under this name", "cqe_poll_sampled.lap", other_lap},
    {"counted laps longer than the thread", "cqe_poll_sampled.counted", counted_lap_beyond_thread},
    {"a counted share that is not its cycles' ratio",
     "cqe_poll_sampled.counted.cqe_poll_share_of_lap", counted_share_wrong},
    {"a share of no samples", "cqe_poll_sampled.sampled_share_of_thread", share_of_nothing},
    {"a negative cycle estimate", "cqe_poll_sampled.parts[0]", negative_estimate},
    {"a part without a name", "cqe_poll_sampled.parts[0]", unnamed_part},
    {"a member missing its figures", "cqe_poll_sampled.event", not_an_object},
};

Test(result_sampled, every_reader_refuses_a_member_that_lies_and_names_the_field)
{
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		json_t *m = member();
		lies[i].edit(m);
		char *text = doc_with(m), err[256] = "";
		struct rxr_result *r = NULL;
		int rc = rxr_result_parse(text, "t", 1, &r, err, sizeof(err));
		cr_expect_eq(rc, -EINVAL, "%s: the checked reader took it", lies[i].bug);
		cr_expect(strstr(err, lies[i].field), "%s: '%s' does not name %s", lies[i].bug, err,
			  lies[i].field);
		rxr_result_free(r);
		r = NULL;
		/* the fast path may refuse the shape or the meaning: never accept */
		rc = rxr_result_scan(text, strlen(text), NULL, &r);
		cr_expect_neq(rc, 0, "%s: the fast reader took it", lies[i].bug);
		rxr_result_free(r);
		free(text);
	}
}

Test(result_sampled, the_check_names_the_field_directly)
{
	char field[96] = "", what[256] = "";
	json_t *m = member();
	cr_assert_eq(rxr_result_check_sampled(m, field, sizeof(field), what, sizeof(what)), 0,
		     "%s: %s", field, what);
	share_above_one(m);
	cr_assert_eq(rxr_result_check_sampled(m, field, sizeof(field), what, sizeof(what)),
		     -EINVAL);
	cr_assert_str_eq(field, "cqe_poll_sampled.parts[0].share");
	cr_assert(strstr(what, "[0, 1]"), "%s", what);
	json_decref(m);
	/* not an object at all */
	m = json_integer(3);
	cr_assert_eq(rxr_result_check_sampled(m, field, sizeof(field), what, sizeof(what)),
		     -EINVAL);
	cr_assert_str_eq(field, "cqe_poll_sampled");
	json_decref(m);
}
