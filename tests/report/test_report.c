/* SPDX-License-Identifier: MIT */
/* rxray report end to end: files, sections, SVGs, and the HTML in Chromium. */
#include <criterion/criterion.h>
#include <dirent.h>

#include "../analyze/testutil.h"
#include "rxray/report.h"

static char *file_in(const char *dir, const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return tu_slurp(p);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static char *report_of(const char *input, char *dir, size_t n)
{
	cr_assert(tu_tmpdir(dir, n));
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s report %s -o %s/rep", RXRAY_BIN, input, dir);
	int rc = tu_run(cmd, &out);
	cr_assert_eq(rc, 0, "%s", out);
	free(out);
	strncat(dir, "/rep", n - strlen(dir) - 1);
	return file_in(dir, "report.md");
}

Test(report, fixture_sweep_end_to_end)
{
	char dir[128];
	char *md = report_of(FIXTURES "/sweep", dir, sizeof(dir));
	cr_assert(md);
	static const char *const want[] = {
		"## Summary", "## Warnings", "## Environment", "## Sweep spec", "engines: [verbs, dpdk]",
		"## Results in the seed report's shape",
		"| config | frame | TX offered | RX received | TX Mpps | RX Mpps | loss | marks |",
		"| engine=dpdk mode=hds queues=1 | 1064 B | 23,062,731 | 3,920,000 | 23.06 | 3.92 | 83.0% | - |",
		"## Ceiling: measured vs predicted", "## Bound classification",
		"engine=dpdk mode=hds queues=1: per-packet bound",
		"engine=verbs mode=single queues=1: per-byte bound",
		/* the bottleneck stage named per point */
		/* the NDR trial's own figure is its accounting, never "predicted" */
		"frame 1064 B: NDR 3.80 Mpps, no light-load prediction, NDR-trial accounting 4.00 Mpps; bottleneck rx thread, 500 cycles/packet, top stages buf_alloc 200 (40%)",
		"generator-limited: the generator reached 3.09 Mpps at most",
		"infeasible: needs 9 cores, 2 available",
		"## Biggest differences between modes and engines", "### Between modes", "### Between engines",
		"hds adds 380 cycles/packet on the rx thread vs single (120 -> 500): buf_alloc +170",
		"CPU | Fixture CPU @ 2.00GHz", "| DPDK | 22.11.5 |", "tsc at 2 GHz",
		"![RX Mpps vs frame size, with the offered rate](plots/rx_mpps.svg)",
		"](flames/point0.svg)", "## Reproduce",
		"rxray run --engine dpdk --mode hds --frame 1064 --queues 1 --ring 8192 --rate 3800000",
		"/sweep/spec.yaml"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect(strstr(md, want[i]), "report.md lacks: %s", want[i]);
	free(md);

	/* every SVG well-formed, every plot and flame present */
	static const char *const files[] = {"plots/rx_mpps.svg", "plots/loss.svg", "plots/cycles.svg",
					    "flames/point0.svg", "flames/point15.svg", "flames/diff_mode.svg",
					    "flames/diff_engine.svg", "ceiling.json", "report.html"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *s = file_in(dir, files[i]);
		cr_expect(s && *s, "missing %s", files[i]);
		free(s);
	}
	char cmd[600], *out = NULL;
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s/plots/*.svg %s/flames/*.svg", dir, dir);
	if (tu_run("command -v xmllint", NULL) == 0) {
		cr_expect_eq(tu_run(cmd, &out), 0, "%s", out);
		free(out);
	}
	/* the html is self-contained: no external resources */
	char *html = file_in(dir, "report.html");
	cr_assert(html);
	cr_expect(!strstr(html, "src=\"http") && !strstr(html, "href=\"http") && !strstr(html, "<link"));
	cr_expect_eq(count(html, "<table class=\"t\""), count(html, "</table>"));
	cr_expect(count(html, "<table class=\"t\"") >= 6);
	cr_expect_eq(count(html, "class=\"rxf-det\""), 18, "16 point flames + 2 differential");
	free(html);
	tu_rmrf(dir);
}

Test(report, single_run_and_bad_input)
{
	char dir[128];
	char *md = report_of(FIXTURES "/run_dpdk_hds.json", dir, sizeof(dir));
	cr_assert(md);
	cr_expect(strstr(md, "bottleneck rx thread, 500 cycles/packet"), "%s", md);
	cr_expect(strstr(md, "No spec.yaml next to the results"));
	cr_expect(strstr(md, "No two measured points differ in mode or engine alone."));
	free(md);

	char cmd[600], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s report %s/missing -o %s/x", RXRAY_BIN, dir, dir);
	cr_expect_eq(tu_run(cmd, &out), 2);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s report %s/sweep", RXRAY_BIN, FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "-o DIR"), "%s", out);
	free(out);
	/* -o names a file */
	snprintf(cmd, sizeof(cmd), "%s report %s/sweep -o %s/report.md", RXRAY_BIN, FIXTURES, dir);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "exists and is not a folder"), "%s", out);
	free(out);
	tu_rmrf(dir);
}

static bool have_chromium(void)
{
	return tu_run("command -v chromium", NULL) == 0;
}

/* Load a page headless; stderr (console lines) into *log, DOM into *dom. */
static int chromium_load(const char *path, char **dom, char **log)
{
	char prof[64], cmd[1024], logp[128];
	cr_assert(tu_tmpdir(prof, sizeof(prof)));
	snprintf(logp, sizeof(logp), "%s/stderr.log", prof);
	snprintf(cmd, sizeof(cmd),
		 "(timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
		 "--disable-component-update --disable-sync --no-first-run --user-data-dir=%s/p "
		 "--enable-logging=stderr --v=0 --dump-dom file://%s 2>%s)",
		 prof, path, logp);
	int rc = tu_run(cmd, dom);
	*log = tu_slurp(logp);
	tu_rmrf(prof);
	return rc;
}

Test(report, html_in_headless_chromium, .timeout = 240)
{
	if (!have_chromium())
		cr_skip_test("needs chromium (apt-get install chromium): HTML not checked in a browser");
	char dir[128], path[256];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));

	/* the check can fail: a page with a script error is caught */
	snprintf(path, sizeof(path), "%s/bad.html", dir);
	FILE *f = fopen(path, "w");
	fputs("<!DOCTYPE html><html><body><p>x</p><script>no_such_function();</script></body></html>\n", f);
	fclose(f);
	char *dom = NULL, *log = NULL;
	cr_assert_eq(chromium_load(path, &dom, &log), 0);
	cr_assert(log && strstr(log, ":CONSOLE") && strstr(log, "no_such_function"),
		  "chromium did not report the deliberate error; log: %s", log ? log : "(none)");
	free(dom);
	free(log);

	char cmd[600], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s report %s/sweep -o %s/rep", RXRAY_BIN, FIXTURES, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	snprintf(path, sizeof(path), "%s/rep/report.html", dir);
	cr_assert_eq(chromium_load(path, &dom, &log), 0);
	cr_expect(log && !strstr(log, ":CONSOLE"), "console output while loading report.html:\n%s", log);
	cr_assert(dom);
	cr_expect(count(dom, "<table class=\"t\"") >= 6, "tables in the DOM: %d", count(dom, "<table class=\"t\""));
	cr_expect(strstr(dom, "<th>RX Mpps</th>") && strstr(dom, "<th>model Mpps (light load)</th>") &&
		  strstr(dom, "<th>NDR-trial accounting Mpps</th>"));
	/* every flame graph's script ran to its end */
	cr_expect_eq(count(dom, "data-rxf-ready=\"1\""), 18, "flames initialised: %d", count(dom, "data-rxf-ready=\"1\""));
	free(dom);
	free(log);
	tu_rmrf(dir);
}

Test(report, small_real_sweep, .timeout = 240)
{
	char *out = NULL, cmd[1024], dir[128];
#ifndef RXRAY_TEST_HAVE_SWEEP
	cr_skip_test("needs the sweep verb: this build has no libyaml");
#endif
	/* the build has the verb: a failing --help is a failure, not a skip */
	snprintf(cmd, sizeof(cmd), "%s sweep --help", RXRAY_BIN);
	int hrc = tu_run(cmd, &out);
	cr_assert_eq(hrc, 0, "`rxray sweep --help` failed (%d): %s", hrc, out ? out : "");
	free(out);
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	char spec[256];
	snprintf(spec, sizeof(spec), "%s/spec.yaml", dir);
	FILE *f = fopen(spec, "w");
	fprintf(f, "engines: verbs\nmodes: [single, hds]\nframes: 1064\nsplit: 64\nqueues: 1\nrings: 1024\n"
		   "device: sim\noutput: %s/sw\nsearch:\n  initial_seconds: 0.1\n  trial_seconds: 0.1\n"
		   "  max_trials: 3\n  min_rate: 10k\n", dir);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s sweep %s -q && %s report %s/sw -o %s/rep", RXRAY_BIN, spec, RXRAY_BIN, dir, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	char rep[160];
	snprintf(rep, sizeof(rep), "%s/rep", dir);
	char *md = file_in(rep, "report.md");
	cr_assert(md);
	/* both points measured, each with a named bottleneck, and a mode diff */
	cr_expect_eq(count(md, "bottleneck rx thread") + count(md, "bottleneck app thread"), 2, "%s", md);
	cr_expect(strstr(md, "### Between modes"), "%s", md);
	cr_expect(strstr(md, "rxray run --engine verbs --mode"), "%s", md);
	free(md);
	tu_rmrf(dir);
}

Test(report, flame_interactive_in_chromium, .timeout = 240)
{
	if (!have_chromium())
		cr_skip_test("needs chromium (apt-get install chromium): flame script not exercised");
	char dir[128], cmd[1024], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	/* a flame graph inline in a page, then a script that clicks and searches */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf 'main;rx;cqe_poll 60\\nmain;rx;buf_alloc 200\\nmain;app;free 150\\n' > in.folded && "
		 "%s flame in.folded -o f.svg && { echo '<!DOCTYPE html><html><body>'; tail -n +2 f.svg; "
		 "cat drive.js; echo '</body></html>'; } > page.html",
		 dir, RXRAY_BIN);
	char js[256];
	snprintf(js, sizeof(js), "%s/drive.js", dir);
	FILE *f = fopen(js, "w");
	fputs("<script>\n"
	      "var svg=document.querySelector('svg'),gs=svg.querySelectorAll('g.rxf-f'),t=null;\n"
	      "gs.forEach(function(g){if(g.querySelector('title').textContent.split('\\n')[0]==='rx')t=g;});\n"
	      "t.dispatchEvent(new MouseEvent('click',{bubbles:true}));\n"
	      "var hidden=0;gs.forEach(function(g){if(g.style.display==='none')hidden++;});\n"
	      "document.body.setAttribute('data-zoom-width',(+t.querySelector('rect').getAttribute('width')).toFixed(0));\n"
	      "document.body.setAttribute('data-hidden',hidden);\n"
	      "window.prompt=function(){return 'alloc|free';};\n"
	      "svg.querySelector('.rxf-search').dispatchEvent(new MouseEvent('click',{bubbles:true}));\n"
	      "document.body.setAttribute('data-matched',svg.querySelector('.rxf-mat').textContent);\n"
	      "</script>\n", f);
	fclose(f);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	char page[256], *dom = NULL, *log = NULL;
	snprintf(page, sizeof(page), "%s/page.html", dir);
	cr_assert_eq(chromium_load(page, &dom, &log), 0);
	cr_expect(log && !strstr(log, ":CONSOLE"), "console: %s", log);
	/* zoomed: rx spans the full 1,180 px; app and free are hidden */
	cr_expect(dom && strstr(dom, "data-zoom-width=\"1180\""), "%s", dom);
	cr_expect(dom && strstr(dom, "data-hidden=\"2\""), "%s", dom);
	/* search: 2 frames, 350 of 410 samples */
	cr_expect(dom && strstr(dom, "data-matched=\"Matched 2 frames: 350 samples (85.4%)\""), "%s", dom);
	free(dom);
	free(log);
	tu_rmrf(dir);
}

/* A real run's environment: env.dpdk is an object (version, EAL arguments,
 * hugepages), env.gpu an array; each shows in the table, none as "not
 * recorded" (the table once read an object as a string). */
Test(report, environment_shows_what_a_real_run_recorded)
{
	char dir[128], cmd[1024], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine dpdk --rate 200k --ring 1024 --seconds 100ms -q -o %s/run.json",
		 RXRAY_BIN, dir);
	int rc = tu_run(cmd, &out);
	if (rc && out && strstr(out, "engine"))
		cr_skip_test("no dpdk engine in this build: %s", out);
	cr_assert_eq(rc, 0, "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s report %s/run.json -o %s/rep", RXRAY_BIN, dir, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	strncat(dir, "/rep", sizeof(dir) - strlen(dir) - 1);
	char *md = file_in(dir, "report.md");
	cr_assert(md);
	char *row = strstr(md, "| DPDK | ");
	cr_assert(row, "no DPDK row");
	cr_assert(!strncmp(row, "| DPDK | DPDK ", 14), "%.120s", row);
	char *ea = strstr(row, "eal_args");
	cr_assert(ea && ea < strchr(row, '\n'), "%.200s", row);
	char *gpu = strstr(md, "| GPU | ");
	cr_assert(gpu && strncmp(gpu, "| GPU | not recorded", 20), "%.80s", gpu ? gpu : "");
	free(md);
}
