/* SPDX-License-Identifier: MIT */
/* Helpers shared by the sweep tests: temp folders, files, child runs. */
#ifndef RXRAY_TESTS_SWEEP_TEST_UTIL_H
#define RXRAY_TESTS_SWEEP_TEST_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* A new folder under /tmp (malloc'd path). Aborts the test on failure. */
char *sw_tmpdir(void);
/* Remove a folder made by sw_tmpdir with everything in it, and free dir. */
void sw_rmtree(char *dir);
/* Write text to dir/name; returns the malloc'd path. */
char *sw_write(const char *dir, const char *name, const char *text);
/* Whole file as a string (malloc'd), NULL when absent. */
char *sw_read(const char *path);
/* Lines of path containing needle (all lines when needle is NULL). */
size_t sw_count_lines(const char *path, const char *needle);
/*
 * Run argv (NULL-terminated) with stdout and stderr captured into *out and
 * *err (malloc'd, may be NULL to discard). Returns the exit code, or 128 +
 * signal when it died of one.
 */
int sw_run(char *const argv[], char **out, char **err);
/* sw_run kills its child (SIGKILL, 128 + 9) after this many ms. */
extern int sw_run_timeout_ms;
/* > 0: sw_run's child runs under RLIMIT_FSIZE of this many bytes. */
extern long sw_run_fsize;
/* Start argv in the background with output discarded; its pid. */
pid_t sw_spawn(char *const argv[]);
/* The same, the child holding keep as its fd 3 (keep < 0: none). */
pid_t sw_spawn_keeping(char *const argv[], int keep);
/* The sweep table (sweep_table_print) of a results.jsonl holding the n
 * point summaries (malloc'd text). Aborts the test on failure. */
char *sw_table_of(json_t *const *sums, size_t n);
/* Does this build's rxray have a working `run` on engine/device? */
int sw_run_available(const char *engine, const char *device, char *why, size_t whylen);

#endif
