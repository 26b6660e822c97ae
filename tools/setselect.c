/* SPDX-License-Identifier: MIT */
/* The points of a result set that an analysis verb's -s selects (beside
 * setload.c: it needs the analyzers, which cli_io.c, built into the
 * fuzzers with the core alone, must not). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/util.h"

int rxt_cli_set_select(const char *verb, const char *path, const char *select, struct rxa_set **s,
		       struct rxa_set *view)
{
	char err[RXA_ERR_LEN];
	struct rxa_sel sel = {0};
	int ec;

	memset(view, 0, sizeof(*view));
	if ((ec = rxt_cli_set_load(verb, path, s)))
		return ec;
	if (select && rxa_sel_parse(select, &sel, err, sizeof(err))) {
		ec = rxu_usage_err(verb, "--select: %s", err);
		goto fail;
	}
	*view = **s;
	view->n = 0;
	view->pts = calloc((*s)->n, sizeof(*view->pts));
	if (!view->pts) {
		rxu_err(verb, "out of memory for %zu points", (*s)->n);
		ec = RXU_EXIT_RUNTIME;
		goto fail;
	}
	for (size_t i = 0; i < (*s)->n; i++)
		if (!select || rxa_sel_match(&sel, (*s)->pts[i].knobs))
			view->pts[view->n++] = (*s)->pts[i];
	if (!view->n) {
		ec = rxu_usage_err(verb, "--select %s: no point matches", select);
		goto fail;
	}
	rxa_sel_free(&sel);
	return RXU_EXIT_OK;
fail:
	rxa_sel_free(&sel);
	free(view->pts);
	memset(view, 0, sizeof(*view));
	rxa_set_free(*s);
	*s = NULL;
	return ec;
}
