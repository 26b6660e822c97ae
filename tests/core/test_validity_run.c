/* SPDX-License-Identifier: MIT */
/*
 * Validity of a whole run (core run.c + the software NIC): the NIC's
 * generator threads are measured threads too. Every run result lists a
 * "nic" window beside the workers', and a busy process pinned to the NIC
 * thread's core flags the trial with a reason naming that thread. Needs 2
 * cores (NIC and RX worker on cores of their own) and skips without.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/engines.h"
#include "rxray/result.h"
#include "rxray/util.h"

static void config(struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "verbs");
	c->rate_pps = 200e3;
	c->seconds = 0.3;
	c->app = RX_APP_INLINE;
}

static struct rxr_result *run_once(const struct rx_config *c)
{
	char err[512] = "";
	struct rxr_result *r = NULL;
	cr_assert_eq(rxr_result_open(&r), 0);
	cr_assert_not_null(r);
	int rc = rx_run_exec(rxe_find(c->engine), c, r, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	return r;
}

/* The validity window of the (first) thread of a role, NULL if none. */
static json_t *valid_thread(const struct rxr_result *r, const char *role)
{
	json_t *ts = json_object_get(json_object_get(r->extra, "validity"), "threads"), *t;
	size_t i;
	json_array_foreach(ts, i, t) if (!strcmp(json_string_value(json_object_get(t, "role")),
						 role)) return t;
	return NULL;
}

static bool reasons_have(const struct rxr_result *r, const char *needle)
{
	json_t *rs = json_object_get(json_object_get(r->extra, "validity"), "reasons"), *x;
	size_t i;
	json_array_foreach(rs, i, x) if (strstr(json_string_value(x), needle)) return true;
	return false;
}

/* A busy process pinned to core; returns once it runs there (bounded). */
static pid_t hog_start(int core)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		close(fd[0]);
		if (rxu_pin_self(core) < 0)
			_exit(1);
		while (sched_getcpu() != core)
			;
		char ok = 1;
		if (write(fd[1], &ok, 1) != 1)
			_exit(1);
		for (;;)
			;
	}
	close(fd[1]);
	struct pollfd p = {.fd = fd[0], .events = POLLIN};
	char ok = 0;
	bool ready = poll(&p, 1, 20000) == 1 && read(fd[0], &ok, 1) == 1 && ok == 1;
	close(fd[0]);
	if (!ready) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_fail("the busy process did not start on core %d within 20 s", core);
	}
	return pid;
}

Test(core_validity, every_run_records_the_nic_threads_window)
{
	if (rxu_cores_available() < 2)
		cr_skip_test("needs 2 cores (the NIC thread and the RX worker each on its own)");
	struct rx_config c;
	config(&c);
	struct rxr_result *r = run_once(&c);
	/* catches: the generator left out of the validity record */
	json_t *nic = valid_thread(r, "nic");
	cr_assert_not_null(nic, "no nic window in %s",
			   json_dumps(json_object_get(r->extra, "validity"), 0));
	cr_expect_not_null(valid_thread(r, "rx"));
	/* a window of the measured phase (0.3 s), not the warm-up's or none */
	double win = json_real_value(json_object_get(nic, "window_s"));
	cr_expect(win > 0.2 && win < 5, "nic window %.3f s", win);
	cr_expect_eq(json_integer_value(json_object_get(nic, "core")),
		     json_integer_value(json_object_get(json_object_get(r->extra, "nic"), "core")));
	rxr_result_free(r);
}

Test(core_validity, a_busy_process_on_the_nic_core_flags_the_trial_naming_the_nic_thread)
{
	if (rxu_cores_available() < 2)
		cr_skip_test("needs 2 cores (the NIC thread and the RX worker each on its own)");
	if (access("/proc/thread-self/schedstat", R_OK) != 0)
		cr_skip_test("needs /proc/thread-self/schedstat (CONFIG_SCHED_INFO)");
	struct rx_config c;
	config(&c);
	struct rx_placement pl;
	char err[512] = "";
	cr_assert_eq(rx_run_check(rxe_find(c.engine), &c, 0, NULL, &pl, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_geq(pl.nic_core, 0, "the software NIC thread is not pinned");
	char needle[64];
	snprintf(needle, sizeof(needle), "nic on core %d: preempted", pl.nic_core);
	pid_t hog = hog_start(pl.nic_core);
	/* sharing its core with a busy loop, the generator waits about half
	 * of its window; a few trials bound the rare one the hog sat out */
	bool flagged = false;
	struct rxr_result *r = NULL;
	for (int i = 0; i < 5 && !flagged; i++) {
		rxr_result_free(r);
		r = run_once(&c);
		flagged = reasons_have(r, needle);
	}
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	cr_expect(flagged, "no '%s' in %s", needle,
		  json_dumps(json_object_get(r->extra, "validity"), 0));
	cr_expect(json_is_true(json_object_get(json_object_get(r->extra, "validity"), "disturbed")));
	json_t *nic = valid_thread(r, "nic");
	cr_assert_not_null(nic);
	cr_expect(json_is_true(json_object_get(nic, "disturbed")));
	cr_expect_eq(json_integer_value(json_object_get(nic, "core")), pl.nic_core);
	cr_expect_gt(json_real_value(json_object_get(nic, "runqueue_wait_ms")),
		     json_real_value(json_object_get(nic, "wait_limit_ms")));
	rxr_result_free(r);
}

/*
 * A generator that falls behind its schedule (simnic.h "Late") takes the
 * blame for the drops it causes: `sim:fault=writer_stall` stops the
 * writer of each queue's 64th train for 20 ms with that run unpublished,
 * 4000 packets' time at 200 kpps against a ring of 256 (1.3 ms). The
 * receiver waits for that run while the other writer's claims run the
 * ring dry, so the drops are the NIC's: counted as late_drops, the run
 * disturbed with a reason naming the NIC, and conserved.
 */
Test(core_validity, drops_behind_a_stalled_generator_are_the_generators, .timeout = 120)
{
	struct rx_config c;
	config(&c);
	c.ring = 256;
	/* two writers: the other one goes on behind the stalled run (one
	 * writer alone would hand the overdue packets over in a burst that
	 * this receiver takes whole) */
	c.dma_writers = 2;
	c.allow_oversubscribe = true;
	snprintf(c.device, sizeof(c.device), "sim:fault=writer_stall");
	struct rxr_result *r = run_once(&c);
	json_t *nic = json_object_get(r->extra, "nic");
	json_t *tot = json_object_get(nic, "totals");
	cr_assert_str_eq(json_string_value(json_object_get(nic, "fault")), "writer_stall");
	json_int_t oob = json_integer_value(json_object_get(tot, "out_of_buffer"));
	json_int_t late = json_integer_value(json_object_get(tot, "late_drops"));
	/* catches: a stall that lost nothing (the fault did not bite) */
	cr_assert_gt(oob, 0, "the 20 ms stall dropped nothing: %s", json_dumps(tot, 0));
	/* catches: the NIC's own loss charged to the receiver */
	cr_assert_gt(late, 0, "no drop behind the stall counted late: %s", json_dumps(tot, 0));
	cr_assert_leq(late, oob);
	cr_expect(reasons_have(r, "the generator's loss, not the receiver's"), "%s",
		  json_dumps(json_object_get(r->extra, "validity"), 0));
	cr_expect(json_is_true(json_object_get(json_object_get(r->extra, "validity"), "disturbed")));
	cr_expect_eq(r->c.offered,
		     r->c.received + r->c.out_of_buffer + r->c.nombuf + r->c.app_dropped,
		     "conservation");
	cr_expect_gt(json_real_value(json_object_get(nic, "late_limit_us")), 0);
	rxr_result_free(r);
}
