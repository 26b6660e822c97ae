/* SPDX-License-Identifier: MIT */
/*
 * bench/probe_cost: what the probes cost.
 *  1. ticks and ns per lap, per probe mode and clock source;
 *  2. probe overhead in cycles per packet at bursts of 1, 32 and 64 with
 *     four stages per burst: (loop with probes - same loop compiled with
 *     probes off) / packets, measured in one run, median of 9 rounds;
 *  3. the same for full mode with an NVTX listener attached: a child run of
 *     this program with NVTX_INJECTION64_PATH naming librxray_nvtx.so (the
 *     build's, or $RXRAY_NVTX_LIB), since NVTX picks its tool once, at a
 *     process's first call. The rows of 2 are the "without" case: no tool
 *     loaded, each NVTX call a branch on a null pointer.
 * Prints tables; never passes or fails on time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"
#include "rxray/probe.h"
#include "rxray/util.h"

#define ROUNDS 9

typedef uint64_t (*loop_fn)(struct rxp_probe *, uint64_t *, unsigned, unsigned);
typedef uint64_t (*laps_fn)(struct rxp_probe *, unsigned);

static const struct mode {
	const char *name;
	loop_fn loop;
	laps_fn laps;
} modes[] = {
	{"off", cost_loop_off, cost_laps_off},
	{"counters", cost_loop_counters, cost_laps_counters},
	{"full", cost_loop_full, cost_laps_full},
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

static struct rxp_probe *fresh_probe(void)
{
	/* sample 1 burst in 16 in full mode, as a real run would */
	struct rxp_probe *p = NULL;
	char err[128];
	if (rxp_probe_open("rx", -1, 4, 4096, &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return p;
}

/* Overhead rows (ticks/packet over the off loop) for the modes in mask. */
static void overhead_rows(uint64_t *lines, unsigned mask, const char *suffix)
{
	const unsigned bursts[] = {1, 32, 64};
	for (size_t b = 0; b < 3; b++) {
		unsigned nb = 2000000u / bursts[b];
		double loop[3][ROUNDS], over[3][ROUNDS];
		for (int r = 0; r < ROUNDS; r++) {
			double base = 0;
			for (size_t m = 0; m < 3; m++) {
				if (m && !(mask & (1u << m)))
					continue;
				struct rxp_probe *p = fresh_probe();
				double t = (double)modes[m].loop(p, lines, bursts[b], nb) /
					   ((double)nb * bursts[b]);
				rxp_probe_free(p);
				if (m == 0)
					base = t;
				loop[m][r] = t;
				over[m][r] = t - base;
			}
		}
		for (size_t m = 0; m < 3; m++)
			if (mask & (1u << m))
				printf("| %u | %s%s | %.2f | %.2f | %.3f |\n", bursts[b], modes[m].name,
				       m == 2 ? suffix : "", median(loop[m], ROUNDS),
				       median(over[m], ROUNDS), m ? 4.0 / bursts[b] : 0.0);
	}
}

/* Part 3 in a child process that loads the listener at its first NVTX call. */
static void listener_run(const char *lib)
{
	char out[] = "/tmp/rxray-probe-cost-nvtx-XXXXXX";
	int fd = mkstemp(out);
	if (fd < 0) {
		perror("mkstemp");
		return;
	}
	close(fd);
	printf("\n# full mode with an NVTX listener (%s; it records each range into\n"
	       "# memory: Nsight Systems' own cost differs), same table\n"
	       "| burst | mode | ticks/packet (loop) | overhead ticks/packet | laps/packet |\n"
	       "|---|---|---|---|---|\n",
	       lib);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("NVTX_INJECTION64_PATH", lib, 1);
		setenv("RXRAY_NVTX_OUT", out, 1);
		execl("/proc/self/exe", "bench_probe_cost", "--listener-child", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		printf("(the listener run failed: status %d)\n", st);
	unlink(out);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--listener-child")) {
		uint64_t *lines = calloc(64 * 8, sizeof(uint64_t));
		if (!lines || rxp_clock_init(100) < 0)
			return 1;
		overhead_rows(lines, 1u << 2, " + listener");
		free(lines);
		return 0;
	}
	if (argc > 1) {
		printf("USAGE\n  bench_probe_cost\n\nPrints lap cost per mode and clock source,\n"
		       "probe overhead per packet at bursts 1, 32, 64 (4 stages per burst),\n"
		       "and full mode's with an NVTX listener (librxray_nvtx.so; RXRAY_NVTX_LIB\n"
		       "names another) when one is built.\n");
		return 0;
	}
	const char *sources[] = {"tsc", "monotonic"};
	double tsc_hz = 0;
	uint64_t *lines = calloc(64 * 8, sizeof(uint64_t));
	if (!lines)
		return 1;

	printf("# probe_cost: lap cost (median of %d rounds of 100k laps)\n", ROUNDS);
	printf("| clock | mode | ticks/lap | ns/lap | cycles/lap |\n|---|---|---|---|---|\n");
	for (size_t s = 0; s < 2; s++) {
		setenv("RXRAY_CLOCK", sources[s], 1);
		if (rxp_clock_init(100) < 0)
			continue;
		const struct rxp_clock *c = rxp_clock_get();
		if (strcmp(rxp_clock_source_name(c->source), sources[s]))
			continue; /* not on this machine */
		if (c->source == RXP_CLOCK_TSC)
			tsc_hz = c->hz;
		for (size_t m = 0; m < 3; m++) {
			double v[ROUNDS];
			for (int r = 0; r < ROUNDS; r++) {
				struct rxp_probe *p = fresh_probe();
				v[r] = (double)modes[m].laps(p, 100000) / 100000.0;
				rxp_probe_free(p);
			}
			double ticks = median(v, ROUNDS);
			double ns = ticks * 1e9 / c->hz;
			printf("| %s | %s | %.2f | %.2f | %s%.1f |\n", sources[s], modes[m].name, ticks,
			       ns, tsc_hz ? "" : "~", tsc_hz ? ns * tsc_hz / 1e9 : ticks);
		}
	}
	unsetenv("RXRAY_CLOCK");
	rxp_clock_init(100);
	const struct rxp_clock *c = rxp_clock_get();

	printf("\n# probe overhead per packet, 4 stages per burst, clock %s "
	       "(median of %d rounds, ~2M packets each)\n",
	       rxp_clock_source_name(c->source), ROUNDS);
	printf("| burst | mode | ticks/packet (loop) | overhead ticks/packet | laps/packet |\n"
	       "|---|---|---|---|---|\n");
	overhead_rows(lines, 7, "");
	const char *lib = getenv("RXRAY_NVTX_LIB");
#ifdef RXRAY_NVTX_LISTENER
	if (!lib || !*lib)
		lib = RXRAY_NVTX_LISTENER;
#endif
	if (lib && *lib)
		listener_run(lib);
	else
		printf("\n(no NVTX listener in this build: the full + listener rows are left out)\n");
	printf("\nTarget (counters, TSC): <= 1 clock read per stage boundary (by construction:\n"
	       "rxp_lap reads the clock once) and <= 2 cycles/packet of overhead at burst 32.\n");
	free(lines);
	return 0;
}
