/* SPDX-License-Identifier: MIT */
/* Helpers for the analyzer and report tests: run the CLI, read files. */
#ifndef RXRAY_TEST_ANALYZE_UTIL_H
#define RXRAY_TEST_ANALYZE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/result.h"

#define FIXTURES RXRAY_SRC_DIR "/tests/analyze/data"

/* Lap sums of `laps` laps of n packets each costing a + b x n, added to
 * st, with distinct order statistics (a reader that swaps two of them is
 * caught). */
static inline void tu_laps_add(struct rxr_stage_sum *st, double laps, double n, double a,
			       double b)
{
	double c = a + b * n;
	st->count += (uint64_t)laps;
	st->packets += (uint64_t)(laps * n);
	st->cycles += (uint64_t)(laps * c);
	st->laps.n += laps;
	st->laps.sx += laps * n;
	st->laps.sy += laps * c;
	st->laps.sxx += laps * n * n;
	st->laps.sxy += laps * c * n;
	st->laps.syy += laps * c * c;
	st->has_laps = true;
	st->cycles_per_packet = 0;
	st->min = 3, st->p50 = 5, st->p90 = 7, st->p99 = 11, st->max = 13;
}

/* Whole file into a malloc'd string (NULL when unreadable). */
static inline char *tu_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	char b[65536];
	size_t k;
	while ((k = fread(b, 1, sizeof(b), f)) > 0)
		fwrite(b, 1, k, m);
	fclose(m);
	fclose(f);
	return s;
}

/*
 * Run a shell command with stdout+stderr captured into *out (malloc'd,
 * may be NULL). Returns the exit status, or -1 when it did not exit.
 */
static inline int tu_run(const char *cmd, char **out)
{
	char tmp[] = "/tmp/rxray-test-XXXXXX";
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	close(fd);
	size_t n = strlen(cmd) + strlen(tmp) + 16;
	char *full = malloc(n);
	snprintf(full, n, "( %s ) >%s 2>&1", cmd, tmp);
	int st = system(full);
	free(full);
	if (out)
		*out = tu_slurp(tmp);
	unlink(tmp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fresh temp directory (path in buf). */
static inline const char *tu_tmpdir(char *buf, size_t n)
{
	snprintf(buf, n, "/tmp/rxray-test-dXXXXXX");
	return mkdtemp(buf);
}

static inline void tu_rmrf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
	}
}

/* The line of text that starts with prefix, copied (NULL when none). */
static inline char *tu_line_of(const char *text, const char *prefix)
{
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (!strncmp(p, prefix, strlen(prefix)))
			return strndup(p, n);
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

#endif
