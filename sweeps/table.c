/* SPDX-License-Identifier: MIT */
/*
 * The NDR/PDR table printed at the end of a sweep, read back from the
 * results file (so a resumed sweep prints every point): a markdown table
 * whose columns are the knobs that vary, the constant knobs on one line
 * above it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/sweep.h"

static void knob_text(json_t *v, char *out, size_t len)
{
	if (json_is_integer(v))
		snprintf(out, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(out, len, "%s", json_string_value(v));
	else
		snprintf(out, len, "-");
}

static void mpps(json_t *sum, const char *field, bool lower_bound, char *out, size_t len)
{
	const char *status = json_string_value(json_object_get(sum, "status"));
	double v = json_number_value(json_object_get(sum, field));
	if (!status || strcmp(status, "ok") || v <= 0)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%s%.3f", lower_bound ? ">=" : "", v);
}

int sweep_table_print(FILE *f, const char *results_path)
{
	FILE *in = fopen(results_path, "r");
	if (!in)
		return -errno;
	json_t *rows = json_array();
	char *line = NULL;
	size_t cap = 0;
	while (rows && getline(&line, &cap, in) > 0) {
		if (!strstr(line, SWEEP_POINT_SCHEMA))
			continue;
		json_t *doc = json_loads(line, 0, NULL);
		const char *schema = json_string_value(json_object_get(doc, "schema"));
		if (schema && !strcmp(schema, SWEEP_POINT_SCHEMA))
			json_array_append(rows, doc);
		json_decref(doc);
	}
	free(line);
	fclose(in);
	if (!rows)
		return -ENOMEM;

	bool vary[SWEEP_K_COUNT] = {false}, present[SWEEP_K_COUNT] = {false};
	char first[SWEEP_K_COUNT][256], cur[256];
	size_t n = json_array_size(rows);
	for (size_t i = 0; i < n; i++) {
		json_t *knobs = json_object_get(json_array_get(rows, i), "knobs");
		for (int k = 0; k < SWEEP_K_COUNT; k++) {
			json_t *v = json_object_get(knobs, sweep_knob_name((enum sweep_knob)k));
			knob_text(v, cur, sizeof(cur));
			if (!i)
				snprintf(first[k], sizeof(first[k]), "%s", cur);
			else if (strcmp(first[k], cur))
				vary[k] = true;
			present[k] |= v != NULL;
		}
	}
	fprintf(f, "\n");
	bool any = false;
	for (int k = 0; k < SWEEP_K_COUNT; k++)
		if (present[k] && !vary[k]) {
			fprintf(f, "%s%s=%s", any ? ", " : "all points: ",
				sweep_knob_name((enum sweep_knob)k), first[k]);
			any = true;
		}
	if (any)
		fprintf(f, "\n\n");
	fprintf(f, "|");
	for (int k = 0; k < SWEEP_K_COUNT; k++)
		if (vary[k])
			fprintf(f, " %s |", sweep_knob_name((enum sweep_knob)k));
	fprintf(f, " NDR Mpps | PDR Mpps | NIC max Mpps | trials | note |\n|");
	for (int k = 0; k < SWEEP_K_COUNT; k++)
		if (vary[k])
			fprintf(f, "---|");
	fprintf(f, "---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n; i++) {
		json_t *sum = json_array_get(rows, i);
		json_t *knobs = json_object_get(sum, "knobs");
		fprintf(f, "|");
		for (int k = 0; k < SWEEP_K_COUNT; k++) {
			if (!vary[k])
				continue;
			knob_text(json_object_get(knobs, sweep_knob_name((enum sweep_knob)k)), cur,
				  sizeof(cur));
			fprintf(f, " %s |", cur);
		}
		bool gl = json_is_true(json_object_get(sum, "generator_limited"));
		char ndr[32], pdr[32], nic[32];
		const char *status = json_string_value(json_object_get(sum, "status"));
		const char *reason = json_string_value(json_object_get(sum, "reason"));
		mpps(sum, "ndr_mpps", gl, ndr, sizeof(ndr));
		mpps(sum, "pdr_mpps", gl, pdr, sizeof(pdr));
		mpps(sum, "nic_max_mpps", false, nic, sizeof(nic));
		fprintf(f, " %s | %s | %s | %lld | %s%s%s |\n", ndr, pdr, nic,
			(long long)json_integer_value(json_object_get(sum, "trials")),
			status && strcmp(status, "ok") ? status : "",
			status && strcmp(status, "ok") && reason && *reason ? ": " : "",
			reason && (*reason || !status) ? reason : "");
	}
	if (!n)
		fprintf(f, "(no finished points)\n");
	json_decref(rows);
	return 0;
}
