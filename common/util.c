/* SPDX-License-Identifier: MIT */
/* Numbers with units, the one-line error convention, core pinning. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rxray/util.h"

/* The unsigned number s starts with (no sign), finite; *end after it. */
static int lead_number(const char *s, double *v, char **end)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtod(s, end);
	if (*end == s || errno || !isfinite(*v))
		return -EINVAL;
	return 0;
}

/* Split "12.5M" into 12.5 and a multiplier; the whole string must parse. */
static int parse_scaled(const char *s, double *out, bool allow_frac_plain)
{
	if (!s)
		return -EINVAL;
	for (const char *c = s; *c; c++)
		if (isspace((unsigned char)*c))
			return -EINVAL;
	char *end;
	double v;
	if (lead_number(s, &v, &end))
		return -EINVAL;
	double mul = 1;
	if (!strcmp(end, "")) {
		mul = 1;
	} else if (!strcmp(end, "k") || !strcmp(end, "K")) {
		mul = 1e3;
	} else if (!strcmp(end, "m") || !strcmp(end, "M")) {
		mul = 1e6;
	} else if (!strcmp(end, "g") || !strcmp(end, "G")) {
		mul = 1e9;
	} else if (!strcmp(end, "Ki")) {
		mul = 1024.0;
	} else if (!strcmp(end, "Mi")) {
		mul = 1024.0 * 1024;
	} else if (!strcmp(end, "Gi")) {
		mul = 1024.0 * 1024 * 1024;
	} else {
		return -EINVAL;
	}
	if (mul == 1 && !allow_frac_plain && v != floor(v))
		return -EINVAL;
	*out = v * mul;
	return 0;
}

int rxu_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	double v;
	if (parse_scaled(s, &v, false) < 0)
		return -EINVAL;
	if (v != floor(v))
		return -EINVAL;
	if (v < (double)min || v > (double)max || v > 1.8e19)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int rxu_parse_rate(const char *s, double *pps)
{
	if (s && (!strcmp(s, "max") || !strcmp(s, "0"))) {
		*pps = 0;
		return 0;
	}
	double v;
	if (parse_scaled(s, &v, true) < 0)
		return -EINVAL;
	if (v <= 0 || v > 1e10)
		return -ERANGE;
	*pps = v;
	return 0;
}

int rxu_parse_seconds(const char *s, double min, double max, double *out)
{
	char *end;
	double v;
	if (lead_number(s, &v, &end))
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		;
	else if (!strcmp(end, "ms"))
		v /= 1e3;
	else if (!strcmp(end, "us"))
		v /= 1e6;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60;
	else
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int rxu_parse_double(const char *s, double min, double max, double *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static void verr(const char *verb, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* one line, always */
	for (char *c = msg; *c; c++)
		if (*c == '\n')
			*c = ' ';
	if (verb && *verb)
		fprintf(stderr, "rxray %s: %s\n", verb, msg);
	else
		fprintf(stderr, "rxray: %s\n", msg);
}

void rxu_err(const char *verb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(verb, fmt, ap);
	va_end(ap);
}

int rxu_usage_err(const char *verb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(verb, fmt, ap);
	va_end(ap);
	return RXU_EXIT_USAGE;
}

int rxu_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int rxu_pin_self(int core)
{
	if (core < 0)
		return -EINVAL;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(core, &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	return rc ? -rc : 0;
}

int rxu_cores_available(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

/* Decimal digits at *s into *v (at most 4095). The end, or NULL. */
static const char *core_num(const char *s, long *v)
{
	if (!isdigit((unsigned char)*s))
		return NULL;
	long n = 0;
	for (; isdigit((unsigned char)*s); s++)
		if ((n = n * 10 + (*s - '0')) > 4095)
			return NULL;
	*v = n;
	return s;
}

int rxu_cores_parse(const char *s, int *cores, int max, char *err, size_t errlen)
{
	const char *at = s ? s : "";
	int n = 0;
	if (!*at)
		return rxu_errf(err, errlen, -EINVAL, "cores: expected a core list like \"0-3,6\", got ''");
	while (*at) {
		long a, b;
		const char *end = core_num(at, &a);
		if (end && *end == '-')
			end = core_num(end + 1, &b);
		else
			b = a;
		if (!end || (*end && (*end != ',' || !end[1])))
			return rxu_errf(err, errlen, -EINVAL,
					"cores: expected a core list like \"0-3,6\", got '%s'", s);
		if (b < a)
			return rxu_errf(err, errlen, -EINVAL, "cores: range %ld-%ld runs backwards", a, b);
		for (long c = a; c <= b; c++) {
			for (int j = 0; j < n; j++)
				if (cores[j] == c)
					return rxu_errf(err, errlen, -EINVAL, "cores: core %ld is listed twice", c);
			if (n >= max)
				return rxu_errf(err, errlen, -ERANGE, "cores: more than %d cores", max);
			cores[n++] = (int)c;
		}
		at = *end ? end + 1 : end;
	}
	return n;
}

int rxu_core_nth(int i)
{
	cpu_set_t set;
	if (i < 0 || sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && i-- == 0)
			return c;
	return -1;
}

size_t rxu_utf8_char(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	if (!len)
		return 0;
	unsigned c = u[0];
	if (c < 0x80)
		return 1;
	/* lead byte -> length and the allowed range of the second byte (which
	 * is what rules out overlong forms, surrogates and > U+10FFFF) */
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (len < n || u[1] < lo || u[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if ((u[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

bool rxu_utf8_valid(const char *s, size_t len, size_t *bad)
{
	for (size_t i = 0; i < len;) {
		size_t k = s[i] ? rxu_utf8_char(s + i, len - i) : 0;
		if (!k) {
			if (bad)
				*bad = i;
			return false;
		}
		i += k;
	}
	return true;
}

size_t rxu_utf8_prefix(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	size_t i = max;
	/* back up over continuation bytes to the start of the cut character */
	while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	return i;
}

void rxu_utf8_trim(char *s)
{
	size_t len = strlen(s), i = len;
	/* the last lead byte is at most 3 bytes back */
	while (i > 0 && len - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || (unsigned char)s[i - 1] < 0xc0)
		return;
	i--;
	unsigned c = (unsigned char)s[i];
	size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (len - i < need)
		s[i] = '\0';
}

size_t rxu_shell_quote(const char *s, char *buf, size_t n)
{
	bool plain = *s != '\0';
	for (const char *c = s; *c && plain; c++)
		plain = isalnum((unsigned char)*c) || strchr("_@%+=:,./-", *c);
	size_t len = 0;
#define PUT(ch)                                  \
	do {                                     \
		if (len + 1 < n)                 \
			buf[len] = (char)(ch);   \
		len++;                           \
	} while (0)
	if (plain) {
		for (const char *c = s; *c; c++)
			PUT(*c);
	} else {
		PUT('\'');
		for (const char *c = s; *c; c++) {
			if (*c == '\'') {
				PUT('\'');
				PUT('\\');
				PUT('\'');
				PUT('\'');
			} else {
				PUT(*c);
			}
		}
		PUT('\'');
	}
#undef PUT
	if (n)
		buf[len < n ? len : n - 1] = '\0';
	return len;
}

double rxu_mono_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rxu_close_fds_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0u) == 0)
		return;
#endif
	struct rlimit rl;
	int top =
	    getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
	for (int fd = lowfd; fd < top; fd++)
		close(fd);
}
