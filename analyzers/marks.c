/* SPDX-License-Identifier: MIT */
/*
 * The marks a figure carries wherever it goes (rxray/analyze.h "marks"):
 * which apply to a run or a point, and each one's own reason, so a
 * table row, a diff, a flame graph and a report line say the same thing
 * about the same figure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rxray/analyze.h"

/* The validity reason that only restates the oversubscription. */
static bool reason_is_oversub(const char *s)
{
	return !strncmp(s, "oversubscribed", strlen("oversubscribed"));
}

static json_t *validity_of(const struct rxr_result *r)
{
	return r && r->extra ? json_object_get(r->extra, "validity") : NULL;
}

/* The run's validity says disturbed for a reason of its own (not only
 * the oversubscription that the oversubscribed mark already names). */
static bool run_disturbed_itself(const struct rxr_result *r)
{
	json_t *v = validity_of(r);
	if (!json_is_true(json_object_get(v, "disturbed")))
		return false;
	json_t *rs = json_object_get(v, "reasons");
	if (!json_array_size(rs))
		return true;
	size_t i;
	json_t *e;
	json_array_foreach(rs, i, e)
		if (!json_is_string(e) || !reason_is_oversub(json_string_value(e)))
			return true;
	return false;
}

const char *rxa_run_generator(const struct rxr_result *r)
{
	json_t *g = r && r->extra ? json_object_get(r->extra, "generator") : NULL;
	if (!json_is_object(g))
		return NULL;
	json_t *k = json_object_get(g, "kind");
	const char *kind = json_is_string(k) && json_string_value(k)[0] ? json_string_value(k)
									 : "unknown";
	/* the software NIC is rxray's own generator: nothing to mark */
	static const char *const own[] = {"sim", "simnic", "software-nic", "software_nic",
					  "software NIC"};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(kind, own[i]))
			return NULL;
	return kind;
}

unsigned rxa_run_marks(const struct rxr_result *r)
{
	unsigned m = 0;
	if (!r)
		return 0;
	bool over = rxa_run_oversubscribed(r);
	if (over)
		m |= RXA_MARK_OVERSUBSCRIBED;
	if (over ? run_disturbed_itself(r)
		 : json_is_true(json_object_get(validity_of(r), "disturbed")))
		m |= RXA_MARK_DISTURBED;
	/* the run stopped early, or the external generator was stopped mid-trial */
	if (json_is_true(json_object_get(r->extra, "interrupted")) ||
	    json_is_true(json_object_get(json_object_get(r->extra, "generator"), "interrupted")))
		m |= RXA_MARK_INTERRUPTED;
	if (rxa_run_generator(r))
		m |= RXA_MARK_EXTERNAL;
	return m;
}

unsigned rxa_point_marks(const struct rxa_point *p)
{
	const struct rxr_result *r = rxa_point_run(p);
	unsigned m = rxa_run_marks(r);
	if (p->oversubscribed)
		m |= RXA_MARK_OVERSUBSCRIBED;
	/* a summary's "disturbed" of an oversubscribed point is that
	 * oversubscription, unless its run names another reason */
	if (p->disturbed && !(m & RXA_MARK_OVERSUBSCRIBED))
		m |= RXA_MARK_DISTURBED;
	if (p->unresolved)
		m |= RXA_MARK_UNRESOLVED;
	/* any run of the point: a figure from a generator outside rxray */
	if (!(m & RXA_MARK_EXTERNAL) && (rxa_run_generator(p->top_run) || rxa_run_generator(p->ndr_run)))
		m |= RXA_MARK_EXTERNAL;
	return m;
}

/* The first generator kind of the point's runs, "unknown" when none. */
static const char *point_generator(const struct rxa_point *p)
{
	const char *k = rxa_run_generator(rxa_point_run(p));
	if (!k)
		k = rxa_run_generator(p->top_run);
	return k ? k : "unknown";
}

/* "3 threads on 2 cores" from the run's validity reasons, else a generic phrase. */
static const char *oversub_detail(const struct rxr_result *r)
{
	static const char pre[] = "oversubscribed: ";
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(validity_of(r), "reasons"), i, e)
		if (json_is_string(e) && !strncmp(json_string_value(e), pre, sizeof(pre) - 1))
			return json_string_value(e) + sizeof(pre) - 1;
	return "more threads than cores";
}

/* The run's own disturbance reasons, "; "-joined into buf (empty when none). */
static void disturb_detail(const struct rxr_result *r, char *buf, size_t n)
{
	size_t o = 0, i;
	json_t *e;
	buf[0] = '\0';
	json_array_foreach(json_object_get(validity_of(r), "reasons"), i, e) {
		if (!json_is_string(e) || reason_is_oversub(json_string_value(e)) || o >= n)
			continue;
		o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? "; " : "", json_string_value(e));
	}
}

const char *rxa_mark_word(unsigned bit)
{
	switch (bit) {
	case RXA_MARK_OVERSUBSCRIBED: return "oversubscribed";
	case RXA_MARK_DISTURBED: return "disturbed";
	case RXA_MARK_UNRESOLVED: return "unresolved";
	case RXA_MARK_INTERRUPTED: return "interrupted";
	case RXA_MARK_EXTERNAL: return "external generator";
	default: return "?";
	}
}

void rxa_mark_reason(const struct rxa_point *p, unsigned bit, bool reason, char *buf, size_t n)
{
	const struct rxr_result *r = rxa_point_run(p);
	char d[256];
	switch (bit) {
	case RXA_MARK_OVERSUBSCRIBED:
		snprintf(buf, n, "oversubscribed (%s)%s", oversub_detail(r),
			 reason ? ": threads shared cores, so the scheduler is in these figures; "
				  "disturbed by construction, not a ceiling"
				: "");
		break;
	case RXA_MARK_DISTURBED:
		disturb_detail(r, d, sizeof(d));
		if (!reason)
			snprintf(buf, n, "disturbed");
		else if (d[0])
			snprintf(buf, n, "disturbed: the host interfered (%s): its share is in these "
					 "figures; left out of fits", d);
		else
			snprintf(buf, n, "disturbed: the host interfered with trials a bound rests on: "
					 "its share is in these figures; left out of fits");
		break;
	case RXA_MARK_UNRESOLVED: {
		char iv[64];
		rxa_fmt_interval(iv, sizeof(iv), p, false);
		if (reason)
			snprintf(buf, n, "unresolved: the search ended at NDR %s Mpps, wider than its "
					 "precision goal: the ceiling lies somewhere in it; left out of fits",
				 iv);
		else
			snprintf(buf, n, "unresolved");
		break;
	}
	case RXA_MARK_INTERRUPTED:
		snprintf(buf, n, "%s", reason ? "interrupted: stopped before its planned length, so "
						"these figures cover part of the run; left out of fits"
					      : "interrupted");
		break;
	case RXA_MARK_EXTERNAL:
		snprintf(buf, n, "external generator: %s%s", point_generator(p),
			 reason ? " (the load came from outside rxray: offered is what that "
				  "generator sent)"
				: "");
		break;
	default:
		snprintf(buf, n, "?");
	}
}

size_t rxa_marks_phrase(const struct rxa_point *p, unsigned marks, bool reasons, char *buf,
			size_t n)
{
	size_t o = 0;
	if (n)
		buf[0] = '\0';
	for (unsigned bit = 1; bit < (1u << RXA_MARK_COUNT) && o < n; bit <<= 1) {
		if (!(marks & bit))
			continue;
		char one[512];
		rxa_mark_reason(p, bit, reasons, one, sizeof(one));
		o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? (reasons ? "; " : ", ") : "", one);
	}
	return o < n ? o : (n ? n - 1 : 0);
}
