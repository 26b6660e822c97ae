/* SPDX-License-Identifier: MIT */
/*
 * bench_sweep_repeatability: does a sweep give the same answer twice, and
 * when it does not, does it say so? Runs `rxray sweep [spec]` N times
 * (default 3, the default spec), then prints per point each run's NDR
 * interval and flags, the median of the NDR lower bounds, their spread,
 * and for every run whose lower bound is off the median by more than the
 * tolerance whether the tool flagged the point in that run (unresolved,
 * disturbed or oversubscribed). A point meets the target when every
 * deviating run is flagged. Targets: 20% on a shared 2-core host, 10% on a
 * 16-core host. Each sweep's wall time is printed too (the default
 * sweep's budget is 3 minutes on 2 cores), and what disturbed its trials.
 * Never pass/fail: it prints tables.
 *
 * In pieces (a host that allows a few minutes per command): --out DIR
 * adds runs after the runK folders DIR already holds (each run keeps its
 * wall time in runK/bench.json), and --table reads runs back from any
 * number of folders, each a sweep's output folder or a folder of runK/.
 *
 * USAGE
 *   bench_sweep_repeatability RXRAY [--runs N] [--spec SPEC] [--out DIR] [--tol T]
 *   bench_sweep_repeatability --table [--tol T] DIR...
 * EXAMPLES
 *   nice build/bench/sweep_repeatability/bench_sweep_repeatability build/tools/rxray
 *   bench_sweep_repeatability build/tools/rxray --runs 1 --out /tmp/rep   # x3
 *   bench_sweep_repeatability --table --tol 0.1 /tmp/rep
 *   bench_sweep_repeatability --table a/rep/run1 b/rep/run1 c/rep/run1
 */
#include <ctype.h>
#include <dirent.h>
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
#define MAX_REASONS 32
#define MAX_CANARY 1024

struct rep_opts {
	const char *rxray;
	const char *spec; /* NULL: the default spec */
	const char *out;  /* NULL: a new folder under /tmp */
	int runs;
	double tol;
	bool table; /* --table: read the folders named, run nothing */
};

/* One point in one run, from its summary line. */
struct cell {
	bool present, ok;
	double lo, hi; /* Mpps; hi 0 = none */
	bool unresolved, disturbed, oversub, genlim;
	int trials;
};

struct point {
	char key[1024];
	struct cell run[MAX_RUNS];
};

/* What made trials disturbed, numbers taken out ("canary Nx slower ..."). */
struct reason_tally {
	char text[160];
	int n;
};

struct run_info {
	char dir[800];
	double wall_s; /* < 0 unknown */
	int trials, disturbed;
	struct reason_tally why[MAX_REASONS];
	int nwhy;
	/* the memory canary against its calibration, before / after each
	 * trial: a host whose ratios sit near the 1.5x limit when nothing
	 * happened flags trials for nothing */
	double ratio[2][MAX_CANARY];
	int nratio[2];
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
	double t0 = rxu_mono_seconds();
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
	*secs = rxu_mono_seconds() - t0;
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

/* A reason with its figures replaced by N, so that alike ones count
 * together: "rx on core N: preempted: waited N ms ...". */
static void reason_tally_add(struct run_info *ri, const char *r)
{
	char t[160];
	size_t o = 0;
	for (const char *c = r; *c && o < sizeof(t) - 2; c++) {
		if (isdigit((unsigned char)*c)) {
			while (isdigit((unsigned char)c[1]) || c[1] == '.')
				c++;
			t[o++] = 'N';
		} else {
			t[o++] = *c;
		}
	}
	t[o] = '\0';
	/* keep what names the signal: up to the detail in parentheses */
	char *paren = strstr(t, " (");
	if (paren && strncmp(t, "canary", 6))
		*paren = '\0';
	for (int i = 0; i < ri->nwhy; i++)
		if (!strcmp(ri->why[i].text, t)) {
			ri->why[i].n++;
			return;
		}
	if (ri->nwhy < MAX_REASONS) {
		snprintf(ri->why[ri->nwhy].text, sizeof(ri->why[0].text), "%s", t);
		ri->why[ri->nwhy++].n = 1;
	}
}

static void trial_line(struct run_info *ri, json_t *d)
{
	json_t *v = json_object_get(d, "validity");
	if (!v)
		return;
	ri->trials++;
	json_t *c = json_object_get(v, "canary");
	double cal = json_number_value(json_object_get(c, "cal_mem_ms"));
	const char *const when[2] = {"before_mem_ms", "after_mem_ms"};
	for (int k = 0; k < 2 && cal > 0; k++) {
		double m = json_number_value(json_object_get(c, when[k]));
		if (m > 0 && ri->nratio[k] < MAX_CANARY)
			ri->ratio[k][ri->nratio[k]++] = m / cal;
	}
	if (!json_is_true(json_object_get(v, "disturbed")))
		return;
	ri->disturbed++;
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(v, "reasons"), i, r)
		if (json_is_string(r))
			reason_tally_add(ri, json_string_value(r));
}

static int read_run(struct run_info *ri, int run, struct point *pts, size_t *n)
{
	char path[900];
	snprintf(path, sizeof(path), "%.780s/bench.json", ri->dir);
	json_t *b = json_load_file(path, 0, NULL);
	ri->wall_s = b && json_is_number(json_object_get(b, "wall_seconds"))
			 ? json_number_value(json_object_get(b, "wall_seconds"))
			 : -1;
	json_decref(b);
	snprintf(path, sizeof(path), "%.780s/results.jsonl", ri->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		bool point = strstr(line, "\"rxray.point/1\"") != NULL;
		if (!point && !strstr(line, "\"validity\""))
			continue;
		json_t *d = json_loads(line, 0, NULL);
		if (!point) {
			trial_line(ri, d);
			json_decref(d);
			continue;
		}
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
			c->oversub = has_flag(d, "oversubscribed");
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
	char fl[16];
	snprintf(fl, sizeof(fl), "%s%s%s%s", c->unresolved ? " U" : "", c->disturbed ? " D" : "",
		 c->oversub ? " O" : "", c->genlim ? " G" : "");
	if (!c->present)
		snprintf(out, len, "missing");
	else if (!c->ok)
		snprintf(out, len, "failed");
	else if (c->hi > 0 && c->lo > 0)
		snprintf(out, len, "[%.3f, %.3f]%s", c->lo, c->hi, fl);
	else if (c->hi > 0)
		snprintf(out, len, "< %.3f%s", c->hi, fl);
	else
		snprintf(out, len, ">= %.3f%s", c->lo, fl);
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
	    "USAGE\n"
	    "  bench_sweep_repeatability RXRAY [--runs N] [--spec SPEC] [--out DIR] [--tol T]\n"
	    "  bench_sweep_repeatability --table [--tol T] DIR...\n"
	    "  -n, --runs N   sweeps to run (default 3; at most 16 runs in all)\n"
	    "  -s, --spec F   spec (default: rxray's default sweep)\n"
	    "  -o, --out DIR  folder for the runs (default: a new /tmp/rxray-repeat-XXXXXX);\n"
	    "                 new runs go after the runK/ it already holds, and the\n"
	    "                 table covers them all\n"
	    "  -t, --tol T    tolerance around the median NDR lower bound (default 0.2)\n"
	    "      --table    run nothing: read each DIR back (a sweep's output folder,\n"
	    "                 or a folder of runK/ folders) and print the table\n"
	    "  -r             same as --table with -o DIR (older form)\n"
	    "EXAMPLES\n"
	    "  nice build/bench/sweep_repeatability/bench_sweep_repeatability build/tools/rxray\n"
	    "  bench_sweep_repeatability build/tools/rxray --runs 1 --out /tmp/rep   # x3\n"
	    "  bench_sweep_repeatability --table --tol 0.1 /tmp/rep\n"
	    "  bench_sweep_repeatability --table a/rep/run1 b/rep/run1 c/rep/run1\n");
}

/* The runK folders under dir, in K order; 0 when there are none. */
static int runs_under(const char *dir, int *ks, int max)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		int k;
		char tail;
		if (sscanf(e->d_name, "run%d%c", &k, &tail) == 1 && k > 0)
			ks[n++] = k;
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* few: insertion sort */
		for (int j = i; j > 0 && ks[j - 1] > ks[j]; j--) {
			int t = ks[j];
			ks[j] = ks[j - 1];
			ks[j - 1] = t;
		}
	return n;
}

/* Add dir's runs to ri: dir itself when it holds results.jsonl, else its
 * runK/ folders. 0, or -ENOENT (neither), -E2BIG (too many runs). */
static int runs_add(const char *dir, struct run_info *ri, int *nri)
{
	char path[900];
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	if (access(path, R_OK) == 0) {
		if (*nri >= MAX_RUNS)
			return -E2BIG;
		snprintf(ri[(*nri)++].dir, sizeof(ri[0].dir), "%s", dir);
		return 0;
	}
	int ks[64], n = runs_under(dir, ks, 64);
	if (!n)
		return -ENOENT;
	for (int i = 0; i < n; i++) {
		if (*nri >= MAX_RUNS)
			return -E2BIG;
		snprintf(ri[(*nri)++].dir, sizeof(ri[0].dir), "%s/run%d", dir, ks[i]);
	}
	return 0;
}

static void wall_write(const char *dir, const struct rep_opts *o, double secs)
{
	char path[900];
	snprintf(path, sizeof(path), "%s/bench.json", dir);
	json_t *b = json_pack("{s:f, s:s, s:s, s:i}", "wall_seconds", secs, "rxray", o->rxray,
			      "spec", o->spec ? o->spec : "default", "cores",
			      rxu_cores_available());
	if (!b || json_dump_file(b, path, JSON_COMPACT) < 0)
		fprintf(stderr, "bench_sweep_repeatability: cannot write %s\n", path);
	json_decref(b);
}

static void table_print(const struct rep_opts *o, struct run_info *ri, int nruns,
			struct point *pts, size_t npts)
{
	printf("| point |");
	for (int r = 0; r < nruns; r++)
		printf(" run %d NDR Mpps |", r + 1);
	printf(" median | spread | runs off by > %.0f%% | target |\n|---|", 100 * o->tol);
	for (int r = 0; r < nruns; r++)
		printf("---|");
	printf("---:|---:|---|---|\n");
	int met = 0, tight = 0;
	for (size_t i = 0; i < npts; i++) {
		struct point *p = &pts[i];
		double v[MAX_RUNS];
		int n = 0;
		for (int r = 0; r < nruns; r++)
			if (p->run[r].present && p->run[r].ok)
				v[n++] = p->run[r].lo;
		double med = n ? median(v, n) : 0;
		double spread = n && med > 0 ? (v[n - 1] - v[0]) / med : 0;
		printf("| %s |", p->key);
		char cell[96], off[512] = "";
		size_t oo = 0;
		bool ok = n > 0;
		for (int r = 0; r < nruns; r++) {
			const struct cell *ce = &p->run[r];
			cell_text(ce, cell, sizeof(cell));
			printf(" %s |", cell);
			bool dev =
			    !ce->ok || (med > 0 ? fabs(ce->lo - med) / med > o->tol : ce->lo > 0);
			if (!dev)
				continue;
			bool flagged = ce->ok && (ce->unresolved || ce->disturbed || ce->oversub);
			ok &= flagged;
			if (oo < sizeof(off))
				oo +=
				    (size_t)snprintf(off + oo, sizeof(off) - oo, "%srun %d %s%s%s",
						     oo ? ", " : "", r + 1, dev_text(ce, med),
						     flagged ? " (flagged)" : " (NOT flagged)",
						     !flagged && ce->genlim ? " G" : "");
		}
		met += ok;
		tight += n == nruns && med > 0 && spread <= o->tol;
		printf(" %.3f | %.0f%% | %s | %s |\n", med, 100 * spread, off[0] ? off : "none",
		       ok ? "met" : "missed");
	}
	printf("\nU unresolved, D disturbed, O oversubscribed, G generator-limited (a lower "
	       "bound); a run counts as flagged when U, D or O.\n");
	printf("points meeting the target (within %.0f%% of the median, or flagged where not): "
	       "%d of %zu; all runs within %.0f%%: %d of %zu\n",
	       100 * o->tol, met, npts, 100 * o->tol, tight, npts);
	printf("verdict: %s (tolerance %.0f%%: 20%% on a shared 2-core host, 10%% on the 16-core "
	       "host)\n",
	       npts && met == (int)npts ? "target MET" : "target MISSED", 100 * o->tol);
	double s[MAX_RUNS];
	int ns = 0;
	for (int r = 0; r < nruns; r++)
		if (ri[r].wall_s >= 0)
			s[ns++] = ri[r].wall_s;
	printf("\n| run | folder | sweep wall s | trials | disturbed | canary memory / "
	       "calibrated, before: median p90 | after: median p90 | what disturbed them "
	       "(trials) |\n|---:|---|---:|---:|---:|---:|---:|---|\n");
	for (int r = 0; r < nruns; r++) {
		printf("| %d | %s | ", r + 1, ri[r].dir);
		if (ri[r].wall_s >= 0)
			printf("%.0f", ri[r].wall_s);
		else
			printf("-");
		printf(" | %d | %d | ", ri[r].trials, ri[r].disturbed);
		for (int k = 0; k < 2; k++) {
			int n = ri[r].nratio[k];
			double *x = ri[r].ratio[k];
			if (n) {
				double med = median(x, n); /* sorts x */
				printf("%.2f %.2f | ", med, x[(int)(0.9 * (n - 1))]);
			} else {
				printf("- | ");
			}
		}
		for (int k = 0; k < ri[r].nwhy; k++)
			printf("%s%s (%d)", k ? "; " : "", ri[r].why[k].text, ri[r].why[k].n);
		printf("%s |\n", ri[r].nwhy ? "" : "-");
	}
	if (ns)
		printf("\nsweep wall time: median %.0f s over %d run%s\n", median(s, ns), ns,
		       ns > 1 ? "s" : "");
}

int main(int argc, char **argv)
{
	struct rep_opts o = {.runs = 3, .tol = 0.2};
	const char *reread = NULL;
	static const struct option lo[] = {
	    {"runs", required_argument, NULL, 'n'}, {"spec", required_argument, NULL, 's'},
	    {"out", required_argument, NULL, 'o'},  {"tol", required_argument, NULL, 't'},
	    {"table", no_argument, NULL, 'T'},	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "n:s:o:t:rh", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o.runs = atoi(optarg); break;
		case 's': o.spec = optarg; break;
		case 'o': o.out = optarg; break;
		case 't': o.tol = atof(optarg); break;
		case 'T': o.table = true; break;
		case 'r': reread = ""; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return RXU_EXIT_USAGE;
		}
	}
	bool table = o.table || reread;
	if (!(o.tol > 0) || o.runs < 1 || o.runs > MAX_RUNS ||
	    (o.table ? optind >= argc : reread ? !o.out || optind != argc : optind != argc - 1)) {
		usage(stderr);
		return RXU_EXIT_USAGE;
	}
	static struct run_info ri[MAX_RUNS];
	int nri = 0;
	if (table) {
		/* the folders named (or -o DIR's runs), read back in order */
		for (int i = o.table ? optind : 0; i < (o.table ? argc : 1); i++) {
			const char *d = o.table ? argv[i] : o.out;
			int rc = runs_add(d, ri, &nri);
			if (rc < 0) {
				fprintf(stderr, "bench_sweep_repeatability: %s: %s\n", d,
					rc == -E2BIG ? "more than 16 runs in all"
						     : "no results.jsonl and no runK/ folders");
				return RXU_EXIT_USAGE;
			}
		}
		printf("# sweep repeatability: %d sweeps read back\n\n", nri);
	} else {
		o.rxray = argv[optind];
		if (access(o.rxray, X_OK) != 0) {
			fprintf(stderr, "bench_sweep_repeatability: %s: %s\n", o.rxray,
				strerror(errno));
			return RXU_EXIT_USAGE;
		}
		char tmpl[] = "/tmp/rxray-repeat-XXXXXX";
		const char *out = o.out;
		if (!out && !(out = mkdtemp(tmpl))) {
			perror("mkdtemp");
			return RXU_EXIT_RUNTIME;
		}
		mkdir(out, 0755);
		/* earlier pieces first; new runs numbered after the last */
		int ks[64], have = runs_under(out, ks, 64), next = have ? ks[have - 1] + 1 : 1;
		if (have && runs_add(out, ri, &nri) < 0)
			nri = MAX_RUNS + 1;
		if (nri + o.runs > MAX_RUNS) {
			fprintf(stderr, "bench_sweep_repeatability: %s holds %d runs; %d more "
					"exceed 16\n", out, have, o.runs);
			return RXU_EXIT_USAGE;
		}
		printf("# sweep repeatability: %d new sweep%s of %s with %s, results under %s "
		       "(%d there before)\n\n",
		       o.runs, o.runs > 1 ? "s" : "", o.spec ? o.spec : "the default spec", o.rxray,
		       out, nri);
		for (int r = 0; r < o.runs; r++) {
			struct run_info *x = &ri[nri];
			snprintf(x->dir, sizeof(x->dir), "%s/run%d", out, next + r);
			fprintf(stderr, "bench_sweep_repeatability: sweep %d of %d into %s\n", r + 1,
				o.runs, x->dir);
			double secs = 0;
			int rc = sweep_once(&o, x->dir, &secs);
			if (rc < 0) {
				fprintf(stderr,
					"bench_sweep_repeatability: sweep %d failed (%s); see %s\n",
					r + 1, strerror(-rc), x->dir);
				return RXU_EXIT_RUNTIME;
			}
			wall_write(x->dir, &o, secs);
			fprintf(stderr, "bench_sweep_repeatability: sweep %d took %.0f s\n", r + 1,
				secs);
			nri++;
		}
	}
	static struct point pts[MAX_POINTS];
	size_t npts = 0;
	for (int r = 0; r < nri; r++)
		if (read_run(&ri[r], r, pts, &npts) < 0) {
			fprintf(stderr, "bench_sweep_repeatability: %s/results.jsonl: %s\n", ri[r].dir,
				strerror(errno));
			return RXU_EXIT_RUNTIME;
		}
	table_print(&o, ri, nri, pts, npts);
	return 0;
}
