/* SPDX-License-Identifier: MIT */
/* rxray sweep: run a spec's matrix, NDR/PDR per point, print the table. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rxray/sweep.h"
#include "rxray/util.h"

#ifndef RXRAY_SWEEP_SRC_SPEC
#define RXRAY_SWEEP_SRC_SPEC ""
#endif
#ifndef RXRAY_SWEEP_INSTALL_SPEC
#define RXRAY_SWEEP_INSTALL_SPEC "/usr/local/share/rxray/default.yaml"
#endif

struct sweep_cli {
	const char *spec;
	const char *output;
	const char *runner;
	const char *table;
	bool resume, quiet, dry_run;
};

static volatile int sweep_stop;

static void sweep_on_signal(int sig)
{
	(void)sig;
	sweep_stop = 1;
}

static void sweep_usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray sweep [SPEC.yaml] [options]\n"
		"\n"
		"  Runs every point of the spec's matrix (each list-valued field is an\n"
		"  axis), finds NDR (loss 0) and PDR (loss <= 0.5%%) per point with short\n"
		"  trials, each an `rxray run` in a child process, appends every trial and\n"
		"  a summary per point to <output>/results.jsonl and prints the table.\n"
		"  Without SPEC: the default spec (sweeps/default.yaml): verbs and dpdk,\n"
		"  single and hds, frames 1064..8064, on the software NIC.\n"
		"\n"
		"OPTIONS\n"
		"  -o, --output DIR   result folder (default: the spec's output field)\n"
		"      --resume       continue a sweep in DIR: finished points are skipped,\n"
		"                     the trials of an unfinished one are reused\n"
		"      --dry-run      list points, placement and trial commands; run nothing\n"
		"      --table DIR    print the NDR/PDR table of DIR/results.jsonl and exit\n"
		"      --runner PATH  binary that runs trials (default: this rxray)\n"
		"  -q, --quiet        no progress on stderr (the table still prints)\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray sweep                                 # default sweep, ~3 min here\n"
		"  rxray sweep my.yaml -o results/mine\n"
		"  rxray sweep my.yaml -o results/mine --resume  # after an interruption\n"
		"  rxray sweep my.yaml --dry-run\n"
		"  rxray sweep --table results/sweep\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure or interrupted, 2 bad input\n"
		"(spec errors name file:line:column and the field).\n");
}

static const char *sweep_default_spec(char *buf, size_t len)
{
	/* an installed binary: <prefix>/bin/rxray -> <prefix>/share/rxray */
	char exe[PATH_MAX];
	snprintf(exe, sizeof(exe), "%s", rxr_self_exe());
	snprintf(buf, len, "%s/../share/rxray/default.yaml", dirname(exe));
	if (!access(buf, R_OK))
		return buf;
	if (RXRAY_SWEEP_SRC_SPEC[0] && !access(RXRAY_SWEEP_SRC_SPEC, R_OK))
		return RXRAY_SWEEP_SRC_SPEC;
	if (!access(RXRAY_SWEEP_INSTALL_SPEC, R_OK))
		return RXRAY_SWEEP_INSTALL_SPEC;
	return NULL;
}

int rxr_cmd_sweep(int argc, char **argv)
{
	struct sweep_cli o = {0};
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"resume", no_argument, NULL, 'r'},
		{"dry-run", no_argument, NULL, 'n'},	  {"table", required_argument, NULL, 't'},
		{"runner", required_argument, NULL, 'R'}, {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	int ch;
	optind = 1;
	opterr = 0; /* one error line, ours */
	while ((ch = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			o.output = optarg;
			break;
		case 'r':
			o.resume = true;
			break;
		case 'n':
			o.dry_run = true;
			break;
		case 't':
			o.table = optarg;
			break;
		case 'R':
			o.runner = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			sweep_usage(stdout);
			return RXR_EXIT_OK;
		default:
			return rxr_usage_err("sweep", "%s: unknown option or missing value (rxray "
						      "sweep --help)", argv[optind - 1]);
		}
	}
	if (optind < argc - 1)
		return rxr_usage_err("sweep", "one spec at most, got '%s' and '%s'", argv[optind],
				     argv[optind + 1]);
	if (o.table) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/results.jsonl", o.table);
		int rc = sweep_table_print(stdout, path);
		if (rc < 0) {
			rxr_err("sweep", "%s: %s", path, strerror(-rc));
			return rc == -ENOENT ? RXR_EXIT_USAGE : RXR_EXIT_RUNTIME;
		}
		return RXR_EXIT_OK;
	}
	char defbuf[PATH_MAX];
	o.spec = optind < argc ? argv[optind] : sweep_default_spec(defbuf, sizeof(defbuf));
	if (!o.spec) {
		rxr_err("sweep", "no spec given and the default spec is not installed (looked in "
				 "%s and %s)", RXRAY_SWEEP_SRC_SPEC, RXRAY_SWEEP_INSTALL_SPEC);
		return RXR_EXIT_USAGE;
	}
	if (o.runner && access(o.runner, X_OK))
		return rxr_usage_err("sweep", "--runner: %s: %s", o.runner, strerror(errno));

	char err[SWEEP_ERR_LEN];
	struct sweep_spec *spec = NULL;
	int rc = sweep_spec_load(o.spec, &spec, err, sizeof(err));
	if (rc < 0) {
		rxr_err("sweep", "%s", err);
		return rc == -EINVAL || rc == -ENOENT || rc == -EACCES || rc == -EISDIR
			       ? RXR_EXIT_USAGE
			       : RXR_EXIT_RUNTIME;
	}
	struct sigaction sa = {.sa_handler = sweep_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sweep_opts so = {.runner = o.runner ? o.runner : rxr_self_exe(),
				.output = o.output,
				.resume = o.resume,
				.quiet = o.quiet,
				.dry_run = o.dry_run,
				.table = stdout};
	rc = sweep_run(spec, &so, &sweep_stop);
	sweep_spec_free(spec);
	return rc == 0 ? RXR_EXIT_OK : rc == -EINVAL ? RXR_EXIT_USAGE : RXR_EXIT_RUNTIME;
}
