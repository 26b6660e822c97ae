/* SPDX-License-Identifier: MIT */
/* Chrome trace-event JSON from run results (see rxray/trace.h). */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/trace.h"

static int ev_add(json_t *evs, json_t *e)
{
	return e ? json_array_append_new(evs, e) : -1;
}

static int thread_events(json_t *evs, const struct rxr_result *r, size_t t, int pid, uint64_t t0)
{
	const struct rxr_thread_result *th = &r->threads[t];
	char label[24], name[64];
	rxr_thread_label(r, t, label, sizeof(label));
	if (th->core >= 0)
		snprintf(name, sizeof(name), "%s (core %d)", label, th->core);
	else
		snprintf(name, sizeof(name), "%s", label);
	int tid = (int)t + 1;
	if (ev_add(evs, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph", "M", "pid",
				  pid, "tid", tid, "args", "name", name)))
		return -ENOMEM;
	double us = 1e6 / r->clock.hz;
	if (th->nsamples) {
		for (size_t i = 0; i < th->nsamples; i++) {
			const struct rxr_sample *s = &th->samples[i];
			const char *st = rxr_stage_name((enum rxr_stage)s->stage);
			if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:I,s:I}}", "name",
						  st ? st : "?", "cat", "lap", "ph", "X", "ts",
						  (double)(s->start - t0) * us, "dur", s->cycles * us, "pid",
						  pid, "tid", tid, "args", "cycles", (json_int_t)s->cycles,
						  "seq", (json_int_t)s->seq)))
				return -ENOMEM;
		}
		return 0;
	}
	/* one representative packet from the summaries */
	double ts = 0;
	double total = rxr_thread_busy_cpp(th);
	if (!(total > 0))
		return 0;
	if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:f,s:b}}", "name", "packet (mean)",
				  "cat", "summary", "ph", "X", "ts", 0.0, "dur", total * us, "pid", pid,
				  "tid", tid, "args", "cycles_per_packet", total, "summary", 1)))
		return -ENOMEM;
	for (int s = 0; s < RXR_ST_COUNT; s++) {
		double c = rxr_thread_stage_cpp(th, s);
		if (s == RXR_ST_IDLE || !(c > 0))
			continue;
		if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:f,s:I,s:I,s:b}}", "name",
					  rxr_stage_name((enum rxr_stage)s), "cat", "summary", "ph", "X",
					  "ts", ts * us, "dur", c * us, "pid", pid, "tid", tid, "args",
					  "cycles_per_packet", c, "p50_per_lap", (json_int_t)th->st[s].p50,
					  "p99_per_lap", (json_int_t)th->st[s].p99, "summary", 1)))
			return -ENOMEM;
		ts += c;
	}
	return 0;
}

int rxr_trace_write(const struct rxr_result *const *runs, const char *const *names, size_t n,
		    FILE *out)
{
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(runs[i]->clock.hz > 0))
			return -EINVAL;
	int rc = -ENOMEM;
	json_t *evs = json_array();
	json_t *doc = NULL;
	if (!evs)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct rxr_result *r = runs[i];
		char pname[64];
		if (!names || !names[i])
			snprintf(pname, sizeof(pname), "run %zu", i);
		int pid = (int)i + 1;
		if (ev_add(evs, json_pack("{s:s,s:s,s:i,s:{s:s}}", "name", "process_name", "ph", "M",
					  "pid", pid, "args", "name",
					  names && names[i] ? names[i] : pname)))
			goto out;
		uint64_t t0 = UINT64_MAX;
		for (size_t t = 0; t < r->nthreads; t++)
			for (size_t k = 0; k < r->threads[t].nsamples; k++)
				if (r->threads[t].samples[k].start < t0)
					t0 = r->threads[t].samples[k].start;
		for (size_t t = 0; t < r->nthreads; t++)
			if (thread_events(evs, r, t, pid, t0 == UINT64_MAX ? 0 : t0))
				goto out;
	}
	doc = json_pack("{s:o,s:s,s:{s:s,s:s}}", "traceEvents", evs, "displayTimeUnit", "ns",
			"otherData", "generator", "rxray", "note",
			"sampled laps as spans; 'summary' spans lay out mean cycles/packet per stage");
	evs = NULL;
	if (!doc)
		goto out;
	rc = json_dumpf(doc, out, JSON_COMPACT) ? -EIO : 0;
	if (!rc && (fputc('\n', out) == EOF || fflush(out)))
		rc = -EIO;
out:
	json_decref(evs);
	json_decref(doc);
	return rc;
}
