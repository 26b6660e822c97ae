/* SPDX-License-Identifier: MIT */
/* Checked input files and a capped line reader (see rxray/input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rxray/input.h"
#include "rxray/util.h"

int rxr_in_exit_code(int rc)
{
	return rc == -ENOMEM || rc == -EIO ? RXU_EXIT_RUNTIME : RXU_EXIT_USAGE;
}

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m)  ? "a FIFO"
	       : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

/* The verdict on one stat result; shared by the path and descriptor checks. */
static int judge(const char *path, const struct stat *st, bool dir_ok, uint64_t max_size,
		 bool *is_dir, char *err, size_t errlen)
{
	if (is_dir)
		*is_dir = S_ISDIR(st->st_mode);
	if (S_ISDIR(st->st_mode)) {
		if (dir_ok)
			return 0;
		return rxu_errf(err, errlen, -EISDIR, "%s: is a directory (a file is expected)", path);
	}
	if (!S_ISREG(st->st_mode))
		return rxu_errf(err, errlen, -EINVAL, "%s: is %s (a regular file is expected)", path,
				kind_of(st->st_mode));
	if (max_size && (uint64_t)st->st_size > max_size)
		return rxu_errf(err, errlen, -EFBIG, "%s: %lld bytes, over the %llu-byte cap", path,
				(long long)st->st_size, (unsigned long long)max_size);
	return 0;
}

int rxr_in_check(const char *path, bool dir_ok, uint64_t max_size, bool *is_dir, char *err,
		 size_t errlen)
{
	struct stat st;
	if (!path || !*path)
		return rxu_errf(err, errlen, -ENOENT, "(input): empty path");
	if (stat(path, &st)) {
		int e = errno;
		return rxu_errf(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	return judge(path, &st, dir_ok, max_size, is_dir, err, errlen);
}

int rxr_in_open(const char *path, uint64_t max_size, FILE **out, char *err, size_t errlen)
{
	*out = NULL;
	if (path && !strcmp(path, "-")) {
		*out = stdin;
		return 0;
	}
	if (!path || !*path)
		return rxu_errf(err, errlen, -ENOENT, "(input): empty path");
	/* O_NONBLOCK: opening a FIFO with no writer must not block before the check */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return rxu_errf(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	struct stat st;
	int rc;
	if (fstat(fd, &st)) {
		rc = -errno;
		rxu_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
		goto fail;
	}
	if ((rc = judge(path, &st, false, max_size, NULL, err, errlen)))
		goto fail;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		rc = -errno;
		rxu_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
		goto fail;
	}
	*out = fdopen(fd, "r");
	if (!*out) {
		rc = -errno;
		rxu_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	close(fd);
	return rc;
}

int rxr_in_read_all(const char *path, uint64_t max_size, char **buf, size_t *len, char *err,
		    size_t errlen)
{
	FILE *f;
	*buf = NULL;
	*len = 0;
	int rc = rxr_in_open(path, max_size, &f, err, errlen);
	if (rc)
		return rc;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	if (!b) {
		rc = rxu_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (;;) {
		if (cap - n < 2) {
			/* the size was checked at open; a file growing past the cap is refused too */
			if (max_size && cap > max_size) {
				rc = rxu_errf(err, errlen, -EFBIG, "%s: over the %llu-byte cap", path,
					      (unsigned long long)max_size);
				goto out;
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				rc = rxu_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
				goto out;
			}
			b = nb;
			cap *= 2;
		}
		size_t k = fread(b + n, 1, cap - n - 1, f);
		n += k;
		if (k)
			continue;
		if (ferror(f)) {
			rc = rxu_errf(err, errlen, -EIO, "%s: read error", path);
			goto out;
		}
		break;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
out:
	free(b);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* Read-ahead block of the line reader: large enough that memchr, not the
 * per-call overhead, sets the pace on a 260 MB results file. */
#define LINES_BLOCK (256u << 10)

void rxr_lines_init(struct rxr_lines *L, FILE *in, const char *src, size_t max)
{
	memset(L, 0, sizeof(*L));
	L->in = in;
	L->src = src ? src : "(input)";
	L->max = max ? max : RXR_IN_MAX_LINE;
}

/* Append k bytes to the current line (n bytes so far); 0 or -errno. */
static int lines_append(struct rxr_lines *L, size_t *n, const char *p, size_t k, char *err,
			size_t errlen)
{
	if (*n + k > L->max)
		return rxu_errf(err, errlen, -E2BIG, "%s:%d: line longer than %zu bytes (the cap)",
				L->src, L->line, L->max);
	if (*n + k + 1 > L->cap) {
		size_t ncap = L->cap ? L->cap : 256;
		while (ncap < *n + k + 1)
			ncap *= 2;
		char *nb = realloc(L->buf, ncap);
		if (!nb)
			return rxu_errf(err, errlen, -ENOMEM, "%s:%d: out of memory", L->src, L->line);
		L->buf = nb;
		L->cap = ncap;
	}
	memcpy(L->buf + *n, p, k);
	*n += k;
	return 0;
}

int rxr_lines_next(struct rxr_lines *L, size_t *len, bool *nl, char *err, size_t errlen)
{
	size_t n = 0;
	int rc;
	*len = 0;
	*nl = false;
	L->line++;
	L->off = L->pos;
	if (!L->rb && !(L->rb = malloc(LINES_BLOCK)))
		return rxu_errf(err, errlen, -ENOMEM, "%s:%d: out of memory", L->src, L->line);
	for (;;) {
		if (L->rpos == L->rlen) {
			L->rpos = 0;
			L->rlen = fread(L->rb, 1, LINES_BLOCK, L->in);
			if (!L->rlen) {
				if (ferror(L->in))
					return rxu_errf(err, errlen, -EIO, "%s:%d: read error", L->src,
							L->line);
				break; /* end of input */
			}
		}
		const char *p = L->rb + L->rpos;
		size_t avail = L->rlen - L->rpos;
		const char *e = memchr(p, '\n', avail);
		size_t k = e ? (size_t)(e - p) : avail;
		if ((rc = lines_append(L, &n, p, k, err, errlen)))
			return rc;
		L->rpos += k + (e != NULL);
		L->pos += k + (e != NULL);
		if (e) {
			*nl = true;
			break;
		}
	}
	if (!*nl && !n) {
		L->line--;
		return 0;
	}
	if (!L->buf && (rc = lines_append(L, &n, "", 0, err, errlen)))
		return rc;
	L->buf[n] = '\0';
	*len = n;
	return 1;
}

void rxr_lines_free(struct rxr_lines *L)
{
	free(L->buf);
	free(L->rb);
	L->buf = L->rb = NULL;
	L->cap = 0;
}
