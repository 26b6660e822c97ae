/* SPDX-License-Identifier: MIT */
/* rxray sweep: run a spec's matrix, NDR/PDR per point, print the table. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/input.h"
#include "rxray/sweep.h"
#include "rxray/util.h"


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
		"  Without SPEC: the default spec (sweeps/default.yaml, built into this\n"
		"  binary; --print-default shows it): verbs and dpdk, single and hds,\n"
		"  frames 1064..8064, on the software NIC.\n"
		"\n"
		"OPTIONS\n"
		"  -o, --output DIR   result folder (default: the spec's output field)\n"
		"      --resume       continue a sweep in DIR: finished points are skipped,\n"
		"                     the trials of an unfinished one are reused\n"
		"      --dry-run      list points, placement and trial commands; run nothing\n"
		"      --table DIR    print the NDR/PDR table of DIR/results.jsonl and exit\n"
		"      --runner PATH  binary that runs trials (default: this rxray)\n"
		"      --print-default  print the built-in default spec (a start for your own)\n"
		"  -q, --quiet        no progress on stderr (the table still prints)\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray sweep                                 # default sweep, ~3 min here\n"
		"  rxray sweep my.yaml -o results/mine\n"
		"  rxray sweep my.yaml -o results/mine --resume  # after an interruption\n"
		"  rxray sweep my.yaml --dry-run\n"
		"  rxray sweep --table results/sweep\n"
		"  rxray sweep --print-default > my.yaml\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure or interrupted, 2 bad input\n"
		"(spec errors name file:line:column and the field).\n");
}

/*
 * The built-in default spec (compiled from sweeps/default.yaml) is parsed
 * from memory; the runner copies the spec file into the result folder, so
 * it also gets a temp copy, removed when the sweep ends.
 */
static int sweep_default_load(struct sweep_spec **spec, char *tmp, size_t tmplen)
{
	char err[SWEEP_ERR_LEN];
	const char *name = "default.yaml (built in)";
	size_t len = strlen(rxt_default_spec);
	int rc = sweep_spec_parse(rxt_default_spec, len, name, spec, err, sizeof(err));
	if (rc < 0) {
		rxu_err("sweep", "%s", err);
		return RXU_EXIT_RUNTIME; /* the binary's own spec: not the user's input */
	}
	const char *dir = getenv("TMPDIR");
	snprintf(tmp, tmplen, "%s/rxray-default-XXXXXX.yaml", dir && *dir ? dir : "/tmp");
	int fd = mkstemps(tmp, 5);
	if (fd < 0 || write(fd, rxt_default_spec, len) != (ssize_t)len) {
		rxu_err("sweep", "%s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		tmp[0] = '\0';
		sweep_spec_free(*spec);
		*spec = NULL;
		return RXU_EXIT_RUNTIME;
	}
	close(fd);
	snprintf((*spec)->path, sizeof((*spec)->path), "%s", tmp);
	return RXU_EXIT_OK;
}

/* A spec file: checked (a regular file under the cap) and parsed. */
static int sweep_file_load(const char *path, struct sweep_spec **spec)
{
	char err[SWEEP_ERR_LEN];
	char *text = NULL;
	size_t len = 0;
	int rc = rxr_in_read_all(path, RXR_IN_MAX_SPEC, &text, &len, err, sizeof(err));
	if (rc < 0) {
		rxu_err("sweep", "%s", err);
		return rxr_in_exit_code(rc);
	}
	rc = sweep_spec_parse(text, len, path, spec, err, sizeof(err));
	free(text);
	if (rc < 0) {
		rxu_err("sweep", "%s", err);
		return rc == -ENOMEM ? RXU_EXIT_RUNTIME : RXU_EXIT_USAGE;
	}
	return RXU_EXIT_OK;
}

/*
 * --table DIR: DIR must be a folder and its results.jsonl a regular file
 * whose every line reads as results (the analyzers' range-checked
 * loader), so a binary file or a folder is bad input, not an empty table.
 */
static int sweep_table(const char *dir)
{
	char path[PATH_MAX], err[RXT_CLI_ERR_LEN];
	bool is_dir = false;
	int rc = rxr_in_check(dir, true, 0, &is_dir, err, sizeof(err));
	if (!rc && !is_dir)
		rc = rxu_errf(err, sizeof(err), -ENOTDIR, "--table %s: not a folder (a sweep's result folder is expected)", dir);
	if (!rc)
		rc = sweep_knobs_check(err, sizeof(err));
	if (rc) {
		rxu_err("sweep", "%s", err);
		return rxr_in_exit_code(rc);
	}
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	if ((rc = rxr_in_check(path, false, 0, NULL, err, sizeof(err)))) {
		rxu_err("sweep", "%s", err);
		return rxr_in_exit_code(rc);
	}
	struct rxa_set *s = NULL;
	if ((rc = rxt_cli_set_load("sweep", path, &s)))
		return rc;
	rxa_set_free(s);
	rc = sweep_table_print(stdout, path);
	if (rc < 0) {
		rxu_err("sweep", "%s: %s", path, strerror(-rc));
		return RXU_EXIT_RUNTIME;
	}
	return RXU_EXIT_OK;
}

int rxt_cmd_sweep(int argc, char **argv)
{
	struct sweep_cli o = {0};
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"resume", no_argument, NULL, 'r'},
		{"dry-run", no_argument, NULL, 'n'},	  {"table", required_argument, NULL, 't'},
		{"runner", required_argument, NULL, 'R'}, {"quiet", no_argument, NULL, 'q'},
		{"print-default", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	int ch;
	bool print_default = false;
	optind = 1;
	while ((ch = rxt_cli_getopt("sweep", argc, argv, "o:qh", opts)) != -1) {
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
		case 'P':
			print_default = true;
			break;
		case 'h':
			sweep_usage(stdout);
			return RXU_EXIT_OK;
		default:
			return RXU_EXIT_USAGE;
		}
	}
	if (optind < argc - 1)
		return rxu_usage_err("sweep", "one spec at most, got '%s' and '%s'", argv[optind],
				     argv[optind + 1]);
	if (print_default) {
		fputs(rxt_default_spec, stdout);
		return fflush(stdout) ? RXU_EXIT_RUNTIME : RXU_EXIT_OK;
	}
	if (o.table)
		return sweep_table(o.table);
	if (o.output && !strcmp(o.output, "-"))
		return rxu_usage_err("sweep", "-o -: a sweep writes a result folder, not a stream "
					      "(rxray sweep --table DIR prints its table)");
	if (o.output) {
		/* a result folder: an existing file, FIFO or device there is the user's to fix */
		struct stat st;
		if (!stat(o.output, &st) && !S_ISDIR(st.st_mode))
			return rxu_usage_err("sweep", "-o %s: exists and is not a folder", o.output);
	}
	if (o.runner && access(o.runner, X_OK))
		return rxu_usage_err("sweep", "--runner: %s: %s", o.runner, strerror(errno));

	struct sweep_spec *spec = NULL;
	char tmp[PATH_MAX] = "";
	int rc = optind < argc ? sweep_file_load(argv[optind], &spec)
			       : sweep_default_load(&spec, tmp, sizeof(tmp));
	if (rc)
		return rc;
	struct sigaction sa = {.sa_handler = sweep_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a file size limit (ulimit -f) is then EFBIG from write: said, the
	 * file left with whole lines and resumable, not a core dump mid-line
	 * (the trials inherit it and say so the same way) */
	signal(SIGXFSZ, SIG_IGN);
	struct sweep_opts so = {.runner = o.runner ? o.runner : rxt_self_exe(),
				.output = o.output,
				.resume = o.resume,
				.quiet = o.quiet,
				.dry_run = o.dry_run,
				.table = stdout};
	rc = sweep_run(spec, &so, &sweep_stop);
	sweep_spec_free(spec);
	if (tmp[0])
		unlink(tmp);
	return rc == 0 ? RXU_EXIT_OK : rc == -EINVAL ? RXU_EXIT_USAGE : RXU_EXIT_RUNTIME;
}
