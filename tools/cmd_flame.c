/* SPDX-License-Identifier: MIT */
/*
 * rxray flame: flame graphs from folded stacks or run results, a
 * differential graph of two inputs, and exports (folded, speedscope,
 * Chrome trace). Reads -> builds the frame set -> writes one file.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/flame.h"
#include "rxray/trace.h"
#include "rxray/util.h"

#define VERB "flame"

struct flame_opts {
	const char *output;
	const char *format;
	const char *title;
	const char *units;
	const char *select;
	int width;
	double min_px;
	double packets_a, packets_b;
	bool diff;
};

static void flame_usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray flame INPUT [-o FILE] [--format svg|folded|speedscope|trace] [options]\n"
		"  rxray flame --diff A B [-o FILE]          differential graph, B's shape\n"
		"  rxray flame RESULTS --diff SEL_A SEL_B    two points of one sweep\n"
		"\n"
		"INPUT is a run result (.json), sweep results (a folder or .jsonl), or\n"
		"folded stacks (\"frame;frame;frame COUNT\" per line; '-' = stdin).\n"
		"Run results become frames role;stage with widths in cycles/packet; a\n"
		"sweep with several points puts each point's label at the root.\n"
		"\n"
		"OPTIONS\n"
		"  -o, --output FILE    where to write (default '-': stdout)\n"
		"  -f, --format FMT     svg (default), folded, speedscope, trace (Chrome\n"
		"                       trace-event JSON for Perfetto; run results only)\n"
		"  -t, --title TEXT     graph title\n"
		"  -w, --width PX       SVG width (default 1200)\n"
		"      --min-px PX      merge frames narrower than this (default 0.3)\n"
		"      --units NAME     weight unit for folded input (default samples)\n"
		"  -s, --select SEL     sweep input: only points matching knob=value[,...]\n"
		"      --diff           differential mode (two inputs or two selectors);\n"
		"                       folded inputs are scaled to B's total unless\n"
		"      --packets-a N, --packets-b N give packet counts (per-packet weights)\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray flame run.json -o flame.svg\n"
		"  rxray flame stacks.folded --units samples -o attach.svg\n"
		"  rxray flame results/ --diff mode=single mode=hds -o hds-vs-single.svg\n"
		"  rxray flame run.json --format trace -o run.trace.json\n"
		"  rxray flame run.json --format speedscope -o run.speedscope.json\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure, 2 bad input.\n");
}

static bool is_results_path(const char *p)
{
	struct stat st;
	size_t n = strlen(p);
	if (!strcmp(p, "-"))
		return false;
	if (!stat(p, &st) && S_ISDIR(st.st_mode))
		return true;
	return (n >= 5 && !strcmp(p + n - 5, ".json")) || (n >= 6 && !strcmp(p + n - 6, ".jsonl"));
}

static bool sels_match(const struct rxa_sel *sel, size_t nsel, const json_t *knobs)
{
	for (size_t i = 0; i < nsel; i++)
		if (sel[i].n && !rxa_sel_match(&sel[i], knobs))
			return false;
	return true;
}

/* The point's marks, each with its own reason (rxa_marks_phrase), once
 * each, into marks ("" when none has any). */
static void flame_mark(const struct rxa_point *p, char *marks, size_t len)
{
	char ph[1024];
	unsigned m = marks ? rxa_point_marks(p) : 0;
	for (unsigned bit = 1; m && bit < (1u << RXA_MARK_COUNT); bit <<= 1) {
		if (!(m & bit))
			continue;
		rxa_mark_reason(p, bit, true, ph, sizeof(ph));
		if (strstr(marks, ph))
			continue;
		size_t o = strlen(marks);
		snprintf(marks + o, len - o, "%s%s", o ? "; " : "", ph);
	}
}

/* Frames of the points of s matching every selector; count in *n; their
 * marks into marks. */
static int flame_from_set(struct rxa_flame *f, const struct rxa_set *s, const struct rxa_sel *sel,
			  size_t nsel, size_t *n, char *marks, size_t mlen)
{
	size_t nvary = 0, hits = 0;
	const char **vary = rxa_set_varying(s, &nvary);
	if (!vary)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (sels_match(sel, nsel, s->pts[i].knobs) && rxa_point_run(&s->pts[i]))
			hits++;
	int rc = 0;
	*n = 0;
	for (size_t i = 0; i < s->n && !rc; i++) {
		const struct rxa_point *p = &s->pts[i];
		const struct rxr_result *r = rxa_point_run(p);
		if (!sels_match(sel, nsel, p->knobs) || !r)
			continue;
		char label[512];
		rxa_point_label(p, vary, nvary, label, sizeof(label));
		rc = rxa_flame_add_result(f, r, hits > 1 ? label : NULL);
		flame_mark(p, marks, mlen);
		(*n)++;
	}
	free(vary);
	return rc;
}

/*
 * Load one input (results or folded) into f; exit code or 0. Results are
 * filtered by both selectors (--select and a --diff side; NULL = none).
 */
static int flame_load(struct rxa_flame *f, const char *path, const char *selector,
		      const char *side, bool *per_packet, char *marks, size_t mlen)
{
	char err[RXA_ERR_LEN];
	if (!is_results_path(path)) {
		int rc = rxa_flame_read_folded_file(f, path, err, sizeof(err));
		if (rc) {
			rxu_err(VERB, "%s", err);
			return rc == -ENOMEM || rc == -EIO ? RXU_EXIT_RUNTIME : RXU_EXIT_USAGE;
		}
		*per_packet = false;
		return 0;
	}
	struct rxa_set *s = NULL;
	struct rxa_sel sel[2] = {{0}, {0}};
	int ec = 0;
	int rc = rxt_cli_set_load(VERB, path, &s);
	if (rc)
		return rc;
	if ((selector && rxa_sel_parse(selector, &sel[0], err, sizeof(err))) ||
	    (side && rxa_sel_parse(side, &sel[1], err, sizeof(err)))) {
		ec = rxu_usage_err(VERB, "%s", err);
		goto out;
	}
	size_t n = 0;
	rc = flame_from_set(f, s, sel, 2, &n, marks, mlen);
	if (rc) {
		rxu_err(VERB, "%s: %s", path, strerror(-rc));
		ec = RXU_EXIT_RUNTIME;
	} else if (!n || !(rxa_flame_total(f) > 0)) {
		ec = rxu_usage_err(VERB, "%s: no point%s with a measured run and stage cycles", path,
				   selector || side ? " matching the selectors" : "");
	}
	*per_packet = true;
out:
	rxa_sel_free(&sel[0]);
	rxa_sel_free(&sel[1]);
	rxa_set_free(s);
	return ec;
}

static int flame_trace(const char *path, const char *selector, FILE *o)
{
	char err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	struct rxa_sel sel = {0};
	const struct rxr_result **runs = NULL;
	char **names = NULL;
	size_t n = 0;
	int ec = 0, rc;
	if (!is_results_path(path))
		return rxu_usage_err(VERB, "%s: --format trace needs run results (.json, .jsonl or a folder)", path);
	rc = rxt_cli_set_load(VERB, path, &s);
	if (rc)
		return rc;
	if (selector && rxa_sel_parse(selector, &sel, err, sizeof(err))) {
		ec = rxu_usage_err(VERB, "--select: %s", err);
		goto out;
	}
	size_t nvary = 0;
	const char **vary = rxa_set_varying(s, &nvary);
	runs = calloc(s->n, sizeof(*runs));
	names = calloc(s->n, sizeof(*names));
	if (!vary || !runs || !names) {
		free(vary);
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct rxa_point *p = &s->pts[i];
		const struct rxr_result *r = p->top_run ? p->top_run : p->ndr_run;
		if ((selector && !rxa_sel_match(&sel, p->knobs)) || !r || !(r->clock.hz > 0))
			continue;
		if (rxa_trace_gpu_check(r, err, sizeof(err))) {
			free(vary);
			ec = rxu_usage_err(VERB, "%s: %s", path, err);
			goto out;
		}
		char label[512];
		rxa_point_label(p, vary, nvary, label, sizeof(label));
		names[n] = strdup(label);
		runs[n++] = r;
	}
	free(vary);
	if (!n) {
		ec = rxu_usage_err(VERB, "%s: no run with a clock rate to trace", path);
		goto out;
	}
	rc = rxa_trace_write(runs, (const char *const *)names, n, o);
	if (rc) {
		rxu_err(VERB, "writing trace: %s", strerror(-rc));
		ec = RXU_EXIT_RUNTIME;
	}
out:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(runs);
	rxa_sel_free(&sel);
	rxa_set_free(s);
	return ec;
}

static int flame_write(const struct flame_opts *op, const struct rxa_flame *a, const struct rxa_flame *b,
		       const char *la, const char *lb, bool per_packet, const char *subtitle, FILE *o)
{
	const char *units = per_packet ? "cycles/packet" : op->units;
	struct rxa_flame_svg_opts so = {.title = op->title, .subtitle = subtitle, .units = units,
					.width = op->width, .min_px = op->min_px, .label_a = la,
					.label_b = lb};
	int rc;
	if (!strcmp(op->format, "svg"))
		rc = a ? rxa_flame_diff_svg_write(a, b, o, &so) : rxa_flame_svg_write(b, o, &so);
	else if (!strcmp(op->format, "folded"))
		rc = rxa_flame_folded_write(b, o);
	else
		rc = rxa_flame_speedscope_write(b, o, op->title ? op->title : "rxray", "none");
	return rc;
}

int rxt_cmd_flame(int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
		{"title", required_argument, NULL, 't'},  {"width", required_argument, NULL, 'w'},
		{"min-px", required_argument, NULL, 'm'}, {"units", required_argument, NULL, 'u'},
		{"select", required_argument, NULL, 's'}, {"diff", no_argument, NULL, 'd'},
		{"packets-a", required_argument, NULL, 'A'}, {"packets-b", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
	struct flame_opts op = {.output = "-", .format = "svg", .units = "samples", .width = 1200,
				.min_px = 0.3, .packets_a = NAN, .packets_b = NAN};
	int c;
	uint64_t u;
	optind = 1;
	while ((c = rxt_cli_getopt(VERB, argc, argv, "o:f:t:w:s:h", lo)) != -1) {
		switch (c) {
		case 'o': op.output = optarg; break;
		case 'f': op.format = optarg; break;
		case 't': op.title = optarg; break;
		case 'u': op.units = optarg; break;
		case 's': op.select = optarg; break;
		case 'd': op.diff = true; break;
		case 'w':
			if (rxu_parse_u64(optarg, 200, 100000, &u))
				return rxu_usage_err(VERB, "--width: '%s' is not a pixel count in 200..100000", optarg);
			op.width = (int)u;
			break;
		case 'm':
			if (rxu_parse_double(optarg, 0.01, 100, &op.min_px))
				return rxu_usage_err(VERB, "--min-px: '%s' is not a number in 0.01..100", optarg);
			break;
		case 'A':
		case 'B':
			if (rxu_parse_u64(optarg, 1, UINT64_MAX, &u))
				return rxu_usage_err(VERB, "--packets-%c: '%s' is not a count >= 1",
						     c == 'A' ? 'a' : 'b', optarg);
			*(c == 'A' ? &op.packets_a : &op.packets_b) = (double)u;
			break;
		case 'h': flame_usage(stdout); return RXU_EXIT_OK;
		default: return RXU_EXIT_USAGE;
		}
	}
	if (strcmp(op.format, "svg") && strcmp(op.format, "folded") && strcmp(op.format, "speedscope") &&
	    strcmp(op.format, "trace"))
		return rxu_usage_err(VERB, "--format: '%s' (expected svg, folded, speedscope or trace)", op.format);
	int npos = argc - optind;
	if (op.diff ? (npos != 2 && npos != 3) : npos != 1)
		return rxu_usage_err(VERB, "expected %s, got %d argument%s (rxray flame --help)",
				     op.diff ? "A B or RESULTS SEL_A SEL_B" : "one INPUT", npos,
				     npos == 1 ? "" : "s");
	if (op.diff && strcmp(op.format, "svg"))
		return rxu_usage_err(VERB, "--diff writes SVG only (got --format %s)", op.format);

	struct rxa_flame *fa = NULL, *fb = NULL;
	rxa_flame_open(&fb);
	struct rxr_afile af = {0};
	int ec = 0;
	bool ppa = false, ppb = false;
	const char *la = NULL, *lb = NULL;
	char lab_a[128], lab_b[128], mark_a[2048] = "", mark_b[2048] = "";
	if (!fb)
		return RXU_EXIT_RUNTIME;
	if (!strcmp(op.format, "trace")) {
		if ((ec = rxt_cli_in_check(VERB, argv[optind], true)) ||
		    (ec = rxt_cli_out_open(VERB, op.output, &af)))
			goto out;
		ec = flame_trace(argv[optind], op.select, af.f);
		goto commit;
	}
	if (op.diff) {
		rxa_flame_open(&fa);
		if (!fa) {
			ec = RXU_EXIT_RUNTIME;
			goto out;
		}
		const char *in_a = argv[optind], *in_b = argv[optind + 1], *sa = NULL, *sb = NULL;
		la = in_a;
		lb = in_b;
		if (npos == 3) { /* RESULTS SEL_A SEL_B */
			in_a = in_b = argv[optind];
			sa = argv[optind + 1];
			sb = argv[optind + 2];
			char err[RXA_ERR_LEN];
			struct rxa_sel xa, xb;
			if (rxa_sel_parse(sa, &xa, err, sizeof(err))) {
				ec = rxu_usage_err(VERB, "%s", err);
				goto out;
			}
			if (rxa_sel_parse(sb, &xb, err, sizeof(err))) {
				rxa_sel_free(&xa);
				ec = rxu_usage_err(VERB, "%s", err);
				goto out;
			}
			rxa_sel_labels(&xa, &xb, lab_a, lab_b, sizeof(lab_a));
			rxa_sel_free(&xa);
			rxa_sel_free(&xb);
			la = lab_a;
			lb = lab_b;
		}
		ec = flame_load(fa, in_a, op.select, sa, &ppa, mark_a, sizeof(mark_a));
		if (!ec)
			ec = flame_load(fb, in_b, op.select, sb, &ppb, mark_b, sizeof(mark_b));
		if (ec)
			goto out;
		if (ppa != ppb) {
			ec = rxu_usage_err(VERB, "--diff: compare run results with run results, folded with folded");
			goto out;
		}
		if (!ppa) {
			if (isfinite(op.packets_a) != isfinite(op.packets_b)) {
				ec = rxu_usage_err(VERB, "--packets-a and --packets-b go together");
				goto out;
			}
			if (isfinite(op.packets_a)) {
				rxa_flame_scale(fa, 1 / op.packets_a);
				rxa_flame_scale(fb, 1 / op.packets_b);
				op.units = "samples/packet";
			} else if (rxa_flame_total(fa) > 0) {
				rxa_flame_scale(fa, rxa_flame_total(fb) / rxa_flame_total(fa));
			}
		}
	} else {
		ec = flame_load(fb, argv[optind], op.select, NULL, &ppb, mark_b, sizeof(mark_b));
		if (ec)
			goto out;
	}
	if (!(rxa_flame_total(fb) > 0)) {
		ec = rxu_usage_err(VERB, "%s: no weight in the input (empty or all counts 0)", argv[argc - 1]);
		goto out;
	}
	if ((ec = rxt_cli_out_open(VERB, op.output, &af)))
		goto out;
	/* a figure from a disturbed or oversubscribed run says so on the graph */
	char sub[4352] = "";
	if (mark_a[0] || mark_b[0]) {
		size_t o = (size_t)snprintf(sub, sizeof(sub), "MARKED:");
		if (mark_a[0] && o < sizeof(sub))
			o += (size_t)snprintf(sub + o, sizeof(sub) - o, " %s %s", la ? la : "A", mark_a);
		if (mark_b[0] && o < sizeof(sub))
			snprintf(sub + o, sizeof(sub) - o, "%s %s %s", mark_a[0] ? " /" : "",
				 fa ? (lb ? lb : "B") : argv[optind], mark_b);
	}
	ec = rxt_cli_out_finish(VERB, op.output, &af,
			       flame_write(&op, fa, fb, la, lb, ppb, sub[0] ? sub : NULL, af.f));
	goto out;
commit:
	/* trace: flame_trace printed its own line; the output is dropped */
	if (ec)
		rxr_afile_abort(&af);
	else
		ec = rxt_cli_out_finish(VERB, op.output, &af, 0);
out:
	rxa_flame_free(fa);
	rxa_flame_free(fb);
	return ec;
}
