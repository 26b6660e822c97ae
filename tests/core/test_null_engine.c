/* SPDX-License-Identifier: MIT */
/*
 * The null engine (engines/null): the template an engine is written from.
 * It is in the build by its folder and one registry line only; these
 * tests show the core's run sequence, the registry, `rxray run` and
 * `rxray sweep` drive it without anything engine-specific elsewhere.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/engines.h"
#include "rxray/result.h"

Test(null_engine, registry_finds_it_and_lists_hide_it)
{
	const struct rx_engine_ops *e = rxe_find("null");
	cr_assert_not_null(e);
	cr_expect(e->test_only);
	char list[128];
	cr_expect_null(strstr(rxe_list(list, sizeof(list), ", "), "null"), "%s", list);
}

/* A null-engine run of `seconds` on `queues` queues, app inline. */
static void null_config(struct rx_config *c, double seconds, uint32_t queues)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "null");
	c->seconds = seconds;
	c->queues = queues;
	c->app = RX_APP_INLINE;
	c->allow_oversubscribe = true;
}

Test(null_engine, core_run_sequence_assembles_the_result)
{
	struct rx_config c;
	char err[256] = "";
	null_config(&c, 0.05, 1);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	int rc = rx_run_exec(rxe_find("null"), &c, r, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	/* the core, not the engine, put these in */
	cr_expect_str_eq(json_string_value(json_object_get(r->config, "engine")), "null");
	cr_expect_not_null(json_object_get(r->config, "placement"));
	cr_expect_eq(r->nthreads, 1);
	cr_expect_str_eq(r->threads[0].role, "rx");
	if (RXRAY_PROBE_MODE != RXP_MODE_OFF) /* an off build laps nothing */
		cr_expect_gt(r->threads[0].st[RXP_ST_IDLE].count, 0,
			     "the rx loop ran and lapped idle");
	cr_expect_gt(r->seconds, 0.04);
	cr_expect(rxr_counters_conserved(&r->c));
	cr_expect_not_null(json_object_get(r->extra, "null"));
	cr_expect_not_null(json_object_get(r->extra, "caps"));
	rxr_result_free(r);
}

/* The null engine with a start hook that notes whether every worker was
 * already in its loop when the device started. */
static int entered_at_start = -1;

static int start_sees_workers(struct rx_run *run, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	int all = 1;
	for (uint32_t i = 0; i < run->nq; i++)
		if (run->q[i].rxw.started && !__atomic_load_n(&run->q[i].rxw.entered, __ATOMIC_ACQUIRE))
			all = 0;
	entered_at_start = all;
	return 0;
}

/*
 * The core starts the device only once every worker is about to run its
 * loop: a software NIC's arrivals begin at its start, and a receiver
 * still being pinned and set up would find its ring full (catches: start
 * right after the threads are created, which loses the first ring's
 * worth of a fast run and charges it to the receiver). Four workers, for
 * the warm-up phase and the measured one.
 */
Test(null_engine, the_device_starts_once_every_worker_is_in_its_loop)
{
	struct rx_engine_ops ops = *rxe_find("null");
	ops.start = start_sees_workers;
	struct rx_config c;
	char err[256] = "";
	null_config(&c, 0.02, 4);
	for (int k = 0; k < 3; k++) {
		struct rxr_result *r = NULL;
		rxr_result_open(&r);
		cr_assert_not_null(r);
		entered_at_start = -1;
		cr_assert_eq(rx_run_exec(&ops, &c, r, NULL, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(entered_at_start, 1, "run %d: the device started before its workers", k);
		rxr_result_free(r);
	}
}

/* exit status of a shell command */
static int sh(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(null_engine, rxray_run_and_sweep_drive_it)
{
	char dir[] = "/tmp/rxray-null-XXXXXX", cmd[1024];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s run --engine null --seconds 0.05 -q -o %s/run.json",
		 RXRAY_BIN, dir);
	cr_expect_eq(sh(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/run.json", dir);
	char err[256];
	struct rxr_result *r = NULL;
	rxr_result_read(cmd, &r, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	cr_expect_str_eq(json_string_value(json_object_get(r->config, "engine")), "null");
	rxr_result_free(r);
	/* "null" is YAML's null: quoted it is the engine's name */
	snprintf(cmd, sizeof(cmd),
		 "printf 'engines: \"null\"\\nframes: [1064, 2064]\\nsearch:\\n  trial_seconds: 0.05\\n'"
		 " > %s/s.yaml && %s sweep %s/s.yaml -o %s/out -q > %s/table.md 2>&1",
		 dir, RXRAY_BIN, dir, dir, dir);
	cr_expect_eq(sh(cmd), 0);
	/* both points ran a trial and were summarised: it offers nothing */
	snprintf(cmd, sizeof(cmd), "test $(grep -c '\"schema\": *\"rxray.point/1\"' %s/out/results.jsonl) -eq 2 && "
		 "grep -q 'no packets offered' %s/table.md", dir, dir);
	cr_expect_eq(sh(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	sh(cmd);
}
