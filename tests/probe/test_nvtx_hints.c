/*
 * Full mode's NVTX ranges (probes/nvtx.c) against scripted laps and stage
 * announcements: nvtx_scenarios runs them under the NVTX listener
 * (librxray_nvtx.so); each scenario's bursts and their stage ranges must
 * be exactly what the rules in rxray/probe.h (rxp_stage_begin) say. Runs
 * in every build with the NVTX headers: the helper is compiled in full
 * mode whatever this build's mode is.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static json_t *ranges_doc;

/* The scenarios' ranges, recorded once per test process. */
static json_t *ranges(void)
{
	if (ranges_doc)
		return json_object_get(ranges_doc, "ranges");
	char dir[] = "/tmp/rxray-nvtx-hints-XXXXXX", cmd[1024], out[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/nvtx.json", dir);
	snprintf(cmd, sizeof(cmd), "NVTX_INJECTION64_PATH=%s RXRAY_NVTX_OUT=%s %s", NVTX_LIB, out,
		 NVTX_SCENARIOS);
	int st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d", cmd, st);
	json_error_t je;
	ranges_doc = json_load_file(out, 0, &je);
	cr_assert_not_null(ranges_doc, "the listener wrote nothing: %s", je.text);
	cr_assert_eq(json_integer_value(json_object_get(ranges_doc, "dropped")), 0);
	cr_assert_eq(json_integer_value(json_object_get(ranges_doc, "open")), 0,
		     "ranges left open: a push without its pop");
	remove(out);
	remove(dir);
	return json_object_get(ranges_doc, "ranges");
}

static const char *rname(json_t *r)
{
	return json_string_value(json_object_get(r, "name"));
}

static json_int_t parent_of(json_t *r)
{
	return json_integer_value(json_object_get(r, "parent"));
}

/* A scenario's bursts as "stage stage|stage ..." (each burst's children
 * in push order, "-" for a burst with none); a range inside a scenario
 * that is not a burst shows as "!name". */
static void shown(const char *scenario, char *out, size_t len)
{
	json_t *rs = ranges(), *r, *k;
	size_t i, j, at = 0;
	json_int_t sc = -1;
	json_array_foreach(rs, i, r) {
		if (parent_of(r) < 0 && !strcmp(rname(r), scenario))
			sc = (json_int_t)i;
	}
	cr_assert_geq(sc, 0, "no range for scenario %s", scenario);
	out[0] = 0;
	json_array_foreach(rs, i, r) {
		if (parent_of(r) != sc || at >= len)
			continue;
		if (strcmp(rname(r), "burst")) {
			at += (size_t)snprintf(out + at, len - at, "%s!%s", at ? "|" : "",
					       rname(r));
			continue;
		}
		size_t n = 0;
		at += (size_t)snprintf(out + at, len - at, "%s", at ? "|" : "");
		json_array_foreach(rs, j, k) {
			if (at < len && parent_of(k) == (json_int_t)i)
				at += (size_t)snprintf(out + at, len - at, "%s%s", n++ ? " " : "",
						       rname(k));
		}
		if (!n && at < len)
			at += (size_t)snprintf(out + at, len - at, "-");
	}
}

static void expect_shown(const char *scenario, const char *want)
{
	char got[512];
	shown(scenario, got, sizeof(got));
	cr_expect_str_eq(got, want, "%s: ranges [%s], want [%s]", scenario, got, want);
}

/* Bug caught: a burst range opened at the burst's start (or a poll's
 * range opened before it found work): a range per empty poll. */
Test(nvtx_hints, empty_polls_show_nothing)
{
	expect_shown("empty", "");
}

/* Bugs caught: an announcement ignored or opening another stage's range,
 * an announced idle opening a range, a repeated announcement opening a
 * second range, work after an empty poll left without its burst. */
Test(nvtx_hints, announced_stages_are_their_laps)
{
	expect_shown("announced", "cqe_poll handoff|sge_setup doorbell|buf_alloc");
}

/* Bug caught: ranges in bursts the sampling left out. */
Test(nvtx_hints, unsampled_bursts_show_nothing)
{
	expect_shown("unsampled", "buf_alloc sge_setup");
}

/* Bugs caught: the fallback chain not guessing a stable transition, or
 * guessing what it cannot know (the burst's first stage, after idle), or
 * guessing again after a transition varied. */
Test(nvtx_hints, chain_guesses_only_what_it_can)
{
	expect_shown("guessed", "sge_setup chain");
	expect_shown("varies", "sge_setup");
	expect_shown("after_idle", "");
}

/* Bug caught: a chain kept across a probe's reset or onto a new probe
 * (one that took a freed probe's address): guesses from another run. */
Test(nvtx_hints, a_reset_probe_learns_anew)
{
	expect_shown("reset", "sge_setup");
}

/* Bugs caught: the chain guessing after a stage the engine announces
 * what follows (a range opened before the engine knew: a spurious one
 * where it then announces idle), or an announcement that leaves a wrong
 * guess open. */
Test(nvtx_hints, announcements_end_the_chains_guesses)
{
	expect_shown("announce_beats_chain", "sge_setup chain|chain");
	expect_shown("announced_after", "sge_setup|sge_setup");
}
