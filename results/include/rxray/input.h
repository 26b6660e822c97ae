/* SPDX-License-Identifier: MIT */
/*
 * Reading input files safely: every path rxray reads goes through one of
 * these, so a FIFO, a device or a directory where a file is expected is
 * bad input (one line, exit 2) instead of a hang or a garbage parse, and
 * no parser is handed more than it can take.
 *
 * Documented caps (all inputs):
 *   RXR_IN_MAX_FILE   size of a whole-file input (a run result .json, a
 *                     sweep spec is smaller still: RXR_IN_MAX_SPEC)
 *   RXR_IN_MAX_LINE   one line of a JSONL or folded-stacks file
 *   nesting depth     JSON: jansson's own limit (JSON_PARSER_MAX_DEPTH,
 *                     2048); YAML: SWEEP_SPEC_MAX_DEPTH in sweeps/spec.c
 * A streamed file (JSONL, folded stacks) has no size cap: it is read one
 * bounded line at a time.
 *
 * Errors: 0 or -errno with one line "<path>: <reason>" in err:
 *   -ENOENT / -EACCES   as open(2)
 *   -EISDIR             a directory where a file is expected
 *   -EINVAL             not a regular file (FIFO, device, socket)
 *   -EFBIG              over the size cap
 *   -E2BIG              a line over the line cap (rxr_lines_next)
 *   -ENOMEM             allocation failed (never reported as end of file)
 *   -EIO                read error
 */
#ifndef RXRAY_INPUT_H
#define RXRAY_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RXR_IN_MAX_FILE (256ull << 20) /* 256 MiB */
#define RXR_IN_MAX_SPEC (1ull << 20)   /* 1 MiB */
#define RXR_IN_MAX_LINE (64ull << 20)  /* 64 MiB */

/* Exit code for an input error code: 1 for -ENOMEM / -EIO, else 2. */
int rxr_in_exit_code(int rc);

/*
 * Check that path is a regular file (or, with dir_ok, a folder) of at
 * most max_size bytes (0 = no cap). *is_dir (may be NULL) says which.
 */
int rxr_in_check(const char *path, bool dir_ok, uint64_t max_size, bool *is_dir, char *err,
		 size_t errlen);

/*
 * Open a regular file for reading. The file is opened non-blocking and
 * checked through its descriptor (so a FIFO swapped in after a stat still
 * cannot block), then switched back to blocking. "-" gives stdin, which
 * is accepted whatever it is (the caller asked for a stream). *out is
 * owned by the caller (fclose; stdin too is fine to leave open).
 */
int rxr_in_open(const char *path, uint64_t max_size, FILE **out, char *err, size_t errlen);

/*
 * Read a whole regular file of at most max_size bytes into a NUL
 * terminated buffer (*buf owned by the caller, free()). *len excludes
 * the NUL.
 */
int rxr_in_read_all(const char *path, uint64_t max_size, char **buf, size_t *len, char *err,
		    size_t errlen);

/* A line reader with a cap: rxr_lines_init, rxr_lines_next until 0, free. */
struct rxr_lines {
	FILE *in;
	const char *src; /* for messages */
	size_t max;      /* line cap in bytes */
	char *buf;       /* current line, NUL terminated (owned) */
	size_t cap;
	int line;        /* 1-based number of the current line */
	uint64_t off;    /* byte offset of the current line in the input */
	uint64_t pos;    /* bytes consumed so far */
	char *rb;        /* read-ahead block (owned) */
	size_t rpos, rlen;
};

void rxr_lines_init(struct rxr_lines *L, FILE *in, const char *src, size_t max);
/*
 * Next line into L->buf (the newline removed), its length in *len (may
 * hold NUL bytes: check with memchr if it matters) and whether it ended
 * with a newline in *nl. Returns 1 for a line, 0 at end of file, or
 * -errno (-E2BIG over the cap, -ENOMEM, -EIO) with "src:line: reason".
 * Reads in blocks: do not mix with other reads of in.
 */
int rxr_lines_next(struct rxr_lines *L, size_t *len, bool *nl, char *err, size_t errlen);
void rxr_lines_free(struct rxr_lines *L);

#ifdef __cplusplus
}
#endif
#endif
