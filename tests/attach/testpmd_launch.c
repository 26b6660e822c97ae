/* SPDX-License-Identifier: MIT */
#include "testpmd_launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *testpmd_path(void)
{
	/* RXRAY_TESTPMD: a carried copy (tools/device-bundle.sh) */
	const char *env = getenv("RXRAY_TESTPMD");
	if (env && *env && !access(env, X_OK))
		return env;
	static const char *const cands[] = {"/usr/bin/dpdk-testpmd", "/usr/local/bin/dpdk-testpmd"};
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (!access(cands[i], X_OK))
			return cands[i];
	return NULL;
}

/* A PMD shared object (net_null, mempool_ring) from Debian's or a local install. */
static int pmd_find(const char *name, char *out, size_t len)
{
	/* RXRAY_DPDK_PMD_DIR: the plugin folder rxray's own EAL uses too */
	const char *dir = getenv("RXRAY_DPDK_PMD_DIR");
	if (dir && *dir) {
		snprintf(out, len, "%s/librte_%s.so", dir, name);
		if (!access(out, R_OK))
			return 0;
	}
	static const char *const pats[] = {"/usr/lib/*/dpdk/pmds-*/librte_%s.so",
					   "/usr/local/lib/*/dpdk/pmds-*/librte_%s.so",
					   "/usr/local/lib64/dpdk/pmds-*/librte_%s.so"};
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		char pat[256];
		glob_t g;
		snprintf(pat, sizeof(pat), pats[i], name);
		if (!glob(pat, 0, NULL, &g) && g.gl_pathc) {
			snprintf(out, len, "%s", g.gl_pathv[g.gl_pathc - 1]);
			globfree(&g);
			return 0;
		}
		globfree(&g);
	}
	return -ENOENT;
}

const char *tpmd_unavailable(void)
{
	char p[256];

	if (geteuid())
		return "needs root: BPF, perf events and testpmd's runtime directory";
	if (!testpmd_path())
		return "needs dpdk-testpmd (Debian package dpdk)";
	if (pmd_find("net_null", p, sizeof(p)))
		return "needs the net_null PMD (librte_net_null.so)";
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int tpmd_worker_tid(const struct tpmd *t)
{
	char path[320], comm[64];
	struct dirent *de;
	DIR *d;
	int tid = -1;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (tid < 0 && (de = readdir(d))) {
		FILE *f;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)t->pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "rte-worker-1", 12))
			tid = atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	return tid;
}

long long tpmd_rx_packets(const struct tpmd *t)
{
	char buf[16384];
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	long long n = -1;
	/* the prefix is at most 63 bytes: the path fits */
	snprintf(sun.sun_path, sizeof(sun.sun_path), "/var/run/dpdk/%.63s/dpdk_telemetry.v2",
		 t->prefix);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	static const char q[] = "/ethdev/stats,0";
	ssize_t k = 0;
	/* the greeting first, then one reply per request */
	if (!connect(fd, (struct sockaddr *)&sun, sizeof(sun)) &&
	    recv(fd, buf, sizeof(buf) - 1, 0) > 0 &&
	    send(fd, q, sizeof(q) - 1, 0) == (ssize_t)sizeof(q) - 1)
		k = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	json_t *r = k > 0 ? json_loadb(buf, (size_t)k, 0, NULL) : NULL;
	json_t *v = json_object_get(json_object_get(r, "/ethdev/stats"), "ipackets");
	if (json_is_integer(v))
		n = (long long)json_integer_value(v);
	json_decref(r);
	return n;
}

bool tpmd_wait_rx_past(const struct tpmd *t, long long n, double secs)
{
	double end = now_s() + secs;
	for (;;) {
		if (tpmd_rx_packets(t) > n)
			return true;
		if (now_s() > end)
			return false;
		usleep(10000); /* the poll interval */
	}
}

int tpmd_start(struct tpmd *t, const char *tag, const char *extra, char *why, size_t len)
{
	char nul[256] = "", ring[256] = "", prefix_arg[96], sock[160];
	const char *bin = testpmd_path();
	const char *argv[40];
	int argc = 0;
	double t0;

	memset(t, 0, sizeof(*t));
	if (!bin) {
		snprintf(why, len, "no dpdk-testpmd");
		return -ENOENT;
	}
	snprintf(t->prefix, sizeof(t->prefix), "rxray-%s-%d", tag, (int)getpid());
	snprintf(t->log, sizeof(t->log), "/tmp/%s.log", t->prefix);
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", t->prefix);
	argv[argc++] = bin;
	argv[argc++] = "-l";
	argv[argc++] = "0,1";
	argv[argc++] = "-m";
	argv[argc++] = "256";
	argv[argc++] = "--no-huge";
	argv[argc++] = "--no-pci";
	argv[argc++] = prefix_arg;
	if (!pmd_find("net_null", nul, sizeof(nul))) {
		argv[argc++] = "-d";
		argv[argc++] = nul;
	}
	if (!pmd_find("mempool_ring", ring, sizeof(ring))) {
		argv[argc++] = "-d";
		argv[argc++] = ring;
	}
	argv[argc++] = "--vdev=net_null0";
	argv[argc++] = "--";
	argv[argc++] = "--forward-mode=rxonly";
	argv[argc++] = "--nb-cores=1";
	argv[argc++] = "--stats-period=1";
	argv[argc++] = "--total-num-mbufs=16384";
	if (extra)
		argv[argc++] = extra;
	argv[argc] = NULL;

	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		int fd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int in = open("/dev/null", O_RDONLY);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (in >= 0)
			dup2(in, 0);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	t->pid = pid;
	snprintf(sock, sizeof(sock), "/var/run/dpdk/%s/dpdk_telemetry.v2", t->prefix);
	t0 = now_s();
	while (now_s() - t0 < 20) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			t->pid = 0;
			snprintf(why, len, "testpmd exited at start (status %d), see %s", st, t->log);
			return -EIO;
		}
		/* forwarding has started: port 0 has received packets */
		if (!access(sock, F_OK) && tpmd_worker_tid(t) > 0 && tpmd_rx_packets(t) > 0) {
			t->ready = 1;
			return 0;
		}
		usleep(50000); /* the poll interval */
	}
	snprintf(why, len, "testpmd not ready after 20 s, see %s", t->log);
	tpmd_stop(t);
	return -ETIMEDOUT;
}

void tpmd_stop(struct tpmd *t)
{
	char dir[160], path[448];
	struct dirent *de;
	DIR *d;

	if (t->pid > 0) {
		double t0 = now_s();
		int st;
		kill(t->pid, SIGINT);
		while (waitpid(t->pid, &st, WNOHANG) != t->pid) {
			if (now_s() - t0 > 3) {
				kill(t->pid, SIGKILL);
				waitpid(t->pid, &st, 0);
				break;
			}
			usleep(20000); /* the poll interval */
		}
		t->pid = 0;
	}
	if (t->ready) /* a failed start keeps its log for the reader */
		unlink(t->log);
	t->ready = 0;
	if (!t->prefix[0])
		return;
	snprintf(dir, sizeof(dir), "/var/run/dpdk/%s", t->prefix);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d) {
		closedir(d);
		rmdir(dir);
	}
}

long tpmd_log_size(const struct tpmd *t)
{
	struct stat st;
	return stat(t->log, &st) ? 0 : (long)st.st_size;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double tpmd_rx_pps_median(const struct tpmd *t, long from, long *end_off, int *nlines)
{
	double v[256];
	int n = 0;
	char line[512];
	FILE *f = fopen(t->log, "re");

	*nlines = 0;
	if (!f)
		return 0;
	fseek(f, from, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "Rx-pps:");
		if (p && n < 256)
			v[n++] = strtod(p + 7, NULL);
	}
	*end_off = ftell(f);
	fclose(f);
	*nlines = n;
	if (!n)
		return 0;
	qsort(v, (size_t)n, sizeof(v[0]), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned long long tpmd_worker_cpu_ns(const struct tpmd *t)
{
	char path[96];
	unsigned long long ns = 0;
	int tid = tpmd_worker_tid(t);
	FILE *f;

	if (tid < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)t->pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}
