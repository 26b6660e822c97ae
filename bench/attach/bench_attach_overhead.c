/* SPDX-License-Identifier: MIT */
/*
 * What rxray attach costs the process it profiles: dpdk-testpmd rxonly on
 * net_null, its own reported rate (the "Rx-pps" of its periodic stats)
 * with nothing attached and with `rxray attach --lcore 1` sampling at 99,
 * 999 and 4999 Hz, with frame-pointer stacks (the default) and with dwarf
 * stacks (8 KiB of stack per sample, unwound by rxray). Configurations are interleaved round by round so a
 * noisy neighbour hits them alike; the table shows medians. Prints a
 * table, never fails on figures. The machine is shared, so the rate per
 * second of CPU the worker actually got (testpmd's Rx-pps over the
 * worker's schedstat run time) is shown too: it is what the sampler's
 * own cost moves, and neighbours stealing the core do not.
 *
 * usage: bench_attach_overhead [rounds (default 3)] [window seconds (default 3)]
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testpmd_launch.h"

#define NCONF 7
static const unsigned freqs[NCONF] = {0, 99, 999, 4999, 99, 999, 4999};
static const char *const modes[NCONF] = {"-", "fp", "fp", "fp", "dwarf", "dwarf", "dwarf"};

static pid_t attach_spawn(pid_t target, unsigned freq, const char *mode, double seconds)
{
	char pid[16], hz[16], secs[32], out[96];
	pid_t r;

	snprintf(pid, sizeof(pid), "%d", (int)target);
	snprintf(hz, sizeof(hz), "%u", freq);
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	snprintf(out, sizeof(out), "/tmp/rxray-bench-attach-%d", (int)getpid());
	r = fork();
	if (r == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(RXRAY_BIN, RXRAY_BIN, "attach", "--pid", pid, "--lcore", "1", "--freq", hz,
		      "--seconds", secs, "--stacks", mode, "-o", out, "-q", (char *)NULL);
		_exit(127);
	}
	return r;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (!n)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	double window = argc > 2 ? atof(argv[2]) : 3;
	double rate[NCONF][64], per_cpu[NCONF][64];
	int nrate[NCONF] = {0}, failed[NCONF] = {0};
	const char *why = tpmd_unavailable();
	struct tpmd pmd;
	char err[256];

	if (rounds < 1 || rounds > 64 || window < 2 || window > 60) {
		fprintf(stderr, "usage: %s [rounds 1-64] [window seconds 2-60]\n", argv[0]);
		return 2;
	}
	if (why) {
		printf("bench_attach_overhead: skipped: %s\n", why);
		return 0;
	}
	if (tpmd_start(&pmd, "bench", NULL, err, sizeof(err))) {
		printf("bench_attach_overhead: skipped: testpmd: %s\n", err);
		return 0;
	}
	sleep(1);
	for (int r = 0; r < rounds; r++) {
		for (int c = 0; c < NCONF; c++) {
			pid_t a = freqs[c] ? attach_spawn(pmd.pid, freqs[c], modes[c], window + 2.5) : 0;
			long off0, off1;
			int n, st;
			/* count only stats lines whose second started with sampling live */
			usleep(1500000);
			off0 = tpmd_log_size(&pmd);
			unsigned long long ns0 = tpmd_worker_cpu_ns(&pmd);
			usleep((useconds_t)(window * 1e6));
			unsigned long long ns1 = tpmd_worker_cpu_ns(&pmd);
			double v = tpmd_rx_pps_median(&pmd, off0, &off1, &n);
			if (a > 0) {
				waitpid(a, &st, 0);
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					failed[c]++;
			}
			if (n && ns1 > ns0) {
				/* rate / share of the window the worker was on a CPU */
				per_cpu[c][nrate[c]] = v / ((double)(ns1 - ns0) / 1e9 / window);
				rate[c][nrate[c]++] = v;
			}
		}
	}
	tpmd_stop(&pmd);

	double base = median(rate[0], nrate[0]);
	double base_cpu = median(per_cpu[0], nrate[0]);
	printf("\nrxray attach overhead: dpdk-testpmd rxonly on net_null, lcore 1 sampled\n");
	printf("(testpmd's own Rx-pps; median of %d rounds x %.0f s, configurations interleaved)\n\n",
	       rounds, window);
	printf("| sampling | stacks | testpmd Mpps | vs none | Mpps per worker CPU-s | vs none | attach runs failed |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (int c = 0; c < NCONF; c++) {
		double m = median(rate[c], nrate[c]);
		double mc = median(per_cpu[c], nrate[c]);
		char hz[32];
		if (freqs[c])
			snprintf(hz, sizeof(hz), "%u Hz", freqs[c]);
		else
			snprintf(hz, sizeof(hz), "not attached");
		printf("| %s | %s | %.2f | %+.1f%% | %.2f | %+.1f%% | %d |\n", hz, modes[c], m / 1e6,
		       base > 0 ? 100.0 * (m - base) / base : 0.0, mc / 1e6,
		       base_cpu > 0 ? 100.0 * (mc - base_cpu) / base_cpu : 0.0, failed[c]);
	}
	return 0;
}
