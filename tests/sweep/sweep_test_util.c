/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/sweep.h"
#include "rxray/util.h"
#include "sweep_test_util.h"

int sw_run_timeout_ms = 120000;
long sw_run_fsize = 0;

char *sw_tmpdir(void)
{
	char *p = strdup("/tmp/rxray-sweep-test-XXXXXX");
	cr_assert(p && mkdtemp(p), "mkdtemp failed");
	return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void sw_rmtree(char *dir)
{
	if (dir && !strncmp(dir, "/tmp/rxray-sweep-test-", 22))
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *sw_write(const char *dir, const char *name, const char *text)
{
	char *path = NULL;
	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	FILE *f = fopen(path, "w");
	cr_assert(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

char *sw_read(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ch;
	while ((ch = fgetc(f)) != EOF)
		fputc(ch, m);
	fclose(m);
	fclose(f);
	return buf;
}

size_t sw_count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0, n = 0;
	while (getline(&line, &cap, f) > 0)
		n += !needle || strstr(line, needle);
	free(line);
	fclose(f);
	return n;
}

int sw_run(char *const argv[], char **out, char **err)
{
	char of[] = "/tmp/rxray-sweep-out-XXXXXX", ef[] = "/tmp/rxray-sweep-err-XXXXXX";
	int ofd = mkstemp(of), efd = mkstemp(ef);
	cr_assert(ofd >= 0 && efd >= 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (!pid) {
		dup2(ofd, STDOUT_FILENO);
		dup2(efd, STDERR_FILENO);
		rxu_close_fds_from(3); /* nothing of Criterion's (see sw_spawn) */
		struct rlimit fl = {(rlim_t)sw_run_fsize, (rlim_t)sw_run_fsize};
		if (sw_run_fsize > 0 && setrlimit(RLIMIT_FSIZE, &fl))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	/* a hung child must not hang the test: kill it after sw_run_timeout_ms
	 * (polled every 5 ms against the monotonic clock) */
	int st = 0;
	const double deadline = rxu_mono_seconds() + sw_run_timeout_ms / 1e3;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (rxu_mono_seconds() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL); /* the poll interval */
	}
	close(ofd);
	close(efd);
	if (out)
		*out = sw_read(of);
	if (err)
		*err = sw_read(ef);
	unlink(of);
	unlink(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t sw_spawn_keeping(char *const argv[], int keep)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (!pid) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, STDIN_FILENO);
		dup2(nul, STDOUT_FILENO);
		dup2(nul, STDERR_FILENO);
		/* nothing of Criterion's worker (its stdin pipe's both ends, its
		 * arena) in a sweep or what the sweep's trials leave behind */
		if (keep > 2 && dup2(keep, 3) == 3)
			rxu_close_fds_from(4);
		else
			rxu_close_fds_from(3);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

pid_t sw_spawn(char *const argv[])
{
	return sw_spawn_keeping(argv, -1);
}

int sw_run_available(const char *engine, const char *device, char *why, size_t whylen)
{
	char *dir = sw_tmpdir(), *out = NULL, *err = NULL, json[600];
	snprintf(json, sizeof(json), "%s/probe.json", dir);
	char *argv[] = {RXRAY_BIN, "run", "--engine", (char *)engine, "--device", (char *)device,
			"--seconds", "0.05", "-o", json, "--quiet", NULL};
	sw_run_timeout_ms = 15000;
	int rc = sw_run(argv, &out, &err);
	sw_run_timeout_ms = 120000;
	if (rc == 128 + SIGKILL)
		snprintf(why, whylen, "`rxray run --engine %s --device %s` hung for 15 s here",
			 engine, device);
	else if (rc)
		snprintf(why, whylen, "`rxray run --engine %s --device %s` is not usable here "
				      "(exit %d: %.200s)", engine, device, rc, err ? err : "");
	unlink(json);
	rmdir(dir);
	free(dir);
	free(out);
	free(err);
	return rc == 0;
}

char *sw_table_of(json_t *const *sums, size_t n)
{
	char *dir = sw_tmpdir(), path[600];
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	for (size_t i = 0; i < n; i++) {
		char *s = json_dumps(sums[i], JSON_COMPACT);
		fprintf(f, "%s\n", s);
		free(s);
	}
	fclose(f);
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	cr_assert_eq(sweep_table_print(m, path), 0);
	fclose(m);
	sw_rmtree(dir);
	return out;
}
