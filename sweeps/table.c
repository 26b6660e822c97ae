/* SPDX-License-Identifier: MIT */
/*
 * The NDR/PDR table printed at the end of a sweep, read back from the
 * results file (so a resumed sweep prints every point): a markdown table
 * whose columns are the knobs that vary, the constant knobs on one line
 * above it. Each goal shows its lower bound (">=" when that is all it is:
 * generator-limited or unresolved) and its interval with the relative
 * width; the flags column says unresolved / disturbed / oversubscribed /
 * generator-limited.
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

static bool summary_ok(json_t *sum)
{
	const char *status = json_string_value(json_object_get(sum, "status"));
	return status && !strcmp(status, "ok");
}

static bool has_flag(json_t *sum, const char *flag)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(sum, "flags"), i, f)
	{
		if (json_is_string(f) && !strcmp(json_string_value(f), flag))
			return true;
	}
	return false;
}

static void mpps(json_t *sum, const char *field, bool lower_bound, char *out, size_t len)
{
	double v = json_number_value(json_object_get(sum, field));
	if (!summary_ok(sum) || v <= 0)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%s%.3f", lower_bound ? ">=" : "", v);
}

/*
 * A goal's interval "[lower, upper] width%": ">= lower" without an upper
 * end (generator-limited), "< upper" when nothing passed. Summaries
 * written before intervals existed have no upper field: "-".
 */
static void interval(json_t *sum, const char *goal, char *out, size_t len)
{
	char f_lo[32], f_hi[32];
	snprintf(f_lo, sizeof(f_lo), "%s_mpps", goal);
	snprintf(f_hi, sizeof(f_hi), "%s_upper_mpps", goal);
	double lo = json_number_value(json_object_get(sum, f_lo));
	json_t *hij = json_object_get(sum, f_hi);
	double hi = json_number_value(hij);
	if (!summary_ok(sum) || !hij)
		snprintf(out, len, "-");
	else if (lo > 0 && hi > 0)
		snprintf(out, len, "[%.3f, %.3f] %.1f%%", lo, hi, 100 * (hi - lo) / hi);
	else if (lo > 0)
		snprintf(out, len, ">= %.3f", lo);
	else if (hi > 0)
		snprintf(out, len, "< %.3f", hi);
	else
		snprintf(out, len, "-");
}

/* unresolved, disturbed, oversubscribed, generator-limited: what a reader
 * must not take for a resolved ceiling */
static void flags_text(json_t *sum, bool gl, char *out, size_t len)
{
	static const char *const names[] = {"oversubscribed", "unresolved", "disturbed"};
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (has_flag(sum, names[i]) && o < len)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "", names[i]);
	if (gl && o < len)
		snprintf(out + o, len - o, "%s%s", o ? ", " : "",
			 json_is_true(json_object_get(sum, "line_limited")) ? "line-rate-limited"
									  : "generator-limited");
	long long nd = json_integer_value(json_object_get(sum, "disturbed_trials"));
	o = strlen(out);
	if (nd > 0 && o < len)
		snprintf(out + o, len - o, "%s%lld disturbed trial%s", o ? "; " : "", nd,
			 nd > 1 ? "s" : "");
}

int sweep_table_print(FILE *f, const char *results_path)
{
	char kerr[SWEEP_ERR_LEN];
	int krc = sweep_knobs_check(kerr, sizeof(kerr));
	if (krc < 0)
		return krc; /* no column left out unsaid */
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

	bool vary[SWEEP_KNOBS_CAP] = {false}, present[SWEEP_KNOBS_CAP] = {false};
	char first[SWEEP_KNOBS_CAP][256], cur[256];
	size_t n = json_array_size(rows);
	for (size_t i = 0; i < n; i++) {
		json_t *knobs = json_object_get(json_array_get(rows, i), "knobs");
		for (int k = 0; k < (int)sweep_knob_count(); k++) {
			json_t *v = json_object_get(knobs, sweep_knob_name((size_t)k));
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
	for (int k = 0; k < (int)sweep_knob_count(); k++)
		if (present[k] && !vary[k]) {
			fprintf(f, "%s%s=%s", any ? ", " : "all points: ",
				sweep_knob_name((size_t)k), first[k]);
			any = true;
		}
	if (any)
		fprintf(f, "\n\n");
	/* what drove the figures (a real port's external generator) */
	json_t *gen = json_object_get(json_array_get(rows, 0), "generator");
	if (json_is_object(gen))
		fprintf(f, "load: generator %s (%s), offered = what it sent\n\n",
			json_string_value(json_object_get(gen, "name")),
			json_string_value(json_object_get(gen, "kind")));
	fprintf(f, "|");
	for (int k = 0; k < (int)sweep_knob_count(); k++)
		if (vary[k])
			fprintf(f, " %s |", sweep_knob_name((size_t)k));
	fprintf(f, " NDR Mpps | PDR Mpps | NIC flat-out Mpps | trials | NDR interval | PDR interval "
		   "| flags | note |\n|");
	for (int k = 0; k < (int)sweep_knob_count(); k++)
		if (vary[k])
			fprintf(f, "---|");
	fprintf(f, "---:|---:|---:|---:|---:|---:|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		json_t *sum = json_array_get(rows, i);
		json_t *knobs = json_object_get(sum, "knobs");
		fprintf(f, "|");
		for (int k = 0; k < (int)sweep_knob_count(); k++) {
			if (!vary[k])
				continue;
			knob_text(json_object_get(knobs, sweep_knob_name((size_t)k)), cur,
				  sizeof(cur));
			fprintf(f, " %s |", cur);
		}
		bool gl = json_is_true(json_object_get(sum, "generator_limited"));
		/* an unresolved goal's lower end is all its trials guarantee */
		bool ndr_lb = gl || json_is_false(json_object_get(sum, "ndr_resolved"));
		bool pdr_lb = gl || json_is_false(json_object_get(sum, "pdr_resolved"));
		char ndr[32], pdr[32], nic[32], ndr_iv[64], pdr_iv[64], flags[128];
		const char *status = json_string_value(json_object_get(sum, "status"));
		const char *reason = json_string_value(json_object_get(sum, "reason"));
		mpps(sum, "ndr_mpps", ndr_lb, ndr, sizeof(ndr));
		mpps(sum, "pdr_mpps", pdr_lb, pdr, sizeof(pdr));
		mpps(sum, "nic_max_mpps", false, nic, sizeof(nic));
		interval(sum, "ndr", ndr_iv, sizeof(ndr_iv));
		interval(sum, "pdr", pdr_iv, sizeof(pdr_iv));
		flags_text(sum, gl && summary_ok(sum), flags, sizeof(flags));
		fprintf(f, " %s | %s | %s | %lld | %s | %s | %s | %s%s%s |\n", ndr, pdr, nic,
			(long long)json_integer_value(json_object_get(sum, "trials")), ndr_iv,
			pdr_iv, flags,
			status && strcmp(status, "ok") ? status : "",
			status && strcmp(status, "ok") && reason && *reason ? ": " : "",
			reason && (*reason || !status) ? reason : "");
	}
	if (!n)
		fprintf(f, "(no finished points)\n");
	else
		fprintf(f, "\nNDR/PDR: lower bounds (>= when that is all they are); interval: "
			   "[lower, upper] and its relative width. Flags: unresolved (wider than "
			   "the precision goal), disturbed (a bound rests on trials the host "
			   "disturbed), oversubscribed (threads shared cores: never a ceiling), "
			   "generator-limited (the NIC's rate, not the receiver's), "
			   "line-rate-limited (the receiver took the wire's line rate: its ceiling "
			   "is above it). NIC flat-out: "
			   "the highest rate the software NIC offered in the point's trials at max "
			   "(with its DMA writers); an NDR at or above it is generator-limited.\n");
	json_decref(rows);
	return 0;
}
