/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the result-set loader (a sweep's results.jsonl, or
 * one run JSON), then the varying knobs and a label per point, as the
 * ceiling/diff/report verbs use them. The loader reads a path, so each
 * input is written to a file in /dev/shm (tmpfs; else /tmp) first. The first byte
 * picks the form: even = .jsonl, odd = .json.
 *
 * Oracle: a file the loader accepts is one jansson takes with
 * JSON_REJECT_DUPLICATES, line by line (all but a torn last line, which
 * the loader reports): however fast the loader reads a line, it never
 * takes a record with a key given twice, or one that is not JSON.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_parse(const char *text, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		abort(); /* the loader took what jansson refuses */
	json_decref(j);
}

/* The checked reading of what the loader accepted, as the loader splits and trims it. */
static void accepted_is_json(const char *text, size_t len, bool jsonl, const struct rxa_set *s)
{
	if (!jsonl) {
		must_parse(text, len);
		return;
	}
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
		while (n && (text[at + n - 1] == '\r' || text[at + n - 1] == ' '))
			n--;
		if (n && (nl || !s->truncated_line))
			must_parse(text + at, n);
		at = end + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const char *base = "/dev/shm";
	char path[96], err[512], label[512];
	snprintf(path, sizeof(path), "%s/rxray-fuzz-set-%d.%s", base, (int)getpid(),
		 data[0] & 1 ? "json" : "jsonl");
	FILE *f = fopen(path, "wb");
	if (!f && strcmp(base, "/tmp")) {
		/* no tmpfs at /dev/shm (some containers): slower, but works */
		base = "/tmp";
		return LLVMFuzzerTestOneInput(data, size);
	}
	if (!f)
		abort(); /* the harness itself is broken: say so, loudly */
	if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1)
		abort();
	fclose(f);
	struct rxa_set *s = NULL;
	if (rxa_set_load(path, &s, err, sizeof(err)) == 0) {
		size_t nv = 0;
		const char **vary = rxa_set_varying(s, &nv);
		for (size_t i = 0; i < s->n; i++) {
			rxa_point_label(&s->pts[i], vary, nv, label, sizeof(label));
			(void)rxa_point_run(&s->pts[i]);
		}
		free(vary);
		accepted_is_json((const char *)data + 1, size - 1, !(data[0] & 1), s);
		rxa_set_free(s);
	}
	unlink(path);
	return 0;
}
