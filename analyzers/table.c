/* SPDX-License-Identifier: MIT */
/*
 * Text tables (markdown, CSV, HTML) and the number format of their
 * cells. What goes in them is the callers': the ceiling's tables are
 * ceiling_table.c's, a diff's are diff.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"

int rxa_table_open(const char *title, size_t ncols, const char *const *head,
		   struct rxa_table **out)
{
	*out = NULL;
	struct rxa_table *t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->ncols = ncols;
	t->head = calloc(ncols, sizeof(char *));
	if (!t->head || (title && !(t->title = strdup(title))))
		goto fail;
	for (size_t i = 0; i < ncols; i++)
		if (!(t->head[i] = strdup(head[i])))
			goto fail;
	t->cur = ncols;
	*out = t;
	return 0;
fail:
	rxa_table_free(t);
	return -ENOMEM;
}

void rxa_table_free(struct rxa_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->head && i < t->ncols; i++)
		free(t->head[i]);
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->head);
	free(t->cells);
	free(t->title);
	free(t);
}

int rxa_table_row(struct rxa_table *t)
{
	while (t->nrows && t->cur < t->ncols) /* pad a short previous row */
		if (rxa_table_cell(t, "%s", ""))
			return -ENOMEM;
	if (t->nrows == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 16;
		char **ncl = realloc(t->cells, nc * t->ncols * sizeof(char *));
		if (!ncl)
			return -ENOMEM;
		t->cells = ncl;
		t->cap = nc;
	}
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = NULL;
	t->nrows++;
	t->cur = 0;
	return 0;
}

int rxa_table_cell(struct rxa_table *t, const char *fmt, ...)
{
	if (!t->nrows || t->cur >= t->ncols)
		return -EINVAL;
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	t->cells[(t->nrows - 1) * t->ncols + t->cur++] = s;
	return 0;
}

static const char *cell(const struct rxa_table *t, size_t r, size_t c)
{
	const char *s = t->cells[r * t->ncols + c];
	return s ? s : "";
}

static void md_put(FILE *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", o);
		else if (*s == '\n')
			fputc(' ', o);
		else
			fputc(*s, o);
	}
}

int rxa_table_write_md(const struct rxa_table *t, FILE *o)
{
	fputc('|', o);
	for (size_t c = 0; c < t->ncols; c++) {
		fputc(' ', o);
		md_put(o, t->head[c]);
		fputs(" |", o);
	}
	fputs("\n|", o);
	for (size_t c = 0; c < t->ncols; c++)
		fputs("---|", o);
	fputc('\n', o);
	for (size_t r = 0; r < t->nrows; r++) {
		fputc('|', o);
		for (size_t c = 0; c < t->ncols; c++) {
			fputc(' ', o);
			md_put(o, cell(t, r, c));
			fputs(" |", o);
		}
		fputc('\n', o);
	}
	return ferror(o) ? -EIO : 0;
}

static void csv_put(FILE *o, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, o);
		return;
	}
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', o);
		fputc(*s, o);
	}
	fputc('"', o);
}

int rxa_table_write_csv(const struct rxa_table *t, FILE *o)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', o);
		csv_put(o, t->head[c]);
	}
	fputc('\n', o);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', o);
			csv_put(o, cell(t, r, c));
		}
		fputc('\n', o);
	}
	return ferror(o) ? -EIO : 0;
}

int rxa_table_write_html(const struct rxa_table *t, FILE *o)
{
	fputs("<table>\n<thead><tr>", o);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs("<th>", o);
		rxa_xml_puts(o, t->head[c]);
		fputs("</th>", o);
	}
	fputs("</tr></thead>\n<tbody>\n", o);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", o);
		for (size_t c = 0; c < t->ncols; c++) {
			fputs("<td>", o);
			rxa_xml_puts(o, cell(t, r, c));
			fputs("</td>", o);
		}
		fputs("</tr>\n", o);
	}
	fputs("</tbody>\n</table>\n", o);
	return ferror(o) ? -EIO : 0;
}

void rxa_fmt_num(char *buf, size_t n, double v, int decimals)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f", decimals, v);
}
