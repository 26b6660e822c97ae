/* SPDX-License-Identifier: MIT */
/*
 * Small shared helpers: numbers with units ("1M", "2s", "64k", "12.5M"),
 * range-checked; the one-line error convention; core pinning.
 *
 * Exit codes across rxray: 0 success, 1 runtime failure, 2 bad input.
 *
 * The error convention every library of rxray follows (docs/design.md; the
 * headers' "Error rule" lines refer here):
 *   - A function that can fail returns 0 (or a count) on success and a
 *     negative errno on failure: -EINVAL for bad input, -ENOMEM, or the
 *     system's -errno. It never reports through errno itself.
 *   - Where the failure can be caused by input (a file, an option, a spec,
 *     a parameter a user set), it takes `char *err, size_t errlen` last and
 *     fills one line there whenever it fails (rxu_errf below); err may be
 *     NULL with errlen 0.
 *   - A constructor is `int x_open(..., struct x **out[, char *err,
 *     size_t errlen])`: 0 with the new object in *out, which the caller
 *     owns and releases with the matching x_free / x_close (those accept
 *     NULL), or -errno with *out set to NULL. Constructors named for their
 *     source keep that verb with the same shape (rxr_result_read,
 *     rxr_result_parse, rxa_set_load, sweep_spec_load, rxa_ceiling_table).
 *     A constructor that only allocates takes no err: it fails with
 *     -ENOMEM alone.
 *   - Only tools/ turns a -errno into an exit code and prints the line.
 */
#ifndef RXRAY_UTIL_H
#define RXRAY_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RXU_EXIT_OK 0
#define RXU_EXIT_RUNTIME 1
#define RXU_EXIT_USAGE 2

/*
 * Parse an unsigned count with an optional decimal suffix k/K, m/M, g/G
 * (10^3, 10^6, 10^9) or binary Ki/Mi/Gi; fractions allowed with a suffix
 * ("1.5M"). Range-checked against [min, max]. 0 or -EINVAL / -ERANGE.
 */
int rxu_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A rate in packets per second: "12M", "500k", "max" (-> 0). */
int rxu_parse_rate(const char *s, double *pps);
/* A duration: "2", "2s", "500ms", "1.5s", "1m". Out in seconds. */
int rxu_parse_seconds(const char *s, double min, double max, double *out);
/* A double in [min, max]. */
int rxu_parse_double(const char *s, double min, double max, double *out);

/*
 * Print "rxray <verb>: <message>\n" to stderr. The project's one error
 * line; callers then return RXU_EXIT_USAGE or RXU_EXIT_RUNTIME.
 */
void rxu_err(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, returning RXU_EXIT_USAGE, for option errors: "--frame: ..." */
int rxu_usage_err(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Format one error line into a caller's buffer (err NULL or errlen 0: no
 * text) and return rc, so `return rxu_errf(err, errlen, -EINVAL, ...)`
 * reports and fails in one statement. The helper every library with the
 * "0 or -errno plus a line in err" rule uses.
 */
int rxu_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Pin the calling thread to core (>= 0). 0 or -errno. */
int rxu_pin_self(int core);
/* Number of cores this process may run on. */
int rxu_cores_available(void);
/* The i-th core of this process's affinity mask, or -1. */
int rxu_core_nth(int i);
/*
 * A core list "0-3,6" into cores[0..max): decimal numbers 0..4095 and
 * ranges a-b, comma-separated, no empty item, no backwards range, no core
 * twice, at most max cores. The count (>= 1), or -EINVAL / -ERANGE with
 * one "cores: ..." line in err. The one parser of core lists: --cores and
 * a sweep spec's `cores:` both call it.
 */
int rxu_cores_parse(const char *s, int *cores, int max, char *err, size_t errlen);

/*
 * UTF-8 (RFC 3629): the length of the well-formed character at s (1..4;
 * len bytes available), or 0 for a byte that does not start one (a stray
 * continuation byte, an overlong form, a surrogate U+D800..DFFF, a code
 * point above U+10FFFF, or a character cut short by len).
 */
size_t rxu_utf8_char(const char *s, size_t len);
/* Whether s[0..len) is well-formed UTF-8 without NUL bytes; on false,
 * *bad (may be NULL) gets the offset of the first bad byte. */
bool rxu_utf8_valid(const char *s, size_t len, size_t *bad);
/* The longest prefix of s[0..len) of at most max bytes that does not cut
 * a character (s assumed well-formed). */
size_t rxu_utf8_prefix(const char *s, size_t len, size_t max);
/* Cut a NUL-terminated s before a last character that snprintf (or any
 * byte-counting cut) left incomplete. */
void rxu_utf8_trim(char *s);

/*
 * Quote s for a POSIX shell so a pasted command passes it as one word,
 * exactly: 'as is' when it holds only [A-Za-z0-9_@%+=:,./-], else in
 * single quotes with each ' written as '\''. Into buf (n bytes, NUL
 * terminated). Returns the length the quoted form needs (as snprintf):
 * a result >= n means buf was too small and holds nothing usable.
 */
size_t rxu_shell_quote(const char *s, char *buf, size_t n);

/* Monotonic seconds (clock_gettime). */
double rxu_mono_seconds(void);

/*
 * Close every file descriptor from lowfd up, for a child between fork and
 * exec: what it runs must not hold the parent's files (a trial left alive
 * would keep a pipe that someone waits on open). close_range(2), else
 * (a kernel or an emulator without it) close(2) on each up to the open
 * files limit, at most 65536. Async-signal-safe.
 */
void rxu_close_fds_from(int lowfd);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_UTIL_H */
