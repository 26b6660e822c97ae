/* SPDX-License-Identifier: MIT */
/* Escaping for the SVG and HTML every analyzer and the report write. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/util.h"

/*
 * XML-escape, replacing what XML 1.0 cannot hold with '?': control
 * characters but tab and newline, ill-formed UTF-8 (overlong forms, surrogates, code points
 * above U+10FFFF, cut characters: rxu_utf8_char's rules) and U+FFFE/FFFF.
 */
void rxa_xml_put(FILE *o, const char *s, size_t len)
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
			/* XML 1.0 holds tab and newline (a <pre> of commands needs them) */
			default: fputc((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? '?' : (int)c, o);
			}
			continue;
		}
		size_t n = rxu_utf8_char(s + i, len - i);
		if (!n || (n == 3 && c == 0xef && u[i + 1] == 0xbf && u[i + 2] >= 0xbe)) {
			fputc('?', o);
			continue;
		}
		fwrite(u + i, 1, n, o);
		i += n - 1;
	}
}

void rxa_xml_puts(FILE *o, const char *s)
{
	rxa_xml_put(o, s, strlen(s));
}

