/* SPDX-License-Identifier: MIT */
/*
 * rxray report: the evidence bundle (report.md, self-contained
 * report.html, SVG plots and flame graphs) for a sweep or a set of runs.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/report.h"
#include "rxray/util.h"

#define VERB "report"

#ifndef RXRAY_VERSION
#define RXRAY_VERSION "0"
#endif

static void report_usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray report RESULTS -o DIR [--title TEXT]\n"
		"\n"
		"RESULTS is a sweep folder (results.jsonl + spec.yaml), a .jsonl file, a\n"
		"run result (.json) or a folder of run results. DIR receives report.md,\n"
		"report.html (self-contained: open it in a browser or attach it to a\n"
		"bug), plots/*.svg, flames/*.svg and ceiling.json. The report names the\n"
		"bottleneck thread and stage of every point, says whether each config's\n"
		"ceiling is per-packet or per-byte bound, compares modes and engines,\n"
		"warns about generator-limited points and lists reproduce commands.\n"
		"\n"
		"OPTIONS\n"
		"  -o, --output DIR   output folder (created when missing); '-' writes the\n"
		"                     self-contained report.html to stdout\n"
		"  -t, --title TEXT   report title (default \"rxray report\")\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray sweep && rxray report results/sweep -o report/\n"
		"  rxray report run.json -o report-run/\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure, 2 bad input.\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

/*
 * -o -: the report is built in a temp folder and its self-contained
 * report.html (plots and flames inline) goes to stdout; the folder is
 * removed either way.
 */
static int report_to_stdout(const struct rxa_set *s, struct rxo_report_opts *o)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], err[RXA_ERR_LEN];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/rxray-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		rxu_err(VERB, "%s: %s", dir, strerror(errno));
		return RXU_EXIT_RUNTIME;
	}
	int ec = RXU_EXIT_OK;
	int rc = rxo_report_write(s, dir, o, err, sizeof(err));
	if (rc) {
		rxu_err(VERB, "%s", err);
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/report.html", dir);
	FILE *in = fopen(path, "r");
	char buf[65536];
	size_t n;
	while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, stdout) != n)
			break;
	if (!in || ferror(in) || fflush(stdout) || ferror(stdout)) {
		rxu_err(VERB, "writing the report to stdout: %s", strerror(errno ? errno : EIO));
		ec = RXU_EXIT_RUNTIME;
	}
	if (in)
		fclose(in);
out:
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ec;
}

int rxt_cmd_report(int argc, char **argv)
{
	/* no .output: -o has no default, it is required */
	static const struct rxt_ana_spec spec = {
	    .want = RXT_AO_OUTPUT | RXT_AO_TITLE,
	    .min_operands = 1,
	    .max_operands = 1,
	    .operands = "one RESULTS path",
	    .usage = report_usage,
	};
	struct rxt_ana_opts ao;
	int rc = rxt_cli_ana_parse(VERB, argc, argv, &spec, &ao);
	if (rc != RXT_CLI_GO)
		return rc;
	const char *out = ao.output, *title = ao.title;
	if (!out || !*out)
		return rxu_usage_err(VERB, "-o DIR: the output folder is required");
	char err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	rc = rxt_cli_set_load(VERB, ao.operand[0], &s);
	if (rc)
		return rc;
	struct rxo_report_opts o = {.title = title, .rxray = "rxray", .version = RXRAY_VERSION,
				    .outdir_arg = out};
	if (!strcmp(out, "-")) {
		rc = report_to_stdout(s, &o);
		rxa_set_free(s);
		return rc;
	}
	rc = rxo_report_write(s, out, &o, err, sizeof(err));
	rxa_set_free(s);
	if (rc) {
		rxu_err(VERB, "%s", err);
		return rc == -EEXIST ? RXU_EXIT_USAGE : RXU_EXIT_RUNTIME;
	}
	printf("rxray report: wrote %s/report.md and %s/report.html\n", out, out);
	return RXU_EXIT_OK;
}
