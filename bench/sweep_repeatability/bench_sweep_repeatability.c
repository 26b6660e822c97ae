/* SPDX-License-Identifier: MIT */
/*
 * bench_sweep_repeatability: does a sweep give the same answer twice, and
 * when it does not, does it say so? Runs `rxray sweep [spec]` N times
 * (default 3, the default spec), then prints per point each run's NDR
 * interval and flags, the median of the NDR lower bounds, their spread,
 * and for every run whose lower bound is off the median by more than the
 * tolerance whether the tool flagged the point in that run (unresolved or
 * disturbed). A point meets the target when every deviating run is
 * flagged. Targets: 20% on a shared 2-core host, 10% on a 16-core host.
 * Each sweep's wall time is printed too (the default sweep's budget is 3
 * minutes on 2 cores). Never pass/fail: it prints tables.
 *
 * USAGE
 *   bench_sweep_repeatability RXRAY [-n RUNS] [-s SPEC] [-o DIR] [-t TOL]
 * EXAMPLES
 *   nice build/bench/sweep_repeatability/bench_sweep_repeatability build/tools/rxray
 *   bench_sweep_repeatability build/tools/rxray -n 5 -t 0.1 -o /tmp/rep
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/util.h"

#define MAX_RUNS 16
#define MAX_POINTS 512

struct rep_opts {
	const char *rxray;
	const char *spec; /* NULL: the default spec */
	const char *out;  /* NULL: a new folder under /tmp */
	int runs;
	double tol;
	bool reread; /* -r: only read -o DIR/run1..N back (no sweeps) */
};

/* One point in one run, from its summary line. */
struct cell {
	bool present, ok;
	double lo, hi; /* Mpps; hi 0 = none */
	bool unresolved, disturbed, genlim;
	int trials;
};

struct point {
	char key[1024];
	struct cell run[MAX_RUNS];
};

static int sweep_once(const struct rep_opts *o, const char *dir, double *secs)
{
	char *argv[8];
	int n = 0;
	argv[n++] = (char *)o->rxray;
	argv[n++] = "sweep";
	if (o->spec)
		argv[n++] = (char *)o->spec;
	argv[n++] = "-o";
	argv[n++] = (char *)dir;
	argv[n++] = "--quiet";
	argv[n] = NULL;
	double t0 = rxr_mono_seconds();
	fflush(stdout); /* or the child's freopen flushes our buffer a second time */
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* the table of each sweep is not needed here */
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*secs = rxr_mono_seconds() - t0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static bool has_flag(json_t *sum, const char *flag)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(sum, "flags"), i,
			   f) if (json_is_string(f) &&
				  !strcmp(json_string_value(f), flag)) return true;
	return false;
}

static struct point *point_get(struct point *pts, size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(pts[i].key, key))
			return &pts[i];
	if (*n >= MAX_POINTS)
		return NULL;
	struct point *p = &pts[(*n)++];
	memset(p, 0, sizeof(*p));
	snprintf(p->key, sizeof(p->key), "%s", key);
	return p;
}

static int read_run(const char *dir, int run, struct point *pts, size_t *n)
{
	char path[800];
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (!strstr(line, "\"rxray.point/1\""))
			continue;
		json_t *d = json_loads(line, 0, NULL);
		const char *key = json_string_value(json_object_get(d, "key"));
		struct point *p = key ? point_get(pts, n, key) : NULL;
		if (p) {
			struct cell *c = &p->run[run];
			const char *st = json_string_value(json_object_get(d, "status"));
			c->present = true;
			c->ok = st && !strcmp(st, "ok");
			c->lo = json_number_value(json_object_get(d, "ndr_mpps"));
			c->hi = json_number_value(json_object_get(d, "ndr_upper_mpps"));
			c->unresolved = has_flag(d, "unresolved");
			c->disturbed = has_flag(d, "disturbed");
			c->genlim = json_is_true(json_object_get(d, "generator_limited"));
			c->trials = (int)json_integer_value(json_object_get(d, "trials"));
		}
		json_decref(d);
	}
	free(line);
	fclose(f);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void cell_text(const struct cell *c, char *out, size_t len)
{
	if (!c->present)
		snprintf(out, len, "missing");
	else if (!c->ok)
		snprintf(out, len, "failed");
	else if (c->hi > 0 && c->lo > 0)
		snprintf(out, len, "[%.3f, %.3f]%s%s%s", c->lo, c->hi, c->unresolved ? " U" : "",
			 c->disturbed ? " D" : "", c->genlim ? " G" : "");
	else if (c->hi > 0)
		snprintf(out, len, "< %.3f%s%s", c->hi, c->unresolved ? " U" : "",
			 c->disturbed ? " D" : "");
	else
		snprintf(out, len, ">= %.3f%s%s%s", c->lo, c->unresolved ? " U" : "",
			 c->disturbed ? " D" : "", c->genlim ? " G" : "");
}

/* How far a run is from the median; with a median of 0 (most runs found
 * no passing rate) a run that did is "above 0". */
static const char *dev_text(const struct cell *c, double med)
{
	static char buf[32];
	if (!c->ok)
		snprintf(buf, sizeof(buf), "failed");
	else if (med > 0)
		snprintf(buf, sizeof(buf), "%+.0f%%", 100 * (c->lo - med) / med);
	else
		snprintf(buf, sizeof(buf), "%.3f above 0", c->lo);
	return buf;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "USAGE\n  bench_sweep_repeatability RXRAY [-n RUNS] [-s SPEC] [-o DIR] [-t TOL]\n"
	    "  -n  sweeps to run (default 3, at most 16)\n"
	    "  -s  spec (default: rxray's default sweep)\n"
	    "  -o  folder for the runs (default: a new /tmp/rxray-repeat-XXXXXX)\n"
	    "  -t  tolerance around the median NDR lower bound (default 0.2)\n"
	    "  -r  no sweeps: read the runs already in -o DIR back\n"
	    "EXAMPLES\n"
	    "  nice build/bench/sweep_repeatability/bench_sweep_repeatability build/tools/rxray\n"
	    "  bench_sweep_repeatability build/tools/rxray -n 5 -t 0.1\n");
}

int main(int argc, char **argv)
{
	struct rep_opts o = {.runs = 3, .tol = 0.2};
	int c;
	while ((c = getopt(argc, argv, "n:s:o:t:rh")) != -1) {
		switch (c) {
		case 'n': o.runs = atoi(optarg); break;
		case 's': o.spec = optarg; break;
		case 'o': o.out = optarg; break;
		case 't': o.tol = atof(optarg); break;
		case 'r': o.reread = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return RXR_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || o.runs < 1 || o.runs > MAX_RUNS || !(o.tol > 0) ||
	    (o.reread && !o.out)) {
		usage(stderr);
		return RXR_EXIT_USAGE;
	}
	o.rxray = argv[optind];
	if (access(o.rxray, X_OK) != 0) {
		fprintf(stderr, "bench_sweep_repeatability: %s: %s\n", o.rxray, strerror(errno));
		return RXR_EXIT_USAGE;
	}
	char tmpl[] = "/tmp/rxray-repeat-XXXXXX";
	const char *out = o.out;
	if (!out && !(out = mkdtemp(tmpl))) {
		perror("mkdtemp");
		return RXR_EXIT_RUNTIME;
	}
	mkdir(out, 0755);
	static struct point pts[MAX_POINTS];
	size_t npts = 0;
	double secs[MAX_RUNS];
	printf("# sweep repeatability: %d sweeps of %s with %s, results under %s\n\n", o.runs,
	       o.spec ? o.spec : "the default spec", o.rxray, out);
	for (int r = 0; r < o.runs; r++) {
		char dir[700];
		snprintf(dir, sizeof(dir), "%s/run%d", out, r + 1);
		fprintf(stderr, "bench_sweep_repeatability: sweep %d of %d into %s\n", r + 1,
			o.runs, dir);
		secs[r] = 0;
		int rc = o.reread ? 0 : sweep_once(&o, dir, &secs[r]);
		if (rc < 0 || read_run(dir, r, pts, &npts) < 0) {
			fprintf(stderr, "bench_sweep_repeatability: sweep %d failed (%s); see %s\n",
				r + 1, strerror(rc < 0 ? -rc : errno), dir);
			return RXR_EXIT_RUNTIME;
		}
	}
	printf("| point |");
	for (int r = 0; r < o.runs; r++)
		printf(" run %d NDR Mpps |", r + 1);
	printf(" median | spread | runs off by > %.0f%% | target |\n|---|", 100 * o.tol);
	for (int r = 0; r < o.runs; r++)
		printf("---|");
	printf("---:|---:|---|---|\n");
	int met = 0, tight = 0;
	for (size_t i = 0; i < npts; i++) {
		struct point *p = &pts[i];
		double v[MAX_RUNS];
		int n = 0;
		for (int r = 0; r < o.runs; r++)
			if (p->run[r].present && p->run[r].ok)
				v[n++] = p->run[r].lo;
		double med = n ? median(v, n) : 0;
		double spread = n && med > 0 ? (v[n - 1] - v[0]) / med : 0;
		printf("| %s |", p->key);
		char cell[96], off[256] = "";
		size_t oo = 0;
		bool ok = n > 0;
		for (int r = 0; r < o.runs; r++) {
			const struct cell *ce = &p->run[r];
			cell_text(ce, cell, sizeof(cell));
			printf(" %s |", cell);
			bool dev =
			    !ce->ok || (med > 0 ? fabs(ce->lo - med) / med > o.tol : ce->lo > 0);
			if (!dev)
				continue;
			bool flagged = ce->ok && (ce->unresolved || ce->disturbed);
			ok &= flagged;
			if (oo < sizeof(off))
				oo +=
				    (size_t)snprintf(off + oo, sizeof(off) - oo, "%srun %d %s%s%s",
						     oo ? ", " : "", r + 1, dev_text(ce, med),
						     flagged ? " (flagged)" : " (NOT flagged)",
						     !flagged && ce->genlim ? " G" : "");
		}
		met += ok;
		tight += n == o.runs && med > 0 && spread <= o.tol;
		printf(" %.3f | %.0f%% | %s | %s |\n", med, 100 * spread, off[0] ? off : "none",
		       ok ? "met" : "missed");
	}
	printf("\nU unresolved, D disturbed, G generator-limited (a lower bound); a run counts as "
	       "flagged when U or D.\n");
	printf("points meeting the target (within %.0f%% of the median, or flagged where not): "
	       "%d of %zu; all runs within %.0f%%: %d of %zu\n",
	       100 * o.tol, met, npts, 100 * o.tol, tight, npts);
	if (!o.reread) {
		double s[MAX_RUNS];
		memcpy(s, secs, sizeof(double) * (size_t)o.runs);
		printf("sweep wall time: median %.0f s (", median(s, o.runs));
		for (int r = 0; r < o.runs; r++)
			printf("%s%.0f", r ? ", " : "", secs[r]);
		printf(" s)\n");
	}
	return 0;
}
