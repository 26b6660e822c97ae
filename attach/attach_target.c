/* SPDX-License-Identifier: MIT */
/* Which threads of which process: /proc parsing, lcore -> thread, caps. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/attach.h"

static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (int)n;
}

static void comm_read(int pid, int tid, char comm[16])
{
	char path[64];
	char buf[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	comm[0] = '\0';
	if (read_small(path, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(comm, 16, "%.15s", buf);
	}
}

/* Field 39 ("processor") of a task's stat; fields after comm's ')' */
static int last_cpu_read(int pid, int tid)
{
	char path[64];
	char buf[1024];
	char *p;
	int field = 3;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')'); /* comm may hold spaces and ')' */
	if (!p)
		return -1;
	p += 2;
	while (*p && field < 39) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
		field++;
	}
	return atoi(p);
}

static int pinned_core(int tid)
{
	cpu_set_t set;
	int core = -1;

	CPU_ZERO(&set);
	if (sched_getaffinity(tid, sizeof(set), &set))
		return -1;
	if (CPU_COUNT(&set) != 1)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			core = c;
	return core;
}

static uint64_t task_cpu_ns(int pid, int tid)
{
	char path[64];
	char buf[128];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

static int thread_fill(int pid, int tid, struct rxb_attach_thread *th)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	if (access(path, F_OK))
		return -ENOENT;
	th->tid = tid;
	comm_read(pid, tid, th->comm);
	th->pinned_core = pinned_core(tid);
	th->last_cpu = last_cpu_read(pid, tid);
	return 0;
}

/* All tids of pid into out (up to max). Count, or -ESRCH. */
static int tasks_list(int pid, int *out, size_t max)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if ((size_t)n == max) {
			n = -E2BIG;
			break;
		}
		out[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

static bool lcore_name_matches(const char *comm, int lcore)
{
	static const char *const prefixes[] = {"rte-worker-", "lcore-worker-", "dpdk-worker-"};
	char want[32];

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		snprintf(want, sizeof(want), "%s%d", prefixes[i], lcore);
		if (!strcmp(comm, want))
			return true;
	}
	return false;
}

static int resolve_lcore(int pid, int lcore, const int *all, int nall, struct rxb_attach_target *t,
			 char *err, size_t errlen)
{
	struct rxb_attach_thread th;
	int best = -1;
	uint64_t best_ns = 0;
	char pinned[96] = "";
	size_t pl = 0;

	for (int i = 0; i < nall; i++) {
		if (thread_fill(pid, all[i], &th))
			continue;
		if (lcore_name_matches(th.comm, lcore)) {
			t->threads[0] = th;
			t->nthreads = 1;
			snprintf(t->how, sizeof(t->how), "lcore %d: thread %d \"%s\" (DPDK lcore name)",
				 lcore, th.tid, th.comm);
			return 0;
		}
		if (th.pinned_core >= 0 && pl + 16 < sizeof(pinned))
			pl += (size_t)snprintf(pinned + pl, sizeof(pinned) - pl, "%s%d@%d",
					       pl ? " " : "", th.tid, th.pinned_core);
		if (th.pinned_core == lcore) {
			uint64_t ns = task_cpu_ns(pid, th.tid);
			if (best < 0 || ns > best_ns) {
				best = i;
				best_ns = ns;
				t->threads[0] = th;
			}
		}
	}
	if (best < 0) {
		snprintf(err, errlen, "--lcore %d: no thread of pid %d is pinned to core %d "
			 "(pinned threads tid@core: %s)", lcore, pid, lcore, pl ? pinned : "none");
		return -ENOENT;
	}
	t->nthreads = 1;
	snprintf(t->how, sizeof(t->how), "lcore %d: thread %d \"%s\" (busiest thread pinned to core %d)",
		 lcore, t->threads[0].tid, t->threads[0].comm, lcore);
	return 0;
}

int rxb_attach_target_resolve(int pid, const int *tids, size_t ntids, int lcore,
			      struct rxb_attach_target *t, char *err, size_t errlen)
{
	int all[RXB_ATTACH_MAX_THREADS];
	char path[64];
	char buf[64];
	int nall;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->lcore = lcore;
	if (ntids && lcore >= 0) {
		snprintf(err, errlen, "--tid and --lcore: give one of them");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (pid <= 0 || read_small(path, buf, sizeof(buf)) <= 0) {
		snprintf(err, errlen, "--pid %d: no such process", pid);
		return -ESRCH;
	}
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(t->comm, sizeof(t->comm), "%.15s", buf);

	if (ntids) {
		if (ntids > RXB_ATTACH_MAX_THREADS) {
			snprintf(err, errlen, "--tid: at most %d threads", RXB_ATTACH_MAX_THREADS);
			return -E2BIG;
		}
		for (size_t i = 0; i < ntids; i++) {
			if (thread_fill(pid, tids[i], &t->threads[i])) {
				snprintf(err, errlen, "--tid %d: not a thread of pid %d", tids[i], pid);
				return -ENOENT;
			}
		}
		t->nthreads = ntids;
		snprintf(t->how, sizeof(t->how), "%zu thread%s named by --tid", ntids,
			 ntids == 1 ? "" : "s");
		return 0;
	}
	nall = tasks_list(pid, all, RXB_ATTACH_MAX_THREADS);
	if (nall == -E2BIG) {
		snprintf(err, errlen, "--pid %d: more than %d threads", pid, RXB_ATTACH_MAX_THREADS);
		return -E2BIG;
	}
	if (nall <= 0) {
		snprintf(err, errlen, "--pid %d: no such process", pid);
		return -ESRCH;
	}
	if (lcore >= 0)
		return resolve_lcore(pid, lcore, all, nall, t, err, errlen);

	t->whole = true;
	for (int i = 0; i < nall; i++)
		if (!thread_fill(pid, all[i], &t->threads[t->nthreads]))
			t->nthreads++;
	snprintf(t->how, sizeof(t->how), "whole process (%zu threads)", t->nthreads);
	return 0;
}

int rxb_attach_target_cpu_ns(const struct rxb_attach_target *t, uint64_t *ns)
{
	int all[RXB_ATTACH_MAX_THREADS];
	uint64_t sum = 0;

	if (!rxb_attach_target_alive(t))
		return -ESRCH;
	if (t->whole) {
		int n = tasks_list(t->pid, all, RXB_ATTACH_MAX_THREADS);
		if (n == -ESRCH)
			return -ESRCH;
		for (int i = 0; i < n; i++)
			sum += task_cpu_ns(t->pid, all[i]);
	} else {
		for (size_t i = 0; i < t->nthreads; i++)
			sum += task_cpu_ns(t->pid, t->threads[i].tid);
	}
	*ns = sum;
	return 0;
}

bool rxb_attach_target_alive(const struct rxb_attach_target *t)
{
	return !(kill(t->pid, 0) && errno == ESRCH);
}

/* Effective capability bits from /proc/self/status. */
static uint64_t caps_effective(void)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			caps = strtoull(line + 7, NULL, 16);
	fclose(f);
	return caps;
}

int rxb_attach_caps_check(char *missing, size_t len)
{
	enum { CAP_SYS_ADMIN_BIT = 21, CAP_PERFMON_BIT = 38, CAP_BPF_BIT = 39 };
	uint64_t caps = caps_effective();
	bool admin = caps & (1ull << CAP_SYS_ADMIN_BIT);
	bool bpf = caps & (1ull << CAP_BPF_BIT);
	bool perfmon = caps & (1ull << CAP_PERFMON_BIT);

	if (admin || (bpf && perfmon)) {
		missing[0] = '\0';
		return 0;
	}
	snprintf(missing, len, "%s%s%s (%s)", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? ", " : "",
		 perfmon ? "" : "CAP_PERFMON",
		 geteuid() ? "not root" : "root, but without CAP_SYS_ADMIN");
	return -EPERM;
}
