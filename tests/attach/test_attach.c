/* SPDX-License-Identifier: MIT */
/*
 * rxray attach against a real dpdk-testpmd (rxonly on net_null, no
 * hugepages, no PCI). Needs root; skips with the reason otherwise. Every
 * test stops its testpmd in .fini, which also runs when an assert fails.
 */
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testpmd_launch.h"

static struct tpmd pmd;
static char outdir[128];

static void pmd_fini(void)
{
	char cmd[256];
	tpmd_stop(&pmd);
	/* failures already quoted what they needed from these */
	snprintf(cmd, sizeof(cmd), "rm -rf /tmp/rxray-attach-test-%d-*", (int)getpid());
	if (system(cmd))
		fprintf(stderr, "could not remove /tmp/rxray-attach-test-%d-*\n", (int)getpid());
}

static void need_env(void)
{
	const char *why = tpmd_unavailable();
	if (why)
		cr_skip_test("%s", why);
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("needs kernel BTF (/sys/kernel/btf/vmlinux)");
}

static void pmd_up(const char *tag, const char *extra)
{
	char why[256];
	need_env();
	int rc = tpmd_start(&pmd, tag, extra, why, sizeof(why));
	cr_assert_eq(rc, 0, "testpmd: %s", why);
	snprintf(outdir, sizeof(outdir), "/tmp/rxray-attach-test-%d-%s", (int)getpid(), tag);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Start rxray with args; stdout/stderr into files under /tmp. */
static pid_t rxray_spawn(const char *const *args, const char *tag)
{
	const char *argv[48];
	int n = 0;
	argv[n++] = RXRAY_BIN;
	for (int i = 0; args[i] && n < 47; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		char p[160];
		snprintf(p, sizeof(p), "/tmp/rxray-attach-test-%d-%s.out", (int)getppid(), tag);
		int o = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		snprintf(p, sizeof(p), "/tmp/rxray-attach-test-%d-%s.err", (int)getppid(), tag);
		int e = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int rxray_wait(pid_t pid, double timeout)
{
	double t0 = now_s();
	int st;
	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (now_s() - t0 > timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(20000); /* the poll interval */
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *tag, const char *ext)
{
	static char buf[65536];
	char p[160];
	snprintf(p, sizeof(p), "/tmp/rxray-attach-test-%d-%s.%s", (int)getpid(), tag, ext);
	FILE *f = fopen(p, "re");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static int rxray_run(const char *const *args, const char *tag, double timeout)
{
	return rxray_wait(rxray_spawn(args, tag), timeout);
}

static json_t *result_load(void)
{
	char p[200];
	json_error_t je;
	snprintf(p, sizeof(p), "%s/attach.json", outdir);
	json_t *d = json_load_file(p, 0, &je);
	cr_assert_not_null(d, "%s: %s", p, je.text);
	cr_assert_str_eq(json_string_value(json_object_get(d, "schema")), "rxray.attach/1");
	return d;
}

/* Attach to lcore 1 for secs; returns the parsed result. */
static json_t *attach_lcore1_stacks(const char *tag, const char *secs, const char *stacks)
{
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	const char *args[] = {"attach", "--pid", pid, "--lcore", "1", "--seconds", secs,
			      "-o", outdir, stacks ? "--stacks" : NULL, stacks, NULL};
	int rc = rxray_run(args, tag, 30);
	cr_assert_eq(rc, 0, "rxray attach exit %d: %s", rc, slurp(tag, "err"));
	return result_load();
}

static json_t *attach_lcore1(const char *tag, const char *secs)
{
	return attach_lcore1_stacks(tag, secs, NULL);
}

/*
 * The hottest frames include the net_null receive path or the mempool: in
 * testpmd's rxonly loop the PMD's rx function and testpmd's own loop (which
 * frees the burst, mempool code inlined) trade first place from run to run,
 * so one of the top three must be in the receive path.
 */
static void assert_top_in_rx_path(json_t *d)
{
	json_t *tops = json_object_get(d, "top_functions");
	cr_assert_gt(json_array_size(tops), 0, "no top function");
	char seen[512] = "";
	for (size_t i = 0; i < 3 && i < json_array_size(tops); i++) {
		json_t *top = json_array_get(tops, i);
		const char *name = json_string_value(json_object_get(top, "name"));
		const char *dso = json_string_value(json_object_get(top, "dso"));
		if (strstr(dso, "net_null") || strstr(dso, "mempool") || strstr(name, "mempool") ||
		    strstr(name, "eth_null"))
			return;
		size_t n = strlen(seen);
		snprintf(seen + n, sizeof(seen) - n, "%s%s [%s]", n ? ", " : "", name, dso);
	}
	cr_assert_fail("no rx-path frame among the hottest: %s", seen);
}

/* Frames (';'-separated) of the deepest folded stack whose leaf is in net_null. */
static int deepest_net_null_stack(bool *has_testpmd_caller)
{
	char p[200], line[8192];
	int best = 0;
	snprintf(p, sizeof(p), "%s/stacks.folded", outdir);
	FILE *f = fopen(p, "re");
	cr_assert_not_null(f, "%s", p);
	*has_testpmd_caller = false;
	while (fgets(line, sizeof(line), f)) {
		char *leaf = strrchr(line, ';');
		if (!leaf || !strstr(leaf, "net_null"))
			continue;
		int frames = 1;
		for (char *c = line; *c; c++)
			frames += *c == ';';
		if (frames > best)
			best = frames;
		/* a caller frame in the testpmd binary, below the thread frame */
		char *thread = strchr(line, ';');
		if (thread && strstr(thread + 1, "dpdk-testpmd+0x"))
			*has_testpmd_caller = true;
	}
	fclose(f);
	return best;
}

/* True while an `rxray attach` that is not our child runs (another test run). */
static bool foreign_attach_running(pid_t mine)
{
	char path[64], buf[256];
	bool found = false;
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && !found && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		if (pid <= 0 || pid == mine)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		size_t l0 = strlen(buf);
		found = l0 >= 5 && !strcmp(buf + l0 - 5, "rxray") && l0 + 1 < n &&
			!strcmp(buf + l0 + 1, "attach");
	}
	if (d)
		closedir(d);
	return found;
}

static int progs_count(void);

/*
 * Programs named rxb_* loaded now. bpftool here cannot say which process
 * holds a program, so first wait (bounded) for other rxray attach runs,
 * e.g. a concurrent ctest, to end; `mine` is our own running child or 0.
 */
static int our_progs_excluding(pid_t mine)
{
	double end = now_s() + 60;
	while (foreign_attach_running(mine) && now_s() < end)
		usleep(100000); /* the poll interval */
	return progs_count();
}

static int our_progs(void)
{
	return our_progs_excluding(0);
}

static int progs_count(void)
{
	FILE *f = popen("bpftool -j prog show 2>/dev/null", "r");
	json_error_t je;
	json_t *arr, *v;
	size_t i;
	int n = 0;
	cr_assert_not_null(f, "bpftool");
	arr = json_loadf(f, 0, &je);
	pclose(f);
	cr_assert_not_null(arr, "bpftool -j prog show: %s", je.text);
	json_array_foreach(arr, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		if (name && !strncmp(name, "rxb_", 4))
			n++;
	}
	json_decref(arr);
	return n;
}

static double mempool_share(json_t *d)
{
	return json_real_value(json_object_get(json_object_get(d, "shares"), "mempool"));
}

static bool findings_mention(json_t *d, const char *a, const char *b)
{
	json_t *v;
	size_t i;
	json_array_foreach(json_object_get(d, "findings"), i, v) {
		const char *s = json_string_value(v);
		if (s && strstr(s, a) && (!b || strstr(s, b)))
			return true;
	}
	return false;
}

TestSuite(attach, .fini = pmd_fini, .timeout = 120);

Test(attach, testpmd_rxonly_per_packet)
{
	pmd_up("rx", NULL);
	json_t *d = attach_lcore1("rx", "2");

	json_int_t packets = json_integer_value(json_object_get(d, "packets"));
	double cpp = json_real_value(json_object_get(d, "cycles_per_packet"));
	cr_assert_gt(packets, 0, "packets in the window");
	cr_assert_gt(cpp, 0, "cycles per packet");
	cr_assert_lt(cpp, 100000, "cycles per packet %.1f is not plausible for net_null", cpp);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(d, "target"), "lcore")), 1);
	json_t *tids = json_object_get(json_object_get(d, "target"), "tids");
	cr_assert_eq(json_array_size(tids), 1);
	cr_assert_eq(json_integer_value(json_array_get(tids, 0)), tpmd_worker_tid(&pmd),
		     "--lcore 1 resolves to rte-worker-1");

	assert_top_in_rx_path(d);
	cr_assert_gt(json_real_value(json_object_get(json_object_get(d, "shares"), "pmd")), 0.2);

	/* files: folded stacks with counts, summary on stdout */
	char p[200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/stacks.folded", outdir);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_gt(st.st_size, 0);
	snprintf(p, sizeof(p), "%s/flame.svg", outdir);
	cr_assert_eq(stat(p, &st), 0, "flame.svg written");
	const char *out = slurp("rx", "out");
	cr_assert(strstr(out, "cycles/pkt"), "summary: %s", out);
	cr_assert(strstr(out, "dpdk-testpmd"), "summary: %s", out);
	json_decref(d);
}

Test(attach, mbcache0_raises_mempool_share)
{
	pmd_up("c250", NULL);
	json_t *a = attach_lcore1("c250", "2");
	double share_cached = mempool_share(a);
	cr_assert_not(findings_mention(a, "cache_size 0", NULL), "no cache finding with a cache");
	json_decref(a);
	tpmd_stop(&pmd);

	pmd_up("c0", "--mbcache=0");
	json_t *b = attach_lcore1("c0", "2");
	double share_nocache = mempool_share(b);
	cr_assert_gt(share_nocache, share_cached + 0.05,
		     "mempool share %.3f with --mbcache=0 vs %.3f cached", share_nocache,
		     share_cached);
	cr_assert(findings_mention(b, "mb_pool_0", "cache_size 0"),
		  "finding names the cache-less pool: %s", slurp("c0", "out"));
	const char *mode = json_string_value(json_object_get(json_object_get(b, "sampler"), "stacks"));
	if (!strcmp(mode, "dwarf")) /* whole stacks: the finding says who calls the ring */
		cr_assert(findings_mention(b, "mb_pool_0", "called from"), "%s", slurp("c0", "out"));
	json_decref(b);
}

/* Start a long attach, check its programs are loaded, end it with sig. */
static void detach_on(int sig, const char *tag)
{
	char pid[16];
	pmd_up(tag, NULL);
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	int before = our_progs();
	/* longer than the wait for another test run's attach below (up to 60 s),
	 * so the signal always ends this one's window */
	const char *args[] = {"attach", "--pid", pid, "--lcore", "1", "--seconds", "300",
			      "-o", outdir, NULL};
	pid_t r = rxray_spawn(args, tag);
	double t0 = now_s();
	int during = 0;
	while (now_s() - t0 < 15 && (during = our_progs_excluding(r)) <= before)
		usleep(100000); /* the poll interval */
	cr_assert_gt(during, before, "attach's programs never showed up in bpftool");
	/* the window is open (attach says so once its start snapshot is
	 * taken), and testpmd has received packets since: the window holds
	 * packets on a host of any speed */
	t0 = now_s();
	while (now_s() - t0 < 15 && !strstr(slurp(tag, "err"), "rxray attach: sampling pid"))
		usleep(20000); /* the poll interval */
	cr_assert(strstr(slurp(tag, "err"), "rxray attach: sampling pid"),
		  "attach never said its window opened: %s", slurp(tag, "err"));
	long long seen = tpmd_rx_packets(&pmd);
	cr_assert_geq(seen, 0, "testpmd's telemetry does not answer");
	cr_assert(tpmd_wait_rx_past(&pmd, seen, 15), "testpmd received nothing in 15 s");
	kill(r, sig);
	int rc = rxray_wait(r, 15);
	if (sig == SIGKILL)
		cr_assert_eq(rc, 128 + SIGKILL);
	else
		cr_assert_eq(rc, 0, "exit after signal %d: %d %s", sig, rc, slurp(tag, "err"));
	/* link release can trail the exit by a moment */
	int after = our_progs();
	for (double end = now_s() + 5; after > before && now_s() < end; after = our_progs())
		usleep(100000); /* the poll interval */
	cr_assert_eq(after, before, "programs left after signal %d: %d (before %d)", sig, after,
		     before);
	if (sig != SIGKILL) {
		json_t *d = result_load();
		cr_assert(json_is_true(json_object_get(json_object_get(d, "window"), "interrupted")));
		cr_assert_gt(json_integer_value(json_object_get(d, "packets")), 0);
		json_decref(d);
	}
}

Test(attach, detach_leaves_nothing_after_sigint)
{
	detach_on(SIGINT, "int");
}

Test(attach, detach_leaves_nothing_after_sigterm)
{
	detach_on(SIGTERM, "term");
}

Test(attach, detach_leaves_nothing_after_sigkill)
{
	detach_on(SIGKILL, "kill");
}

Test(attach, detach_leaves_nothing_after_normal_exit)
{
	pmd_up("norm", NULL);
	int before = our_progs();
	json_t *d = attach_lcore1("norm", "0.5");
	json_decref(d);
	cr_assert_eq(our_progs(), before);
}

Test(attach, uprobes_count_rx_bursts)
{
	char pid[16], spec[512] = "";
	size_t sl = 0, i;
	json_t *v;

	pmd_up("up", NULL);
	json_t *d = attach_lcore1("up0", "1");
	/* probe the PMD functions the sampler found hottest (stripped: dso+0xOFF) */
	json_array_foreach(json_object_get(d, "top_functions"), i, v) {
		const char *dso = json_string_value(json_object_get(v, "dso"));
		const char *name = json_string_value(json_object_get(v, "name"));
		if (strstr(dso, "net_null") && sl + strlen(name) + 2 < sizeof(spec))
			sl += (size_t)snprintf(spec + sl, sizeof(spec) - sl, "%s%s", sl ? "," : "", name);
	}
	json_decref(d);
	cr_assert_gt(sl, 0, "no net_null function among the top functions");
	int before = our_progs();
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	const char *args[] = {"attach", "--pid", pid, "--lcore", "1", "--seconds", "2",
			      "--uprobes", spec, "--uprobe-duty", "20", "-o", outdir, NULL};
	int rc = rxray_run(args, "up", 30);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, slurp("up", "err"));
	d = result_load();
	json_t *u = json_object_get(d, "uprobes");
	cr_assert(json_is_object(u), "uprobes section");
	cr_assert_gt(json_real_value(json_object_get(u, "attached_s")), 0.1);
	bool burst = false;
	json_array_foreach(json_object_get(u, "probes"), i, v) {
		double rpc = json_real_value(json_object_get(v, "ret_per_call"));
		if (json_integer_value(json_object_get(v, "calls")) > 0 && rpc >= 1 && rpc <= 512)
			burst = true;
	}
	cr_assert(burst, "no probed function returned packets per call: %s", slurp("up", "out"));
	cr_assert(strstr(slurp("up", "out"), "us per hit"), "output states the uprobe cost");
	json_decref(d);
	cr_assert_eq(our_progs(), before, "uprobe programs left behind");
}

Test(attach, dwarf_stacks_reach_the_forwarding_loop)
{
#if !defined(__x86_64__)
	cr_skip_test("dwarf stacks are x86-64 only");
#endif
	pmd_up("dw", NULL);
	json_t *d = attach_lcore1_stacks("dw", "2", "dwarf");
	const char *mode = json_string_value(json_object_get(json_object_get(d, "sampler"), "stacks"));
	cr_assert_str_eq(mode, "dwarf");
	assert_top_in_rx_path(d);
	bool caller = false;
	int depth = deepest_net_null_stack(&caller);
	/* process;thread;...;rx burst caller in testpmd;net_null rx: the PMD's
	 * callers are found although neither object has frame pointers */
	cr_assert_geq(depth, 5, "deepest net_null stack has %d frames", depth);
	cr_assert(caller, "no net_null stack has its testpmd caller");
	json_decref(d);
}

Test(attach, fp_stacks_leaf_attribution)
{
	pmd_up("fp", NULL);
	json_t *d = attach_lcore1_stacks("fp", "2", "fp");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "sampler"), "stacks")),
			 "fp");
	cr_assert_gt(json_integer_value(json_object_get(d, "packets")), 0);
	cr_assert_gt(json_real_value(json_object_get(d, "cycles_per_packet")), 0);
	assert_top_in_rx_path(d);
	json_decref(d);
}

/* attach --lcore 1 with --stack-bytes bytes (NULL: the default) for 2 s. */
static json_t *attach_stack_bytes(const char *tag, const char *bytes)
{
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	const char *args[] = {"attach", "--pid", pid, "--lcore", "1", "--seconds", "2", "--stacks",
			      "dwarf", "-o", outdir, "-q", bytes ? "--stack-bytes" : NULL, bytes,
			      NULL};
	int rc = rxray_run(args, tag, 30);
	cr_assert_eq(rc, 0, "rxray attach exit %d: %s", rc, slurp(tag, "err"));
	return result_load();
}

static double sampler_num(json_t *d, const char *key)
{
	return json_number_value(json_object_get(json_object_get(d, "sampler"), key));
}

/*
 * testpmd's worker runs its RX loop about 5 KiB below its thread's start
 * (a 4 KiB burst array sits in between): with 8 KiB copied almost every
 * stack unwinds whole, with 1 KiB almost every one is cut, and the cut
 * ones still hold the PMD's receive frame. And the defaults: the lcore's
 * thread only, events on it alone, a copy that keeps the receive frame.
 */
Test(attach, stack_copy_cuts_are_counted_and_keep_the_rx_frames)
{
#if !defined(__x86_64__)
	cr_skip_test("dwarf stacks are x86-64 only");
#endif
	pmd_up("cut", NULL);
	json_t *whole = attach_stack_bytes("cut8", "8192");
	double n = sampler_num(whole, "samples");
	cr_assert_gt(n, 0, "no samples");
	/* a counter that flags stacks which ended at the thread's start */
	cr_assert_lt(sampler_num(whole, "stacks_cut"), 0.2 * n, "8 KiB: %.0f of %.0f cut",
		     sampler_num(whole, "stacks_cut"), n);
	json_decref(whole);

	json_t *cut = attach_stack_bytes("cut1", "1024");
	n = sampler_num(cut, "samples");
	cr_assert_eq(sampler_num(cut, "stack_bytes"), 1024);
	/* a counter that never counts, or counts only failed unwinds */
	cr_assert_gt(sampler_num(cut, "stacks_cut"), 0.5 * n, "1 KiB: %.0f of %.0f cut",
		     sampler_num(cut, "stacks_cut"), n);
	/* a cut that loses the receive frame (copying from the wrong end) */
	cr_assert_gt(json_number_value(json_object_get(json_object_get(cut, "shares"), "rx_burst")),
		     0.2, "rx burst share with 1 KiB: %s", slurp("cut1", "err"));
	json_decref(cut);

	json_t *def = attach_stack_bytes("cutd", NULL);
	json_t *smp = json_object_get(def, "sampler");
	cr_assert_str_eq(json_string_value(json_object_get(smp, "events_on")), "threads");
	cr_assert_eq(json_integer_value(json_object_get(smp, "cpus")), 1, "one event: the lcore's");
	cr_assert_eq(json_array_size(json_object_get(json_object_get(def, "target"), "tids")), 1);
	cr_assert_leq(sampler_num(def, "stack_bytes"), 4096, "default copy");
	cr_assert_gt(json_number_value(json_object_get(json_object_get(def, "shares"), "rx_burst")),
		     0.2, "rx burst share at the defaults");
	json_decref(def);
}

Test(attach, lcore_without_a_worker_name_is_the_busiest_pinned_thread)
{
	char pid[16];
	pmd_up("lc0", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	/* lcore 0 is testpmd's main thread: no "-worker-0" name, found by affinity */
	const char *args[] = {"attach", "--pid", pid, "--lcore", "0", "--seconds", "0.3",
			      "--file-prefix", pmd.prefix, "-o", outdir, "-q", NULL};
	int rc = rxray_run(args, "lc0", 30);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, slurp("lc0", "err"));
	json_t *d = result_load();
	json_t *target = json_object_get(d, "target");
	cr_assert(strstr(json_string_value(json_object_get(target, "threads")), "pinned to core 0"),
		  "%s", json_string_value(json_object_get(target, "threads")));
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(target, "tids"), 0)),
		     (json_int_t)pmd.pid, "the main lcore thread");
	json_decref(d);
}

Test(attach, tid_names_the_thread)
{
	char pid[16], tid[16];
	pmd_up("tid", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	snprintf(tid, sizeof(tid), "%d", tpmd_worker_tid(&pmd));
	const char *args[] = {"attach", "--pid", pid, "--tid", tid, "--seconds", "1", "-o", outdir,
			      "-q", NULL};
	int rc = rxray_run(args, "tid", 30);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, slurp("tid", "err"));
	json_t *d = result_load();
	json_t *tids = json_object_get(json_object_get(d, "target"), "tids");
	cr_assert_eq(json_array_size(tids), 1);
	cr_assert_eq(json_integer_value(json_array_get(tids, 0)), atoi(tid));
	cr_assert_gt(json_integer_value(json_object_get(d, "packets")), 0);
	assert_top_in_rx_path(d);
	json_decref(d);
}

Test(attach, target_exit_is_a_runtime_error)
{
	char pid[16];
	pmd_up("exit", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	int before = our_progs();
	const char *args[] = {"attach", "--pid", pid, "--lcore", "1", "--seconds", "20",
			      "-o", outdir, "-q", NULL};
	pid_t r = rxray_spawn(args, "exit");
	/* the target goes once attach is attached (its programs loaded), on a
	 * host of any speed */
	double t0 = now_s();
	while (now_s() - t0 < 15 && our_progs_excluding(r) <= before)
		usleep(100000); /* the poll interval */
	cr_assert_gt(our_progs_excluding(r), before, "attach's programs never showed up");
	tpmd_stop(&pmd);
	int rc = rxray_wait(r, 15);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, slurp("exit", "err"));
	cr_assert(strstr(slurp("exit", "err"), "exited"), "%s", slurp("exit", "err"));
	cr_assert_eq(our_progs(), before);
}

Test(attach, process_without_telemetry_gives_shares_only)
{
	char pid[16];
	need_env();
	/* a busy process that is no DPDK app: samples, no packets */
	pid_t busy = fork();
	if (busy == 0) {
		execl("/bin/sh", "sh", "-c", "while :; do :; done", (char *)NULL);
		_exit(127);
	}
	snprintf(pid, sizeof(pid), "%d", (int)busy);
	snprintf(outdir, sizeof(outdir), "/tmp/rxray-attach-test-%d-busy", (int)getpid());
	const char *args[] = {"attach", "--pid", pid, "--seconds", "0.5", "-o", outdir, NULL};
	int rc = rxray_run(args, "busy", 30);
	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, slurp("busy", "err"));
	cr_assert(strstr(slurp("busy", "err"), "no telemetry socket"), "%s", slurp("busy", "err"));
	cr_assert(strstr(slurp("busy", "out"), "packets     unknown"), "%s", slurp("busy", "out"));
	json_t *d = result_load();
	cr_assert(json_is_null(json_object_get(d, "packets")));
	cr_assert_gt(json_integer_value(json_object_get(json_object_get(d, "sampler"), "samples")), 0);
	json_decref(d);
}

struct bad_case {
	const char *args[12];
	const char *expect; /* in the error line */
};

Test(attach, bad_arguments_exit_2)
{
	char pid[16], tid_other[16];
	pmd_up("bad", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	snprintf(tid_other, sizeof(tid_other), "%d", (int)getpid());
	int before = our_progs();
	const struct bad_case cases[] = {
		{{"attach", NULL}, "--pid"},
		{{"attach", "--pid", "abc", NULL}, "--pid"},
		{{"attach", "--pid", "4194303", "--seconds", "1", NULL}, "no such process"},
		{{"attach", "--pid", pid, "--lcore", "77", NULL}, "--lcore 77"},
		{{"attach", "--pid", pid, "--lcore", "x", NULL}, "--lcore"},
		{{"attach", "--pid", pid, "--tid", tid_other, NULL}, "--tid"},
		{{"attach", "--pid", pid, "--tid", "1", "--lcore", "1", NULL}, "--lcore"},
		{{"attach", "--pid", pid, "--file-prefix", "no-such-prefix", NULL}, "no-such-prefix"},
		{{"attach", "--pid", pid, "--freq", "0", NULL}, "--freq"},
		{{"attach", "--pid", pid, "--seconds", "soon", NULL}, "--seconds"},
		{{"attach", "--pid", pid, "--bogus", NULL}, "--bogus"},
		{{"attach", "--pid", pid, "--stacks", "lbr", NULL}, "--stacks"},
		{{"attach", "--pid", pid, "--stack-bytes", "1000", NULL}, "--stack-bytes"},
		{{"attach", "--pid", pid, "--stack-bytes", "16384", NULL}, "--stack-bytes"},
		{{"attach", "--pid", pid, "--sample-on", "cores", NULL}, "--sample-on"},
		{{"attach", "--pid", pid, "--sample-on", "threads", NULL}, "--sample-on threads"},
		{{"attach", "--pid", pid, "--debug-dir", "", NULL}, "--debug-dir"},
		{{"attach", "--pid", pid, "--lcore", "1", "--uprobes", "no_such_function_x",
		  "--seconds", "0.2", "-o", outdir, NULL}, "no_such_function_x"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = rxray_run(cases[i].args, "bad", 20);
		const char *err = slurp("bad", "err");
		cr_expect_eq(rc, 2, "case %zu exit %d: %s", i, rc, err);
		cr_expect(strstr(err, "rxray attach: ") && strstr(err, cases[i].expect),
			  "case %zu: error line '%s' should name '%s'", i, err, cases[i].expect);
		cr_expect_eq(strchr(err, '\n') - err + 1, (long)strlen(err), "case %zu: one line: %s",
			     i, err);
	}
	cr_assert_eq(our_progs(), before);
}

Test(attach, missing_capabilities_exit_1)
{
	char pid[16];
	if (access("/usr/bin/setpriv", X_OK))
		cr_skip_test("needs setpriv (util-linux) to drop capabilities");
	pmd_up("caps", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	const char *args[] = {"--bounding-set=-bpf,-perfmon,-sys_admin", RXRAY_BIN, "attach",
			      "--pid", pid, "--lcore", "1", "--seconds", "0.2", "-o", outdir, NULL};
	const char *argv[16] = {"/usr/bin/setpriv"};
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	pid_t r = fork();
	if (r == 0) {
		char p[160];
		snprintf(p, sizeof(p), "/tmp/rxray-attach-test-%d-caps.err", (int)getppid());
		int e = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(e, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int rc = rxray_wait(r, 20);
	const char *err = slurp("caps", "err");
	cr_assert_eq(rc, 1, "exit %d: %s", rc, err);
	cr_assert(strstr(err, "CAP_BPF") && strstr(err, "CAP_PERFMON"), "names what is missing: %s",
		  err);
}

/* ------------------------------------------------------ names (issue 16) */

static json_t *top_named(json_t *d, size_t top, const char *prefix)
{
	json_t *v;
	size_t i;
	json_array_foreach(json_object_get(d, "top_functions"), i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		if (i < top && name && !strncmp(name, prefix, strlen(prefix)))
			return v;
	}
	return NULL;
}

static const char *tops_text(json_t *d)
{
	static char buf[2048];
	json_t *v;
	size_t i, n = 0;
	buf[0] = '\0';
	json_array_foreach(json_object_get(d, "top_functions"), i, v) {
		if (i >= 8 || n + 200 > sizeof(buf))
			break;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s (%s)", i ? ", " : "",
				      json_string_value(json_object_get(v, "name")),
				      json_string_value(json_object_get(v, "source")));
	}
	return buf;
}

/*
 * Debian's DPDK is stripped: the receive function and the mempool
 * driver's enqueue/dequeue have no symbol anywhere on this host. Their
 * names must come from the tables read out of testpmd (rte_eth_fp_ops,
 * rte_mempool_ops_table). With --mbcache=0 every alloc and free goes
 * through the ring driver, so both are among the hottest frames. Catches:
 * a wrong field offset (the label lands on another function or none), the
 * library's unused copy read instead of testpmd's copy-relocated one (no
 * labels at all), labels not used for unnamed frames, a missing source.
 */
Test(attach, dpdk_names_on_the_hottest_frames)
{
	pmd_up("names", "--mbcache=0");
	json_t *d = attach_lcore1("names", "2");
	json_t *rx = top_named(d, 6, "net_null rx_pkt_burst (port 0)");
	json_t *mp = top_named(d, 6, "ring_mp_mc ");
	cr_assert_not_null(rx, "rx burst not among the hottest: %s", tops_text(d));
	cr_assert_not_null(mp, "mempool driver not among the hottest: %s", tops_text(d));
	cr_assert_str_eq(json_string_value(json_object_get(rx, "source")), "dpdk");
	cr_assert_str_eq(json_string_value(json_object_get(rx, "dpdk_role")), "rx_burst");
	cr_assert_str_eq(json_string_value(json_object_get(rx, "dso")), "librte_net_null.so.23.0");
	cr_assert_str_eq(json_string_value(json_object_get(mp, "source")), "dpdk");
	const char *mpname = json_string_value(json_object_get(mp, "name"));
	cr_assert(!strcmp(mpname, "ring_mp_mc enqueue") || !strcmp(mpname, "ring_mp_mc dequeue"),
		  "%s", mpname);
	cr_assert_str_eq(json_string_value(json_object_get(mp, "dso")),
			 "librte_mempool_ring.so.23.0");
	/* every frame name says where it came from */
	json_t *src = json_object_get(json_object_get(d, "symbols"), "frame_sources");
	cr_assert_str_eq(json_string_value(json_object_get(src, "net_null rx_pkt_burst (port 0)")),
			 "dpdk");
	/* the findings split the mempool share and name the receive function */
	cr_assert(findings_mention(d, "mb_pool_0", "put "), "%s", slurp("names", "out"));
	cr_assert(findings_mention(d, "PMD receive function: net_null rx_pkt_burst (port 0)", NULL),
		  "%s", slurp("names", "out"));
	json_t *sh = json_object_get(d, "shares");
	cr_assert_gt(json_real_value(json_object_get(sh, "mempool_get")) +
		     json_real_value(json_object_get(sh, "mempool_put")), 0.02);
	cr_assert_leq(json_real_value(json_object_get(sh, "mempool_get")) +
		      json_real_value(json_object_get(sh, "mempool_put")),
		      json_real_value(json_object_get(sh, "mempool")) + 1e-4); /* 6 digits in JSON */
	/* unnamed code keeps object+0xoffset */
	bool raw = false;
	json_t *v;
	const char *k;
	json_object_foreach(src, k, v)
		if (!strcmp(json_string_value(v), "none") && strstr(k, "+0x"))
			raw = true;
	cr_assert(raw, "no object+0xoffset frame left: %s", tops_text(d));
	json_decref(d);
}

static bool have_tool(const char *name)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void need_bpf(void)
{
	if (geteuid())
		cr_skip_test("needs root (BPF)");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("needs kernel BTF (/sys/kernel/btf/vmlinux)");
	if (!have_tool("cc") || !have_tool("objcopy") || !have_tool("readelf"))
		cr_skip_test("needs cc, objcopy and readelf to build the stripped program");
}

/*
 * Build dir/spin (a static function spinning forever) with ldflags, then
 * run post (shell, in dir) to strip it and place its debug file.
 */
static void spin_build(const char *dir, const char *ldflags, const char *post)
{
	cr_assert_eq(sh("rm -rf %s && mkdir -p %s/dbg && cd %s && printf '%%s\\n' "
			"'__attribute__((noinline)) %s void rxray_spin_here(volatile unsigned long *x)'"
			" '{ for (;;) (*x)++; }' 'int main(void) { volatile unsigned long x = 0;'"
			" 'rxray_spin_here(&x); return 0; }' > spin.c && "
			"cc -O1 -g %s -o spin spin.c && %s", dir, dir, dir,
			strstr(ldflags, "rdynamic") ? "" : "static", ldflags, post),
		     0, "building the stripped program (%s)", post);
}

/* Attach to dir/spin for secs with --debug-dir debug; its hottest frame. */
static json_t *spin_attach(const char *dir, const char *debug, const char *tag, json_t **doc)
{
	char bin[160], pid[16];
	snprintf(bin, sizeof(bin), "%s/spin", dir);
	pid_t spin = fork();
	if (spin == 0) {
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	snprintf(pid, sizeof(pid), "%d", (int)spin);
	/* attach to the program, not to the fork before its exec */
	char exe[96], target[200];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)spin);
	for (double end = now_s() + 5; now_s() < end;) {
		ssize_t n = readlink(exe, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (!strcmp(target, bin))
			break;
		usleep(10000); /* the poll interval */
	}
	snprintf(outdir, sizeof(outdir), "%s/out-%s", dir, tag);
	const char *args[] = {"attach", "--pid", pid, "--seconds", "1", "--freq", "999",
			      "--debug-dir", debug, "-o", outdir, "-q", NULL};
	int rc = rxray_run(args, tag, 30);
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, slurp(tag, "err"));
	*doc = result_load();
	json_t *top = json_array_get(json_object_get(*doc, "top_functions"), 0);
	cr_assert_not_null(top, "no samples of the spinning program");
	return top;
}

static void assert_top(json_t *top, json_t *d, const char *name, const char *src)
{
	cr_assert(!strncmp(json_string_value(json_object_get(top, "name")), name, strlen(name)),
		  "hottest: %s", tops_text(d));
	cr_assert_str_eq(json_string_value(json_object_get(top, "source")), src, "%s",
			 tops_text(d));
	cr_assert_str_eq(json_string_value(json_object_get(top, "dso")), "spin");
}

/*
 * A stripped program whose only symbols are in a separate debug file at
 * <debug dir>/.build-id/xx/yyyy.debug: its spinning function is named
 * through that file, and attach.json says "debuginfo". With another debug
 * dir it stays spin+0xoffset (the name really came from the file).
 */
Test(attach, stripped_binary_resolves_through_its_build_id_debug_file)
{
	char dir[96], dbg[160];
	json_t *d;
	need_bpf();
	snprintf(dir, sizeof(dir), "/tmp/rxray-attach-test-%d-strip", (int)getpid());
	spin_build(dir, "-Wl,--build-id=sha1",
		   "objcopy --only-keep-debug spin spin.debug && objcopy --strip-all spin && "
		   "id=$(readelf -n spin | sed -n 's/.*Build ID: //p') && test -n \"$id\" && "
		   "mkdir -p dbg/.build-id/${id%%${id#??}} && "
		   "mv spin.debug dbg/.build-id/${id%%${id#??}}/${id#??}.debug && "
		   "! readelf -S spin | grep -q '\\.symtab'");
	snprintf(dbg, sizeof(dbg), "%s/dbg", dir);
	json_t *top = spin_attach(dir, dbg, "strip", &d);
	assert_top(top, d, "rxray_spin_here", "debuginfo");
	json_decref(d);
	top = spin_attach(dir, dir, "strip2", &d);
	assert_top(top, d, "spin+0x", "none");
	json_decref(d);
}

/* No build-id: the debug file is found through .gnu_debuglink in .debug/. */
Test(attach, stripped_binary_resolves_through_its_debuglink)
{
	char dir[96];
	json_t *d;
	need_bpf();
	snprintf(dir, sizeof(dir), "/tmp/rxray-attach-test-%d-link", (int)getpid());
	spin_build(dir, "-Wl,--build-id=none",
		   "objcopy --only-keep-debug spin spin.debug && objcopy --strip-all spin && "
		   "objcopy --add-gnu-debuglink=spin.debug spin && mkdir -p .debug && "
		   "mv spin.debug .debug/ && ! readelf -n spin | grep -q 'Build ID'");
	json_t *top = spin_attach(dir, "/nonexistent", "link", &d);
	assert_top(top, d, "rxray_spin_here", "debuginfo");
	json_decref(d);
}

/* Stripped, but the function is exported: the nearest .dynsym symbol names it. */
Test(attach, stripped_binary_resolves_through_dynsym)
{
	char dir[96];
	json_t *d;
	need_bpf();
	snprintf(dir, sizeof(dir), "/tmp/rxray-attach-test-%d-dyn", (int)getpid());
	spin_build(dir, "-rdynamic", "objcopy --strip-all spin");
	json_t *top = spin_attach(dir, "/nonexistent", "dyn", &d);
	assert_top(top, d, "rxray_spin_here", "dynsym");
	json_decref(d);
}

/* ------------------------------------------- nothing left behind (issue 14) */

/* The BPF link and program ids held by process pid's fds (/proc/pid/fdinfo). */
static void bpf_ids_of(pid_t pid, __u32 *links, size_t *nl, __u32 *progs, size_t *np, size_t max)
{
	char path[96], line[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.40s", (int)pid, de->d_name);
		FILE *f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned id;
			if (sscanf(line, "link_id: %u", &id) == 1 && *nl < max)
				links[(*nl)++] = id;
			else if (sscanf(line, "prog_id: %u", &id) == 1 && *np < max)
				progs[(*np)++] = id;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/* Ids that still exist, by walking the kernel's id space (libbpf). */
static size_t alive(const __u32 *ids, size_t n, int (*next)(__u32, __u32 *))
{
	size_t left = 0;
	for (size_t i = 0; i < n; i++) {
		__u32 cur = ids[i] - 1, got;
		if (!next(cur, &got) && got == ids[i])
			left++;
	}
	return left;
}

static bool uprobe_prog_among(const __u32 *progs, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		int fd = bpf_prog_get_fd_by_id(progs[i]);
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);
		bool up = fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
			  !strncmp(info.name, "rxb_uprobe", 10);
		if (fd >= 0)
			close(fd);
		if (up)
			return true;
	}
	return false;
}

/*
 * rxray attach killed with SIGKILL, its uprobes attached at that moment:
 * every BPF link and program its fds held is gone from the kernel's id
 * space afterwards (links are fd-owned perf-event links, nothing is
 * pinned, no legacy tracefs uprobe is created). Ownership is read from the
 * process's own fdinfo, so a concurrent attach elsewhere cannot confuse it.
 */
Test(attach, sigkill_with_uprobes_leaves_no_link_or_program)
{
	char pid[16], spec[512] = "", tracefs_before[64] = "";
	size_t sl = 0, i;
	json_t *v;

	pmd_up("kup", NULL);
	json_t *d = attach_lcore1("kup0", "1");
	json_array_foreach(json_object_get(d, "top_functions"), i, v) {
		const char *dso = json_string_value(json_object_get(v, "dso"));
		const char *name = json_string_value(json_object_get(v, "name"));
		if (strstr(dso, "net_null") && strstr(name, "+0x") && sl + strlen(name) + 2 < sizeof(spec))
			sl += (size_t)snprintf(spec + sl, sizeof(spec) - sl, "%s%s", sl ? "," : "", name);
	}
	json_decref(d);
	if (!sl) /* every net_null frame got a name: probe the receive path by object offset */
		snprintf(spec, sizeof(spec), "librte_net_null+0x2090");
	FILE *tf = popen("cat /sys/kernel/tracing/uprobe_events 2>/dev/null | wc -l", "r");
	if (tf) {
		if (!fgets(tracefs_before, sizeof(tracefs_before), tf))
			tracefs_before[0] = '\0';
		pclose(tf);
	}
	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	const char *args[] = {"attach", "--pid", pid, "--lcore", "1", "--seconds", "60",
			      "--uprobes", spec, "--uprobe-duty", "100", "-o", outdir, "-q", NULL};
	pid_t r = rxray_spawn(args, "kup");
	__u32 links[256], progs[256];
	size_t nl = 0, np = 0;
	double t0 = now_s();
	/* wait (bounded) until the uprobe programs are attached through links */
	while (now_s() - t0 < 20) {
		nl = np = 0;
		bpf_ids_of(r, links, &nl, progs, &np, 256);
		if (nl >= 2 && uprobe_prog_among(progs, np))
			break;
		usleep(100000); /* the poll interval */
	}
	cr_assert_geq(nl, 2, "attach never held its links: %s", slurp("kup", "err"));
	cr_assert(uprobe_prog_among(progs, np), "no uprobe program attached");
	/* the id walk sees them while attach lives (else "gone" proves nothing) */
	cr_assert_eq(alive(links, nl, bpf_link_get_next_id), nl);
	cr_assert_eq(alive(progs, np, bpf_prog_get_next_id), np);
	kill(r, SIGKILL);
	cr_assert_eq(rxray_wait(r, 15), 128 + SIGKILL);
	/* release trails the exit by a moment (the kernel frees in RCU callbacks) */
	size_t ll = alive(links, nl, bpf_link_get_next_id), lp = alive(progs, np, bpf_prog_get_next_id);
	for (double end = now_s() + 10; (ll || lp) && now_s() < end;) {
		usleep(100000); /* the poll interval */
		ll = alive(links, nl, bpf_link_get_next_id);
		lp = alive(progs, np, bpf_prog_get_next_id);
	}
	cr_assert_eq(ll, 0, "%zu of %zu links left after SIGKILL", ll, nl);
	cr_assert_eq(lp, 0, "%zu of %zu programs left after SIGKILL", lp, np);
	/* no legacy uprobe (tracefs) and nothing pinned */
	tf = popen("cat /sys/kernel/tracing/uprobe_events 2>/dev/null | wc -l", "r");
	char after[64] = "";
	if (tf) {
		if (!fgets(after, sizeof(after), tf))
			after[0] = '\0';
		pclose(tf);
	}
	cr_assert_str_eq(after, tracefs_before, "tracefs uprobe_events changed");
	cr_assert_neq(sh("ls /sys/fs/bpf 2>/dev/null | grep -q rxr"), 0, "something pinned");
}
