/* SPDX-License-Identifier: MIT */
/*
 * The one output-file writer of rxray (results/: every layer that writes
 * links rxray_results).
 * What a path given as output becomes:
 *   "-"                      stdout; commit flushes it.
 *   absent or regular file   atomic: a temp file in the target's folder,
 *                            fsync, rename over the target on commit, so a
 *                            reader never sees half a file and a failure
 *                            leaves the old file. An existing file keeps
 *                            its mode (and owner, where allowed); a new one
 *                            gets 0666 less the umask, as fopen would.
 *   symlink                  followed: the link's final target is written
 *                            as above and the link stays a link.
 *   device, FIFO, socket,    written through (opened for writing, never
 *   /dev/stdout, /dev/fd/N   created, truncated or replaced): -o /dev/null
 *                            as root must not turn the node into a file.
 *   directory                -EISDIR (callers: exit 2).
 * Nothing is half written: abort, or any failure, removes the temp file.
 */
#ifndef RXRAY_AFILE_H
#define RXRAY_AFILE_H

#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rxr_afile_kind {
	RXR_AFILE_ATOMIC = 0, /* temp + rename */
	RXR_AFILE_STDOUT,     /* "-": f is stdout */
	RXR_AFILE_THROUGH,    /* device, FIFO, /dev/fd/N: f writes to it directly */
};

struct rxr_afile {
	FILE *f;                  /* write here; owned until commit/abort */
	char *path;               /* target after following links (owned) */
	char *tmp;                /* temp path (owned), atomic only */
	enum rxr_afile_kind kind;
	mode_t mode;              /* mode the target gets, atomic only */
	uid_t uid;                /* owner to keep (existing target), atomic only */
	gid_t gid;
	int keep_owner;
};

/*
 * Open path for writing as described above. 0 or -errno: -EISDIR for a
 * directory (or a path ending in '/'), -ENOENT when its folder does not
 * exist, -ELOOP for a symlink loop, else the errno of the failing call.
 * err (may be NULL) gets "<path>: <reason>" on failure. af is zeroed on
 * failure and safe to abort.
 */
int rxr_afile_open_err(struct rxr_afile *af, const char *path, char *err, size_t errlen);
/* Same without the message. */
int rxr_afile_open(struct rxr_afile *af, const char *path);
/*
 * Flush and finish: atomic -> fsync, set mode, close, rename over the
 * target, fsync the folder; through/stdout -> flush (and close). 0 or
 * -errno; a write error seen earlier on f (ferror) fails the commit. On
 * failure the temp file is removed. Releases af either way.
 */
int rxr_afile_commit(struct rxr_afile *af);
/* Close and remove the temp file; releases af. Accepts a zeroed af. */
void rxr_afile_abort(struct rxr_afile *af);
/*
 * Why writing af failed, as -errno: flushes what is buffered and returns
 * its error; a stream that failed earlier (stdio keeps the flag, not the
 * errno) is -ENOSPC when its filesystem has no block or inode left,
 * else -EIO. Call before commit or abort, after a write failed.
 */
int rxr_afile_write_error(struct rxr_afile *af);
/* Write len bytes of s to path through the writer above. 0 or -errno. */
int rxr_afile_write_string(const char *path, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
