/* SPDX-License-Identifier: MIT */
/*
 * Atomic output files for the analyzers and reports: write into a temp
 * file next to the target, fsync, rename over it on commit. Nothing is
 * half written: abort (or any failure) removes the temp file.
 */
#ifndef RXRAY_AFILE_H
#define RXRAY_AFILE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rxr_afile {
	FILE *f;         /* write here; owned until commit/abort */
	char *path;      /* target (owned copy) */
	char *tmp;       /* temp path (owned) */
	int stdout_mode; /* path was "-": f is stdout, commit only flushes */
};

/* Open a temp file for path ("-" = stdout). 0 or -errno. */
int rxr_afile_open(struct rxr_afile *af, const char *path);
/* Flush, fsync, close, rename to the target (mode 0644). 0 or -errno; on
 * failure the temp file is removed. Releases af either way. */
int rxr_afile_commit(struct rxr_afile *af);
/* Close and remove the temp file; releases af. Accepts a zeroed af. */
void rxr_afile_abort(struct rxr_afile *af);
/* Write the whole string s to path atomically. 0 or -errno. */
int rxr_afile_write_string(const char *path, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
