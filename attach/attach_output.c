/* SPDX-License-Identifier: MIT */
/*
 * What rxray attach leaves behind: JSON, folded stacks, the summary.
 * (The flame graph is drawn by analyzers/attach_findings.c.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rxray/attach.h"

static uint64_t samples_total(const struct rxb_profile *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->nstacks; i++)
		t += p->stacks[i].count;
	return t;
}

static json_t *jnum_or_null(bool have, double v)
{
	return have ? json_real(v) : json_null();
}

static json_t *tele_json(const struct rxb_profile *p)
{
	json_t *t = json_object(), *ports = json_array(), *pools = json_array();

	json_object_set_new(t, "socket", json_string(p->tele_path));
	json_object_set_new(t, "version", json_string(p->tele_version));
	for (size_t i = 0; i < p->t1.nports; i++) {
		const struct rxb_tele_port *b = &p->t1.ports[i], *a = NULL;
		for (size_t k = 0; k < p->t0.nports; k++)
			if (p->t0.ports[k].id == b->id)
				a = &p->t0.ports[k];
		if (!a)
			continue;
		json_array_append_new(ports, json_pack("{s:i,s:s,s:i,s:I,s:I,s:I,s:I}", "id", b->id,
						      "name", b->name, "rx_queues", (int)b->nb_rx_queues,
						      "packets", (json_int_t)(b->ipackets - a->ipackets),
						      "imissed", (json_int_t)(b->imissed - a->imissed),
						      "rx_nombuf", (json_int_t)(b->rx_nombuf - a->rx_nombuf),
						      "ierrors", (json_int_t)(b->ierrors - a->ierrors)));
	}
	for (size_t i = 0; i < p->t1.npools; i++) {
		const struct rxb_tele_pool *mp = &p->t1.pools[i];
		json_array_append_new(pools, json_pack("{s:s,s:I,s:I,s:I,s:I}", "name", mp->name,
						      "size", (json_int_t)mp->size,
						      "cache_size", (json_int_t)mp->cache_size,
						      "elt_size", (json_int_t)mp->elt_size,
						      "private_data_size",
						      (json_int_t)mp->private_data_size));
	}
	json_object_set_new(t, "ports", ports);
	json_object_set_new(t, "mempools", pools);
	return t;
}

static json_t *uprobes_json(const struct rxb_profile *p)
{
	json_t *u = json_object(), *arr = json_array();
	double on = p->uprobe_attached_s > 0 ? p->uprobe_attached_s : 1;

	for (size_t i = 0; i < p->nuprobes; i++) {
		const struct rxb_profile_uprobe *up = &p->uprobes[i];
		json_array_append_new(arr, json_pack(
			"{s:s,s:I,s:f,s:f,s:f}", "symbol", up->spec, "calls", (json_int_t)up->st.calls,
			"calls_per_s", (double)up->st.calls / on,
			"ret_per_call", up->st.returns ? (double)up->st.ret_sum / (double)up->st.returns : 0.0,
			"empty_fraction",
			up->st.returns ? (double)up->st.ret_zero / (double)up->st.returns : 0.0));
	}
	json_object_set_new(u, "probes", arr);
	json_object_set_new(u, "attached_s", json_real(p->uprobe_attached_s));
	json_object_set_new(u, "cost_us_per_hit", json_pack("[f,f]", 1.5, 7.5));
	json_object_set_new(u, "rate_attached_pps", json_real(p->uprobe_rate_on_pps));
	json_object_set_new(u, "rate_detached_pps", json_real(p->uprobe_rate_off_pps));
	return u;
}

static const char *role_str(enum rxb_dpdk_role r)
{
	static const char *const names[] = {"", "rx_burst", "tx_burst", "ethdev", "mempool_get",
					    "mempool_put", "mempool"};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "";
}

/*
 * Where names came from: the number of distinct frames per source, the
 * source of every frame name (so a label in stacks.folded can be traced),
 * and the DPDK labels read from the process.
 */
static json_t *symbols_json(const struct rxb_profile *p)
{
	json_t *s = json_object(), *by = json_object(), *frames = json_object(), *dl = json_array();
	size_t count[RXB_NAME_KALLSYMS + 1] = {0};

	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct rxb_profile_func *f = &p->funcs[i];
		if ((unsigned)f->src <= RXB_NAME_KALLSYMS)
			count[f->src]++;
		json_object_set_new(frames, f->name, json_string(rxb_name_src_str(f->src)));
	}
	for (int k = 0; k <= RXB_NAME_KALLSYMS; k++)
		json_object_set_new(by, rxb_name_src_str((enum rxb_name_src)k),
				    json_integer((json_int_t)count[k]));
	for (size_t i = 0; i < p->ndpdk; i++) {
		const struct rxb_dpdk_label *l = &p->dpdk[i];
		char off[32];
		snprintf(off, sizeof(off), "0x%" PRIx64, l->off);
		json_array_append_new(dl, json_pack("{s:s,s:s,s:s,s:s}", "label", l->label, "role",
						     role_str(l->role), "dso", l->dso, "offset", off));
	}
	json_object_set_new(s, "order", json_pack("[s,s,s,s]", "symtab", "debuginfo", "dynsym",
						  "dpdk"));
	json_object_set_new(s, "debug_dir", json_string(p->debug_dir));
	json_object_set_new(s, "frames_by_source", by);
	json_object_set_new(s, "frame_sources", frames);
	json_object_set_new(s, "dpdk_labels", dl);
	json_object_set_new(s, "dpdk_note", p->dpdk_note[0] ? json_string(p->dpdk_note)
							     : json_null());
	return s;
}

json_t *rxb_profile_to_json(const struct rxb_profile *p, size_t top)
{
	uint64_t total = samples_total(p);
	bool cpp = p->packets > 0;
	json_t *d = json_object(), *tids = json_array(), *funcs = json_array(), *fnd = json_array();

	if (!d || !tids || !funcs || !fnd) {
		json_decref(d);
		json_decref(tids);
		json_decref(funcs);
		json_decref(fnd);
		return NULL;
	}
	for (size_t i = 0; i < p->nthreads; i++)
		json_array_append_new(tids, json_integer(p->tids[i]));
	json_object_set_new(d, "schema", json_string(RXB_ATTACH_SCHEMA));
	json_object_set_new(d, "target", json_pack("{s:i,s:s,s:s,s:i,s:o}", "pid", p->pid, "comm",
						   p->comm, "threads", p->how, "lcore", p->lcore,
						   "tids", tids));
	json_object_set_new(d, "sampler", json_pack("{s:s,s:s,s:i,s:s,s:i,s:i,s:I,s:I,s:I}", "event",
						    p->event, "stacks", p->stack_mode,
						    "stack_bytes", (int)p->sst.stack_bytes,
						    "events_on", p->sst.per_thread ? "threads" : "cpus",
						    "freq_hz", (int)p->freq_hz, "cpus",
						    (int)p->sst.ncpus, "samples", (json_int_t)total,
						    "dropped", (json_int_t)p->sst.dropped,
						    "stack_errors", (json_int_t)p->sst.stack_errors));
	/* dwarf mode: how many stacks the copy cut short of their outer frames */
	json_object_set_new(json_object_get(d, "sampler"), "stacks_cut",
			    json_integer((json_int_t)p->sst.stacks_cut));
	json_object_set_new(d, "window", json_pack("{s:f,s:b,s:I,s:f,s:f,s:{s:s,s:f}}", "seconds",
						   p->seconds, "interrupted", p->interrupted,
						   "busy_ns", (json_int_t)p->busy_ns, "busy_cycles",
						   p->busy_cycles, "busy_fraction",
						   p->seconds > 0 ? (double)p->busy_ns / 1e9 / p->seconds /
						   (double)(p->nthreads ? p->nthreads : 1) : 0.0,
						   "clock", "source", p->clock_source, "hz", p->clock_hz));
	json_object_set_new(d, "telemetry", p->have_tele ? tele_json(p) : json_null());
	json_object_set_new(d, "packets", p->have_tele ? json_integer((json_int_t)p->packets)
						      : json_null());
	json_object_set_new(d, "mpps", jnum_or_null(p->have_tele && p->seconds > 0,
						     (double)p->packets / p->seconds / 1e6));
	json_object_set_new(d, "cycles_per_packet", jnum_or_null(cpp, p->cycles_per_packet));
	json_t *callers = json_array();
	for (size_t i = 0; i < p->nmempool_callers; i++)
		json_array_append_new(callers, json_pack("{s:s,s:I}", "frame",
							 p->mempool_callers[i].name, "samples",
							 (json_int_t)p->mempool_callers[i].samples));
	json_object_set_new(d, "shares", json_pack("{s:f,s:f,s:f,s:f,s:s,s:s,s:f,s:s,s:f,s:o}",
						   "mempool", p->mempool_share,
						   "mempool_get", p->mempool_get_share,
						   "mempool_put", p->mempool_put_share,
						   "mempool_other", p->mempool_share -
						   p->mempool_get_share - p->mempool_put_share,
						   "mempool_get_frame", p->mempool_get_top,
						   "mempool_put_frame", p->mempool_put_top,
						   "pmd", p->pmd_share,
						   "rx_burst_frame", p->rx_burst_top,
						   "rx_burst", p->rx_burst_share,
						   "mempool_callers", callers));
	json_object_set_new(d, "symbols", symbols_json(p));
	for (size_t i = 0; i < p->nfuncs && i < top; i++) {
		const struct rxb_profile_func *f = &p->funcs[i];
		double self = total ? (double)f->self / (double)total : 0;
		double tot = total ? (double)f->total / (double)total : 0;
		if (!f->self)
			break;
		json_array_append_new(funcs, json_pack(
			"{s:s,s:s,s:s,s:s,s:I,s:f,s:f,s:o}", "name", f->name, "dso", f->dso, "source",
			rxb_name_src_str(f->src), "dpdk_role", role_str(f->role), "self_samples",
			(json_int_t)f->self, "self_share", self, "total_share", tot,
			"cycles_per_packet", jnum_or_null(cpp, self * p->cycles_per_packet)));
	}
	json_object_set_new(d, "top_functions", funcs);
	json_object_set_new(d, "uprobes", p->nuprobes ? uprobes_json(p) : json_null());
	for (size_t i = 0; i < p->nfindings; i++)
		json_array_append_new(fnd, json_string(p->findings[i]));
	json_object_set_new(d, "findings", fnd);
	return d;
}

static int folded_write(const void *ctx, FILE *f)
{
	const struct rxb_profile *p = ctx;

	for (size_t i = 0; i < p->nstacks; i++)
		if (fprintf(f, "%s %" PRIu64 "\n", p->stacks[i].folded, p->stacks[i].count) < 0)
			return -EIO;
	return 0;
}

static int json_write(const void *ctx, FILE *f)
{
	const struct rxb_profile *p = ctx;
	json_t *d = rxb_profile_to_json(p, 50);
	int rc;

	if (!d)
		return -ENOMEM;
	rc = json_dumpf(d, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) ? -EIO : 0;
	if (!rc && fputc('\n', f) == EOF)
		rc = -EIO;
	json_decref(d);
	return rc;
}

int rxb_profile_file_write(const char *dir, const char *name, int (*fn)(const void *, FILE *),
			   const void *ctx, char *err, size_t errlen)
{
	char path[4096], tmp[4200];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return rc;
	}
	rc = fn(ctx, f);
	if (fflush(f) || fsync(fileno(f)))
		rc = rc ? rc : -EIO;
	if (fclose(f))
		rc = rc ? rc : -EIO;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	}
	return rc;
}

int rxb_profile_write(const struct rxb_profile *p, const char *dir, char *err, size_t errlen)
{
	int rc;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return rc;
	}
	rc = rxb_profile_file_write(dir, "stacks.folded", folded_write, p, err, errlen);
	if (!rc)
		rc = rxb_profile_file_write(dir, "attach.json", json_write, p, err, errlen);
	return rc;
}

static void count_print(FILE *out, uint64_t v)
{
	if (v >= 1000000000ull)
		fprintf(out, "%.2fG", (double)v / 1e9);
	else if (v >= 1000000ull)
		fprintf(out, "%.2fM", (double)v / 1e6);
	else if (v >= 1000ull)
		fprintf(out, "%.1fk", (double)v / 1e3);
	else
		fprintf(out, "%" PRIu64, v);
}

void rxb_profile_print(const struct rxb_profile *p, FILE *out, size_t top)
{
	uint64_t total = samples_total(p);
	bool cpp = p->packets > 0;

	fprintf(out, "rxray attach: pid %d (%s), %s\n", p->pid, p->comm, p->how);
	fprintf(out, "window      %.2f s%s, %s at %u Hz on %u CPUs, %s stacks, %" PRIu64 " samples",
		p->seconds, p->interrupted ? " (interrupted)" : "", p->event, p->freq_hz,
		p->sst.ncpus, p->stack_mode, total);
	if (p->sst.dropped)
		fprintf(out, " (%" PRIu64 " dropped)", p->sst.dropped);
	if (p->sst.stack_bytes && p->sst.samples)
		fprintf(out, "\nstacks      %u bytes copied per sample; %.0f%% cut short of the "
			"thread's start (outer frames missing)", p->sst.stack_bytes,
			100.0 * (double)p->sst.stacks_cut / (double)p->sst.samples);
	fprintf(out, "\nbusy        %.3f s on CPU = ", (double)p->busy_ns / 1e9);
	count_print(out, (uint64_t)p->busy_cycles);
	fprintf(out, " cycles (%s %.3f GHz)\n", p->clock_source, p->clock_hz / 1e9);
	if (p->have_tele) {
		fprintf(out, "packets     ");
		count_print(out, p->packets);
		fprintf(out, " (%.2f Mpps), imissed %" PRIu64 ", rx_nombuf %" PRIu64 "  [%s]\n",
			p->seconds > 0 ? (double)p->packets / p->seconds / 1e6 : 0.0, p->imissed,
			p->rx_nombuf, p->tele_path);
	} else {
		fprintf(out, "packets     unknown (no telemetry socket): shares only\n");
	}
	if (cpp)
		fprintf(out, "cycles/pkt  %.1f\n", p->cycles_per_packet);
	fprintf(out, "\n  %6s %6s %8s  %s\n", "self%", "total%", cpp ? "cyc/pkt" : "samples",
		"function [object]");
	for (size_t i = 0; i < p->nfuncs && i < top && total; i++) {
		const struct rxb_profile_func *f = &p->funcs[i];
		double self = (double)f->self / (double)total;
		if (!f->self)
			break;
		if (cpp)
			fprintf(out, "  %5.1f%% %5.1f%% %8.2f  %s", 100 * self,
				100.0 * (double)f->total / (double)total, self * p->cycles_per_packet,
				f->name);
		else
			fprintf(out, "  %5.1f%% %5.1f%% %8" PRIu64 "  %s", 100 * self,
				100.0 * (double)f->total / (double)total, f->self, f->name);
		if (f->dso[0] == '[' || !f->dso[0])
			fprintf(out, "%s%s\n", f->dso[0] ? " " : "", f->dso);
		else
			fprintf(out, " [%s]\n", f->dso);
	}
	fprintf(out, "\nmempool code %.1f%% of samples", 100 * p->mempool_share);
	if (cpp)
		fprintf(out, " (%.1f cycles/packet)", p->mempool_share * p->cycles_per_packet);
	fprintf(out, ", PMD code %.1f%%\n", 100 * p->pmd_share);
	if (p->mempool_get_share > 0 || p->mempool_put_share > 0) {
		fprintf(out, "  get %.1f%%", 100 * p->mempool_get_share);
		if (p->mempool_get_top[0])
			fprintf(out, " (%s)", p->mempool_get_top);
		fprintf(out, ", put %.1f%%", 100 * p->mempool_put_share);
		if (p->mempool_put_top[0])
			fprintf(out, " (%s)", p->mempool_put_top);
		fprintf(out, ", other %.1f%%\n",
			100 * (p->mempool_share - p->mempool_get_share - p->mempool_put_share));
	}
	if (p->rx_burst_top[0])
		fprintf(out, "rx burst    %s: %.1f%% of samples in its stacks\n", p->rx_burst_top,
			100 * p->rx_burst_share);
	if (p->dpdk_note[0])
		fprintf(out, "dpdk names  %s\n", p->dpdk_note);
	for (size_t i = 0; i < p->nuprobes; i++) {
		const struct rxb_profile_uprobe *u = &p->uprobes[i];
		double on = p->uprobe_attached_s > 0 ? p->uprobe_attached_s : 1;
		fprintf(out, "uprobe %-28s %.0f calls/s, %.2f returned/call, %.0f%% empty\n", u->spec,
			(double)u->st.calls / on,
			u->st.returns ? (double)u->st.ret_sum / (double)u->st.returns : 0.0,
			u->st.returns ? 100.0 * (double)u->st.ret_zero / (double)u->st.returns : 0.0);
	}
	if (p->nuprobes)
		fprintf(out, "uprobe overhead: packet rate %.2f Mpps attached vs %.2f Mpps detached "
			"(%.1f%%); 1.5-7.5 us per hit here\n", p->uprobe_rate_on_pps / 1e6,
			p->uprobe_rate_off_pps / 1e6,
			p->uprobe_rate_off_pps > 0
				? 100.0 * (1 - p->uprobe_rate_on_pps / p->uprobe_rate_off_pps)
				: 0.0);
	if (p->nfindings) {
		fprintf(out, "\nfindings\n");
		for (size_t i = 0; i < p->nfindings; i++)
			fprintf(out, "  - %s\n", p->findings[i]);
	}
}
