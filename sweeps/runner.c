/* SPDX-License-Identifier: MIT */
/*
 * The sweep runner: points in matrix order, each placed, searched and
 * summarised, every line in the store as soon as it exists; progress on
 * stderr; the NDR/PDR table at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/sweep.h"
#include "rxray/util.h"
#include "rxray/validity.h"
#include "spec_int.h"

struct progress {
	bool tty, quiet;
	size_t i, n, ran;     /* point number (1-based), points, points run here */
	double t0, spent;     /* start of the sweep; seconds spent on run points */
	const char *key;
	int trial;
	double est_point;     /* seconds a point takes before any finished */
};

static void fmt_eta(double s, char *out, size_t len)
{
	if (!isfinite(s) || s < 0)
		s = 0;
	snprintf(out, len, "%d:%02d", (int)s / 60, (int)s % 60);
}

static double progress_eta(const struct progress *pg)
{
	double per = pg->ran ? pg->spent / (double)pg->ran : pg->est_point;
	return per * (double)(pg->n - pg->i + 1);
}

static void progress_trial(const struct progress *pg)
{
	if (pg->quiet || !pg->tty)
		return;
	char eta[16];
	fmt_eta(progress_eta(pg), eta, sizeof(eta));
	fprintf(stderr, "\r\033[K[%zu/%zu] %.90s  trial %d  ETA %s", pg->i, pg->n, pg->key,
		pg->trial, eta);
	fflush(stderr);
}

/* A goal's rate for the progress line: "none found (< U Mpps)" where no
 * load met it (its rate is 0; U the lowest load that failed, if known). */
static void goal_str(const json_t *sum, const char *goal, char *out, size_t len)
{
	char f[32];
	snprintf(f, sizeof(f), "%s_mpps", goal);
	double v = json_number_value(json_object_get(sum, f));
	snprintf(f, sizeof(f), "%s_upper_mpps", goal);
	double hi = json_number_value(json_object_get(sum, f));
	if (v > 0 && hi > 0)
		snprintf(out, len, "[%.4f, %.4f] Mpps", v, hi);
	else if (v > 0)
		snprintf(out, len, "%.3f Mpps", v);
	else if (hi > 0)
		snprintf(out, len, "none found (< %.3f Mpps)", hi);
	else
		snprintf(out, len, "none found");
}

static void progress_point(const struct progress *pg, const json_t *sum, double secs)
{
	if (pg->quiet)
		return;
	const char *status = json_string_value(json_object_get(sum, "status"));
	char line[600], ndr[64], pdr[64];
	/* 0 is "no load passed" (the search stopped first), not a rate */
	goal_str(sum, "ndr", ndr, sizeof(ndr));
	goal_str(sum, "pdr", pdr, sizeof(pdr));
	const char *gen = json_string_value(json_object_get(json_object_get(sum, "generator"), "name"));
	char by[96] = "";
	if (gen)
		snprintf(by, sizeof(by), " (driven by generator %.60s)", gen);
	if (status && !strcmp(status, "ok"))
		snprintf(line, sizeof(line), "NDR %s, PDR %s%s%s%s%s, %d trials, %.1f s%s", ndr, pdr,
			 json_is_true(json_object_get(sum, "generator_limited"))
			     ? " (generator-limited)"
			     : "",
			 json_is_false(json_object_get(sum, "resolved")) ? " (unresolved)" : "",
			 json_is_true(json_object_get(sum, "disturbed")) ? " (disturbed)" : "",
			 json_is_true(json_object_get(sum, "oversubscribed"))
			     ? " (oversubscribed: not a ceiling)"
			     : "",
			 (int)json_integer_value(json_object_get(sum, "trials")), secs, by);
	else
		snprintf(line, sizeof(line), "%s: %s", status ? status : "?",
			 json_string_value(json_object_get(sum, "reason")));
	fprintf(stderr, "%s[%zu/%zu] %s: %s\n", pg->tty ? "\r\033[K" : "rxray sweep: ", pg->i,
		pg->n, pg->key, line);
}

struct trial_ctx {
	struct sweep_exec x;
	struct sweep_store *st;
	struct progress *pg;
	json_t *replay;          /* trial docs of this point from an earlier run */
	size_t replayed;
	char err[SWEEP_ERR_LEN];
};

/*
 * The sweep's one line when it cannot write (into c->err): a full disk,
 * a used-up quota or the file size limit say so in words, and that the
 * points done are kept and --resume continues; anything else is
 * "path: what: strerror".
 */
static void write_failed(struct trial_ctx *c, int rc, const char *path, const char *what)
{
	const char *why = rc == -ENOSPC	  ? "the disk is full"
			  : rc == -EDQUOT ? "the disk quota is used up"
			  : rc == -EFBIG  ? "the file size limit was hit, ulimit -f"
					  : NULL;
	if (!why) {
		snprintf(c->err, sizeof(c->err), "%.400s: %s: %s", path, what, strerror(-rc));
		return;
	}
	snprintf(c->err, sizeof(c->err),
		 "%.280s: %.40s: %s (%.40s); the points done are kept, as whole lines: make "
		 "room, then `rxray sweep --resume` continues",
		 path, what, why, strerror(-rc));
}

/* Use a recorded trial when it is the one the search asks for now. */
static bool trial_replay(struct trial_ctx *c, struct sweep_trial *t)
{
	json_t *doc = json_array_get(c->replay, (size_t)t->n - 1);
	json_t *tr = json_object_get(doc, "trial");
	if (!doc || json_integer_value(json_object_get(tr, "n")) != t->n ||
	    json_number_value(json_object_get(tr, "target_pps")) != t->target_pps ||
	    json_number_value(json_object_get(tr, "seconds")) != t->seconds)
		return false;
	char err[256];
	if (sweep_trial_from_doc(c->x.spec, t, doc, c->st->path, err, sizeof(err)) < 0)
		return false;
	t->doc = json_incref(doc);
	c->replayed++;
	return true;
}

static int trial_run(void *ctx, struct sweep_trial *t)
{
	struct trial_ctx *c = ctx;
	c->pg->trial = t->n;
	if (c->replay && trial_replay(c, t))
		return 0;
	/* the record no longer matches: everything after it is stale */
	json_decref(c->replay);
	c->replay = NULL;
	progress_trial(c->pg);
	double t0 = rxu_mono_seconds();
	int rc = sweep_trial_exec(&c->x, t);
	/* the search's time budget counts what a trial really costs */
	t->wall_seconds = rxu_mono_seconds() - t0;
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG)
		write_failed(c, rc, c->x.tmpdir, "a trial could not write its result");
	if (rc < 0)
		return rc;
	if (!t->doc)
		return -ENOMEM;
	rc = sweep_store_append(c->st, t->doc);
	if (rc < 0)
		write_failed(c, rc, c->st->path, "a result line could not be appended");
	return rc;
}

/*
 * The canary's host value, measured once per sweep before any trial and
 * handed to every trial through the environment (validity.h). A value
 * already in the environment is kept, so several sweeps can share one.
 */
static void canary_calibrate(bool quiet)
{
	const char *have = getenv(RXR_CANARY_ENV);
	struct rxr_canary_cal cal;
	char text[512];
	if ((have && *have) ||
	    rxr_canary_calibrate(&cal, 1, (size_t)1 << RXR_CANARY_MAX_LOG2, 3) < 0 ||
	    rxr_canary_cal_format(&cal, text, sizeof(text)) < 0)
		return;
	setenv(RXR_CANARY_ENV, text, 1);
	if (!quiet)
		fprintf(stderr, "rxray sweep: canary calibrated (%s=%s)\n", RXR_CANARY_ENV, text);
}

static int copy_spec(const char *src, const char *dir, char *err, size_t errlen)
{
	char dst[700], tmp[710];
	snprintf(dst, sizeof(dst), "%s/spec.yaml", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	FILE *in = fopen(src, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
	int rc = 0;
	if (!in || !out) {
		rc = -errno;
		snprintf(err, errlen, "%.400s: %s", in ? tmp : src, strerror(errno));
		goto out;
	}
	char buf[8192];
	size_t n;
	/* stdio keeps the error flag, not always errno: a full disk must not read EIO */
	errno = 0;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			rc = errno ? -errno : -EIO;
			break;
		}
	errno = 0;
	if (!rc && (fflush(out) || fsync(fileno(out))))
		rc = errno ? -errno : -EIO;
	errno = 0;
	if (fclose(out) && !rc)
		rc = errno ? -errno : -EIO;
	out = NULL;
	if (!rc && rename(tmp, dst) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		snprintf(err, errlen, "%.400s: %s", dst, strerror(-rc));
	}
out:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return rc;
}

static void dry_run_print(FILE *f, const struct sweep_point *p, const struct sweep_place *pl,
			  const struct sweep_exec *x, double secs)
{
	fprintf(f, "%zu %s\n", p->index + 1, p->key);
	if (!pl->feasible) {
		fprintf(f, "  infeasible: %s\n", pl->reason);
		return;
	}
	fprintf(f, "  place: %d cores (nic %d, rx %d, app %d %s)%s:", pl->needed, pl->nic, pl->rx,
		pl->app, pl->app_mode, pl->oversubscribed ? " oversubscribed" : "");
	for (int i = 0; i < pl->ncores; i++)
		fprintf(f, " %d", pl->cores[i]);
	fprintf(f, "\n  trial:");
	char **argv = NULL;
	sweep_trial_argv(x, 0, secs, "<tmp>.json", &argv);
	for (size_t i = 0; argv && argv[i]; i++)
		fprintf(f, " %s", argv[i]);
	fprintf(f, "\n");
	sweep_argv_free(argv);
}

/*
 * Cost-model calibration (docs/method.md "The ceiling model"): after a point's
 * search, light-load trials at search.calibration_frac of its NDR (a
 * quarter unless the spec says; 0: none), one plain and one
 * with --coalesce B (B = the point's burst), so the model has laps of a
 * few and of B packets to fit from without load. Each trial line is
 * marked "trial": {"purpose": "calibration"}; they come after the search
 * and before the point's summary, which is the search's alone, so they
 * are never NDR evidence. Not on real ports (traffic_cmd): the wait for B
 * completions needs the software NIC's rings; and only when the runner
 * writes lap sums (a stand-in runner, or an older rxray, has none to fit).
 */
#define CALIB_TRIALS 2 /* one plain, one with --coalesce B */
static bool calib_has_laps(const json_t *doc)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(doc, "threads"), i, t) {
		const char *name;
		json_t *st;
		json_object_foreach(json_object_get(t, "stages"), name, st)
			if (json_object_get(st, "lap_sums"))
				return true;
	}
	return false;
}

static int calibrate_point(struct trial_ctx *c, const struct sweep_search_result *r)
{
	double frac = c->x.spec->search.calibration_frac;
	if (r->status != SWEEP_POINT_OK || !(r->ndr_pps > 0) || !(frac > 0) ||
	    c->x.spec->traffic_cmd[0] || c->x.spec->have_gen || r->ndr_trial < 0 || (size_t)r->ndr_trial >= r->ntrials ||
	    !calib_has_laps(r->trials[r->ndr_trial].doc))
		return 0;
	const struct sweep_value *bv = sweep_point_knob(c->x.point, "burst");
	char burst[32];
	snprintf(burst, sizeof(burst), "%.30s", bv ? bv->text : "64");
	const char *const coalesce[] = {"--coalesce", burst, NULL};
	for (int i = 0; i < CALIB_TRIALS; i++) {
		struct sweep_trial t = {.n = (int)r->ntrials + 1 + i,
					.target_pps = r->ndr_pps * frac,
					.seconds = c->x.spec->search.initial_seconds};
		struct sweep_exec x = c->x;
		x.extra_args = i ? coalesce : NULL;
		c->pg->trial = t.n;
		progress_trial(c->pg);
		int rc = sweep_trial_exec(&x, &t);
		if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG)
			write_failed(c, rc, c->x.tmpdir, "a trial could not write its result");
		if (rc < 0)
			return rc;
		if (!t.doc)
			return -ENOMEM;
		json_t *tr = json_object_get(t.doc, "trial");
		if (!tr || json_object_set_new(tr, "purpose", json_string("calibration")) ||
		    (i && json_object_set_new(tr, "coalesce", json_string(burst)))) {
			json_decref(t.doc);
			return -ENOMEM;
		}
		rc = sweep_store_append(c->st, t.doc);
		json_decref(t.doc);
		if (rc < 0) {
			write_failed(c, rc, c->st->path, "a result line could not be appended");
			return rc;
		}
	}
	return 0;
}

static int run_point(const struct sweep_spec *spec, const struct sweep_search_cfg *scfg,
		     const struct sweep_point *p, struct trial_ctx *c, json_t **sum)
{
	struct sweep_search_result r;
	const struct sweep_place *pl = c->x.place;
	int rc = 0;
	if (!pl->feasible) {
		memset(&r, 0, sizeof(r));
		r.status = SWEEP_POINT_INFEASIBLE;
		r.ndr_trial = r.pdr_trial = r.top_trial = -1;
		snprintf(r.reason, sizeof(r.reason), "%s", pl->reason);
	} else {
		rc = sweep_search_run(scfg, trial_run, c, &r);
		if (rc >= 0)
			rc = calibrate_point(c, &r);
		if (rc < 0) {
			sweep_search_result_free(&r);
			return rc;
		}
	}
	*sum = sweep_summary_json(p, &spec->search, &r);
	if (*sum && sweep_summary_add_search(*sum, &spec->search, &r) < 0) {
		json_decref(*sum);
		*sum = NULL;
	}
	/* what drove every figure of the point: a reader never guesses */
	if (*sum && spec->have_gen &&
	    json_object_set_new(*sum, "generator", sweep_gen_identity(&spec->gen)) < 0) {
		json_decref(*sum);
		*sum = NULL;
	}
	/* more threads than cores (allow_oversubscribe): disturbed by
	 * construction, so the summary says so for every reader */
	if (*sum && pl->feasible && pl->oversubscribed &&
	    !json_is_true(json_object_get(*sum, "oversubscribed")) && /* the search saw it */
	    (json_object_set_new(*sum, "oversubscribed", json_true()) ||
	     json_array_append_new(json_object_get(*sum, "flags"), json_string("oversubscribed")))) {
		json_decref(*sum);
		*sum = NULL;
	}
	sweep_search_result_free(&r);
	if (!*sum)
		return -ENOMEM;
	rc = sweep_store_append(c->st, *sum);
	if (rc < 0)
		write_failed(c, rc, c->st->path, "a result line could not be appended");
	return rc;
}

/*
 * A sweep with a total budget (search.total_budget): the time left over
 * the points still to run (left, this one included), less this point's
 * calibration trials (each about the first trial's length plus the
 * overhead a trial costs beyond its seconds). A point that ran long
 * leaves the rest less; one that resolved early leaves them more.
 * Returns 0 when there is no total budget.
 */
static double point_share(const struct sweep_spec *spec, size_t left, double elapsed)
{
	const struct sweep_search_cfg *c = &spec->search;
	if (!(c->total_budget_seconds > 0))
		return 0;
	double secs = c->initial_seconds > 0 ? c->initial_seconds : c->trial_seconds;
	double calib = spec->traffic_cmd[0] || spec->have_gen || !(c->calibration_frac > 0)
			   ? 0
			   : CALIB_TRIALS * (secs + SWEEP_TRIAL_OVERHEAD_S);
	double share = (c->total_budget_seconds - elapsed) / (double)(left ? left : 1) - calib;
	return fmax(share, 1e-3); /* > 0: the point still runs its first trial */
}

/* How long a generator's setup or teardown may take. */
#define GEN_STEP_TIMEOUT_S 120.0

/*
 * A generator's setup or teardown (sh -c cmd, output into dir/<what>.log):
 * 0 when it exited 0 within GEN_STEP_TIMEOUT_S, else -EIO with one line
 * in err naming it, its exit and its output's last line.
 */
static int gen_step(const char *what, const char *cmd, const char *dir, char *err,
		    size_t errlen)
{
	char log[700], last[200] = "";
	snprintf(log, sizeof(log), "%s/%s.log", dir, what);
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return rxu_errf(err, errlen, -errno, "generator.%s: %s: %s", what, log,
				strerror(errno));
	char *const argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	pid_t pid = sweep_spawn(argv, fd, true);
	close(fd);
	if (pid < 0)
		return rxu_errf(err, errlen, -EIO, "generator.%s: cannot start `%s`", what, cmd);
	int st = 0;
	double t0 = rxu_mono_seconds();
	pid_t w;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 &&
	       rxu_mono_seconds() - t0 < GEN_STEP_TIMEOUT_S) {
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	if (w == 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	FILE *f = fopen(log, "r");
	for (char line[200]; f && fgets(line, sizeof(line), f);)
		if (line[0] != '\n')
			snprintf(last, sizeof(last), "%s", line);
	if (f)
		fclose(f);
	last[strcspn(last, "\n")] = '\0';
	if (w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return rxu_errf(err, errlen, -EIO, "generator.%s: `%s` %s%s%s (log %s)", what, cmd,
			w == 0 ? "ran past 120 s" : "failed", last[0] ? ": " : "", last, log);
}

int sweep_run(const struct sweep_spec *spec, const struct sweep_opts *o, volatile int *stop)
{
	char err[SWEEP_ERR_LEN], note[SWEEP_ERR_LEN], tmpdir[600];
	const char *dir = o->output ? o->output : spec->output;
	struct sweep_point *pts = NULL;
	size_t npts = 0;
	struct sweep_store st = {.fd = -1};
	int cores[SWEEP_MAX_CORES];
	int ret = -EIO;
	bool set_up = false; /* the generator's setup ran: its teardown runs at the end */
	int rc = sweep_matrix_expand(spec, &pts, &npts, err, sizeof(err));
	if (rc < 0) {
		rxu_err("sweep", "%s", rc == -EINVAL ? err : strerror(-rc));
		return rc;
	}
	int ncores = sweep_cores_available(spec, cores, SWEEP_MAX_CORES);
	if (ncores <= 0) {
		rxu_err("sweep", "no cores available");
		goto out;
	}
	struct progress pg = {.tty = isatty(STDERR_FILENO), .quiet = o->quiet, .n = npts,
			      .t0 = rxu_mono_seconds()};
	pg.est_point = 6 * (spec->search.initial_seconds + 0.3);
	struct trial_ctx c = {.x = {.runner = o->runner, .tmpdir = tmpdir, .spec = spec,
				    .stop = stop},
			      .st = &st, .pg = &pg};
	if (o->dry_run) {
		for (size_t i = 0; i < npts; i++) {
			struct sweep_place pl;
			sweep_place_point(&pts[i], cores, ncores, spec->allow_oversubscribe, &pl);
			c.x.point = &pts[i];
			c.x.place = &pl;
			dry_run_print(o->table ? o->table : stdout, &pts[i], &pl, &c.x,
				      spec->search.initial_seconds);
		}
		ret = 0;
		goto out;
	}
	rc = sweep_store_open(&st, dir, o->resume, note, sizeof(note), err, sizeof(err));
	if (rc < 0) {
		rxu_err("sweep", "%s", err);
		ret = rc == -EEXIST ? -EINVAL : rc;
		goto out;
	}
	if (note[0])
		rxu_err("sweep", "%s", note);
	snprintf(tmpdir, sizeof(tmpdir), "%s/.trial", dir);
	/* a SIGKILL'd sweep's trial may still run (and hold its cores) */
	if (sweep_trial_reap(tmpdir, note, sizeof(note), err, sizeof(err)) < 0) {
		rxu_err("sweep", "%s", err);
		goto out;
	}
	if (note[0])
		rxu_err("sweep", "%s", note);
	if (mkdir(tmpdir, 0755) < 0 && errno != EEXIST) {
		rxu_err("sweep", "%s: %s", tmpdir, strerror(errno));
		goto out;
	}
	if (copy_spec(spec->path, dir, err, sizeof(err)) < 0) {
		rxu_err("sweep", "%s", err);
		goto out;
	}
	canary_calibrate(o->quiet);
	/* the generator's links and namespaces, once for the whole sweep */
	if (spec->have_gen && spec->gen.setup[0]) {
		if (gen_step("setup", spec->gen.setup, dir, err, sizeof(err)) < 0) {
			rxu_err("sweep", "%s", err);
			set_up = true; /* a half-done setup is undone too */
			goto out;
		}
		set_up = true;
	}
	size_t skipped = 0, left = 0; /* left: points this run still has to run */
	for (size_t i = 0; i < npts; i++)
		left += !json_object_get(st.done, pts[i].key);
	const double sweep_t0 = rxu_mono_seconds();
	for (size_t i = 0; i < npts && !(stop && *stop); i++) {
		const struct sweep_point *p = &pts[i];
		pg.i = i + 1;
		pg.key = p->key;
		pg.trial = 0;
		if (json_object_get(st.done, p->key)) {
			skipped++;
			continue;
		}
		struct sweep_place pl;
		sweep_place_point(p, cores, ncores, spec->allow_oversubscribe, &pl);
		c.x.point = p;
		c.x.place = &pl;
		c.replay = json_incref(json_object_get(st.partial, p->key));
		c.replayed = 0;
		c.err[0] = '\0';
		double t0 = rxu_mono_seconds();
		struct sweep_search_cfg scfg = spec->search;
		scfg.budget_cap_seconds = point_share(spec, left--, t0 - sweep_t0);
		json_t *sum = NULL;
		rc = run_point(spec, &scfg, p, &c, &sum);
		json_decref(c.replay);
		c.replay = NULL;
		if (rc < 0) {
			json_decref(sum);
			if (rc != -EINTR)
				rxu_err("sweep", "%s", c.err[0] ? c.err : strerror(-rc));
			break;
		}
		double secs = rxu_mono_seconds() - t0;
		if (pl.feasible) {
			pg.ran++;
			pg.spent += secs;
		}
		progress_point(&pg, sum, secs);
		json_decref(sum);
	}
	if (stop && *stop) {
		if (!o->quiet)
			fprintf(stderr, "%srxray sweep: interrupted; `rxray sweep --resume` continues "
					"it\n", pg.tty ? "\r\033[K" : "");
		ret = -EINTR;
		goto out;
	}
	if (rc < 0) {
		ret = rc;
		goto out;
	}
	if (!o->quiet) {
		char el[16];
		fmt_eta(rxu_mono_seconds() - pg.t0, el, sizeof(el));
		fprintf(stderr, "rxray sweep: %zu points (%zu from an earlier run) in %s; results in "
				"%s\n", npts, skipped, el, st.path);
	}
	ret = sweep_table_print(o->table ? o->table : stdout, st.path);
out:
	if (set_up && spec->gen.teardown[0] &&
	    gen_step("teardown", spec->gen.teardown, dir, err, sizeof(err)) < 0) {
		rxu_err("sweep", "%s", err);
		if (!ret)
			ret = -EIO;
	}
	sweep_store_close(&st);
	free(pts);
	return ret;
}
