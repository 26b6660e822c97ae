/* SPDX-License-Identifier: MIT */
/*
 * One document, two renderings: every call writes the same content as
 * markdown (report.md) and as HTML (report.html), so the two never drift.
 */
#ifndef RXRAY_REPORT_DOC_H
#define RXRAY_REPORT_DOC_H

#include <stdio.h>

#include "rxray/analyze.h"

struct doc {
	FILE *md, *html;
};

/* <head>, inline CSS and the page title; rxo_doc_close ends the page. */
void rxo_doc_open(struct doc *d, const char *title);
void rxo_doc_close(struct doc *d);
/* Heading of level 1..3 with an HTML id (anchor). */
void rxo_doc_h(struct doc *d, int level, const char *id, const char *text);
/* A paragraph (plain text, escaped). */
void rxo_doc_p(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bulleted list items; cls marks HTML items ("warn") or NULL. */
void rxo_doc_ul_begin(struct doc *d);
void rxo_doc_li(struct doc *d, const char *cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rxo_doc_ul_end(struct doc *d);
/* Preformatted text (a spec, commands). */
void rxo_doc_code(struct doc *d, const char *text);
/* A table: md pipes / HTML <table class="t">. */
int rxo_doc_table(struct doc *d, const struct rxa_table *t);
/*
 * A figure: markdown links rel (a file next to report.md), HTML inlines
 * svg (an <svg> element, prolog stripped). collapsed: HTML <details>.
 */
void rxo_doc_svg(struct doc *d, const char *caption, const char *rel, const char *svg, int collapsed);
/* HTML only: a line of links to sections (ids[i] labelled names[i]). */
void rxo_doc_nav(struct doc *d, const char *const *ids, const char *const *names, size_t n);

#endif
