/* SPDX-License-Identifier: MIT */
/*
 * Hostile inputs against every analysis verb and the sweep front end
 * (issue 14): special files, caps, out-of-range numbers, bad UTF-8, bad
 * options, quoted reproduce commands, the built-in default spec. Every
 * input is written here; every command runs under `timeout`, so a hang
 * fails (exit 124) instead of stalling the suite.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyze/testutil.h"
#include "rxray/input.h"
#include "rxray/util.h"

#define RUN FIXTURES "/run_dpdk_single.json"
#define SWEEP FIXTURES "/sweep"

static char dir[64];

static void setup(void)
{
	cr_assert_not_null(tu_tmpdir(dir, sizeof(dir)));
}

static void teardown(void)
{
	tu_rmrf(dir);
}

TestSuite(input, .init = setup, .fini = teardown);

/* Run args (a shell fragment after the binary); rc, stderr in *err (owned). */
static int rx(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rx(char **err, const char *fmt, ...)
{
	char args[4096], cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && timeout -k 5 60 %s %s 2>&1 >/dev/null", dir, RXRAY_BIN, args);
	char *out = NULL;
	int rc = tu_run(cmd, &out);
	if (err)
		*err = out ? out : strdup("");
	else
		free(out);
	return rc;
}

/* rx, then expect_bad on its exit code and line (in that order) */
#define BAD(what, needle, ...)                                \
	do {                                                  \
		char *e_ = NULL;                              \
		int rc_ = rx(&e_, __VA_ARGS__);               \
		expect_bad(what, rc_, e_, needle);            \
	} while (0)

static bool one_line(const char *s)
{
	return s && *s && strchr(s, '\n') == s + strlen(s) - 1;
}

/* Exit 2 with one line holding every needle (NULL-terminated). */
static void expect_bad(const char *what, int rc, char *err, const char *needle)
{
	cr_expect_eq(rc, 2, "%s: exit %d (124 = hung): %s", what, rc, err);
	cr_expect(one_line(err), "%s: not one line: %s", what, err);
	if (needle)
		cr_expect(err && strstr(err, needle), "%s: '%s' not in: %s", what, needle, err);
	free(err);
}

static void put(const char *name, const char *text, size_t len)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	fclose(f);
}

static json_t *run_doc(void)
{
	json_t *d = json_load_file(RUN, 0, NULL);
	cr_assert_not_null(d);
	return d;
}

static void save(const char *name, json_t *d)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	cr_assert_eq(json_dump_file(d, p, JSON_COMPACT), 0);
	json_decref(d);
}

Test(input, special_files_are_bad_input_and_never_hang)
{

	char p[128];
	snprintf(p, sizeof(p), "%s/fifo", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	cr_assert_eq(mkdir(strcat(strcpy(p, dir), "/adir"), 0755), 0);
	put("bin", "\x7f" "ELF\x01\x02\x00\x00\xff\xfe", 10);
	/* bug caught: a FIFO or /dev/zero blocked forever (timeout -> 124) */
	BAD("ceiling fifo", "FIFO", "ceiling fifo");
	BAD("ceiling /dev/zero", "character device", "ceiling /dev/zero");
	BAD("diff fifo", "FIFO", "diff fifo fifo");
	BAD("flame fifo", "FIFO", "flame fifo");
	BAD("flame /dev/zero", "character device", "flame /dev/zero");
	BAD("report fifo", "FIFO", "report fifo -o out");
	BAD("sweep fifo", "FIFO", "sweep fifo --dry-run");
	BAD("sweep /dev/zero", "character device", "sweep /dev/zero --dry-run");
	/* bug caught: a directory as the spec was a runtime error (exit 1) */
	BAD("sweep dir", "is a directory", "sweep adir --dry-run");
	/* bug caught: --table on a binary file or a folder printed an empty table, exit 0 */
	BAD("table file", "not a folder", "sweep --table bin");
	put("adir/results.jsonl", "\x7f" "ELF\x01\x02\x00\x00\xff\xfe\n", 11);
	BAD("table binary", "results.jsonl:1", "sweep --table adir");
	cr_assert_eq(unlink(strcat(strcpy(p, dir), "/adir/results.jsonl")), 0);
	cr_assert_eq(mkdir(p, 0755), 0);
	BAD("table dir", "is a directory", "sweep --table adir");
	/* a file where the result folder goes */
	BAD("sweep -o file", "not a folder", "sweep --dry-run -o bin");
}

Test(input, spec_caps_size_and_nesting)
{

	/* bug caught: "[[[[..." made the YAML loader spin for minutes */
	size_t n = 200000;
	char *deep = malloc(n + 16);
	memcpy(deep, "engines: ", 9);
	memset(deep + 9, '[', n);
	deep[9 + n] = '\n';
	put("deep.yaml", deep, n + 10);
	BAD("deep yaml", "nesting deeper than", "sweep deep.yaml --dry-run");
	/* over RXR_IN_MAX_SPEC */
	size_t big = RXR_IN_MAX_SPEC + 10;
	char *b = malloc(big);
	memset(b, '#', big);
	b[big - 1] = '\n';
	put("big.yaml", b, big);
	BAD("big yaml", "cap", "sweep big.yaml --dry-run");
	free(b);
	free(deep);
}

Test(input, run_results_out_of_range_are_rejected_with_field_and_file)
{
	static const struct {
		const char *obj, *key;
		double v;
		const char *field;
	} bad[] = {
		{"rates", "loss", -5, "loss"},
		{"rates", "loss", 7, "loss"},
		{"rates", "rx_mpps", -1, "rx_mpps"},
		{"rates", "offered_mpps", -0.5, "offered_mpps"},
		{"rates", "seconds", -1, "seconds"},
		{"clock", "hz", 0, "hz"},
		{"clock", "hz", -2e9, "hz"},
		{"clock", "lap_cost_cycles", -3, "lap_cost_cycles"},
	};
	char *e;
	json_t *ok = run_doc();
	save("ok.json", ok);
	cr_expect_eq(rx(&e, "ceiling ok.json"), 0, "%s", e);
	free(e);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *d = run_doc();
		json_object_set_new(json_object_get(d, bad[i].obj), bad[i].key, json_real(bad[i].v));
		char name[64];
		snprintf(name, sizeof(name), "bad%zu.json", i);
		save(name, d);
		int rc = rx(&e, "ceiling %s", name);
		cr_expect(e && strstr(e, name), "%s: file not named: %s", name, e);
		expect_bad(bad[i].field, rc, e, bad[i].field);
	}
	/* a core no cpu_set_t can hold, a negative per-stage cost */
	json_t *d = run_doc();
	json_t *t0 = json_array_get(json_object_get(d, "threads"), 0);
	json_object_set_new(t0, "core", json_integer((json_int_t)1 << 40));
	save("core.json", d);
	BAD("core", "core", "ceiling core.json");
	d = run_doc();
	t0 = json_array_get(json_object_get(d, "threads"), 0);
	json_t *st = json_object_get(json_object_get(t0, "stages"), "hdr_write");
	json_object_set_new(st, "cycles_per_packet", json_real(-1));
	save("cpp.json", d);
	BAD("cycles_per_packet", "cycles_per_packet", "ceiling cpp.json");
}

/* The fixture sweep with one line changed by fn (the first line fn accepts). */
static int mutate_sweep(const char *name, bool (*fn)(json_t *doc))
{
	char *text = tu_slurp(SWEEP "/results.jsonl");
	cr_assert_not_null(text);
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *o = fopen(p, "w");
	int lineno = 0, hit = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		lineno++;
		json_t *d = json_loads(l, 0, NULL);
		cr_assert_not_null(d);
		if (!hit && fn(d)) {
			hit = lineno;
			char *s = json_dumps(d, JSON_COMPACT);
			fprintf(o, "%s\n", s);
			free(s);
		} else {
			fprintf(o, "%s\n", l);
		}
		json_decref(d);
	}
	fclose(o);
	free(text);
	cr_assert(hit, "no line to change");
	return hit;
}

static bool is_point(json_t *d)
{
	return !strcmp(json_string_value(json_object_get(d, "schema")), "rxray.point/1");
}

static bool bad_status(json_t *d)
{
	return is_point(d) && !json_object_set_new(d, "status", json_string("splendid"));
}

static bool ndr_above_pdr(json_t *d)
{
	if (!is_point(d) || !json_is_number(json_object_get(d, "pdr_mpps")))
		return false;
	double pdr = json_number_value(json_object_get(d, "pdr_mpps"));
	return !json_object_set_new(d, "ndr_mpps", json_real(pdr + 1));
}

static bool loss_two(json_t *d)
{
	return is_point(d) && !json_object_set_new(d, "pdr_loss", json_real(2));
}

static bool trial_status(json_t *d)
{
	json_t *t = json_object_get(d, "trial");
	return t && !json_object_set_new(t, "status", json_string("great"));
}

static bool negative_rate(json_t *d)
{
	return is_point(d) && !json_object_set_new(d, "max_offered_mpps", json_real(-4));
}

Test(input, sweep_lines_out_of_range_name_field_and_line)
{
	static const struct {
		const char *name;
		bool (*fn)(json_t *);
		const char *field;
	} cases[] = {
		{"status.jsonl", bad_status, "status"},	      {"ndr.jsonl", ndr_above_pdr, "ndr_mpps"},
		{"loss.jsonl", loss_two, "pdr_loss"},	      {"trial.jsonl", trial_status, "trial.status"},
		{"rate.jsonl", negative_rate, "max_offered_mpps"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int line = mutate_sweep(cases[i].name, cases[i].fn);
		char where[64];
		snprintf(where, sizeof(where), "%s:%d: %s", cases[i].name, line, cases[i].field);
		/* every verb reads through the same loader; ceiling and report both checked */
		BAD(cases[i].name, where, "ceiling %s", cases[i].name);
		BAD(cases[i].name, where, "report %s -o rep", cases[i].name);
	}
}

Test(input, folded_counts_below_2_63)
{
	char *e;
	put("a.folded", "main;f 18446744073709551616\n", 28);
	BAD("2^64", "a.folded:1", "flame a.folded -o a.svg");
	put("b.folded", "main;f 9223372036854775808\n", 27);
	BAD("2^63", "b.folded:1", "flame b.folded -o b.svg");
	put("c.folded", "main;f 9223372036854775807\n", 27);
	cr_expect_eq(rx(&e, "flame c.folded -o c.svg"), 0, "%s", e);
	free(e);
}

static bool have_xmllint(void)
{
	return tu_run("command -v xmllint", NULL) == 0;
}

static void xml_ok(const char *file)
{
	char cmd[512], *out = NULL;
	if (!have_xmllint()) {
		fprintf(stderr, "note: xmllint missing: %s not checked\n", file);
		return;
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s/%s", dir, file);
	cr_expect_eq(tu_run(cmd, &out), 0, "%s: %s", file, out);
	free(out);
}

/*
 * The report's HTML: xmllint's HTML parser is HTML 4, so tags it does not
 * know (nav, figure, svg...) are expected; any other error is not.
 */
static void html_ok(const char *file)
{
	char cmd[512], *out = NULL;
	if (!have_xmllint())
		return;
	snprintf(cmd, sizeof(cmd),
		 "xmllint --html --noout %s/%s 2>&1 | grep 'error' | grep -v 'Tag [a-z]* invalid'", dir, file);
	tu_run(cmd, &out);
	cr_expect(!out || !*out, "%s: %s", file, out);
	free(out);
}

Test(input, ill_formed_utf8_names_still_give_well_formed_svg)
{
	/* overlong '/', a surrogate, a code point above U+10FFFF, U+FFFE, a cut character */
	static const char text[] = "main;a\xc0\xaf 3\nmain;b\xed\xa0\x80 3\nmain;c\xf4\x90\x80\x80 2\n"
				   "main;d\xef\xbf\xbe 2\nmain;e\xe2\x82 1\nmain;ok\xc3\xa9 4\n";
	put("u.folded", text, sizeof(text) - 1);
	char *e;
	cr_expect_eq(rx(&e, "flame u.folded -o u.svg"), 0, "%s", e);
	free(e);
	xml_ok("u.svg");
	cr_expect_eq(rx(&e, "flame u.folded --format speedscope -o u.json"), 0, "%s", e);
	free(e);
	char p[128];
	snprintf(p, sizeof(p), "%s/u.json", dir);
	json_t *j = json_load_file(p, 0, NULL);
	cr_expect_not_null(j, "speedscope output is not JSON");
	json_decref(j);
}

Test(input, long_multibyte_knob_keeps_its_point)
{
	/* 400 x U+00E9: 800 bytes, longer than any label buffer */
	char v[1024] = "";
	for (int i = 0; i < 400; i++)
		strcat(v, "\xc3\xa9");
	json_t *d = run_doc();
	strcat(v, "<b>&amp;\"'</b>]]>");
	json_object_set_new(json_object_get(d, "config"), "tag", json_string(v));
	save("long.json", d);
	char *e;
	cr_expect_eq(rx(&e, "ceiling long.json --format json -o long.out"), 0, "%s", e);
	free(e);
	char p[128];
	snprintf(p, sizeof(p), "%s/long.out", dir);
	json_t *j = json_load_file(p, 0, NULL);
	cr_assert_not_null(j, "ceiling --format json is not valid JSON");
	/* bug caught: the label was cut mid-character and the point vanished */
	cr_expect_eq(json_array_size(json_object_get(j, "points")), 1);
	json_decref(j);
	cr_expect_eq(rx(&e, "report long.json -o rep"), 0, "%s", e);
	free(e);
	xml_ok("rep/flames/*.svg");
	xml_ok("rep/plots/*.svg");
	html_ok("rep/report.html");
}

Test(input, role_with_separator_and_identical_diff)
{
	json_t *d = run_doc();
	json_t *t1 = json_array_get(json_object_get(d, "threads"), 1);
	json_object_set_new(t1, "role", json_string("rx;q0"));
	save("role.json", d);
	char *e;
	/* a role is a frame of a folded stack and a cell of a table: ';' or a
	 * newline in it would break both, so every reader refuses it, with
	 * one line naming the field (report once printed uninitialised
	 * memory as its error here) */
	cr_expect_eq(rx(&e, "report role.json -o rep"), 2, "%s", e);
	cr_expect(strstr(e, "role.json") && strstr(e, "threads[1]") && strstr(e, "role"), "%s", e);
	cr_expect_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
	free(e);
	cr_expect_eq(rx(&e, "flame role.json -o f.svg"), 2, "%s", e);
	free(e);
	/* bug caught: qsort(NULL, 0) on two identical runs (aborts under UBSan) */
	cr_expect_eq(rx(&e, "diff %s %s", RUN, RUN), 0, "%s", e);
	free(e);
}

Test(input, non_utf8_path_is_bad_input_not_out_of_memory)
{
	char p[128], cmd[512];
	snprintf(p, sizeof(p), "%s/r\xff.json", dir);
	snprintf(cmd, sizeof(cmd), "cp %s '%s'", RUN, p);
	cr_assert_eq(tu_run(cmd, NULL), 0);
	char *e;
	int rc = rx(&e, "ceiling 'r\xff.json'");
	cr_expect(e && !strstr(e, "out of memory"), "%s", e);
	expect_bad("path", rc, e, "UTF-8");
}

Test(input, bad_options_give_one_line_naming_the_option)
{
	static const char *const verbs[] = {"ceiling " SWEEP, "diff " SWEEP " a=1 b=2", "flame " SWEEP,
					    "report " SWEEP " -o x", "sweep", "doctor",
					    "whatif " SWEEP " buf_alloc=+5"};
	static const char *const opts[] = {"-Z", "--no-such-thing", "--no-such=3"};
	for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		for (size_t o = 0; o < 3; o++) {
			char *e;
			int rc = rx(&e, "%s %s", verbs[v], opts[o]);
			char want[64];
			snprintf(want, sizeof(want), "%.*s:", (int)strcspn(opts[o], "="), opts[o]);
			cr_expect(e && !strstr(e, "USAGE"), "%s %s printed the usage: %s", verbs[v], opts[o], e);
			expect_bad(verbs[v], rc, e, want);
		}
	/* a missing value names the option too */

	BAD("ceiling --format", "--format: needs a value", "ceiling " SWEEP " --format");
	BAD("flame -o", "-o: needs a value", "flame " SWEEP " -o");
	/* whatif takes options before, between and after its operands (a
	 * change such as buf_alloc=-5 is never an option) */
	BAD("whatif -Z first", "-Z: unknown option", "whatif -Z " SWEEP " buf_alloc=+5");
	BAD("whatif -s last", "-s: needs a value", "whatif " SWEEP " buf_alloc=-5 -s");
	BAD("whatif --light-frac", "--light-frac", "whatif " SWEEP " buf_alloc=-5 --light-frac 7");
}

Test(input, reproduce_commands_paste_exactly)
{
	/* a knob value that would run a command if pasted unquoted */
	const char *evil = "a;touch PWNED;'q' \"$HOME\"";
	json_t *d = run_doc();
	json_object_set_new(json_object_get(d, "config"), "frame_tag", json_string(evil));
	save("evil.json", d);
	char *e;
	cr_assert_eq(rx(&e, "report evil.json -o rep"), 0, "%s", e);
	free(e);
	/* the run line, with rxray swapped for a stub that prints its arguments */
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf '#!/bin/sh\\nprintf \"%%%%s\\\\n\" \"$@\" > args\\n' > stub && chmod +x stub && "
		 "grep '^rxray run ' rep/report.md | head -1 | sed 's|^rxray |./stub |' > line.sh && "
		 "sh line.sh && cat args",
		 dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	char p[128];
	snprintf(p, sizeof(p), "%s/PWNED", dir);
	cr_expect_neq(access(p, F_OK), 0, "pasting the reproduce line ran a command");
	char want[256];
	snprintf(want, sizeof(want), "--frame-tag\n%s\n", evil);
	cr_expect(out && strstr(out, want), "the value did not arrive as one word: %s", out);
	free(out);
}

Test(input, default_spec_is_built_in)
{
	char cmd[1024], *out = NULL;
	char *want = tu_slurp(RXRAY_SRC_DIR "/sweeps/default.yaml");
	cr_assert_not_null(want);
	snprintf(cmd, sizeof(cmd), "%s sweep --print-default", RXRAY_BIN);
	cr_expect_eq(tu_run(cmd, &out), 0);
	cr_expect_str_eq(out, want);
	free(out);
	free(want);
	/* a copy of the binary away from the source tree (a bundle, an install), run from / */
	snprintf(cmd, sizeof(cmd), "cp %s %s/rxray && cd / && %s/rxray sweep --dry-run -q -o %s/res | head -3",
		 RXRAY_BIN, dir, dir, dir);
	cr_expect_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_expect(out && strstr(out, "engine="), "%s", out);
	free(out);
}

/* ------------------------------------------------- library-level pieces */

Test(input, line_reader_caps_and_reports_instead_of_ending)
{
	char text[200];
	memset(text, 'x', sizeof(text));
	text[50] = '\n';
	FILE *f = fmemopen(text, sizeof(text), "r");
	struct rxr_lines L;
	char err[128];
	size_t len;
	bool nl;
	rxr_lines_init(&L, f, "mem", 64);
	cr_expect_eq(rxr_lines_next(&L, &len, &nl, err, sizeof(err)), 1);
	cr_expect_eq(len, 50);
	cr_expect(nl);
	cr_expect_eq(L.off, 0);
	/* bug caught: an over-long line was read whole (getline has no cap) */
	cr_expect_eq(rxr_lines_next(&L, &len, &nl, err, sizeof(err)), -E2BIG);
	cr_expect(strstr(err, "mem:2:"), "%s", err);
	rxr_lines_free(&L);
	fclose(f);
}

Test(input, utf8_rules)
{
	cr_expect_eq(rxu_utf8_char("\xc3\xa9", 2), 2);
	cr_expect_eq(rxu_utf8_char("\xf0\x9f\x98\x80", 4), 4);
	cr_expect_eq(rxu_utf8_char("\xc0\xaf", 2), 0, "overlong");
	cr_expect_eq(rxu_utf8_char("\xe0\x80\xaf", 3), 0, "overlong");
	cr_expect_eq(rxu_utf8_char("\xed\xa0\x80", 3), 0, "surrogate");
	cr_expect_eq(rxu_utf8_char("\xf4\x90\x80\x80", 4), 0, "above U+10FFFF");
	cr_expect_eq(rxu_utf8_char("\xe2\x82", 2), 0, "cut");
	cr_expect_eq(rxu_utf8_char("\x80", 1), 0, "stray continuation");
	size_t bad = 99;
	cr_expect(!rxu_utf8_valid("ab\xff", 3, &bad));
	cr_expect_eq(bad, 2);
	char s[] = "ab\xe2\x82";
	rxu_utf8_trim(s);
	cr_expect_str_eq(s, "ab");
	char t[] = "ab\xc3\xa9";
	rxu_utf8_trim(t);
	cr_expect_str_eq(t, "ab\xc3\xa9");
	cr_expect_eq(rxu_utf8_prefix("a\xc3\xa9", 3, 2), 1);
}

Test(input, shell_quote)
{
	char b[64];
	rxu_shell_quote("plain-1.5M,x=y", b, sizeof(b));
	cr_expect_str_eq(b, "plain-1.5M,x=y");
	rxu_shell_quote("a b;c", b, sizeof(b));
	cr_expect_str_eq(b, "'a b;c'");
	rxu_shell_quote("it's", b, sizeof(b));
	cr_expect_str_eq(b, "'it'\\''s'");
	rxu_shell_quote("", b, sizeof(b));
	cr_expect_str_eq(b, "''");
	cr_expect_eq(rxu_shell_quote("$(x)", b, 4), 6, "needed length reported");
}

/* A run result's meaning, checked by every reader (one rule,
 * rxr_result_check): each class exits 2 with one line naming the file and
 * the field, in ceiling, flame, report and diff alike. */
Test(input, results_that_mean_nothing_are_refused_by_every_reader)
{
	static const struct {
		const char *name, *field; /* the file, a word its error must hold */
	} cases[] = {
	    {"hz.json", "hz"},       {"nothreads.json", "threads"}, {"p90.json", "p90"},
	    {"order.json", "out of order"}, {"counters.json", "counters"}, {"loss.json", "loss"},
	    {"newline.json", "role"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *d = run_doc();
		json_t *th = json_object_get(d, "threads");
		json_t *st = json_object_get(json_object_get(json_array_get(th, 0), "stages"),
					     "hdr_write");
		if (!st) { /* the fixture's first thread's first stage */
			const char *k;
			json_t *v;
			json_object_foreach(json_object_get(json_array_get(th, 0), "stages"), k, v) {
				st = v;
				break;
			}
		}
		cr_assert(st);
		json_t *ctr = json_object_get(d, "counters");
		switch (i) {
		case 0: json_object_set_new(json_object_get(d, "clock"), "hz", json_real(1.0)); break;
		case 1: json_array_clear(th); break;
		case 2: json_object_set_new(st, "p90", json_integer(-5)); break;
		case 3:
			json_object_set_new(st, "p50", json_integer(json_integer_value(
							   json_object_get(st, "max")) + 1000));
			break;
		case 4:
			json_object_set_new(ctr, "received",
					    json_integer(json_integer_value(json_object_get(ctr, "offered")) + 1));
			break;
		case 5: json_object_set_new(json_object_get(d, "rates"), "loss", json_real(0.5)); break;
		case 6:
			json_object_set_new(json_array_get(th, 0), "role", json_string("rx\nq"));
			break;
		}
		save(cases[i].name, d);
		static const char *const verbs[] = {"ceiling %s", "flame %s -o f.svg",
						    "report %s -o rep", "diff %s %s"};
		for (size_t v = 0; v < 4; v++) {
			char what[96];
			snprintf(what, sizeof(what), "%s: %.8s", cases[i].name, verbs[v]);
			BAD(what, cases[i].field, verbs[v], cases[i].name, cases[i].name);
		}
	}
}

/* A full disk and a read-only one (a small tmpfs, as root): exit 1 with
 * one line saying which, the old file left as it was, no temp file left
 * (a full disk read "Input/output error": the writer's stdio error flag
 * had lost the errno). */
Test(input, full_and_read_only_disks_say_so_and_keep_the_old_file)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to mount a small tmpfs");
	char mnt[256], cmd[1024], *e = NULL;
	snprintf(mnt, sizeof(mnt), "%s/small", dir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=64k tmpfs %s 2>/dev/null", mnt);
	if (system(cmd) != 0)
		cr_skip_test("cannot mount a tmpfs here");
	snprintf(cmd, sizeof(cmd),
		 "printf 'old\\n' > %s/c.md && dd if=/dev/zero of=%s/fill bs=1k count=64 "
		 "2>/dev/null; true",
		 mnt, mnt);
	cr_assert_eq(system(cmd), 0);
	int rc = rx(&e, "ceiling %s -o small/c.md", FIXTURES "/sweep");
	cr_expect_eq(rc, 1, "%s", e);
	cr_expect(one_line(e) && strstr(e, "No space left on device"), "%s", e);
	free(e);
	snprintf(cmd, sizeof(cmd), "%s/c.md", mnt);
	char *old = tu_slurp(cmd);
	cr_expect(old && !strcmp(old, "old\n"), "the old file changed: %s", old ? old : "(gone)");
	free(old);
	snprintf(cmd, sizeof(cmd), "ls -A %s | grep -v -x -e c.md -e fill", mnt);
	cr_expect_neq(system(cmd), 0, "a temp file was left in %s", mnt);
	/* read-only: refused at open, the old file kept */
	snprintf(cmd, sizeof(cmd), "rm -f %s/fill && mount -o remount,ro %s", mnt, mnt);
	cr_assert_eq(system(cmd), 0);
	rc = rx(&e, "ceiling %s -o small/c.md", FIXTURES "/sweep");
	cr_expect_eq(rc, 1, "%s", e);
	cr_expect(one_line(e) && strstr(e, "Read-only file system"), "%s", e);
	free(e);
	snprintf(cmd, sizeof(cmd), "umount %s", mnt);
	cr_expect_eq(system(cmd), 0);
}
