/* SPDX-License-Identifier: MIT */
/*
 * The leaf tools a trial and a generator both use: "{field}" templates
 * expanded into command lines, and a child started in its own process
 * group that dies with the sweep. They sit apart from trial.c so the
 * generator and the spec parser reach them without reaching the trials.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "rxray/sweep.h"
#include "rxray/util.h"
#include "spec_int.h"

int sweep_tmpl_expand(const char *tmpl, sweep_tmpl_field_fn field, void *ctx, char *out,
		      size_t outlen)
{
	size_t o = 0;
	for (const char *p = tmpl; *p;) {
		char piece[600];
		const char *add = NULL;
		size_t skip = 1;
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			/* a brace the command itself needs (trafgen's packets, JSON) */
			piece[0] = p[0];
			piece[1] = '\0';
			add = piece;
			skip = 2;
		} else if (*p == '{') {
			const char *end = strchr(p, '}');
			if (!end) {
				snprintf(out, outlen, "%s", "(unclosed)");
				return -EINVAL;
			}
			size_t nl = (size_t)(end - p - 1);
			if (field(p + 1, nl, piece, sizeof(piece), ctx) < 0) {
				snprintf(out, outlen, "%.*s", (int)nl, p + 1);
				return -EINVAL;
			}
			add = piece;
			skip = nl + 2;
		}
		size_t alen = add ? strlen(add) : 1;
		if (o + alen + 1 > outlen)
			return -ENOSPC;
		memcpy(out + o, add ? add : p, alen);
		o += alen;
		p += skip;
	}
	if (o + 1 > outlen)
		return -ENOSPC;
	out[o] = '\0';
	return 0;
}

struct traffic_vals {
	double rate_pps, seconds;
	uint64_t frame;
};

static int traffic_field(const char *nm, size_t nl, char *piece, size_t len, void *ctx)
{
	const struct traffic_vals *v = ctx;
	if (sweep_tmpl_is(nm, nl, "rate_pps"))
		snprintf(piece, len, "%.0f", v->rate_pps);
	else if (sweep_tmpl_is(nm, nl, "frame"))
		snprintf(piece, len, "%llu", (unsigned long long)v->frame);
	else if (sweep_tmpl_is(nm, nl, "seconds"))
		snprintf(piece, len, "%g", v->seconds);
	else
		return -EINVAL;
	return 0;
}

int sweep_template_expand(const char *tmpl, double rate_pps, uint64_t frame, double seconds,
			  char *out, size_t outlen)
{
	struct traffic_vals v = {rate_pps, seconds, frame};
	return sweep_tmpl_expand(tmpl, traffic_field, &v, out, outlen);
}

/* spec_int.h */
pid_t sweep_spawn(char *const argv[], int outfd, bool shell)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	setpgid(0, 0);
	/* die with the sweep; the sweep may already be gone before this line */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		dup2(nul, STDIN_FILENO);
		dup2(shell && outfd >= 0 ? outfd : nul, STDOUT_FILENO);
	}
	if (outfd >= 0)
		dup2(outfd, STDERR_FILENO);
	/* nothing of the sweep's but stdio: a trial or a traffic command's
	 * child left alive must not hold the sweep's (or its parent's) pipes */
	rxu_close_fds_from(3);
	execv(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}
