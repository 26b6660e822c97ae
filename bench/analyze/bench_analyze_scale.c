/* SPDX-License-Identifier: MIT */
/*
 * How long the analysis verbs take on a large sweep. Generates a
 * results.jsonl of N points x T trials (a trial is a full run result of
 * three threads, as `rxray run` writes; each point has its summary line
 * with the NDR and top runs embedded), then runs, as a user would,
 *   rxray ceiling DIR --format json    rxray report DIR -o OUT
 *   rxray diff DIR mode=single mode=hds  rxray flame DIR -o F.svg
 * and prints the median wall time of REPS runs per verb and size.
 * Figures, never pass/fail. Usage:
 *   bench_analyze_scale [POINTS...] [--trials T] [--reps R] [--keep DIR] [--base BIN]
 *   bench_analyze_scale --gen DIR POINTS [--trials T]   (write the input only)
 * Default: 1000 and 10000 points, 10 trials, 3 reps.
 * --base BIN: also time another rxray binary (e.g. one built before a
 * change) on the same input, each run interleaved with this one's, and
 * print base / this ratios of the cpu medians: on a shared host the
 * ratio within one run is the figure to quote, not either time alone.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RXRAY_BIN
#define RXRAY_BIN "rxray"
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run result document (no newline); rates in Mpps. */
static void run_doc(FILE *o, const char *mode, int frame, int queues, int ring, double offered,
		    double rx, const char *trial_key, int trial_n)
{
	double loss = offered > 0 ? 1 - rx / offered : 0;
	unsigned long long off = (unsigned long long)(offered * 1e6), rec = (unsigned long long)(rx * 1e6);
	unsigned long long cpp_rx = 90 + (unsigned long long)frame / 64, cpp_app = 70;
	fprintf(o,
		"{\"schema\":\"rxray.run/1\",\"config\":{\"engine\":\"verbs\",\"mode\":\"%s\",\"frame\":%d,"
		"\"queues\":%d,\"ring\":%d},\"env\":{\"kernel\":\"6.1.0-bench\",\"machine\":\"x86_64\","
		"\"hostname\":\"bench\",\"cpu\":\"Bench CPU\",\"cores_online\":16,\"probes\":\"counters\"},"
		"\"counters\":{\"offered\":%llu,\"received\":%llu,\"out_of_buffer\":%llu,\"nombuf\":0,"
		"\"app_dropped\":0,\"errors\":0,\"conserved\":true},\"rates\":{\"offered_mpps\":%.6f,"
		"\"rx_mpps\":%.6f,\"loss\":%.9f,\"seconds\":1.0},\"clock\":{\"source\":\"tsc\","
		"\"hz\":2000000000.0,\"lap_cost_cycles\":24.0},\"threads\":[",
		mode, frame, queues, ring, off, rec, off - rec, offered, rx, loss);
	const char *roles[3] = {"nic", "rx", "app"};
	const char *stages[3][3] = {{"hdr_write", "payload_write", "cqe_write"},
				    {"cqe_poll", "sge_setup", "doorbell"},
				    {"hdr_read", "app", "free"}};
	unsigned long long cpp[3] = {50, cpp_rx, cpp_app};
	for (int t = 0; t < 3; t++) {
		fprintf(o, "%s{\"role\":\"%s\",\"core\":%d,\"packets\":%llu,\"busy_cycles\":%llu,\"stages\":{",
			t ? "," : "", roles[t], t, rec, rec * cpp[t]);
		for (int s = 0; s < 3; s++) {
			unsigned long long c = cpp[t] / 3;
			fprintf(o,
				"%s\"%s\":{\"count\":%llu,\"packets\":%llu,\"cycles\":%llu,"
				"\"cycles_per_packet\":%llu,\"min\":%llu,\"max\":%llu,\"p50\":%llu,"
				"\"p90\":%llu,\"p99\":%llu}",
				s ? "," : "", stages[t][s], rec / 32, rec, rec * c, c, c * 32, c * 80,
				c * 32, c * 36, c * 40);
		}
		fputs("}}", o);
	}
	fputs("]", o);
	if (trial_key)
		fprintf(o, ",\"trial\":{\"key\":\"%s\",\"n\":%d,\"target_pps\":%.0f,\"seconds\":1,\"status\":\"ok\"}",
			trial_key, trial_n, offered * 1e6);
	fputs("}", o);
}

/* N points: modes x frames x queues x rings, T trials each, then the summary line. */
static int generate(const char *dir, int npoints, int trials)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	FILE *o = fopen(path, "w");
	if (!o)
		return -errno;
	for (int i = 0; i < npoints; i++) {
		const char *mode = i % 2 ? "hds" : "single";
		int frame = 64 + 64 * ((i / 2) % 100), queues = 1 + (i / 200) % 8, ring = 1024 << ((i / 1600) % 8);
		char key[256];
		snprintf(key, sizeof(key), "engine=verbs,mode=%s,frame=%d,queues=%d,ring=%d", mode, frame,
			 queues, ring);
		double cap = 20.0 - frame / 1000.0;
		double best_ok = 0, top = 0;
		for (int t = 1; t <= trials; t++) {
			double offered = cap * (0.5 + 0.1 * t), rx = offered < cap ? offered : cap;
			run_doc(o, mode, frame, queues, ring, offered, rx, key, t);
			fputc('\n', o);
			if (rx >= offered && offered > best_ok)
				best_ok = offered;
			if (offered > top)
				top = offered;
		}
		fprintf(o,
			"{\"schema\":\"rxray.point/1\",\"key\":\"%s\",\"knobs\":{\"engine\":\"verbs\","
			"\"mode\":\"%s\",\"frame\":%d,\"queues\":%d,\"ring\":%d},\"status\":\"ok\","
			"\"reason\":\"\",\"ndr_mpps\":%.6f,\"pdr_mpps\":%.6f,\"ndr_loss\":0,"
			"\"pdr_loss\":0.005,\"max_offered_mpps\":%.6f,\"nic_max_mpps\":%.6f,"
			"\"generator_limited\":false,\"trials\":%d,\"ndr_run\":",
			key, mode, frame, queues, ring, best_ok, best_ok, top, top, trials);
		run_doc(o, mode, frame, queues, ring, best_ok, best_ok, key, 1);
		fputs(",\"top_run\":", o);
		run_doc(o, mode, frame, queues, ring, top, cap, key, trials);
		fputs("}\n", o);
	}
	return fclose(o) ? -errno : 0;
}

/*
 * Run argv with stdout/stderr to /dev/null; wall seconds, or -1 on
 * failure; *cpu gets the child's user + system seconds (on a shared host
 * the wall time says more about the neighbours than about rxray).
 */
static double timed(char *const argv[], double *cpu)
{
	double t0 = now();
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	*cpu = -1;
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return now() - t0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int rm_entry(const char *p, const struct stat *st, int fl, struct FTW *f)
{
	(void)st;
	(void)fl;
	(void)f;
	return remove(p);
}

int main(int argc, char **argv)
{
	int sizes[8], nsizes = 0, trials = 10, reps = 3;
	const char *keep = NULL, *gen = NULL, *base = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
			keep = argv[++i];
		else if (!strcmp(argv[i], "--gen") && i + 1 < argc)
			gen = argv[++i];
		else if (!strcmp(argv[i], "--base") && i + 1 < argc)
			base = argv[++i];
		else if (nsizes < 8 && atoi(argv[i]) > 0)
			sizes[nsizes++] = atoi(argv[i]);
		else {
			fprintf(stderr, "usage: %s [POINTS...] [--trials T] [--reps R] [--keep DIR] [--base BIN]\n",
				argv[0]);
			return 2;
		}
	}
	if (!nsizes) {
		sizes[nsizes++] = 1000;
		sizes[nsizes++] = 10000;
	}
	if (trials < 1 || reps < 1 || reps > 15)
		return 2;
	if (gen) {
		if (mkdir(gen, 0755) && errno != EEXIST) {
			perror(gen);
			return 1;
		}
		int g = generate(gen, sizes[0], trials);
		if (g)
			fprintf(stderr, "%s: %s\n", gen, strerror(-g));
		return g ? 1 : 0;
	}
	printf("rxray analysis verbs at scale (%s), median of %d runs, %d trials/point\n", RXRAY_BIN, reps, trials);
	printf("seconds per verb: wall (cpu = user + sys of the verb)\n");
	printf("%8s %9s %6s | %-15s %-15s %-15s %-15s\n", "points", "trials", "MB", "ceiling", "report",
	       "diff", "flame");
	int rc = 0;
	fflush(stdout);
	for (int z = 0; z < nsizes; z++) {
		char dir[PATH_MAX], out[PATH_MAX + 16], svg[PATH_MAX + 16], res[PATH_MAX + 16];
		if (keep)
			snprintf(dir, sizeof(dir), "%s/scale%d", keep, sizes[z]);
		else
			snprintf(dir, sizeof(dir), "/tmp/rxray-scale-XXXXXX");
		if (keep ? mkdir(dir, 0755) && errno != EEXIST : !mkdtemp(dir)) {
			perror(dir);
			return 1;
		}
		if ((rc = generate(dir, sizes[z], trials))) {
			fprintf(stderr, "%s: %s\n", dir, strerror(-rc));
			return 1;
		}
		snprintf(out, sizeof(out), "%s/report", dir);
		snprintf(svg, sizeof(svg), "%s/flame.svg", dir);
		snprintf(res, sizeof(res), "%s/results.jsonl", dir);
		struct stat st;
		stat(res, &st);
		char *cmds[4][8] = {
			{RXRAY_BIN, "ceiling", dir, "--format", "json", "-o", "/dev/null", NULL},
			{RXRAY_BIN, "report", dir, "-o", out, NULL},
			{RXRAY_BIN, "diff", dir, "mode=single", "mode=hds", "-o", "/dev/null", NULL},
			{RXRAY_BIN, "flame", dir, "-o", svg, NULL},
		};
		double med[4], medc[4], bmed[4], bmedc[4];
		for (int c = 0; c < 4; c++) {
			double t[15], u[15], bt[15], bu[15];
			for (int r = 0; r < reps; r++) {
				t[r] = timed(cmds[c], &u[r]);
				if (base) {
					char *bc[8];
					memcpy(bc, cmds[c], sizeof(bc));
					bc[0] = (char *)base;
					bt[r] = timed(bc, &bu[r]);
				}
			}
			qsort(t, (size_t)reps, sizeof(double), cmp_d);
			qsort(u, (size_t)reps, sizeof(double), cmp_d);
			med[c] = t[reps / 2];
			medc[c] = u[reps / 2];
			if (base) {
				qsort(bt, (size_t)reps, sizeof(double), cmp_d);
				qsort(bu, (size_t)reps, sizeof(double), cmp_d);
				bmed[c] = bt[reps / 2];
				bmedc[c] = bu[reps / 2];
			}
		}
		printf("%8d %9d %6.0f |", sizes[z], sizes[z] * trials, (double)st.st_size / 1e6);
		for (int c = 0; c < 4; c++)
			printf(" %6.2f (%5.2f) ", med[c], medc[c]);
		printf("\n");
		if (base) {
			printf("%8s %9s %6s |", "base", "", "");
			for (int c = 0; c < 4; c++)
				printf(" %6.2f (%5.2f) ", bmed[c], bmedc[c]);
			printf("\n%8s %9s %6s |", "base/this", "", "cpu");
			for (int c = 0; c < 4; c++)
				printf(" %6.2fx         ", medc[c] > 0 && bmedc[c] > 0 ? bmedc[c] / medc[c] : -1);
			printf("\n");
		}
		fflush(stdout);
		if (!keep)
			nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	printf("(-1.00 = the verb failed)\n");
	if (base)
		printf("base: %s\n", base);
	return 0;
}
