/* SPDX-License-Identifier: MIT */
/*
 * The verbs' shared front and tail: option parsing with one error line,
 * input paths checked before they are read, output opened and committed
 * through the one writer (rxray/afile.h). See cli.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/input.h"
#include "rxray/util.h"

int rxt_cli_getopt(const char *verb, int argc, char **argv, const char *shorts,
		   const struct option *lo)
{
	/* a leading ':' makes getopt tell a missing value (':') from an unknown option ('?') */
	char sh[128];
	snprintf(sh, sizeof(sh), ":%s", shorts[0] == ':' ? shorts + 1 : shorts);
	opterr = 0;
	int c = getopt_long(argc, argv, sh, lo, NULL);
	if (c != '?' && c != ':')
		return c;
	/* name the option as the user wrote it: "--foo" (value cut off) or "-x" */
	char name[64];
	const char *arg = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "";
	if (!strncmp(arg, "--", 2)) {
		size_t n = strcspn(arg, "=");
		snprintf(name, sizeof(name), "%.*s", (int)(n < 60 ? n : 60), arg);
	} else if (optopt > 0 && optopt < 128) {
		snprintf(name, sizeof(name), "-%c", optopt);
	} else {
		snprintf(name, sizeof(name), "%.60s", arg);
	}
	/* the wording sweep has always used (its tests hold it) */
	rxu_err(verb, "%s: %s (rxray %s --help)", name,
		c == ':' ? "needs a value" : "unknown option or missing value", verb);
	return RXT_CLI_BADOPT;
}

int rxt_cli_in_check(const char *verb, const char *path, bool dir_ok)
{
	char err[RXT_CLI_ERR_LEN];
	if (!strcmp(path, "-"))
		return RXU_EXIT_OK;
	int rc = rxr_in_check(path, dir_ok, 0, NULL, err, sizeof(err));
	if (rc)
		rxu_err(verb, "%s", err);
	return rc ? rxr_in_exit_code(rc) : RXU_EXIT_OK;
}

/* Bad output paths are the user's to fix (exit 2); a full disk is not. */
int rxt_cli_out_exit_code(int rc)
{
	switch (-rc) {
	case EISDIR:
	case ENOENT:
	case ENOTDIR:
	case ENAMETOOLONG:
	case ELOOP:
		return RXU_EXIT_USAGE;
	default:
		return RXU_EXIT_RUNTIME;
	}
}

int rxt_cli_out_open(const char *verb, const char *path, struct rxr_afile *af)
{
	char err[RXT_CLI_ERR_LEN];
	int rc = rxr_afile_open_err(af, path, err, sizeof(err));
	if (!rc)
		return RXU_EXIT_OK;
	rxu_err(verb, "-o %s", err);
	return rxt_cli_out_exit_code(rc);
}

int rxt_cli_out_finish(const char *verb, const char *path, struct rxr_afile *af, int wrc)
{
	if (wrc) {
		/* a writer that failed on its stream says -EIO: ask the stream */
		if (wrc == -EIO)
			wrc = rxr_afile_write_error(af);
		rxr_afile_abort(af);
		rxu_err(verb, "writing %s: %s", path, strerror(wrc < 0 ? -wrc : EIO));
		return RXU_EXIT_RUNTIME;
	}
	int rc = rxr_afile_commit(af);
	if (rc) {
		rxu_err(verb, "%s: %s", path, strerror(-rc));
		return RXU_EXIT_RUNTIME;
	}
	return RXU_EXIT_OK;
}

int rxt_cli_light_frac(const char *verb, const char *arg, double *out)
{
	char *end = NULL;
	double f = strtod(arg, &end);
	if (end == arg || *end || !(f > 0) || f > 1)
		return rxu_usage_err(verb, "--light-frac: '%s' (expected 0 < F <= 1)", arg);
	*out = f;
	return 0;
}
