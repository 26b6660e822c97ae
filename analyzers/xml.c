/* SPDX-License-Identifier: MIT */
/* Escaping for the SVG and HTML every analyzer and the report write. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rxray/analyze.h"

/* XML-escape, replacing control characters and invalid UTF-8 with '?'. */
void rxr_xml_put(FILE *o, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len; i++) {
		unsigned c = u[i];
		if (c < 0x80) {
			switch (c) {
			case '&': fputs("&amp;", o); break;
			case '<': fputs("&lt;", o); break;
			case '>': fputs("&gt;", o); break;
			case '"': fputs("&quot;", o); break;
			case '\'': fputs("&#39;", o); break;
			default: fputc(c < 0x20 && c != '\t' ? '?' : (int)c, o);
			}
			continue;
		}
		size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
		if (c >= 0xf5)
			n = 0;
		bool ok = n && i + n <= len;
		for (size_t k = 1; ok && k < n; k++)
			ok = (u[i + k] & 0xc0) == 0x80;
		if (!ok) {
			fputc('?', o);
			continue;
		}
		fwrite(u + i, 1, n, o);
		i += n - 1;
	}
}

void rxr_xml_puts(FILE *o, const char *s)
{
	rxr_xml_put(o, s, strlen(s));
}

