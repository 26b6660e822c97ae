/* SPDX-License-Identifier: MIT */
/* Markdown + HTML twin writer for the report (see doc.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "rxray/analyze.h"


static const char css[] =
	"body{font:14px/1.45 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;"
	"max-width:1280px;padding:0 16px;color:#222}\n"
	"h1{font-size:24px}h2{font-size:19px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}"
	"h3{font-size:16px}\n"
	"table.t{border-collapse:collapse;margin:8px 0 16px;font-size:12.5px}\n"
	"table.t th,table.t td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}\n"
	"table.t th{background:#f3f3f3}table.t tr:nth-child(even) td{background:#fafafa}\n"
	"pre{background:#f6f8fa;padding:10px;overflow-x:auto;font-size:12.5px}\n"
	"li.warn{color:#9a4a00}figure{margin:12px 0}figcaption{font-size:12px;color:#555}\n"
	"details{margin:6px 0}summary{cursor:pointer}nav{margin:8px 0 16px;font-size:13px}\n";

void rxo_doc_open(struct doc *d, const char *title)
{
	fprintf(d->md, "# %s\n\n", title);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", d->html);
	rxa_xml_puts(d->html, title);
	fprintf(d->html, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
	rxa_xml_puts(d->html, title);
	fputs("</h1>\n", d->html);
}

void rxo_doc_close(struct doc *d)
{
	fputs("</body>\n</html>\n", d->html);
}

void rxo_doc_h(struct doc *d, int level, const char *id, const char *text)
{
	fprintf(d->md, "\n%.*s %s\n\n", level, "####", text);
	fprintf(d->html, "<h%d id=\"%s\">", level, id);
	rxa_xml_puts(d->html, text);
	fprintf(d->html, "</h%d>\n", level);
}

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

void rxo_doc_p(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	if (!s)
		return;
	fprintf(d->md, "%s\n\n", s);
	fputs("<p>", d->html);
	rxa_xml_puts(d->html, s);
	fputs("</p>\n", d->html);
	free(s);
}

void rxo_doc_ul_begin(struct doc *d)
{
	fputs("<ul>\n", d->html);
}

void rxo_doc_li(struct doc *d, const char *cls, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	if (!s)
		return;
	fprintf(d->md, "- %s\n", s);
	if (cls)
		fprintf(d->html, "<li class=\"%s\">", cls);
	else
		fputs("<li>", d->html);
	rxa_xml_puts(d->html, s);
	fputs("</li>\n", d->html);
	free(s);
}

void rxo_doc_ul_end(struct doc *d)
{
	fputs("\n", d->md);
	fputs("</ul>\n", d->html);
}

void rxo_doc_code(struct doc *d, const char *text)
{
	/* a spec written on Windows ends its lines in CR LF: the CR is not
	 * text (the escaper would show it as '?'), the line break is */
	char *lf = strdup(text);
	if (lf) {
		char *o = lf;
		for (const char *c = text; *c; c++)
			if (!(c[0] == '\r' && c[1] == '\n'))
				*o++ = *c;
		*o = '\0';
		text = lf;
	}
	fprintf(d->md, "```\n%s%s```\n\n", text, text[0] && text[strlen(text) - 1] == '\n' ? "" : "\n");
	fputs("<pre>", d->html);
	rxa_xml_puts(d->html, text);
	fputs("</pre>\n", d->html);
	free(lf);
}

int rxo_doc_table(struct doc *d, const struct rxa_table *t)
{
	int rc = rxa_table_write_md(t, d->md);
	fputc('\n', d->md);
	/* the shared renderer writes a bare <table>: give it the report's class */
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	if (!m)
		return -1;
	rc |= rxa_table_write_html(t, m);
	fclose(m);
	fprintf(d->html, "<table class=\"t\"%s", s + strlen("<table"));
	free(s);
	return rc;
}

void rxo_doc_svg(struct doc *d, const char *caption, const char *rel, const char *svg, int collapsed)
{
	fprintf(d->md, "![%s](%s)\n\n", caption, rel);
	const char *p = svg;
	if (!strncmp(p, "<?xml", 5)) {
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p;
	}
	if (collapsed) {
		fputs("<details><summary>", d->html);
		rxa_xml_puts(d->html, caption);
		fputs("</summary>\n", d->html);
	}
	fputs("<figure>\n", d->html);
	fputs(p, d->html);
	fputs("<figcaption>", d->html);
	rxa_xml_puts(d->html, caption);
	fputs("</figcaption></figure>\n", d->html);
	if (collapsed)
		fputs("</details>\n", d->html);
}

void rxo_doc_nav(struct doc *d, const char *const *ids, const char *const *names, size_t n)
{
	fputs("<nav>", d->html);
	for (size_t i = 0; i < n; i++) {
		fprintf(d->html, "%s<a href=\"#%s\">", i ? " | " : "", ids[i]);
		rxa_xml_puts(d->html, names[i]);
		fputs("</a>", d->html);
	}
	fputs("</nav>\n", d->html);
}
