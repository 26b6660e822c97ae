/* SPDX-License-Identifier: MIT */
/* The one output-file writer (see rxray/afile.h for what each path becomes). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rxray/afile.h"
#include "rxray/util.h"

/* Symlink hops followed before giving up, as the kernel's MAXSYMLINKS. */
#define AFILE_MAX_HOPS 40

/*
 * /dev/stdout, /dev/fd/1, /proc/self/fd/1 name an open descriptor, not a
 * file: replacing what they point at would detach it from the shell's
 * redirection (or fail for a pipe), so they are written through the fd.
 */
static int fd_of_path(const char *p)
{
	if (!strcmp(p, "/dev/stdout"))
		return 1;
	if (!strcmp(p, "/dev/stderr"))
		return 2;
	const char *num = NULL;
	if (!strncmp(p, "/dev/fd/", 8))
		num = p + 8;
	else if (!strncmp(p, "/proc/self/fd/", 14))
		num = p + 14;
	if (!num || !*num)
		return -1;
	char *end;
	long v = strtol(num, &end, 10);
	return *end || v < 0 || v > INT_MAX ? -1 : (int)v;
}

/* The folder part of p ("." when none) into buf. */
static void dir_of(const char *p, char *buf, size_t n)
{
	const char *slash = strrchr(p, '/');
	if (!slash)
		snprintf(buf, n, ".");
	else if (slash == p)
		snprintf(buf, n, "/");
	else
		snprintf(buf, n, "%.*s", (int)(slash - p), p);
}

/*
 * Follow symlinks to the final target (which may not exist yet: a
 * dangling link is written through to the file it names). *fd >= 0 when a
 * hop names an open descriptor. 0 or -errno; cur gets the target.
 */
static int resolve(const char *path, char *cur, size_t n, struct stat *st, bool *exists, int *fd)
{
	if (snprintf(cur, n, "%s", path) >= (int)n)
		return -ENAMETOOLONG;
	for (int hop = 0; hop < AFILE_MAX_HOPS; hop++) {
		if ((*fd = fd_of_path(cur)) >= 0)
			return 0;
		if (lstat(cur, st)) {
			if (errno != ENOENT)
				return -errno;
			*exists = false;
			return 0;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = true;
			return 0;
		}
		char tgt[PATH_MAX], dir[PATH_MAX];
		ssize_t k = readlink(cur, tgt, sizeof(tgt) - 1);
		if (k < 0)
			return -errno;
		tgt[k] = '\0';
		if (tgt[0] == '/') {
			snprintf(cur, n, "%s", tgt);
		} else {
			dir_of(cur, dir, sizeof(dir));
			if (snprintf(cur, n, "%s/%s", dir, tgt) >= (int)n)
				return -ENAMETOOLONG;
		}
	}
	return -ELOOP;
}

/* af->f writes to fd, which it then owns (closed here on failure). */
static int afile_stream(struct rxr_afile *af, int fd, enum rxr_afile_kind kind)
{
	af->f = fdopen(fd, "w");
	if (!af->f) {
		int e = errno;
		close(fd);
		return -e;
	}
	af->kind = kind;
	return 0;
}

static int open_through(struct rxr_afile *af, int fd, const char *path)
{
	int nfd;
	if (fd >= 0)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	else
		nfd = open(path ? path : "", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (nfd < 0)
		return -errno;
	return afile_stream(af, nfd, RXR_AFILE_THROUGH);
}

static int open_atomic(struct rxr_afile *af, const char *target, const struct stat *st, bool exists)
{
	char dir[PATH_MAX];
	dir_of(target, dir, sizeof(dir));
	af->path = strdup(target);
	af->tmp = malloc(strlen(dir) + 32);
	if (!af->path || !af->tmp)
		return -ENOMEM;
	snprintf(af->tmp, strlen(dir) + 32, "%s/.rxray-tmp.XXXXXX", dir);
	int fd = mkostemp(af->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(af->tmp);
		af->tmp = NULL;
		return -e;
	}
	if (exists) {
		af->mode = st->st_mode & 07777;
		af->uid = st->st_uid;
		af->gid = st->st_gid;
		af->keep_owner = st->st_uid != geteuid() || st->st_gid != getegid();
	} else {
		mode_t um = umask(0);
		umask(um);
		af->mode = 0666 & ~um;
	}
	return afile_stream(af, fd, RXR_AFILE_ATOMIC);
}

int rxr_afile_open_err(struct rxr_afile *af, const char *path, char *err, size_t errlen)
{
	memset(af, 0, sizeof(*af));
	if (!path || !*path)
		return rxu_errf(err, errlen, -ENOENT, "(output): empty path");
	if (!strcmp(path, "-")) {
		af->f = stdout;
		af->kind = RXR_AFILE_STDOUT;
		return 0;
	}
	char target[PATH_MAX];
	struct stat st;
	bool exists = false;
	int fd = -1;
	int rc;
	size_t len = strlen(path);
	if (path[len - 1] == '/') {
		rc = -EISDIR;
		goto fail;
	}
	rc = resolve(path, target, sizeof(target), &st, &exists, &fd);
	if (rc)
		goto fail;
	if (fd >= 0) {
		rc = open_through(af, fd, NULL);
	} else if (exists && S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
	} else if (exists && !S_ISREG(st.st_mode)) {
		rc = open_through(af, -1, target);
	} else {
		rc = open_atomic(af, target, &st, exists);
	}
	if (!rc)
		return 0;
fail:
	rxr_afile_abort(af);
	if (rc == -EISDIR)
		return rxu_errf(err, errlen, rc, "%s: is a directory (a file is expected)", path);
	return rxu_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
}

int rxr_afile_open(struct rxr_afile *af, const char *path)
{
	return rxr_afile_open_err(af, path, NULL, 0);
}

/* fsync the folder so the rename survives a crash; best effort. */
static void sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	dir_of(path, dir, sizeof(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int rxr_afile_write_error(struct rxr_afile *af)
{
	if (!af->f)
		return -EIO;
	errno = 0;
	if (fflush(af->f) && errno)
		return -errno;
	struct statvfs v;
	if (ferror(af->f) && !fstatvfs(fileno(af->f), &v) &&
	    (v.f_bavail == 0 || (v.f_files && v.f_favail == 0)))
		return -ENOSPC;
	return -EIO;
}

int rxr_afile_commit(struct rxr_afile *af)
{
	int rc = 0;
	if (af->kind == RXR_AFILE_STDOUT) {
		errno = 0;
		rc = fflush(stdout) || ferror(stdout) ? (errno ? -errno : -EIO) : 0;
		memset(af, 0, sizeof(*af));
		return rc;
	}
	if (af->kind == RXR_AFILE_THROUGH) {
		errno = 0;
		bool bad = fflush(af->f) || ferror(af->f);
		int e = errno ? errno : bad ? -rxr_afile_write_error(af) : 0;
		if (fclose(af->f) && !bad) {
			bad = true;
			e = errno;
		}
		memset(af, 0, sizeof(*af));
		return bad ? (e ? -e : -EIO) : 0;
	}
	errno = 0;
	if (fflush(af->f) || ferror(af->f) || fsync(fileno(af->f))) {
		rc = errno ? -errno : rxr_afile_write_error(af);
		goto fail;
	}
	/* an existing file's owner first: fchown may clear set-id bits */
	if (af->keep_owner && fchown(fileno(af->f), af->uid, af->gid)) {
		/* not allowed (not root): the file becomes ours, as any editor's would */
	}
	if (fchmod(fileno(af->f), af->mode)) {
		rc = -errno;
		goto fail;
	}
	if (fclose(af->f)) {
		af->f = NULL;
		rc = -errno;
		goto fail;
	}
	af->f = NULL;
	if (rename(af->tmp, af->path)) {
		rc = -errno;
		goto fail;
	}
	sync_dir_of(af->path);
	free(af->tmp);
	free(af->path);
	memset(af, 0, sizeof(*af));
	return 0;
fail:
	rxr_afile_abort(af);
	return rc;
}

void rxr_afile_abort(struct rxr_afile *af)
{
	if (!af)
		return;
	if (af->kind == RXR_AFILE_STDOUT) {
		fflush(stdout);
		memset(af, 0, sizeof(*af));
		return;
	}
	if (af->f)
		fclose(af->f);
	if (af->tmp)
		unlink(af->tmp);
	free(af->tmp);
	free(af->path);
	memset(af, 0, sizeof(*af));
}

int rxr_afile_write_string(const char *path, const char *s, size_t len)
{
	struct rxr_afile af;
	int rc = rxr_afile_open(&af, path);
	if (rc)
		return rc;
	if (fwrite(s, 1, len, af.f) != len) {
		rxr_afile_abort(&af);
		return -EIO;
	}
	return rxr_afile_commit(&af);
}
