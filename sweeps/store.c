/* SPDX-License-Identifier: MIT */
/*
 * The result store: <dir>/results.jsonl, one document per line, each
 * appended with one write and fsync'd, so a SIGKILL loses at most the
 * line being written. Reading back for --resume tolerates exactly that and
 * nothing more: only a torn last line (no newline) is repaired, and the
 * repair is reported; a complete line (newline-terminated) that does not
 * parse is somebody's data, so it stops the resume and is never cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rxray/result.h"
#include "rxray/sweep.h"

static int mkdir_p(const char *dir)
{
	char buf[600];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int read_all(int fd, char **out, size_t *len)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return -errno;
	char *buf = malloc((size_t)sb.st_size + 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < (size_t)sb.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)sb.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/* Sort one document into done/partial. */
static int store_take(struct sweep_store *st, json_t *doc)
{
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	if (schema && !strcmp(schema, SWEEP_POINT_SCHEMA)) {
		const char *key = json_string_value(json_object_get(doc, "key"));
		if (!key)
			return -EINVAL;
		json_object_del(st->partial, key);
		return json_object_set(st->done, key, doc);
	}
	const char *key = json_string_value(json_object_get(json_object_get(doc, "trial"), "key"));
	if (!key)
		return -EINVAL;
	json_t *arr = json_object_get(st->partial, key);
	if (!arr) {
		arr = json_array();
		if (!arr || json_object_set_new(st->partial, key, arr) < 0)
			return -ENOMEM;
	}
	return json_array_append(arr, doc);
}

static int store_load(struct sweep_store *st, char *note, size_t notelen, char *err,
		      size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = read_all(st->fd, &buf, &len);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", st->path, strerror(-rc));
		return rc;
	}
	size_t off = 0, line = 0;
	while (off < len && !rc) {
		char *nl = memchr(buf + off, '\n', len - off);
		size_t end = nl ? (size_t)(nl - buf) : len;
		line++;
		buf[end] = '\0';
		json_error_t je;
		json_t *doc = end > off ? json_loadb(buf + off, end - off, JSON_REJECT_DUPLICATES, &je)
					: NULL;
		/* torn: the write that died had not reached its newline yet */
		bool torn = !nl;
		if (!doc && end > off && json_error_code(&je) == json_error_duplicate_key) {
			/* never what this store wrote, torn or not: somebody's data */
			char field[160], why[200];
			if (rxr_json_dup_find(buf + off, end - off, field, sizeof(field)) == 1)
				snprintf(why, sizeof(why), "%s: key given twice", field);
			else
				snprintf(why, sizeof(why), "%s", je.text);
			rc = -EINVAL;
			snprintf(err, errlen,
				 "%s:%zu: %s; the file is left as it is: fix or remove that line, "
				 "then resume",
				 st->path, line, why);
			break;
		}
		if (!doc && end > off && torn) {
			/* the line being written when the sweep died: drop it */
			if (ftruncate(st->fd, (off_t)off) < 0) {
				rc = -errno;
				snprintf(err, errlen, "%s: cannot cut the truncated last line: %s",
					 st->path, strerror(errno));
				break;
			}
			st->dropped = 1;
			snprintf(note, notelen,
				 "%s:%zu: dropped a truncated last line (%zu bytes): the trial in "
				 "flight when the sweep stopped",
				 st->path, line, end - off);
			break;
		}
		if (!doc && end > off) {
			rc = -EINVAL;
			snprintf(err, errlen,
				 "%s:%zu: a complete line that is not a JSON document (%s); the "
				 "file is left as it is: fix or remove that line, then resume",
				 st->path, line, je.text);
			break;
		}
		if (doc) {
			rc = store_take(st, doc);
			json_decref(doc);
			if (rc < 0)
				snprintf(err, errlen, "%s:%zu: neither a trial nor a point summary",
					 st->path, line);
			else
				st->lines++;
		}
		if (!nl && doc && !rc) {
			/* a whole last line that lost only its newline: restore it */
			if (write(st->fd, "\n", 1) != 1) {
				rc = -EIO;
				snprintf(err, errlen, "%s:%zu: cannot restore the last line's newline",
					 st->path, line);
			} else {
				snprintf(note, notelen,
					 "%s:%zu: the last line had lost its newline; restored it",
					 st->path, line);
			}
		}
		off = end + 1;
	}
	free(buf);
	return rc;
}

int sweep_store_open(struct sweep_store *st, const char *dir, bool resume, char *note,
		     size_t notelen, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	st->fd = -1;
	if (note && notelen)
		note[0] = '\0';
	int rc = mkdir_p(dir);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(-rc));
		return rc;
	}
	snprintf(st->path, sizeof(st->path), "%s/results.jsonl", dir);
	st->done = json_object();
	st->partial = json_object();
	if (!st->done || !st->partial) {
		rc = -ENOMEM;
		goto fail;
	}
	st->fd = open(st->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (st->fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", st->path, strerror(errno));
		goto fail;
	}
	/* one sweep per folder: two appending into one file would interleave */
	if (flock(st->fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(err, errlen, "%s: %s", st->path,
			 rc == -EBUSY ? "another sweep is writing into this folder now"
				      : strerror(-rc));
		goto fail;
	}
	struct stat sb;
	if (fstat(st->fd, &sb) < 0) {
		rc = -errno;
		goto fail;
	}
	if (!resume && sb.st_size > 0) {
		rc = -EEXIST;
		snprintf(err, errlen,
			 "%s: holds results already; pass --resume to continue that sweep, or "
			 "choose another output (-o)",
			 st->path);
		goto fail;
	}
	if (resume) {
		char dummy[8];
		rc = store_load(st, note ? note : dummy, note ? notelen : sizeof(dummy), err,
				errlen);
		if (rc < 0)
			goto fail;
	}
	return 0;
fail:
	sweep_store_close(st);
	return rc;
}

int sweep_store_append(struct sweep_store *st, const json_t *doc)
{
	char *s = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (!s)
		return -ENOMEM;
	size_t len = strlen(s);
	char *line = realloc(s, len + 2);
	if (!line) {
		free(s);
		return -ENOMEM;
	}
	line[len] = '\n';
	line[len + 1] = '\0';
	/* where the line starts: the file's end (O_APPEND, and the flock keeps
	 * every other writer out) */
	off_t at = lseek(st->fd, 0, SEEK_END);
	int rc = at < 0 ? -errno : 0;
	size_t put = 0;
	while (!rc && put < len + 1) {
		ssize_t n = write(st->fd, line + put, len + 1 - put);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		put += (size_t)n;
	}
	if (!rc && fsync(st->fd) < 0)
		rc = -errno;
	/*
	 * A full disk or a file size limit (ENOSPC, EFBIG) takes the write
	 * after a short one: the part of the line already written is cut
	 * again (a shrink needs no space), so the file ends with the last
	 * whole line. Where even that fails, --resume drops the torn line and
	 * says so.
	 */
	if (rc && at >= 0 && put)
		(void)!ftruncate(st->fd, at);
	free(line);
	return rc;
}

void sweep_store_close(struct sweep_store *st)
{
	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	json_decref(st->done);
	json_decref(st->partial);
	st->done = st->partial = NULL;
}

json_t *sweep_summary_json(const struct sweep_point *p, const struct sweep_search_cfg *cfg,
			   const struct sweep_search_result *r)
{
	json_t *ndr = r->ndr_trial >= 0 ? r->trials[r->ndr_trial].doc : NULL;
	json_t *top = r->top_trial >= 0 ? r->trials[r->top_trial].doc : NULL;
	return json_pack("{s:s, s:s, s:o, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:b, s:f, "
			 "s:i, s:O, s:O}",
			 "schema", SWEEP_POINT_SCHEMA, "key", p->key, "knobs", sweep_point_knobs(p),
			 "status", sweep_point_status_name(r->status), "reason", r->reason,
			 "ndr_mpps", r->ndr_pps / 1e6, "pdr_mpps", r->pdr_pps / 1e6, "ndr_loss",
			 cfg->ndr_loss, "pdr_loss", cfg->pdr_loss, "max_offered_mpps",
			 r->max_offered_pps / 1e6, "nic_max_mpps", r->nic_max_pps / 1e6,
			 "generator_limited", r->generator_limited, "line_limited", r->line_limited,
			 "line_mpps", r->line_pps / 1e6, "trials", (int)r->ntrials,
			 "ndr_run", ndr ? ndr : json_null(), "top_run", top ? top : json_null());
}
