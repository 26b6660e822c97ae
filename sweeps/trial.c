/* SPDX-License-Identifier: MIT */
/*
 * One trial = one `rxray run` in a child process: a fresh process per
 * trial (fresh EAL, fresh pinning), a timeout after which the child's
 * process group is killed, a death by signal recorded as a crash, and the
 * run result read back through the run-result reader. In real-hardware
 * mode a traffic command runs next to it through /bin/sh.
 *
 * Nothing outlives the sweep: each child asks the kernel for SIGKILL when
 * the sweep dies (PR_SET_PDEATHSIG), and the process groups of the
 * children in flight are recorded in <tmpdir>/pids (pid and start time),
 * so a resumed sweep can kill what a SIGKILL'd one left behind (a
 * traffic command's own children have no death signal).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/result.h"
#include "rxray/sweep.h"
#include "rxray/util.h"
#include "spec_int.h"

/* Lead time given to `rxray run` before the traffic command starts. */
#define TRAFFIC_LEAD_S 0.5
/*
 * Pause before each trial: a trial must not start while the host still
 * finishes the previous trial's exit and result writeback on the same
 * cores (bench/sweep_repeatability/README.md, "Measurements behind
 * constants").
 */
#define TRIAL_SETTLE_S 0.3

void sweep_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static int argv_add(char ***argv, size_t *n, const char *a, const char *b)
{
	char **nv = realloc(*argv, (*n + 3) * sizeof(**argv));
	if (!nv)
		return -ENOMEM;
	*argv = nv;
	nv[*n] = strdup(a);
	nv[*n + 1] = b ? strdup(b) : NULL;
	nv[*n + 2] = NULL;
	if (!nv[*n] || (b && !nv[*n + 1])) {
		free(nv[*n]);
		free(nv[*n + 1]);
		nv[*n] = NULL;
		return -ENOMEM;
	}
	*n += b ? 2 : 1;
	return 0;
}

int sweep_trial_argv(const struct sweep_exec *x, double target_pps, double seconds,
		     const char *json_path, char ***out)
{
	char **argv = NULL;
	*out = NULL;
	size_t n = 0;
	char opt[64], val[1100];
	int rc = argv_add(&argv, &n, x->runner, "run");
	const bool traffic = x->spec->traffic_cmd[0] != '\0';
	const int inject = sweep_knob_find("inject");
	for (int k = 0; !rc && k < (int)sweep_knob_count(); k++) {
		const struct sweep_value *v = x->point->k[k];
		if (!v || (k == inject && !strcmp(v->text, "none")))
			continue;
		snprintf(opt, sizeof(opt), "--%s", sweep_knob_name((size_t)k));
		for (char *c = opt; *c; c++)
			if (*c == '_')
				*c = '-';
		if (k != inject) {
			rc = argv_add(&argv, &n, opt, v->text);
			continue;
		}
		snprintf(val, sizeof(val), "%s", v->text);
		char *save = NULL;
		for (char *t = strtok_r(val, "+", &save); !rc && t; t = strtok_r(NULL, "+", &save))
			rc = argv_add(&argv, &n, opt, t);
	}
	if (!rc && x->spec->have_gen)
		rc = argv_add(&argv, &n, "--generator", x->spec->path);
	if (!rc && !traffic) {
		if (target_pps > 0)
			snprintf(val, sizeof(val), "%.0f", target_pps);
		else
			snprintf(val, sizeof(val), "max");
		rc = argv_add(&argv, &n, "--rate", val);
	}
	if (!rc) {
		snprintf(val, sizeof(val), "%g", traffic ? seconds + 2 * TRAFFIC_LEAD_S : seconds);
		rc = argv_add(&argv, &n, "--seconds", val);
	}
	if (!rc && x->place && x->place->ncores > 0) {
		size_t o = 0;
		for (int i = 0; i < x->place->ncores && o < sizeof(val) - 8; i++)
			o += (size_t)snprintf(val + o, sizeof(val) - o, "%s%d", i ? "," : "",
					      x->place->cores[i]);
		rc = argv_add(&argv, &n, "--cores", val);
	}
	if (!rc && x->spec->allow_oversubscribe)
		rc = argv_add(&argv, &n, "--allow-oversubscribe", NULL);
	for (size_t i = 0; !rc && x->extra_args && x->extra_args[i]; i++)
		rc = argv_add(&argv, &n, x->extra_args[i], NULL);
	if (!rc)
		rc = argv_add(&argv, &n, "-o", json_path);
	if (!rc)
		rc = argv_add(&argv, &n, "--quiet", NULL);
	if (rc) {
		sweep_argv_free(argv);
		return -ENOMEM;
	}
	*out = argv;
	return 0;
}

/* Start time of pid (clock ticks since boot, /proc/<pid>/stat field 22),
 * its process group and state; 0 when it does not exist. */
static unsigned long long proc_start(pid_t pid, pid_t *pgrp, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the command name may hold spaces and ')': fields follow the last ')' */
	char *p = strrchr(buf, ')');
	char st = 0;
	int pg = 0;
	unsigned long long start = 0;
	if (!p || sscanf(p + 1, " %c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu", &st, &pg, &start) != 3)
		return 0;
	if (pgrp)
		*pgrp = pg;
	if (state)
		*state = st;
	return start;
}

/* Record the process groups in flight (pid = pgid, start time). */
static void pids_record(const char *tmpdir, const pid_t *pids, int n)
{
	char path[700], tmp[710], line[64];
	snprintf(path, sizeof(path), "%s/pids", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	bool ok = true;
	for (int i = 0; i < n; i++) {
		unsigned long long st = pids[i] > 0 ? proc_start(pids[i], NULL, NULL) : 0;
		int len = snprintf(line, sizeof(line), "%d %llu\n", (int)pids[i], st);
		if (pids[i] > 0 && write(fd, line, (size_t)len) != len)
			ok = false;
	}
	close(fd);
	if (ok)
		rename(tmp, path);
	else
		unlink(tmp);
}

static void pids_clear(const char *tmpdir)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/pids", tmpdir);
	unlink(path);
}

/* Does any live (not zombie) process belong to process group pgid? */
static bool group_alive(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool alive = false;
	while (d && !alive && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		pid_t pg = 0;
		char st = 0;
		if (*end || pid <= 0)
			continue;
		if (proc_start((pid_t)pid, &pg, &st) && pg == pgid && st != 'Z' && st != 'X')
			alive = true;
	}
	if (d)
		closedir(d);
	return alive;
}

int sweep_trial_reap(const char *tmpdir, char *note, size_t notelen, char *err,
		     size_t errlen)
{
	char path[700], line[128];
	snprintf(path, sizeof(path), "%s/pids", tmpdir);
	if (note && notelen)
		note[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int rc = 0, killed = 0;
	size_t o = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		int pid = 0;
		unsigned long long start = 0;
		if (sscanf(line, "%d %llu", &pid, &start) != 2 || pid <= 1)
			continue;
		/* the leader alive with another start time: the pid was reused, not ours */
		unsigned long long now = proc_start(pid, NULL, NULL);
		if (now && now != start)
			continue;
		if (!group_alive(pid))
			continue;
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		/* bounded: SIGKILL cannot be caught, only a process in D state lingers */
		double deadline = rxu_mono_seconds() + 10;
		struct timespec nap = {0, 2000000};
		while (group_alive(pid) && rxu_mono_seconds() < deadline)
			nanosleep(&nap, NULL);
		if (group_alive(pid)) {
			rc = -EBUSY;
			snprintf(err, errlen,
				 "%s: process group %d of an earlier trial of this sweep survives "
				 "SIGKILL; it may still hold the sweep's cores",
				 path, pid);
			break;
		}
		killed++;
		if (note && o < notelen)
			o += (size_t)snprintf(note + o, notelen - o, "%s%d", killed > 1 ? ", " : "",
					      pid);
	}
	fclose(f);
	if (!rc) {
		unlink(path);
		if (killed && note && notelen) {
			char pids[256];
			snprintf(pids, sizeof(pids), "%s", note);
			snprintf(note, notelen,
				 "killed %d process group%s left alive by the earlier sweep (%s)",
				 killed, killed > 1 ? "s" : "", pids);
		}
	}
	return rc;
}

/*
 * The end of a trial's stderr, read from a pipe while it runs: its last
 * line is the trial's reason, and a full disk (the reason itself, often)
 * could not have taken it in a file.
 */
struct errtail {
	int fd; /* the pipe's read end (non-blocking), -1 once at its end */
	char buf[2048];
	size_t n;
};

static void errtail_drain(struct errtail *e)
{
	char chunk[4096];
	const size_t keep = sizeof(e->buf) - 1;
	while (e->fd >= 0) {
		ssize_t k = read(e->fd, chunk, sizeof(chunk));
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			close(e->fd);
			e->fd = -1;
		}
		if (k <= 0)
			return; /* EAGAIN: nothing more for now */
		size_t add = (size_t)k > keep ? keep : (size_t)k;
		if (e->n + add > keep) {
			size_t drop = e->n + add - keep;
			memmove(e->buf, e->buf + drop, e->n - drop);
			e->n -= drop;
		}
		memcpy(e->buf + e->n, chunk + k - add, add);
		e->n += add;
	}
}

/* Wait for pid until the deadline or a stop: 0 exited (*st), 1 timed out, -EINTR stopped. */
static int wait_child(pid_t pid, double deadline, volatile int *stop, int *st, struct errtail *e)
{
	struct timespec nap = {0, 1000000};
	for (;;) {
		if (e)
			errtail_drain(e); /* a full pipe would stall the child */
		pid_t w = waitpid(pid, st, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return 0;
		bool late = rxu_mono_seconds() > deadline, stopped = stop && *stop;
		if (late || stopped) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, st, 0) < 0 && errno == EINTR)
				;
			return stopped ? -EINTR : 1;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 10000000)
			nap.tv_nsec += 1000000;
	}
}

/* The last non-empty line of what the trial wrote to stderr. */
static void errtail_last_line(struct errtail *e, char *out, size_t outlen)
{
	out[0] = '\0';
	e->buf[e->n] = '\0';
	for (char *save = NULL, *l = strtok_r(e->buf, "\r\n", &save); l;
	     l = strtok_r(NULL, "\r\n", &save))
		snprintf(out, outlen, "%.250s", l);
}

static json_t *broken_doc(const struct sweep_exec *x, const struct sweep_trial *t)
{
	return json_pack("{s:s, s:{s:s, s:i, s:f, s:f, s:s, s:s}}", "schema",
			 SWEEP_TRIAL_SCHEMA, "trial", "key", x->point->key, "n", t->n, "target_pps",
			 t->target_pps, "seconds", t->seconds, "status",
			 sweep_trial_status_name(t->status), "reason", t->reason);
}

int sweep_trial_from_doc(const struct sweep_spec *spec, struct sweep_trial *t, json_t *doc,
			 const char *src, char *err, size_t errlen)
{
	json_t *tr = json_object_get(doc, "trial");
	const char *status = json_string_value(json_object_get(tr, "status"));
	if (status && strcmp(status, "ok")) {
		t->status = !strcmp(status, "timeout")	 ? SWEEP_TRIAL_TIMEOUT
			    : !strcmp(status, "crashed") ? SWEEP_TRIAL_CRASHED
							 : SWEEP_TRIAL_FAILED;
		snprintf(t->reason, sizeof(t->reason), "%s",
			 json_string_value(json_object_get(tr, "reason"))
				 ? json_string_value(json_object_get(tr, "reason"))
				 : status);
		return 0;
	}
	struct rxr_result *r = NULL;
	rxr_result_from_json(doc, src, &r, err, errlen);
	if (!r)
		return -EINVAL;
	const bool traffic = spec->traffic_cmd[0] != '\0';
	double secs = traffic ? t->seconds : r->seconds;
	json_t *gen = json_object_get(doc, "generator");
	if (spec->have_gen || gen) {
		/* a real port fed by a generator: offered is what it sent
		 * (rxray/generator.h), lost before the port included */
		if (!json_is_object(gen)) {
			snprintf(err, errlen, "%s: no \"generator\" object in a generator trial", src);
			rxr_result_free(r);
			return -EINVAL;
		}
		t->offered_pps = json_number_value(json_object_get(gen, "offered_pps"));
		t->rx_pps = json_number_value(json_object_get(gen, "rx_pps"));
		t->loss = json_number_value(json_object_get(gen, "loss"));
		t->status = SWEEP_TRIAL_OK;
		rxr_result_free(r);
		return 0;
	}
	if (!traffic && r->offered_mpps > 0) {
		t->offered_pps = r->offered_mpps * 1e6;
		t->rx_pps = r->rx_mpps * 1e6;
	} else if (secs > 0) {
		/* real hardware: the port counted what the traffic source sent */
		t->offered_pps = (double)r->c.offered / secs;
		t->rx_pps = (double)r->c.received / secs;
	}
	uint64_t rx = r->c.received < r->c.offered ? r->c.received : r->c.offered;
	t->loss = r->c.offered ? (double)(r->c.offered - rx) / (double)r->c.offered : r->loss;
	t->status = SWEEP_TRIAL_OK;
	rxr_result_free(r);
	return 0;
}

static void read_result(const struct sweep_exec *x, struct sweep_trial *t, const char *path)
{
	json_error_t je;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		t->status = SWEEP_TRIAL_FAILED;
		snprintf(t->reason, sizeof(t->reason), "%.150s:%d: %.90s", path, je.line, je.text);
		return;
	}
	json_t *tr = json_pack("{s:s, s:i, s:f, s:f, s:s}", "key", x->point->key, "n", t->n,
			       "target_pps", t->target_pps, "seconds", t->seconds, "status", "ok");
	if (!tr || json_object_set_new(doc, "trial", tr) < 0 ||
	    sweep_trial_from_doc(x->spec, t, doc, path, t->reason, sizeof(t->reason)) < 0) {
		t->status = SWEEP_TRIAL_FAILED;
		if (!t->reason[0])
			snprintf(t->reason, sizeof(t->reason), "out of memory");
		json_decref(doc);
		return;
	}
	t->doc = doc;
}

/*
 * A trial that failed because the sweep's folder could not take its
 * result: -ENOSPC, -EDQUOT or -EFBIG, else 0. That is the sweep's to stop
 * on, never the point's failure to record (a point recorded "failed" is
 * skipped by --resume). The runner says why on its last line ("rxray run:
 * PATH: No space left on device"; its stderr is a pipe, never the full
 * disk); a runner that says nothing counts when the folder's filesystem
 * has no block or inode left.
 */
static int trial_out_of_room(const char *tmpdir, const char *line)
{
	static const int errs[] = {ENOSPC, EDQUOT, EFBIG};
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (strstr(line, strerror(errs[i])))
			return -errs[i];
	struct statvfs v;
	if (!statvfs(tmpdir, &v) && (v.f_bavail == 0 || (v.f_files && v.f_favail == 0)))
		return -ENOSPC;
	return 0;
}

int sweep_trial_exec(void *ctx, struct sweep_trial *t)
{
	const struct sweep_exec *x = ctx;
	char json_path[700], cmd[2048];
	snprintf(json_path, sizeof(json_path), "%s/trial.json", x->tmpdir);
	unlink(json_path);
	const bool traffic = x->spec->traffic_cmd[0] != '\0';
	if (traffic && sweep_template_expand(x->spec->traffic_cmd, t->target_pps,
					     sweep_point_knob(x->point, "frame")->num, t->seconds, cmd,
					     sizeof(cmd)) < 0) {
		t->status = SWEEP_TRIAL_FAILED;
		snprintf(t->reason, sizeof(t->reason), "traffic_cmd does not expand");
		t->doc = broken_doc(x, t);
		return 0;
	}
	char **argv = NULL;
	sweep_trial_argv(x, t->target_pps, t->seconds, json_path, &argv);
	if (!argv)
		return -ENOMEM;
	struct timespec settle = {0, (long)(TRIAL_SETTLE_S * 1e9)};
	while (nanosleep(&settle, &settle) && errno == EINTR && !(x->stop && *x->stop))
		;
	double deadline = rxu_mono_seconds() + x->spec->search.timeout;
	int st = 0, rc = 0, tst = 0;
	struct errtail et = {.fd = -1, .n = 0};
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) < 0) {
		rc = -errno;
		sweep_argv_free(argv);
		return rc;
	}
	pid_t pid = sweep_spawn(argv, ep[1], false), tpid = -1;
	rc = pid < 0 ? -errno : 0;
	sweep_argv_free(argv);
	close(ep[1]);
	if (rc) {
		close(ep[0]);
		return rc;
	}
	et.fd = ep[0];
	fcntl(et.fd, F_SETFL, O_NONBLOCK);
	pids_record(x->tmpdir, &pid, 1);
	if (traffic) {
		struct timespec lead = {0, (long)(TRAFFIC_LEAD_S * 1e9)};
		nanosleep(&lead, NULL);
		char tlog[700];
		snprintf(tlog, sizeof(tlog), "%s/traffic.log", x->tmpdir);
		char *sh[] = {"/bin/sh", "-c", cmd, NULL};
		int tfd = open(tlog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		tpid = sweep_spawn(sh, tfd, true);
		if (tfd >= 0)
			close(tfd);
		pid_t both[2] = {pid, tpid};
		pids_record(x->tmpdir, both, 2);
	}
	int w = wait_child(pid, deadline, x->stop, &st, &et);
	int tw = tpid > 0 ? wait_child(tpid, w == 0 ? deadline : 0, x->stop, &tst, NULL) : 0;
	/* what the trial wrote last; a child it left holding the pipe is not waited for */
	errtail_drain(&et);
	if (et.fd >= 0)
		close(et.fd);
	/* what the children started themselves (a pipeline, a '&') goes with them */
	kill(-pid, SIGKILL);
	if (tpid > 0)
		kill(-tpid, SIGKILL);
	pids_clear(x->tmpdir);
	if (tpid > 0) {
		if (w == 0 && tw != 0)
			w = tw;
		else if (w == 0 && (!WIFEXITED(tst) || WEXITSTATUS(tst))) {
			t->status = SWEEP_TRIAL_FAILED;
			snprintf(t->reason, sizeof(t->reason), "traffic_cmd %s %d",
				 WIFEXITED(tst) ? "exited" : "killed by signal",
				 WIFEXITED(tst) ? WEXITSTATUS(tst) : WTERMSIG(tst));
			t->doc = broken_doc(x, t);
			return 0;
		}
	}
	if (w < 0)
		return w;
	char line[256];
	errtail_last_line(&et, line, sizeof(line));
	if (w == 1) {
		t->status = SWEEP_TRIAL_TIMEOUT;
		snprintf(t->reason, sizeof(t->reason), "no result after %.0f s, killed",
			 x->spec->search.timeout);
	} else if (WIFSIGNALED(st)) {
		t->status = SWEEP_TRIAL_CRASHED;
		snprintf(t->reason, sizeof(t->reason), "killed by signal %d (%.20s)%s%.200s", WTERMSIG(st),
			 strsignal(WTERMSIG(st)), line[0] ? ": " : "", line);
	} else if (WEXITSTATUS(st) == RXU_EXIT_USAGE) {
		t->status = SWEEP_TRIAL_REJECTED;
		snprintf(t->reason, sizeof(t->reason), "%s", line[0] ? line : "rejected (exit 2)");
	} else if (WEXITSTATUS(st) != 0) {
		t->status = SWEEP_TRIAL_FAILED;
		snprintf(t->reason, sizeof(t->reason), "exit %d%s%.220s", WEXITSTATUS(st),
			 line[0] ? ": " : "", line);
	} else {
		read_result(x, t, json_path);
	}
	unlink(json_path);
	if (w == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ)
		rc = -EFBIG; /* a runner that does not ignore SIGXFSZ, over the limit */
	else if (t->status == SWEEP_TRIAL_FAILED)
		rc = trial_out_of_room(x->tmpdir, line);
	if (rc < 0) {
		json_decref(t->doc);
		t->doc = NULL;
		return rc;
	}
	if (t->status != SWEEP_TRIAL_OK)
		t->doc = broken_doc(x, t);
	return rc;
}
