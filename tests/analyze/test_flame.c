/* SPDX-License-Identifier: MIT */
/* Flame graphs: folded parser, SVG structure and widths, diff, exporters. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "rxray/analyze.h"
#include "rxray/flame.h"
#include "rxray/trace.h"
#include "testutil.h"

static struct rxa_flame *from_text(const char *text)
{
	struct rxa_flame *f = NULL;
	rxa_flame_open(&f);
	cr_assert(f);
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	char err[256] = "";
	int rc = rxa_flame_read_folded(f, in, "mem", err, sizeof(err));
	fclose(in);
	cr_assert_eq(rc, 0, "%s", err);
	return f;
}

static char *svg_of(const struct rxa_flame *f, const struct rxa_flame_svg_opts *o)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_svg_write(f, m, o), 0);
	fclose(m);
	return s;
}

/* Frames of an SVG: value and depth per <g class="rxf-f">. */
struct gframe {
	double x, v;
	int d;
	char fill[32];
	char name[128];
};

static size_t svg_frames(const char *svg, struct gframe *out, size_t max)
{
	size_t n = 0;
	for (const char *p = svg; (p = strstr(p, "<g class=\"rxf-f\"")) && n < max; p++) {
		struct gframe *g = &out[n++];
		cr_assert_eq(sscanf(p, "<g class=\"rxf-f\" data-x=\"%lf\" data-v=\"%lf\" data-d=\"%d\"", &g->x,
				    &g->v, &g->d), 3);
		const char *t = strstr(p, "<title>") + 7;
		size_t k = 0;
		while (t[k] != '\n' && k < sizeof(g->name) - 1) {
			g->name[k] = t[k];
			k++;
		}
		g->name[k] = '\0';
		const char *fl = strstr(p, "fill=\"") + 6;
		k = 0;
		while (fl[k] != '"' && k < sizeof(g->fill) - 1) {
			g->fill[k] = fl[k];
			k++;
		}
		g->fill[k] = '\0';
	}
	return n;
}

static int xmllint_ok(const char *svg)
{
	char path[] = "/tmp/rxray-test-svgXXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, svg, strlen(svg)), (ssize_t)strlen(svg));
	close(fd);
	char cmd[256], *out = NULL;
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	int rc = tu_run(cmd, &out);
	if (rc)
		cr_log_error("xmllint: %s", out);
	free(out);
	unlink(path);
	return rc;
}

static bool have_xmllint(void)
{
	return tu_run("command -v xmllint", NULL) == 0;
}

Test(flame, folded_parser_errors)
{
	static const struct {
		const char *text;
		const char *want;
	} bad[] = {
		{"a;b 1\na;b\n", "mem:2: missing count"},
		{"a;b 1\n\n# comment\na;b x1\n", "mem:4: bad count 'x1'"},
		{"a;;b 3\n", "mem:1: empty frame name at column 3"},
		{";a 3\n", "mem:1: empty frame name at column 1"},
		{"a;b; 3\n", "mem:1: empty frame name at column 5"},
		{"a;b -3\n", "mem:1: bad count '-3'"},
		{"a;b 1e999\n", "mem:1: bad count"},
		{"   7\n", "mem:1: empty stack before the count"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rxa_flame *f = NULL;
		rxa_flame_open(&f);
		FILE *in = fmemopen((void *)bad[i].text, strlen(bad[i].text), "r");
		char err[256] = "";
		cr_expect_eq(rxa_flame_read_folded(f, in, "mem", err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_expect(strstr(err, bad[i].want), "case %zu: got '%s', want '%s'", i, err, bad[i].want);
		fclose(in);
		rxa_flame_free(f);
	}
	/* good: spaces inside frame names, decimals, tabs, CRLF */
	struct rxa_flame *f = from_text("main;func (inlined) 2.5\r\nmain;other\t4  \n\n");
	cr_expect_float_eq(rxa_flame_total(f), 6.5, 1e-12);
	cr_expect_eq(rxa_flame_frames(f), 3);
	rxa_flame_free(f);
	/* names rejected by the in-memory API */
	rxa_flame_open(&f);
	const char *st[] = {"a", "b;c"};
	cr_expect_eq(rxa_flame_add(f, st, 2, 1), -EINVAL);
	const char *st2[] = {"a", ""};
	cr_expect_eq(rxa_flame_add(f, st2, 2, 1), -EINVAL);
	cr_expect_eq(rxa_flame_add(f, st, 1, -1), -EINVAL);
	rxa_flame_free(f);
}

Test(flame, cli_malformed_exit_2)
{
	char dir[64], path[128], cmd[512], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/bad.folded", dir);
	FILE *f = fopen(path, "w");
	fputs("a;b 1\na;c 2\na;d three\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s flame %s -o %s/out.svg", RXRAY_BIN, path, dir);
	cr_expect_eq(tu_run(cmd, &out), 2);
	char want[256];
	snprintf(want, sizeof(want), "rxray flame: %s:3: bad count 'three'", path);
	cr_expect(out && strstr(out, want), "got: %s", out);
	free(out);
	/* nothing half written */
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	cr_expect_neq(access(path, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "ls %s | wc -l", dir);
	cr_expect_eq(tu_run(cmd, &out), 0);
	cr_expect_str_eq(out, "1\n");
	free(out);
	snprintf(cmd, sizeof(cmd), "printf 'x;y 1\\n;z 2\\n' | %s flame -", RXRAY_BIN);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "<stdin>:2: empty frame name"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s flame %s/missing.folded", RXRAY_BIN, dir);
	cr_expect_eq(tu_run(cmd, &out), 2);
	free(out);
	tu_rmrf(dir);
}

Test(flame, svg_wellformed_and_widths_sum)
{
	struct rxa_flame *f = from_text("main;rx;cqe_poll 60\nmain;rx;buf_alloc 200\nmain;rx 15\n"
					"main;app;free <&> 150\nmain;app;\"quoted\" 'x' 30\nother 45\n");
	double total = rxa_flame_total(f);
	cr_expect_float_eq(total, 500, 1e-12);
	struct rxa_flame_svg_opts o = {.title = "t <&> \"q\"", .units = "cycles/packet"};
	char *svg = svg_of(f, &o);
	if (have_xmllint())
		cr_expect_eq(xmllint_ok(svg), 0);
	else
		fprintf(stderr, "note: xmllint missing: XML well-formedness not checked\n");
	cr_expect(strstr(svg, "<script") && strstr(svg, "Search") && strstr(svg, "Reset Zoom"));
	struct gframe g[64];
	size_t n = svg_frames(svg, g, 64);
	cr_expect_eq(n, 9, "frames drawn: %zu", n);
	double d1 = 0, root = -1;
	for (size_t i = 0; i < n; i++) {
		if (g[i].d == 0)
			root = g[i].v;
		if (g[i].d == 1)
			d1 += g[i].v;
	}
	cr_expect_float_eq(root, total, 1e-9);
	cr_expect_float_eq(d1, total, 1e-9);
	/* each parent's children fit inside it, left to right */
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t j = 0; j < n; j++)
			if (g[j].d == g[i].d + 1 && g[j].x >= g[i].x - 1e-9 && g[j].x + g[j].v <= g[i].x + g[i].v + 1e-9)
				sum += g[j].v;
		cr_expect(sum <= g[i].v + 1e-9, "%s: children %f > %f", g[i].name, sum, g[i].v);
	}
	free(svg);
	rxa_flame_free(f);
}

Test(flame, odd_bytes_stay_valid_xml_and_json)
{
	/* invalid UTF-8, control bytes and markup in frame names */
	struct rxa_flame *f = from_text("main;bad\xff\xfe;ok 3\nmain;ctl\x01x 2\nmain;]]></script><x> 1\n"
					"main;caf\xc3\xa9 4\n");
	char *svg = svg_of(f, NULL);
	if (have_xmllint())
		cr_expect_eq(xmllint_ok(svg), 0);
	cr_expect(strstr(svg, "caf\xc3\xa9"), "valid UTF-8 kept");
	cr_expect(strstr(svg, "bad??"), "invalid bytes replaced");
	free(svg);
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_speedscope_write(f, m, "x", NULL), 0);
	fclose(m);
	json_t *j = json_loads(s, 0, NULL);
	cr_expect(j, "speedscope output is not valid JSON");
	json_decref(j);
	free(s);
	rxa_flame_free(f);
}

Test(flame, many_frames_merge_and_stay_readable)
{
	/* 20,000 tiny frames plus one wide one: the tiny ones merge */
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	fprintf(m, "root;big 1000000\n");
	for (int i = 0; i < 20000; i++)
		fprintf(m, "root;tiny_%05d;leaf 1\n", i);
	fclose(m);
	struct rxa_flame *f = from_text(text);
	free(text);
	cr_expect_eq(rxa_flame_frames(f), 1 + 1 + 20000 * 2);
	char *svg = svg_of(f, NULL);
	struct gframe *g = calloc(50000, sizeof(*g));
	size_t n = svg_frames(svg, g, 50000);
	cr_expect(n < 10, "drawn %zu frames", n);
	bool merged = false;
	double d2 = 0;
	for (size_t i = 0; i < n; i++) {
		merged |= !strcmp(g[i].name, "[20000 small frames]");
		if (g[i].d == 2)
			d2 += g[i].v;
	}
	cr_expect(merged);
	cr_expect_float_eq(d2, 1020000, 1e-6);
	if (have_xmllint())
		cr_expect_eq(xmllint_ok(svg), 0);
	free(g);
	free(svg);

	/* 2,000 frames of equal weight at 1,200 px: each 0.6 px, all drawn */
	m = open_memstream(&text, &len);
	for (int i = 0; i < 2000; i++)
		fprintf(m, "r;f%04d 1\n", i);
	fclose(m);
	struct rxa_flame *f2 = from_text(text);
	free(text);
	svg = svg_of(f2, NULL);
	g = calloc(4000, sizeof(*g));
	cr_expect_eq(svg_frames(svg, g, 4000), 2002);
	free(g);
	free(svg);
	rxa_flame_free(f2);
	rxa_flame_free(f);
}

Test(flame, colours_deterministic_by_name)
{
	struct rxa_flame *a = from_text("x;buf_alloc 5\nx;free 7\n");
	struct rxa_flame *b = from_text("y;z;buf_alloc 100\n");
	char *sa = svg_of(a, NULL), *sb = svg_of(b, NULL);
	struct gframe ga[8], gb[8];
	size_t na = svg_frames(sa, ga, 8), nb = svg_frames(sb, gb, 8);
	const char *fa = NULL, *fb = NULL, *ff = NULL;
	for (size_t i = 0; i < na; i++) {
		if (!strcmp(ga[i].name, "buf_alloc"))
			fa = ga[i].fill;
		if (!strcmp(ga[i].name, "free"))
			ff = ga[i].fill;
	}
	for (size_t i = 0; i < nb; i++)
		if (!strcmp(gb[i].name, "buf_alloc"))
			fb = gb[i].fill;
	cr_assert(fa && fb && ff);
	cr_expect_str_eq(fa, fb);
	cr_expect_str_neq(fa, ff);
	free(sa);
	free(sb);
	rxa_flame_free(a);
	rxa_flame_free(b);
}

Test(flame, differential)
{
	struct rxa_flame *a = from_text("rx;grows 10\nrx;shrinks 10\nrx;same 10\n");
	struct rxa_flame *b = from_text("rx;grows 20\nrx;shrinks 5\nrx;same 10\nrx;new 3\n");
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	struct rxa_flame_svg_opts o = {.label_a = "single", .label_b = "hds", .units = "cycles/packet"};
	cr_assert_eq(rxa_flame_diff_svg_write(a, b, m, &o), 0);
	fclose(m);
	if (have_xmllint())
		cr_expect_eq(xmllint_ok(s), 0);
	struct gframe g[16];
	size_t n = svg_frames(s, g, 16);
	int seen = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned r, gg, bb;
		cr_assert_eq(sscanf(g[i].fill, "rgb(%u,%u,%u)", &r, &gg, &bb), 3);
		if (!strcmp(g[i].name, "grows") || !strcmp(g[i].name, "new")) {
			cr_expect(r == 255 && bb < 255, "%s %s", g[i].name, g[i].fill);
			seen++;
		} else if (!strcmp(g[i].name, "shrinks")) {
			cr_expect(bb == 255 && r < 255, "%s", g[i].fill);
			seen++;
		} else if (!strcmp(g[i].name, "same")) {
			cr_expect(r == gg && gg == bb, "%s", g[i].fill);
			seen++;
		}
	}
	cr_expect_eq(seen, 4);
	cr_expect(strstr(s, "single 30 -&gt; hds 38 cycles/packet"), "subtitle missing");
	cr_expect(strstr(s, "data-a=\"10\""));
	free(s);
	rxa_flame_free(a);
	rxa_flame_free(b);
}

Test(flame, differential_wide_parent)
{
	/* 50 children under one frame: past the list walk, found through the hash */
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *ma = open_memstream(&ta, &la), *mb = open_memstream(&tb, &lb);
	for (int i = 0; i < 50; i++) {
		fprintf(ma, "rx;s%02d %d\n", i, 10 + i);
		fprintf(mb, "rx;s%02d %d\n", 49 - i, 100); /* reverse insertion order */
	}
	fclose(ma);
	fclose(mb);
	struct rxa_flame *a = from_text(ta), *b = from_text(tb);
	free(ta);
	free(tb);
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_diff_svg_write(a, b, m, NULL), 0);
	fclose(m);
	struct gframe g[64];
	size_t n = svg_frames(s, g, 64);
	cr_expect_eq(n, 52);
	const char *p = strstr(s, "<title>s07\n");
	cr_assert(p, "frame s07 missing");
	/* s07 weighs 17 in A: its <g> carries data-a="17" */
	const char *gstart = p;
	while (gstart > s && strncmp(gstart, "<g ", 3))
		gstart--;
	cr_expect(!strncmp(strstr(gstart, "data-a=\""), "data-a=\"17\"", 11), "%.200s", gstart);
	free(s);
	/* the folded round trip keeps every child */
	m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_folded_write(a, m), 0);
	fclose(m);
	cr_expect(strstr(s, "rx;s00 10\n") && strstr(s, "rx;s49 59\n"));
	free(s);
	rxa_flame_free(a);
	rxa_flame_free(b);
}

Test(flame, folded_and_speedscope_exports)
{
	const char *text = "m;b;c 3\nm;a 2\nm 1\nm;b 4\n";
	struct rxa_flame *f = from_text(text);
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_folded_write(f, m), 0);
	fclose(m);
	cr_expect_str_eq(s, "m 1\nm;a 2\nm;b 4\nm;b;c 3\n");
	struct rxa_flame *f2 = from_text(s);
	cr_expect_float_eq(rxa_flame_total(f2), rxa_flame_total(f), 0);
	cr_expect_eq(rxa_flame_frames(f2), rxa_flame_frames(f));
	free(s);

	m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_speedscope_write(f, m, "test", "none"), 0);
	fclose(m);
	json_t *j = json_loads(s, 0, NULL);
	cr_assert(j, "%s", s);
	cr_expect_str_eq(json_string_value(json_object_get(j, "$schema")),
			 "https://www.speedscope.app/file-format-schema.json");
	json_t *prof = json_array_get(json_object_get(j, "profiles"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(prof, "type")), "sampled");
	json_t *w = json_object_get(prof, "weights"), *smp = json_object_get(prof, "samples");
	cr_expect_eq(json_array_size(w), json_array_size(smp));
	double sum = 0;
	size_t i;
	json_t *v;
	json_array_foreach(w, i, v)
		sum += json_number_value(v);
	cr_expect_float_eq(sum, 10, 1e-12);
	cr_expect_float_eq(json_number_value(json_object_get(prof, "endValue")), 10, 1e-12);
	size_t nframes = json_array_size(json_object_get(json_object_get(j, "shared"), "frames"));
	json_array_foreach(smp, i, v) {
		size_t k;
		json_t *idx;
		json_array_foreach(v, k, idx)
			cr_expect((size_t)json_integer_value(idx) < nframes);
	}
	json_decref(j);
	free(s);
	m = open_memstream(&s, &len);
	cr_expect_eq(rxa_flame_speedscope_write(f, m, "x", "furlongs"), -EINVAL);
	fclose(m);
	free(s);
	rxa_flame_free(f);
	rxa_flame_free(f2);
}

Test(flame, run_result_frames_and_trace)
{
	char err[RXA_ERR_LEN];
	struct rxr_result *r = NULL;
	rxr_result_read(FIXTURES "/run_dpdk_hds.json", &r, err, sizeof(err));
	cr_assert(r, "%s", err);
	struct rxa_flame *f = NULL;
	rxa_flame_open(&f);
	cr_assert_eq(rxa_flame_add_result(f, r, NULL), 0);
	/* widths: rx 500 + app 220 + nic (30 + 10.64 + 10) cycles/packet */
	cr_expect_float_eq(rxa_flame_total(f), 500 + 220 + 50.64, 1e-6);
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	cr_assert_eq(rxa_flame_folded_write(f, m), 0);
	fclose(m);
	cr_expect(strstr(s, "rx;buf_alloc 200\n"), "%s", s);
	cr_expect(!strstr(s, "idle"));
	free(s);

	const struct rxr_result *runs[] = {r};
	const char *names[] = {"dpdk hds"};
	m = open_memstream(&s, &len);
	cr_assert_eq(rxa_trace_write(runs, names, 1, m), 0);
	fclose(m);
	json_t *j = json_loads(s, 0, NULL);
	cr_assert(j);
	size_t laps = 0, summary = 0, meta = 0, i;
	json_t *e;
	json_array_foreach(json_object_get(j, "traceEvents"), i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *cat = json_string_value(json_object_get(e, "cat"));
		if (!strcmp(ph, "M"))
			meta++;
		else if (!strcmp(cat, "lap"))
			laps++;
		else if (!strcmp(cat, "summary"))
			summary++;
		if (!strcmp(ph, "X"))
			cr_expect(json_number_value(json_object_get(e, "dur")) >= 0);
	}
	cr_expect_eq(laps, r->threads[1].nsamples);
	cr_expect_eq(laps, 18);
	/* nic (3 stages) and app (3 stages) from summaries, each + a packet span */
	cr_expect_eq(summary, 8);
	cr_expect_eq(meta, 4);
	json_decref(j);
	free(s);

	/* the CLI writes the same trace */
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s flame %s/run_dpdk_hds.json --format trace | head -c 20", RXRAY_BIN, FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 0);
	cr_expect(strstr(out, "{\"traceEvents\""), "%s", out);
	free(out);
	rxa_flame_free(f);
	rxr_result_free(r);
}

Test(flame, cli_sweep_and_diff)
{
	char dir[64], cmd[1024], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(cmd, sizeof(cmd), "%s flame %s/sweep -s queues=1 -o %s/all.svg && %s flame %s/sweep --diff mode=single mode=hds -s engine=dpdk,frame=1064 -o %s/d.svg",
		 RXRAY_BIN, FIXTURES, dir, RXRAY_BIN, FIXTURES, dir);
	cr_expect_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	char path[128];
	snprintf(path, sizeof(path), "%s/d.svg", dir);
	char *svg = tu_slurp(path);
	cr_assert(svg);
	cr_expect(strstr(svg, "data-diff=\"1\""));
	cr_expect(strstr(svg, "single 281 -&gt; hds 771 cycles/packet"), "subtitle");
	free(svg);
	if (have_xmllint()) {
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s/all.svg %s/d.svg", dir, dir);
		cr_expect_eq(tu_run(cmd, &out), 0, "%s", out);
		free(out);
	}
	/* folded diff normalised to B's total */
	snprintf(cmd, sizeof(cmd), "printf 'a;b 10\\n' > %s/a.f && printf 'a;b 40\\na;c 40\\n' > %s/b.f && %s flame --diff %s/a.f %s/b.f -o %s/fd.svg",
		 dir, dir, RXRAY_BIN, dir, dir, dir);
	cr_expect_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	snprintf(path, sizeof(path), "%s/fd.svg", dir);
	svg = tu_slurp(path);
	cr_assert(svg);
	/* A scaled 10 -> 80: b goes 80 -> 40 (shrinks) */
	cr_expect(strstr(svg, "A 80, B 40, delta -40"), "%s", svg);
	free(svg);
	tu_rmrf(dir);
}
