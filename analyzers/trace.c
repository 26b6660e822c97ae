/* SPDX-License-Identifier: MIT */
/* Chrome trace-event JSON from run results (see rxray/trace.h). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/trace.h"
#include "rxray/util.h"

/* Columns of gpu_trace.data, in order (rxray/trace.h). */
enum { GT_KIND, GT_NAME, GT_START, GT_END, GT_STREAM, GT_BYTES, GT_CORR, GT_NCOL };

static int ev_add(json_t *evs, json_t *e)
{
	return e ? json_array_append_new(evs, e) : -1;
}

static const json_t *gpu_trace(const struct rxr_result *r)
{
	return r->extra ? json_object_get(r->extra, "gpu_trace") : NULL;
}

int rxa_trace_gpu_check(const struct rxr_result *r, char *err, size_t errlen)
{
	const json_t *g = gpu_trace(r);
	if (!g)
		return 0;
	const json_t *clk = json_object_get(g, "clock");
	const json_t *data = json_object_get(g, "data");
	if (!json_is_object(g) || !json_is_object(clk))
		return rxu_errf(err, errlen, -EINVAL, "gpu_trace.clock: expected an object");
	if (!json_is_integer(json_object_get(clk, "anchor_ticks")) ||
	    !json_is_integer(json_object_get(clk, "anchor_ns")))
		return rxu_errf(err, errlen, -EINVAL,
				"gpu_trace.clock: anchor_ticks and anchor_ns (integers) expected");
	if (!json_is_array(data))
		return rxu_errf(err, errlen, -EINVAL, "gpu_trace.data: expected an array");
	size_t i;
	const json_t *row;
	json_array_foreach(data, i, row) {
		if (!json_is_array(row) || json_array_size(row) != GT_NCOL ||
		    !json_is_string(json_array_get(row, GT_KIND)) ||
		    !json_is_string(json_array_get(row, GT_NAME)))
			return rxu_errf(err, errlen, -EINVAL,
					"gpu_trace.data[%zu]: expected [kind, name, start_ns, end_ns, "
					"stream, bytes, correlation]",
					i);
		for (int c = GT_START; c < GT_NCOL; c++)
			if (!json_is_integer(json_array_get(row, c)) ||
			    json_integer_value(json_array_get(row, c)) < 0)
				return rxu_errf(err, errlen, -EINVAL,
						"gpu_trace.data[%zu][%d]: expected an integer >= 0", i, c);
		if (json_integer_value(json_array_get(row, GT_END)) <
		    json_integer_value(json_array_get(row, GT_START)))
			return rxu_errf(err, errlen, -EINVAL,
					"gpu_trace.data[%zu]: end_ns before start_ns", i);
	}
	return 0;
}

/* A GPU record's time in the run's clock ticks (fractional): the anchor
 * pair maps CUPTI's nanoseconds onto the CPU clock the laps use. */
static double gpu_ticks(const json_t *clk, double hz, json_int_t ns)
{
	json_int_t at = json_integer_value(json_object_get(clk, "anchor_ticks"));
	json_int_t an = json_integer_value(json_object_get(clk, "anchor_ns"));
	return (double)at + (double)(ns - an) * hz / 1e9;
}

static int burst_event(json_t *evs, const struct rxp_sample *s, size_t n, int pid, int tid,
		       double t0, double us)
{
	uint64_t end = 0;
	for (size_t k = 0; k < n; k++)
		if (s[k].start + s[k].cycles > end)
			end = s[k].start + s[k].cycles;
	return ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:I,s:I}}", "name", "burst",
				     "cat", "burst", "ph", "X", "ts", ((double)s[0].start - t0) * us,
				     "dur", (double)(end - s[0].start) * us, "pid", pid, "tid", tid,
				     "args", "seq", (json_int_t)s[0].seq, "laps", (json_int_t)n));
}

static int thread_events(json_t *evs, const struct rxr_result *r, size_t t, int pid, double t0)
{
	const struct rxr_thread_result *th = &r->threads[t];
	char label[24], name[64];
	rxa_thread_label(r, t, label, sizeof(label));
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
		/* the laps of one sampled burst (same seq, in a row) nest in a
		 * "burst" span from its first lap's start to its last lap's end */
		size_t b0 = 0;
		for (size_t i = 0; i < th->nsamples; i++) {
			const struct rxp_sample *s = &th->samples[i];
			if (i + 1 == th->nsamples || th->samples[i + 1].seq != s->seq) {
				if (burst_event(evs, &th->samples[b0], i + 1 - b0, pid, tid, t0, us))
					return -ENOMEM;
				b0 = i + 1;
			}
			const char *st = rxp_stage_name((enum rxp_stage)s->stage);
			if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:I,s:I}}", "name",
						  st ? st : "?", "cat", "lap", "ph", "X", "ts",
						  ((double)s->start - t0) * us, "dur", s->cycles * us, "pid",
						  pid, "tid", tid, "args", "cycles", (json_int_t)s->cycles,
						  "seq", (json_int_t)s->seq)))
				return -ENOMEM;
		}
		return 0;
	}
	/* one representative packet from the summaries */
	double ts = 0;
	double total = rxa_thread_busy_cpp(th);
	if (!(total > 0))
		return 0;
	if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:f,s:b}}", "name", "packet (mean)",
				  "cat", "summary", "ph", "X", "ts", 0.0, "dur", total * us, "pid", pid,
				  "tid", tid, "args", "cycles_per_packet", total, "summary", 1)))
		return -ENOMEM;
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		double c = rxa_thread_stage_cpp(th, s);
		if (s == RXP_ST_IDLE || !(c > 0))
			continue;
		if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:f,s:I,s:I,s:b}}", "name",
					  rxp_stage_name((enum rxp_stage)s), "cat", "summary", "ph", "X",
					  "ts", ts * us, "dur", c * us, "pid", pid, "tid", tid, "args",
					  "cycles_per_packet", c, "p50_per_lap", (json_int_t)th->st[s].p50,
					  "p99_per_lap", (json_int_t)th->st[s].p99, "summary", 1)))
			return -ENOMEM;
		ts += c;
	}
	return 0;
}

/*
 * GPU records on tracks of their own, one per CUDA stream ("gpu stream 7"),
 * tids after the CPU threads'; kernels cat gpu_kernel, copies gpu_copy.
 */
static int gpu_events(json_t *evs, const struct rxr_result *r, int pid, double t0)
{
	const json_t *g = gpu_trace(r);
	if (!g)
		return 0;
	const json_t *clk = json_object_get(g, "clock");
	double us = 1e6 / r->clock.hz;
	json_int_t streams[64];
	size_t nstreams = 0, i;
	const json_t *row;
	json_array_foreach(json_object_get(g, "data"), i, row) {
		json_int_t st = json_integer_value(json_array_get(row, GT_STREAM));
		size_t k;
		for (k = 0; k < nstreams && streams[k] != st; k++)
			;
		if (k == nstreams && nstreams == sizeof(streams) / sizeof(streams[0]))
			k = nstreams - 1; /* streams past the 64th share the last track */
		else if (k == nstreams) {
			streams[nstreams++] = st;
			char name[48];
			snprintf(name, sizeof(name), "gpu stream %lld", (long long)st);
			if (ev_add(evs, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name",
						  "ph", "M", "pid", pid, "tid", (int)(r->nthreads + 1 + k),
						  "args", "name", name)))
				return -ENOMEM;
		}
		const char *kind = json_string_value(json_array_get(row, GT_KIND));
		const char *cat = !strcmp(kind, "kernel")   ? "gpu_kernel"
				  : !strcmp(kind, "memcpy") ? "gpu_copy"
							    : kind;
		json_int_t s = json_integer_value(json_array_get(row, GT_START));
		json_int_t e = json_integer_value(json_array_get(row, GT_END));
		double ts = (gpu_ticks(clk, r->clock.hz, s) - t0) * us;
		if (ev_add(evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:I,s:I}}", "name",
					  json_string_value(json_array_get(row, GT_NAME)), "cat", cat,
					  "ph", "X", "ts", ts, "dur", (double)(e - s) / 1e3, "pid", pid,
					  "tid", (int)(r->nthreads + 1 + k), "args", "bytes",
					  json_integer_value(json_array_get(row, GT_BYTES)), "correlation",
					  json_integer_value(json_array_get(row, GT_CORR)))))
			return -ENOMEM;
	}
	return 0;
}

/* Earliest time of the run's sampled laps and GPU records, in ticks. */
static double run_t0(const struct rxr_result *r)
{
	double t0 = INFINITY;
	for (size_t t = 0; t < r->nthreads; t++)
		for (size_t k = 0; k < r->threads[t].nsamples; k++)
			if ((double)r->threads[t].samples[k].start < t0)
				t0 = (double)r->threads[t].samples[k].start;
	const json_t *g = gpu_trace(r);
	size_t i;
	const json_t *row;
	if (g)
		json_array_foreach(json_object_get(g, "data"), i, row) {
			double s = gpu_ticks(json_object_get(g, "clock"), r->clock.hz,
					     json_integer_value(json_array_get(row, GT_START)));
			if (s < t0)
				t0 = s;
		}
	return isfinite(t0) ? t0 : 0;
}

int rxa_trace_write(const struct rxr_result *const *runs, const char *const *names, size_t n,
		    FILE *out)
{
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(runs[i]->clock.hz > 0) || rxa_trace_gpu_check(runs[i], NULL, 0))
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
		double t0 = run_t0(r);
		for (size_t t = 0; t < r->nthreads; t++)
			if (thread_events(evs, r, t, pid, t0))
				goto out;
		if (gpu_events(evs, r, pid, t0))
			goto out;
	}
	doc = json_pack("{s:o,s:s,s:{s:s,s:s}}", "traceEvents", evs, "displayTimeUnit", "ns",
			"otherData", "generator", "rxray", "note",
			"sampled laps as spans nested in their burst; GPU kernels and copies "
			"(CUPTI) on gpu stream tracks, on the laps' clock; 'summary' spans lay "
			"out mean cycles/packet per stage");
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
