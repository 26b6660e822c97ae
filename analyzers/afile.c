/* SPDX-License-Identifier: MIT */
/* Atomic output files: temp + fsync + rename (see rxray/afile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rxray/afile.h"

int rxr_afile_open(struct rxr_afile *af, const char *path)
{
	memset(af, 0, sizeof(*af));
	if (!strcmp(path, "-")) {
		af->f = stdout;
		af->stdout_mode = 1;
		return 0;
	}
	int rc;
	af->path = strdup(path);
	af->tmp = malloc(strlen(path) + 16);
	if (!af->path || !af->tmp) {
		rc = -ENOMEM;
		goto fail;
	}
	snprintf(af->tmp, strlen(path) + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(af->tmp);
	if (fd < 0) {
		rc = -errno;
		free(af->tmp);
		af->tmp = NULL;
		goto fail;
	}
	af->f = fdopen(fd, "w");
	if (!af->f) {
		rc = -errno;
		close(fd);
		goto fail;
	}
	return 0;
fail:
	rxr_afile_abort(af);
	return rc;
}

int rxr_afile_commit(struct rxr_afile *af)
{
	int rc = 0;
	if (af->stdout_mode) {
		rc = fflush(stdout) ? -errno : 0;
		memset(af, 0, sizeof(*af));
		return rc;
	}
	if (fflush(af->f) || ferror(af->f) || fsync(fileno(af->f))) {
		rc = errno ? -errno : -EIO;
		goto fail;
	}
	fchmod(fileno(af->f), 0644);
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
	if (af->stdout_mode) {
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
