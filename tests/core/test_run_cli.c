/* SPDX-License-Identifier: MIT */
/* `rxray run` / `rxray caps`: bad input exits 2 with one line naming the option. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/result.h"
#include "rxray/util.h"

/* Run `rxray <args>`, capture stderr's first line; returns the exit code. */
static int rxray(const char *args, char *line, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1 >/dev/null", RXRAY_BIN, args);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	line[0] = '\0';
	char buf[512];
	int lines = 0;
	while (fgets(buf, sizeof(buf), f))
		if (lines++ == 0)
			snprintf(line, len, "%s", buf);
	int st = pclose(f);
	cr_assert(WIFEXITED(st), "rxray %s did not exit normally", args);
	if (WEXITSTATUS(st) == 2)
		cr_assert_eq(lines, 1, "rxray %s: %d lines on stderr, want one", args, lines);
	return WEXITSTATUS(st);
}

static void expect_usage(const char *args, const char *opt)
{
	char line[512];
	int rc = rxray(args, line, sizeof(line));
	cr_assert_eq(rc, 2, "rxray %s exited %d: %s", args, rc, line);
	cr_assert(strstr(line, opt) != NULL, "rxray %s: '%s' not named in: %s", args, opt, line);
}

Test(run_cli, bad_option_values_exit_2)
{
	expect_usage("run --frame abc", "--frame");
	expect_usage("run --frame 100000", "--frame");
	expect_usage("run --queues 0", "--queues");
	expect_usage("run --rate fast", "--rate");
	expect_usage("run --seconds -1", "--seconds");
	expect_usage("run --mode jumbo", "--mode");
	expect_usage("run --dma l3", "--dma");
	expect_usage("run --payload some", "--payload");
	expect_usage("run --app elsewhere", "--app");
	expect_usage("run --free never", "--free");
	expect_usage("run --discipline avx", "--discipline");
	expect_usage("run --payload-mem tape", "--payload-mem");
	expect_usage("run --mempool-cache 1000", "--mempool-cache");
	expect_usage("run --inject nosuchstage=5", "--inject");
	expect_usage("run --inject app", "--inject");
	expect_usage("run --cores 3-1", "--cores");
	expect_usage("run --cores x", "--cores");
	expect_usage("run --sample-shift 99", "--sample-shift");
	expect_usage("run --bogus", "--bogus");
	expect_usage("run --ring", "--ring");
	expect_usage("run stray", "stray");
	expect_usage("run --engine nosuch", "--engine");
	expect_usage("caps --frame abc", "--frame");
	expect_usage("run --nic-threads 0", "--nic-threads");
	expect_usage("run --nic-threads 65", "--nic-threads");
	expect_usage("run --nic-threads two", "--nic-threads");
	expect_usage("run --nic-threads", "--nic-threads");
	expect_usage("run --dma-writers 0", "--dma-writers");
	expect_usage("run --dma-writers 17", "--dma-writers");
}

/* Cross-field checks need an engine; skip visibly when none is built. */
static bool have_engine(void)
{
	char line[512];
	int rc = rxray("caps --engine verbs --device sim", line, sizeof(line));
	return !(rc == 2 && strstr(line, "not an engine of this build"));
}

Test(run_cli, config_rejects_exit_2)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	expect_usage("run --device sim --ring 64 --batch 128", "--batch");
	expect_usage("run --device sim --ring 65536", "--ring");
	expect_usage("run --device sim --ring 1000", "--ring");
	expect_usage("run --device sim --mode hds --frame 256 --split 256", "--split");
	expect_usage("run --device sim --queues 64", "--queues");
	expect_usage("run --device sim --ring 1024 --batch 64 --buffers 1000", "--buffers");
	expect_usage("run --device sim:bogus=1", "--device");
	expect_usage("caps --device sim --ring 64 --batch 128", "--batch");
	/* NIC threads: never more than queues, agree with sim:nics=, sim only */
	expect_usage("run --device sim --queues 2 --nic-threads 3 --allow-oversubscribe",
		     "--nic-threads");
	expect_usage("run --device sim:nics=2 --queues 2 --nic-threads 1 --allow-oversubscribe",
		     "--nic-threads");
	expect_usage("run --device sim:nics=3 --queues 2 --allow-oversubscribe", "--device");
	expect_usage("run --device sim:nics=x", "--device");
	expect_usage("run --device sim --cores 0 --queues 1 --nic-threads 1", "--cores");
	/* an operation delay names an operation the engine performs */
	expect_usage("run --device sim --op-delay mempool=100", "--op-delay");
	expect_usage("run --device sim --op-delay bogus=100", "--op-delay");
	if (system(RXRAY_BIN " doctor --calib-ms 50 | grep -q 'dpdk engine available'") == 0)
		expect_usage("run --engine dpdk --device sim --op-delay repost=100", "--op-delay");
}


/* Two NIC threads on two queues: one "nic" thread entry each, counters
 * conserve, and the summary carries per-thread figures. */
Test(run_cli, two_nic_threads_run_and_conserve)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	char path[] = "/tmp/rxray-run-nics-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	char args[256], line[512];
	snprintf(args, sizeof(args),
		 "run --device sim --queues 2 --nic-threads 2 --allow-oversubscribe --rate 1M "
		 "--ring 1024 --seconds 200ms -q -o %s",
		 path);
	cr_assert_eq(rxray(args, line, sizeof(line)), 0, "%s", line);
	char err[256] = "";
	struct rxr_result *r = NULL;
	rxr_result_read(path, &r, err, sizeof(err));
	cr_assert_not_null(r, "reader rejected the result: %s", err);
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_gt(r->c.offered, 0);
	int nics = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		nics += !strcmp(r->threads[i].role, "nic");
	cr_assert_eq(nics, 2, "one nic thread entry per NIC thread");
	json_t *nic = json_object_get(r->extra, "nic");
	json_t *nt = json_object_get(nic, "nic_threads");
	cr_assert_eq(json_integer_value(json_object_get(nt, "asked")), 2);
	cr_assert_eq(json_integer_value(json_object_get(nt, "actual")), 2);
	json_t *ts = json_object_get(nic, "threads");
	cr_assert_eq(json_array_size(ts), 2);
	json_int_t offered = 0;
	for (size_t i = 0; i < 2; i++)
		offered += json_integer_value(json_object_get(json_array_get(ts, i), "offered"));
	cr_assert_eq((uint64_t)offered, r->c.offered);
	rxr_result_free(r);
	unlink(path);
}

/* DMA writers: a run of 8 WQEs each fits the ring, they agree with
 * sim:writers=, and each has a core of its own unless oversubscribed. */
Test(run_cli, dma_writers_rejects_exit_2)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	expect_usage("run --device sim --ring 16 --batch 8 --dma-writers 4 --allow-oversubscribe",
		     "--dma-writers");
	expect_usage("run --device sim:writers=4 --dma-writers 2 --allow-oversubscribe",
		     "--dma-writers");
	expect_usage("run --device sim:writers=99", "--device");
	expect_usage("run --device sim --cores 0-1 --app inline --dma-writers 2", "--dma-writers");
}

/* Two DMA writers through each engine (dpdk sim: compressed CQEs, hds,
 * full payloads): counters conserve, one "nic" entry per writer, and the
 * writers' offered packets add up to the run's. */
static void writers_run(const char *engine_args)
{
	char path[] = "/tmp/rxray-run-writers-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	char args[512], line[512];
	snprintf(args, sizeof(args),
		 "run --device sim %s --dma-writers 2 --allow-oversubscribe --rate 500k "
		 "--ring 1024 --seconds 200ms -q -o %s",
		 engine_args, path);
	cr_assert_eq(rxray(args, line, sizeof(line)), 0, "%s: %s", args, line);
	char err[256] = "";
	struct rxr_result *r = NULL;
	rxr_result_read(path, &r, err, sizeof(err));
	cr_assert_not_null(r, "reader rejected the result: %s", err);
	cr_assert(rxr_counters_conserved(&r->c), "%s", engine_args);
	cr_assert_gt(r->c.received, 0);
	int nics = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		nics += !strcmp(r->threads[i].role, "nic");
	cr_assert_eq(nics, 2, "one nic thread entry per writer");
	json_t *nic = json_object_get(r->extra, "nic");
	json_t *dw = json_object_get(nic, "dma_writers");
	cr_assert_eq(json_integer_value(json_object_get(dw, "actual")), 2, "%s", engine_args);
	/* asked, not the placement's choice */
	cr_assert_eq(json_integer_value(json_object_get(dw, "asked")), 2, "%s", engine_args);
	json_t *ts = json_object_get(nic, "threads");
	json_int_t offered = 0;
	for (size_t i = 0; i < json_array_size(ts); i++)
		offered += json_integer_value(json_object_get(json_array_get(ts, i), "offered"));
	cr_assert_eq((uint64_t)offered, r->c.offered);
	rxr_result_free(r);
	unlink(path);
}

Test(run_cli, dma_writers_run_and_conserve)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	writers_run("--engine verbs --mode hds --payload full");
	char line[512];
	if (rxray("caps --engine dpdk --device sim", line, sizeof(line)) == 2 &&
	    strstr(line, "not an engine of this build"))
		cr_skip_test("needs the dpdk engine in this build (verbs ran)");
	writers_run("--engine dpdk --mode single --cqe-comp on");
	writers_run("--engine dpdk --mode hds --cqe-comp off --payload none");
}

/* caps says what run would: the dpdk software NIC's device options and
 * its ring (hds: N/2 WQEs of two segments) are checked before anything
 * opens (catches: "config fits" from caps for a device string or a writer
 * count that run then refuses). */
Test(run_cli, dpdk_caps_refuses_what_run_refuses)
{
	char line[512];
	if (rxray("caps --engine dpdk --device sim", line, sizeof(line)) == 2 &&
	    strstr(line, "not an engine of this build"))
		cr_skip_test("needs the dpdk engine in this build");
	expect_usage("caps --engine dpdk --device sim:bogus=1", "--device");
	expect_usage("run --engine dpdk --device sim:bogus=1", "--device");
	expect_usage("caps --engine dpdk --mode hds --ring 64 --dma-writers 8 --allow-oversubscribe",
		     "--dma-writers");
	expect_usage("run --engine dpdk --mode hds --ring 64 --dma-writers 8 --allow-oversubscribe",
		     "--dma-writers");
	/* and what fits, both take: 4 writers on hds --ring 64's 32 WQEs */
	char out[] = "/tmp/rxray-run-hds-XXXXXX";
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(rxray("caps --engine dpdk --mode hds --ring 64 --batch 32 --burst 32 "
			   "--dma-writers 4 --allow-oversubscribe",
			   line, sizeof(line)),
		     0, "%s", line);
	char args[512];
	snprintf(args, sizeof(args),
		 "run --engine dpdk --mode hds --ring 64 --batch 32 --burst 32 --dma-writers 4 "
		 "--allow-oversubscribe --rate 200k --seconds 100ms -q -o %s",
		 out);
	cr_assert_eq(rxray(args, line, sizeof(line)), 0, "%s", line);
	struct rxr_result *r = NULL;
	char err[256] = "";
	rxr_result_read(out, &r, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	json_t *dw = json_object_get(json_object_get(r->extra, "nic"), "dma_writers");
	cr_assert_eq(json_integer_value(json_object_get(dw, "actual")), 4);
	rxr_result_free(r);
	unlink(out);
}

/* The summary says "auto" only where nothing asked for a writer count:
 * the device's writers= asks as --dma-writers does (catches: the label
 * read from --dma-writers alone, so sim:writers=2 printed "auto"). */
static bool says_auto(const char *args)
{
	char cmd[1024], buf[512];
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine verbs %s --allow-oversubscribe --rate 200k --ring 1024 "
		 "--seconds 100ms 2>&1",
		 RXRAY_BIN, args);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	bool seen = false, nic = false;
	while (fgets(buf, sizeof(buf), f)) {
		nic |= strstr(buf, "software NIC:") != NULL;
		seen |= strstr(buf, "software NIC:") && strstr(buf, "(auto: the spare cores)");
	}
	int st = pclose(f);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rxray run %s failed", args);
	cr_assert(nic, "rxray run %s printed no software NIC line", args);
	return seen;
}

/* sim:writers=2 asks as --dma-writers 2 does: the one record says asked
 * 2 (catches: the asked count read from the knob alone, 0 = auto), and
 * the summary's NIC line calls nothing auto. */
Test(run_cli, device_writers_are_recorded_as_asked)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	char path[] = "/tmp/rxray-run-asked-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	char cmd[1024], buf[512];
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine verbs --device sim:writers=2 --allow-oversubscribe --rate 200k "
		 "--ring 1024 --seconds 100ms -o %s 2>&1",
		 RXRAY_BIN, path);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	bool nic = false, autow = false;
	while (fgets(buf, sizeof(buf), f)) {
		if (!strstr(buf, "software NIC:"))
			continue;
		nic = true;
		autow |= strstr(buf, "(auto") != NULL;
		cr_assert(strstr(buf, "x 2 DMA writer(s)") != NULL, "%s", buf);
	}
	int st = pclose(f);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", cmd);
	cr_assert(nic, "no software NIC line");
	cr_assert(!autow, "sim:writers=2 printed as auto");
	struct rxr_result *r = NULL;
	char err[256] = "";
	rxr_result_read(path, &r, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	json_t *dw = json_object_get(json_object_get(r->extra, "nic"), "dma_writers");
	cr_assert_eq(json_integer_value(json_object_get(dw, "asked")), 2);
	cr_assert_eq(json_integer_value(json_object_get(dw, "resolved")), 2);
	cr_assert_eq(json_integer_value(json_object_get(dw, "actual")), 2);
	json_t *nt = json_object_get(json_object_get(r->extra, "nic"), "nic_threads");
	cr_assert_str_eq(json_string_value(json_object_get(nt, "asked")), "auto");
	cr_assert_eq(json_integer_value(json_object_get(nt, "actual")), 1);
	/* recorded once: the config and the placement keep no copies */
	cr_assert_null(json_object_get(r->config, "dma_writers"));
	cr_assert_null(json_object_get(json_object_get(r->config, "placement"), "dma_writers"));
	rxr_result_free(r);
	unlink(path);
}

Test(run_cli, the_writers_label_says_auto_only_when_unasked)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	cr_expect(says_auto("--device sim"));
	cr_expect(!says_auto("--device sim:writers=2"));
	cr_expect(!says_auto("--device sim --dma-writers 1"));
}

Test(run_cli, help_exits_0)
{
	char line[512];
	cr_assert_eq(rxray("run --help", line, sizeof(line)), 0);
	cr_assert_eq(rxray("caps --help", line, sizeof(line)), 0);
	FILE *f = popen(RXRAY_BIN " run --help", "r");
	char buf[256];
	bool usage = false, examples = false;
	while (fgets(buf, sizeof(buf), f)) {
		usage |= strncmp(buf, "USAGE", 5) == 0;
		examples |= strncmp(buf, "EXAMPLES", 8) == 0;
	}
	pclose(f);
	cr_assert(usage && examples);
}

Test(run_cli, short_run_writes_a_readable_conserving_result)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	char path[] = "/tmp/rxray-run-cli-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	char args[256], line[512];
	snprintf(args, sizeof(args),
		 "run --device sim --mode hds --frame 1064 --ring 1024 --seconds 300ms -q -o %s", path);
	cr_assert_eq(rxray(args, line, sizeof(line)), 0, "%s", line);
	char err[256] = "";
	struct rxr_result *r = NULL;
	rxr_result_read(path, &r, err, sizeof(err));
	cr_assert_not_null(r, "reader rejected the result: %s", err);
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_gt(r->c.offered, 0);
	bool nic = false, rx = false;
	for (size_t i = 0; i < r->nthreads; i++) {
		nic |= !strcmp(r->threads[i].role, "nic");
		rx |= !strcmp(r->threads[i].role, "rx");
	}
	cr_assert(nic && rx, "threads nic and rx present");
	rxr_result_free(r);
	unlink(path);
}

/* A thread of pid named "rxray-rx" has been on a CPU (utime + stime in
 * /proc/PID/task/TID/stat above 0 ticks). */
static bool rx_thread_ran(pid_t pid)
{
	char path[320], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	bool ran = false;
	struct dirent *de;
	while (d && !ran && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *open = strchr(buf, '('), *close = strrchr(buf, ')');
		if (!open || !close || strncmp(open + 1, "rxray-rx)", 9))
			continue;
		/* after ") S ": fields 3.. ; utime is field 14, stime 15 */
		unsigned long ut = 0, st = 0;
		char *p = close + 2;
		for (int field = 3; field < 14 && p; field++)
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
		if (p && sscanf(p, "%lu %lu", &ut, &st) == 2)
			ran = ut + st > 0;
	}
	if (d)
		closedir(d);
	return ran;
}

/*
 * SIGINT or SIGTERM ends a run within 2 s (tools/cmd_run.c, the stop
 * deadline): with a complete result marked interrupted (exit 0), or with
 * nothing written (exit 1, the run did not stop in time). Never half a
 * file. The bound asserted is the deadline plus a second for the exit.
 */
static void signal_stops(int sig)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	if (getenv("RXRAY_EMULATOR")) /* set by ctest in a cross build (tools/test.sh arm64) */
		cr_skip_test("under %s, /proc/PID/status shows the emulator's signal handlers, not "
			     "rxray's: the test cannot tell when the run started",
			     getenv("RXRAY_EMULATOR"));
	char dir[] = "/tmp/rxray-run-int-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/r.json", dir);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int dn = open("/dev/null", O_WRONLY);
		dup2(dn, 1);
		execl(RXRAY_BIN, RXRAY_BIN, "run", "--device", "sim", "--ring", "1024", "--seconds",
		      "30", "-o", path, (char *)NULL);
		_exit(127);
	}
	/* wait until rxray catches the signal (handler installed = the run started) */
	bool caught = false;
	for (double end = rxu_mono_seconds() + 20; !caught && rxu_mono_seconds() < end;) {
		char spath[64], buf[256];
		snprintf(spath, sizeof(spath), "/proc/%d/status", (int)pid);
		FILE *f = fopen(spath, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "SigCgt:", 7))
				caught = (strtoull(buf + 7, NULL, 16) >> (sig - 1)) & 1;
		if (f)
			fclose(f);
		if (!caught)
			usleep(50 * 1000); /* the poll interval */
	}
	cr_assert(caught, "rxray never installed its handler for signal %d", sig);
	/* then until its rx worker has run (named "rxray-rx", some CPU time
	 * spent): the run is under way, on a host of any speed */
	bool running = false;
	for (double end = rxu_mono_seconds() + 30; !running && rxu_mono_seconds() < end;) {
		running = rx_thread_ran(pid);
		if (!running)
			usleep(50 * 1000); /* the poll interval */
	}
	cr_assert(running, "rxray's rx worker never ran");
	double t0 = rxu_mono_seconds();
	kill(pid, sig);
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	double took = rxu_mono_seconds() - t0;
	cr_assert_lt(took, 3.0, "signal %d: the run took %.2f s to end (deadline 2 s)", sig, took);
	cr_assert(WIFEXITED(st), "signal %d: ended by a signal, status %d", sig, st);
	/* the directory holds the result or nothing: no temporary left */
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	int files = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.') {
			files++;
			cr_expect_str_eq(e->d_name, "r.json", "a file other than the result");
		}
	closedir(d);
	if (WEXITSTATUS(st) == 1) {
		cr_assert_eq(files, 0, "a run that missed the deadline writes nothing");
	} else {
		cr_assert_eq(WEXITSTATUS(st), 0, "exit status %d", WEXITSTATUS(st));
		char err[256] = "";
		struct rxr_result *r = NULL;
		rxr_result_read(path, &r, err, sizeof(err));
		cr_assert_not_null(r, "%s", err);
		cr_assert_lt(r->seconds, 20);
		cr_assert(rxr_counters_conserved(&r->c));
		cr_assert(json_is_true(json_object_get(r->extra, "interrupted")),
			  "the result is not marked interrupted");
		rxr_result_free(r);
		unlink(path);
	}
	rmdir(dir);
}

Test(run_cli, sigint_stops_and_still_writes)
{
	signal_stops(SIGINT);
}

Test(run_cli, sigterm_stops_and_still_writes)
{
	signal_stops(SIGTERM);
}

/* The summary a person reads: the busy figure's stages and the waits apart,
 * and a run that shared its cores said to be disturbed, with the reason. */
Test(run_cli, summary_keeps_waits_out_of_busy_and_says_disturbed)
{
	if (!have_engine())
		cr_skip_test("needs the verbs engine in this build");
	char cmd[512], buf[512];
	snprintf(cmd, sizeof(cmd),
		 "%s run --device sim --rate 200k --ring 1024 --seconds 200ms --cores 0 "
		 "--allow-oversubscribe --app inline 2>&1",
		 RXRAY_BIN);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	int threads = 0;
	bool disturbed = false;
	while (fgets(buf, sizeof(buf), f)) {
		char *busy = strstr(buf, " cyc/pkt busy:");
		if (busy) {
			threads++;
			char *wait = strstr(busy, "; waiting:");
			char *idle = strstr(busy, " idle ");
			/* idle is a wait: never before the waiting mark */
			cr_assert(!idle || (wait && idle > wait), "idle listed as busy: %s", buf);
		}
		if (strstr(buf, "DISTURBED:")) {
			disturbed = true;
			cr_assert(strstr(buf, "oversubscribed"), "no reason given: %s", buf);
		}
	}
	int st = pclose(f);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rxray run failed");
	cr_assert_geq(threads, 2, "nic and rx lines");
	cr_assert(disturbed, "an oversubscribed run must say it is disturbed");
}
