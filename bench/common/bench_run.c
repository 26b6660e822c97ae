/* SPDX-License-Identifier: MIT */
/* See bench_run.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"
#include "rxray/util.h"

/* The child's side: 0, or 1 after its line went down fd. */
static int run_child(const struct rx_engine_ops *ops, const struct rx_config *c,
		     const char *const *env, const char *path, int fd)
{
	struct rxr_result *r = NULL;
	char err[512] = "";
	int rc = 0;

	for (; env && env[0]; env += 2)
		if (env[1] && setenv(env[0], env[1], 1))
			rc = rxu_errf(err, sizeof(err), -errno, "%s: %s", env[0], strerror(errno));
	if (!rc && rxr_result_open(&r))
		rc = rxu_errf(err, sizeof(err), -ENOMEM, "result: out of memory");
	if (!rc)
		rc = rx_run_exec(ops, c, r, NULL, err, sizeof(err));
	if (!rc && (rc = rxr_result_write(r, path)))
		rxu_errf(err, sizeof(err), rc, "%s: %s", path, strerror(-rc));
	rxr_result_free(r);
	if (!rc)
		return 0;
	/* shorter than PIPE_BUF into an empty pipe: written whole, never
	 * blocks; should it fail, the parent names the exit status instead */
	ssize_t n = write(fd, err, strlen(err));
	(void)n;
	return 1;
}

int bench_run_forked(const struct rx_engine_ops *ops, const struct rx_config *c,
		     const char *const *env, struct rxr_result **out, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	int fds[2] = {-1, -1}, st, rc;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/rxray-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return rxu_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	close(fd);
	/* non-blocking: a grandchild holding the write end cannot hang the read */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK)) {
		rc = rxu_errf(err, errlen, -errno, "pipe: %s", strerror(errno));
		goto out;
	}
	/* what stdio holds would otherwise be written by the child too */
	fflush(NULL);
	pid_t pid = fork();
	int fork_errno = errno;
	if (pid == 0) {
		close(fds[0]);
		_exit(run_child(ops, c, env, path, fds[1]));
	}
	close(fds[1]);
	if (pid < 0) {
		rc = rxu_errf(err, errlen, -fork_errno, "fork: %s", strerror(fork_errno));
		goto out;
	}
	while ((rc = (int)waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		rc = rxu_errf(err, errlen, -errno, "waitpid: %s", strerror(errno));
	} else if (WIFSIGNALED(st)) {
		rc = rxu_errf(err, errlen, -ECHILD, "the run died of signal %d (%s)", WTERMSIG(st),
			      strsignal(WTERMSIG(st)));
	} else if (WEXITSTATUS(st)) {
		char line[512];
		ssize_t n = read(fds[0], line, sizeof(line) - 1);
		line[n > 0 ? n : 0] = '\0';
		if (n > 0)
			rc = rxu_errf(err, errlen, -EIO, "%s", line);
		else
			rc = rxu_errf(err, errlen, -EIO, "the run exited with status %d",
				      WEXITSTATUS(st));
	} else {
		rc = rxr_result_read(path, out, err, errlen);
	}
out:
	if (fds[0] >= 0)
		close(fds[0]);
	unlink(path);
	return rc;
}

int bench_opt(int ch, const char *arg, struct bench_opts *b, void (*usage)(FILE *f))
{
	switch (ch) {
	case 'c': snprintf(b->cores, sizeof(b->cores), "%s", arg); return BENCH_OPT_TAKEN;
	case 's': b->seconds = atof(arg); return BENCH_OPT_TAKEN;
	case 'n': b->runs = atoi(arg); return BENCH_OPT_TAKEN;
	case 'h': usage(stdout); return 0;
	default: usage(stderr); return 2;
	}
}

bool bench_opts_ok(const struct bench_opts *b)
{
	return b->runs >= 1 && b->runs <= BENCH_MAX_RUNS && b->seconds > 0;
}

int bench_run(const struct bench_opts *b, const struct rx_engine_ops *ops, struct rx_config *c,
	      const char *const *env, const char *what, struct rxr_result **out)
{
	char err[512];
	int rc = 0;

	*out = NULL;
	c->seconds = b->seconds;
	if (b->cores[0])
		rc = rx_config_set(c, "cores", b->cores, err, sizeof(err));
	if (!rc)
		rc = bench_run_forked(ops, c, env, out, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, err);
	return rc;
}

double bench_robust(const struct rxr_thread_result *t, enum rxp_stage s)
{
	return t->packets ? (double)t->st[s].p50 * (double)t->st[s].count / (double)t->packets : 0;
}

double bench_robust_busy(const struct rxr_thread_result *t)
{
	double sum = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (s != RXP_ST_IDLE)
			sum += bench_robust(t, (enum rxp_stage)s);
	return sum;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
