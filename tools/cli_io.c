/* SPDX-License-Identifier: MIT */
/*
 * The verbs' shared front and tail: option parsing with one error line
 * (and the analysis verbs' whole option loop), input paths checked before
 * they are read, output opened and committed through the one writer
 * (rxray/afile.h). See cli.h.
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

/* The analysis verbs' options: getopt's long entry and short letters ("":
 * long only; the value stands for the option in the switch). */
static const struct {
	unsigned bit;
	struct option lo;
	const char *sh;
} ana_opts[] = {
    {RXT_AO_FORMAT, {"format", required_argument, NULL, 'f'}, "f:"},
    {RXT_AO_TABLE, {"table", required_argument, NULL, 'T'}, ""},
    {RXT_AO_ROWS, {"rows", required_argument, NULL, 'n'}, "n:"},
    {RXT_AO_OUTPUT, {"output", required_argument, NULL, 'o'}, "o:"},
    {RXT_AO_SELECT, {"select", required_argument, NULL, 's'}, "s:"},
    {RXT_AO_LIGHT_FRAC, {"light-frac", required_argument, NULL, 'L'}, ""},
    {RXT_AO_TITLE, {"title", required_argument, NULL, 't'}, "t:"},
};
#define ANA_NOPTS (sizeof(ana_opts) / sizeof(ana_opts[0]))

/* 0 when v is one of the NULL-terminated w; else one line naming them as
 * "md, csv or json" and RXU_EXIT_USAGE. */
static int ana_one_of(const char *verb, const char *opt, const char *v, const char *const *w)
{
	char words[128] = "";
	size_t n = 0;
	for (size_t k = 0; w[k]; k++)
		if (!strcmp(v, w[k]))
			return 0;
	for (size_t k = 0; w[k] && n < sizeof(words); k++) {
		const char *sep = w[k + 1] ? ", " : " or ";
		n += (size_t)snprintf(words + n, sizeof(words) - n, "%s%s", k ? sep : "", w[k]);
	}
	return rxu_usage_err(verb, "%s: '%s' (expected %s)", opt, v, words);
}

int rxt_cli_ana_parse(const char *verb, int argc, char **argv, const struct rxt_ana_spec *sp,
		      struct rxt_ana_opts *o)
{
	struct option lo[ANA_NOPTS + 2];
	char sh[2 * ANA_NOPTS + 2] = "", *end = NULL;
	size_t nlo = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->format = sp->formats ? sp->formats[0] : NULL;
	o->table = sp->tables ? sp->tables[0] : NULL;
	o->output = sp->output;
	o->light_frac = sp->light_frac;
	o->rows = 12;
	for (size_t k = 0; k < ANA_NOPTS; k++) {
		if (!(sp->want & ana_opts[k].bit))
			continue;
		lo[nlo++] = ana_opts[k].lo;
		strcat(sh, ana_opts[k].sh);
	}
	lo[nlo++] = (struct option){"help", no_argument, NULL, 'h'};
	lo[nlo] = (struct option){NULL, 0, NULL, 0};
	strcat(sh, "h");
	optind = 1;
	while ((c = rxt_cli_getopt(verb, argc, argv, sh, lo)) != -1) {
		switch (c) {
		case 'f': o->format = optarg; break;
		case 'T': o->table = optarg; break;
		case 'o': o->output = optarg; break;
		case 's': o->select = optarg; break;
		case 't': o->title = optarg; break;
		case 'L':
			o->light_frac = strtod(optarg, &end);
			if (end == optarg || *end || !(o->light_frac > 0) || o->light_frac > 1)
				return rxu_usage_err(
				    verb, "--light-frac: '%s' (expected 0 < F <= 1)", optarg);
			break;
		case 'n':
			if (rxu_parse_u64(optarg, 0, 100000, &o->rows))
				return rxu_usage_err(
				    verb, "--rows: '%s' is not a count in 0..100000", optarg);
			break;
		case 'h': sp->usage(stdout); return RXU_EXIT_OK;
		default: return RXU_EXIT_USAGE;
		}
	}
	if ((sp->want & RXT_AO_FORMAT) && ana_one_of(verb, "--format", o->format, sp->formats))
		return RXU_EXIT_USAGE;
	if ((sp->want & RXT_AO_TABLE) && ana_one_of(verb, "--table", o->table, sp->tables))
		return RXU_EXIT_USAGE;
	/* getopt has moved the operands after the options */
	o->operand = argv + optind;
	o->noperands = argc - optind;
	int n = o->noperands;
	if (n < sp->min_operands || (sp->max_operands >= 0 && n > sp->max_operands))
		return rxu_usage_err(verb, "expected %s, got %d%s%s%s (rxray %s --help)",
				     sp->operands, n, sp->counted ? " " : "",
				     sp->counted ? sp->counted : "",
				     sp->counted && n != 1 ? "s" : "", verb);
	return RXT_CLI_GO;
}
