/* SPDX-License-Identifier: MIT */
/*
 * JSON output for the two injection libraries (librxray_cupti.so,
 * librxray_nvtx.so): each is loaded into a foreign process on its own and
 * links nothing of rxray, so they share this one static helper instead.
 */
#ifndef RXRAY_CUPTI_JSON_OUT_H
#define RXRAY_CUPTI_JSON_OUT_H

#include <errno.h>
#include <stdio.h>

/* Write s as a JSON string: quotes and backslashes escaped, control
 * characters as \u00XX, other bytes as they are (names are ASCII). */
static inline void rxc_inj_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Opens "<path>.tmp" (its name into tmp) for writing: the output appears
 * whole or not at all. NULL with errno set on failure. */
static inline FILE *rxc_inj_tmp_open(const char *path, char *tmp, size_t len)
{
	snprintf(tmp, len, "%s.tmp", path);
	return fopen(tmp, "w");
}

/* Closes f and renames tmp over path: 0 or -errno. */
static inline int rxc_inj_tmp_commit(FILE *f, const char *tmp, const char *path)
{
	if (fclose(f))
		return -errno;
	return rename(tmp, path) ? -errno : 0;
}

#endif
