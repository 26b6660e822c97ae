/* SPDX-License-Identifier: MIT */
/*
 * JSON string output for the two injection libraries (librxray_cupti.so,
 * librxray_nvtx.so): each is loaded into a foreign process on its own and
 * links nothing of rxray, so they share this one static helper instead.
 */
#ifndef RXRAY_CUPTI_JSON_OUT_H
#define RXRAY_CUPTI_JSON_OUT_H

#include <stdio.h>

/* Write s as a JSON string: quotes and backslashes escaped, control
 * characters as \u00XX, other bytes as they are (names are ASCII). */
static inline void rxr_inj_json_str(FILE *f, const char *s)
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

#endif
