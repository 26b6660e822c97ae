/*
 * Validity signals: a measured thread that a busy process pinned to its
 * core preempts is flagged, a thread moved to another core is flagged as
 * migrated (perf event and the sched-file fallback), the canary compares
 * against its calibration, and the judgement applies its limits. The real
 * preemption and migration tests need two cores and skip visibly without.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/util.h"
#include "rxray/validity.h"

static bool reasons_have(json_t *arr, const char *needle)
{
	size_t i;
	json_t *r;
	json_array_foreach(arr, i, r) if (strstr(json_string_value(r), needle)) return true;
	return false;
}

static uint64_t wait_ns_now(void)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long run = 0, wait = 0;
	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			wait = 0;
		fclose(f);
	}
	return wait;
}

struct victim {
	int core;
	double limit_s; /* wait to reach before ending the window */
	struct rxr_valid_thread t;
	int rc;
	bool reached;
};

/* The measured thread: pinned, busy, until its run-queue wait (or, without
 * schedstat, its involuntary switches) passes the limit, at most 20 s. */
static void *victim_main(void *arg)
{
	struct victim *v = arg;
	char err[200];
	v->rc = rxu_pin_self(v->core);
	if (v->rc < 0)
		return NULL;
	v->rc = rxr_valid_thread_begin(&v->t, "rx", v->core, err, sizeof(err));
	if (v->rc < 0)
		return NULL;
	uint64_t w0 = wait_ns_now();
	double dl = rxu_mono_seconds() + 20;
	while (rxu_mono_seconds() < dl) {
		if ((double)(wait_ns_now() - w0) * 1e-9 > v->limit_s) {
			v->reached = true;
			break;
		}
	}
	v->rc = rxr_valid_thread_end(&v->t);
	return NULL;
}

Test(validity, a_thread_preempted_by_a_busy_process_on_its_core_is_flagged)
{
	if (rxu_cores_available() < 2)
		cr_skip_test("needs 2 cores (a busy process shares the measured thread's core)");
	if (access("/proc/thread-self/schedstat", R_OK) != 0)
		cr_skip_test("needs /proc/thread-self/schedstat (CONFIG_SCHED_INFO)");
	int core = rxu_core_nth(1);
	pid_t hog = fork();
	cr_assert(hog >= 0);
	if (hog == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		rxu_pin_self(core);
		for (;;)
			;
	}
	struct rxr_validity *v;
	char err[200];
	cr_assert_eq(rxr_validity_open(NULL, &v, err, sizeof(err)), 0);
	rxr_validity_host_begin(v);
	/* waits of 4x the largest limit a window under 20 s can have at 1% */
	struct victim vt = {.core = core, .limit_s = 0.25};
	pthread_t th;
	int prc = pthread_create(&th, NULL, victim_main, &vt);
	if (!prc)
		pthread_join(th, NULL);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	cr_assert_eq(prc, 0);
	rxr_validity_host_end(v);
	cr_assert_eq(vt.rc, 0);
	cr_assert(vt.reached, "the busy process never made the thread wait 0.25 s in 20 s");
	cr_assert_eq(rxr_validity_add_thread(v, &vt.t), 0);
	cr_expect(rxr_validity_disturbed(v));
	json_t *j = rxr_validity_json(v);
	cr_assert_not_null(j);
	cr_expect(json_is_true(json_object_get(j, "disturbed")));
	cr_expect(reasons_have(json_object_get(j, "reasons"), "rx on core"), "%s",
		  json_dumps(j, 0));
	json_t *t0 = json_array_get(json_object_get(j, "threads"), 0);
	cr_expect(json_is_true(json_object_get(t0, "disturbed")));
	cr_expect(reasons_have(json_object_get(t0, "reasons"), "preempted"));
	cr_expect_geq(json_real_value(json_object_get(t0, "runqueue_wait_ms")), 250);
	/* the hog took the CPU away from it: involuntary switches */
	cr_expect_gt(json_integer_value(json_object_get(t0, "involuntary_switches")), 0);
	cr_expect_str_eq(json_string_value(json_object_get(t0, "role")), "rx");
	cr_expect_eq(json_integer_value(json_object_get(t0, "core")), core);
	json_decref(j);
	rxr_validity_free(v);
}

struct mover {
	int from, to;
	struct rxr_valid_thread t;
	int rc;
};

static void *mover_main(void *arg)
{
	struct mover *m = arg;
	char err[200];
	if ((m->rc = rxu_pin_self(m->from)) < 0)
		return NULL;
	if ((m->rc = rxr_valid_thread_begin(&m->t, "app", m->from, err, sizeof(err))) < 0)
		return NULL;
	m->rc = rxu_pin_self(m->to); /* returns on the new core */
	double dl = rxu_mono_seconds() + 5;
	while (sched_getcpu() != m->to && rxu_mono_seconds() < dl)
		sched_yield();
	int rc = rxr_valid_thread_end(&m->t);
	m->rc = m->rc ? m->rc : rc;
	return NULL;
}

static void migrate_once(const char *no_perf, enum rxr_mig_source *src, uint64_t *n, bool *flagged)
{
	if (no_perf)
		setenv("RXRAY_VALIDITY_NO_PERF", no_perf, 1);
	struct mover m = {.from = rxu_core_nth(0), .to = rxu_core_nth(1)};
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, mover_main, &m), 0);
	pthread_join(th, NULL);
	unsetenv("RXRAY_VALIDITY_NO_PERF");
	cr_assert_eq(m.rc, 0);
	struct rxr_validity *v;
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	cr_assert_eq(rxr_validity_add_thread(v, &m.t), 0);
	json_t *j = rxr_validity_json(v);
	*flagged = reasons_have(json_object_get(j, "reasons"), "migrated");
	json_decref(j);
	rxr_validity_free(v);
	*src = m.t.mig_source;
	*n = m.t.migrations;
}

Test(validity, a_thread_moved_to_another_core_is_flagged_as_migrated)
{
	if (rxu_cores_available() < 2)
		cr_skip_test("needs 2 cores (the thread moves from one to the other)");
	enum rxr_mig_source src;
	uint64_t n;
	bool flagged;
	migrate_once(NULL, &src, &n, &flagged);
	cr_expect_neq(src, RXR_MIG_NONE);
	cr_expect_geq(n, 1, "source %s counted no migration", rxr_mig_source_name(src));
	cr_expect(flagged);
	/* a note on stderr, not cr_log_warn: Criterion 2.4 ends a program that
	 * logged a warning with status 1 though every test passed (so it did
	 * under qemu-user, which has no perf_event_open, as would a host with
	 * perf_event_paranoid 3), and cr_log_info is not shown at --verbose */
	if (src != RXR_MIG_PERF)
		fprintf(stderr, "note: perf events not permitted here: migrations from %s\n",
			rxr_mig_source_name(src));
	/* the fallback: the sched file, or sched_getcpu at both ends */
	migrate_once("1", &src, &n, &flagged);
	cr_expect(src == RXR_MIG_SCHED || src == RXR_MIG_GETCPU, "source %s",
		  rxr_mig_source_name(src));
	cr_expect_geq(n, 1, "fallback %s counted no migration", rxr_mig_source_name(src));
	cr_expect(flagged);
}

/* A thread record as the judgement sees it, without a scheduler. */
static struct rxr_valid_thread synthetic(double window_s, double wait_s, long nivcsw,
					 uint64_t migrations)
{
	struct rxr_valid_thread t = {.core = -1,
				     .t_begin = 10,
				     .t_end = 10 + window_s,
				     .nivcsw = nivcsw,
				     .migrations = migrations,
				     .mig_source = RXR_MIG_PERF,
				     .wait_s = wait_s,
				     .begun = true,
				     .ended = true};
	snprintf(t.role, sizeof(t.role), "rx");
	return t;
}

static bool judged(const struct rxr_valid_limits *lim, struct rxr_valid_thread t)
{
	struct rxr_validity *v;
	cr_assert_eq(rxr_validity_open(lim, &v, NULL, 0), 0);
	cr_assert_eq(rxr_validity_add_thread(v, &t), 0);
	bool d = rxr_validity_disturbed(v);
	rxr_validity_free(v);
	return d;
}

Test(validity, the_limits_judge_wait_switches_and_migrations)
{
	struct rxr_valid_limits lim;
	rxr_valid_limits_default(&lim);
	/* 1% of a 1 s window: 10 ms */
	cr_expect(!judged(&lim, synthetic(1.0, 0.009, 5, 0)));
	cr_expect(judged(&lim, synthetic(1.0, 0.011, 5, 0)));
	/* the floor: 0.15 ms in a 10 ms window is 1.5% but noise */
	cr_expect(!judged(&lim, synthetic(0.01, 0.00015, 0, 0)));
	/* the ring covers 2 ms at this rate: a 3 ms wait overflows it */
	lim.ring_cover_s = 0.002;
	cr_expect(judged(&lim, synthetic(1.0, 0.003, 0, 0)));
	cr_expect(!judged(&lim, synthetic(1.0, 0.0015, 0, 0)));
	rxr_valid_limits_default(&lim);
	/* no schedstat: involuntary switches per second decide */
	cr_expect(!judged(&lim, synthetic(1.0, -1, 20, 0)));
	cr_expect(judged(&lim, synthetic(1.0, -1, 21, 0)));
	/* any migration */
	cr_expect(judged(&lim, synthetic(1.0, 0, 0, 1)));
	/* a thread that is never ended is refused */
	struct rxr_valid_thread t = synthetic(1, 0, 0, 0);
	t.ended = false;
	struct rxr_validity *v;
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	cr_expect_eq(rxr_validity_add_thread(v, &t), -EINVAL);
	cr_expect(!rxr_validity_disturbed(v));
	cr_expect_eq(rxr_validity_add_reason(v, "oversubscribed: %d threads on %d cores", 3, 2), 0);
	cr_expect(rxr_validity_disturbed(v));
	json_t *j = rxr_validity_json(v);
	cr_expect(
	    reasons_have(json_object_get(j, "reasons"), "oversubscribed: 3 threads on 2 cores"));
	json_decref(j);
	rxr_validity_free(v);
	struct rxr_valid_thread never = {.perf_fd = -1};
	cr_expect_eq(rxr_valid_thread_end(&never), -EINVAL);
}

/* The judgement of one synthetic thread after noting the run's loss
 * (lost < 0: nothing noted); *why gets its first reason. */
static bool judged_loss(const struct rxr_valid_limits *lim, struct rxr_valid_thread t,
			long long lost, char *why, size_t len)
{
	struct rxr_validity *v;
	cr_assert_eq(rxr_validity_open(lim, &v, NULL, 0), 0);
	cr_assert_eq(rxr_validity_add_thread(v, &t), 0);
	if (lost >= 0)
		rxr_validity_note_loss(v, (uint64_t)lost);
	bool d = rxr_validity_disturbed(v);
	json_t *j = rxr_validity_json(v);
	json_t *r0 = json_array_get(json_object_get(j, "reasons"), 0);
	snprintf(why, len, "%s", r0 ? json_string_value(r0) : "");
	json_decref(j);
	rxr_validity_free(v);
	return d;
}

/*
 * Off-CPU time (schedstat: the window less run time less run-queue wait)
 * is what a hypervisor's steal looks like from inside, where /proc/stat
 * counts steal in 10 ms ticks. The ring covers 2 ms here: a run that
 * lost packets is disturbed by 3 ms off-CPU (it could have emptied the
 * ring), one that lost nothing only past 1% of its window (its figures
 * moved), and a thread that slept on its own is not judged by it.
 */
Test(validity, off_cpu_time_is_judged_by_the_runs_loss)
{
	struct rxr_valid_limits lim;
	rxr_valid_limits_default(&lim);
	lim.ring_cover_s = 0.002;
	char why[256];
	struct rxr_valid_thread t = synthetic(1.0, 0.0005, 0, 0);
	t.run_known = true;
	t.run_s = 1.0 - 0.0005 - 0.003; /* 3 ms neither running nor waiting */
	/* catches: off-CPU time not measured at all */
	cr_expect(judged_loss(&lim, t, 100, why, sizeof(why)), "3 ms off-CPU, lossy: clean");
	cr_expect(strstr(why, "rx on core -1: off its CPU 3.00 ms") != NULL, "%s", why);
	cr_expect(judged_loss(&lim, t, -1, why, sizeof(why)), "nothing noted: the strict limit");
	/* catches: a loss-free run failed for time that moved it 0.3% */
	cr_expect(!judged_loss(&lim, t, 0, why, sizeof(why)), "3 ms, no loss: %s", why);
	t.run_s = 1.0 - 0.0005 - 0.012;
	cr_expect(judged_loss(&lim, t, 0, why, sizeof(why)), "12 ms off-CPU, no loss: clean");
	/* catches: sleep counted as stolen time */
	t.nvcsw = 3;
	cr_expect(!judged_loss(&lim, t, 100, why, sizeof(why)), "a sleeper: %s", why);
	t.nvcsw = 0;
	/* catches: run time ignored (the whole window read as off-CPU) */
	t.run_s = 1.0 - 0.0005 - 0.001;
	cr_expect(!judged_loss(&lim, t, 100, why, sizeof(why)), "1 ms off-CPU: %s", why);
	/* without schedstat's run time nothing is judged by it */
	t.run_known = false;
	cr_expect(!judged_loss(&lim, t, 100, why, sizeof(why)), "unknown: %s", why);
}

/* A real spinning thread: its off-CPU time is measured (a number, never
 * negative, at most its window). */
static void *spin_window(void *arg)
{
	struct rxr_valid_thread *t = arg;
	if (rxr_valid_thread_begin(t, "rx", -1, NULL, 0) < 0)
		return NULL;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < 0.05);
	rxr_valid_thread_end(t);
	return NULL;
}

Test(validity, a_threads_off_cpu_time_is_recorded)
{
	if (access("/proc/thread-self/schedstat", R_OK) != 0)
		cr_skip_test("needs /proc/thread-self/schedstat (CONFIG_SCHED_INFO)");
	struct rxr_valid_thread t;
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, spin_window, &t), 0);
	pthread_join(th, NULL);
	cr_assert(t.ended && t.run_known);
	/* catches: run time read from the wrong field (wait) or not at all */
	cr_expect_gt(t.run_s, 0);
	/* the two reads bracket the window closely on a real CPU; an
	 * emulator's file reads take milliseconds of their own */
	if (!getenv("RXRAY_EMULATOR"))
		cr_expect_leq(t.run_s, t.t_end - t.t_begin + 0.001);
	struct rxr_validity *v;
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	cr_assert_eq(rxr_validity_add_thread(v, &t), 0);
	json_t *j = rxr_validity_json(v);
	json_t *off = json_object_get(json_array_get(json_object_get(j, "threads"), 0), "offcpu_ms");
	cr_expect(json_is_number(off), "offcpu_ms: %s", json_dumps(j, 0));
	cr_expect_geq(json_number_value(off), 0);
	cr_expect_leq(json_number_value(off), 50.5);
	json_decref(j);
	rxr_validity_free(v);
}

Test(validity, the_canary_compares_with_its_calibration)
{
	struct rxr_validity *v;
	char err[200];
	/* a calibration no host meets: 1 ns for 256 KiB and for the loop */
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	rxr_validity_set_calibration(v, 1, 1, "given");
	cr_assert_eq(rxr_validity_canary_before(v, 100000, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxr_validity_canary_after(v, err, sizeof(err)), 0, "%s", err);
	json_t *j = rxr_validity_json(v);
	cr_expect(json_is_true(json_object_get(j, "disturbed")));
	cr_expect(reasons_have(json_object_get(j, "reasons"), "canary"), "%s", json_dumps(j, 0));
	json_t *c = json_object_get(j, "canary");
	cr_expect_eq(json_integer_value(json_object_get(c, "bytes")), 1 << 18);
	cr_expect_str_eq(json_string_value(json_object_get(c, "calibration")), "given");
	cr_expect_gt(json_real_value(json_object_get(c, "ratio")), 1.5);
	json_decref(j);
	rxr_validity_free(v);

	/* one an hour long: never slower */
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	rxr_validity_set_calibration(v, 3.6e12, 3.6e12, "given");
	cr_assert_eq(rxr_validity_canary_before(v, 1 << 20, err, sizeof(err)), 0);
	cr_assert_eq(rxr_validity_canary_after(v, err, sizeof(err)), 0);
	cr_expect(!rxr_validity_disturbed(v));
	cr_expect_eq(rxr_validity_canary_after(v, err, sizeof(err)), -EINVAL);
	rxr_validity_free(v);

	/* from the environment, as a sweep hands it over, or calibrated here */
	struct rxr_canary_cal cal;
	cr_assert_eq(rxr_canary_calibrate(&cal, 1 << 18, 1 << 19, 2), 0);
	cr_expect_gt(cal.cpu_ns, 0);
	cr_expect_gt(cal.mem_ns[0], 0);
	cr_expect_gt(cal.mem_ns[1], 0);
	cr_expect_eq(cal.mem_ns[2], 0);
	char s[300];
	cr_assert_eq(rxr_canary_cal_format(&cal, s, sizeof(s)), 0);
	setenv(RXR_CANARY_ENV, s, 1);
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	cr_assert_eq(rxr_validity_canary_before(v, 300000, err, sizeof(err)), 0, "%s", err);
	j = rxr_validity_json(v);
	c = json_object_get(j, "canary");
	cr_expect_str_eq(json_string_value(json_object_get(c, "calibration")), "sweep");
	cr_expect_float_eq(json_real_value(json_object_get(c, "cal_mem_ms")), cal.mem_ns[1] * 1e-6,
			   1e-3);
	cr_expect(json_is_null(json_object_get(c, "after_mem_ms")));
	json_decref(j);
	rxr_validity_free(v);
	/* a size the sweep did not calibrate: calibrated here */
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	cr_assert_eq(rxr_validity_canary_before(v, 4 << 20, err, sizeof(err)), 0, "%s", err);
	j = rxr_validity_json(v);
	cr_expect_str_eq(
	    json_string_value(json_object_get(json_object_get(j, "canary"), "calibration")),
	    "self");
	json_decref(j);
	rxr_validity_free(v);
	/* malformed: refused with the part named */
	setenv(RXR_CANARY_ENV, "cpu=100,m99=5", 1);
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	cr_expect_eq(rxr_validity_canary_before(v, 1 << 18, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "RXRAY_CANARY") && strstr(err, "m99=5"), "%s", err);
	rxr_validity_free(v);
	unsetenv(RXR_CANARY_ENV);
}

static int only_cpu(const cpu_set_t *s)
{
	int cpu = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, s)) {
			if (cpu >= 0)
				return -1;
			cpu = i;
		}
	return cpu;
}

/*
 * Both timings run on one CPU, whatever CPU the caller is on at the end
 * of the run, and the caller's affinity comes back: the test moves itself
 * to another CPU between before and after. Fails if the canary is not
 * pinned (cpu_after would be the test's new CPU) or if it leaves the
 * caller pinned.
 */
Test(validity, the_canary_times_both_ends_on_one_cpu)
{
	cpu_set_t all, mine;
	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	if (CPU_COUNT(&all) < 2)
		cr_skip_test("needs two CPUs in the affinity mask");
	int a = -1, b = -1;
	for (int i = 0; i < CPU_SETSIZE && b < 0; i++)
		if (CPU_ISSET(i, &all)) {
			if (a < 0)
				a = i;
			else
				b = i;
		}
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(a, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	struct rxr_validity *v;
	char err[200];
	cr_assert_eq(rxr_validity_open(NULL, &v, NULL, 0), 0);
	rxr_validity_set_calibration(v, 3.6e12, 3.6e12, "given");
	cr_assert_eq(rxr_validity_canary_before(v, 1 << 18, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	cr_expect_eq(only_cpu(&mine), a, "affinity not restored after the first timing");
	/* the run's end finds the thread elsewhere */
	CPU_ZERO(&one);
	CPU_SET(b, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(rxr_validity_canary_after(v, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	cr_expect_eq(only_cpu(&mine), b, "affinity not restored after the second timing");
	json_t *j = rxr_validity_json(v);
	json_t *c = json_object_get(j, "canary");
	cr_expect_eq(json_integer_value(json_object_get(c, "cpu")), a);
	cr_expect_eq(json_integer_value(json_object_get(c, "cpu_before")), a);
	cr_expect_eq(json_integer_value(json_object_get(c, "cpu_after")), a,
		     "the second timing ran on cpu %lld, not the first's %d",
		     json_integer_value(json_object_get(c, "cpu_after")), a);
	json_decref(j);
	rxr_validity_free(v);
	cr_assert_eq(sched_setaffinity(0, sizeof(all), &all), 0);
}

Test(validity, canary_calibration_text_round_trips)
{
	struct rxr_canary_cal a = {.cpu_ns = 1234567}, b;
	a.mem_ns[0] = 1000;
	a.mem_ns[RXR_CANARY_CLASSES - 1] = 98765432;
	char s[300], err[200];
	cr_assert_eq(rxr_canary_cal_format(&a, s, sizeof(s)), 0);
	cr_expect_str_eq(s, "cpu=1234567,m18=1000,m26=98765432");
	cr_assert_eq(rxr_canary_cal_parse(s, &b, err, sizeof(err)), 0, "%s", err);
	cr_expect(!memcmp(&a, &b, sizeof(a)));
	cr_expect_eq(rxr_canary_cal_parse("m18=5", &b, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "cpu="), "%s", err);
	cr_expect_eq(rxr_canary_cal_parse("cpu=x", &b, err, sizeof(err)), -EINVAL);
	cr_expect_eq(rxr_canary_cal_parse("cpu=5,m17=3", &b, err, sizeof(err)), -EINVAL);
	cr_expect_eq(rxr_canary_cal_format(&a, s, 10), -ENOSPC);
	cr_expect_eq(rxr_canary_class(1), 0);
	cr_expect_eq(rxr_canary_class((1 << 18) + 1), 1);
	cr_expect_eq(rxr_canary_class((size_t)1 << 40), RXR_CANARY_CLASSES - 1);
}
