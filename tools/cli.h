/* SPDX-License-Identifier: MIT */
/*
 * The CLI's verb table. Each verb lives in tools/cmd_<verb>.c and exports
 * int rxt_cmd_<verb>(int argc, char **argv): argv[0] is the verb name,
 * getopt_long parses the rest. Returns the exit code: 0 ok, 1 runtime
 * failure, 2 bad input (after one line on stderr naming the field).
 * Every verb answers --help with USAGE and EXAMPLES on stdout, exit 0.
 */
#ifndef RXRAY_TOOLS_CLI_H
#define RXRAY_TOOLS_CLI_H

int rxt_cmd_doctor(int argc, char **argv);
int rxt_cmd_run(int argc, char **argv);
int rxt_cmd_caps(int argc, char **argv);
int rxt_cmd_sweep(int argc, char **argv);
int rxt_cmd_ceiling(int argc, char **argv);
int rxt_cmd_diff(int argc, char **argv);
int rxt_cmd_flame(int argc, char **argv);
int rxt_cmd_report(int argc, char **argv);
int rxt_cmd_attach(int argc, char **argv);
int rxt_cmd_whatif(int argc, char **argv);

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rxray/afile.h"

struct option;
struct rxa_set;

/* Room for one error line of a verb. */
#define RXT_CLI_ERR_LEN 512

/*
 * getopt_long for a verb (tools/cli_io.c): same arguments, but a bad
 * option (unknown, ambiguous or missing its value) prints one line naming
 * it as the user wrote it ("rxray diff: --form: unknown option or missing
 * value (rxray diff --help)", "rxray diff: -o: needs a value ...") and
 * returns RXT_CLI_BADOPT; the verb then returns RXU_EXIT_USAGE. Never
 * prints the usage text. shorts as getopt's (a leading ':' is implied and
 * may be given; no '+'/'-' flags). Set optind = 1 before the loop.
 *
 *   while ((c = rxt_cli_getopt(VERB, argc, argv, "o:h", lo)) != -1)
 *           switch (c) { ...; default: return RXU_EXIT_USAGE; }
 */
#define RXT_CLI_BADOPT (-2)
int rxt_cli_getopt(const char *verb, int argc, char **argv, const char *shorts,
		   const struct option *lo);

/*
 * The options the analysis verbs (ceiling, whatif, diff, report) share,
 * parsed by one loop: each verb names those it takes (rxt_ana_spec.want).
 */
#define RXT_AO_FORMAT 0x01u	/* -f, --format FMT: one of formats */
#define RXT_AO_OUTPUT 0x02u	/* -o, --output FILE */
#define RXT_AO_SELECT 0x04u	/* -s, --select SEL */
#define RXT_AO_LIGHT_FRAC 0x08u /* --light-frac F: the cost model's, 0 < F <= 1 */
#define RXT_AO_TABLE 0x10u	/* --table NAME: one of tables */
#define RXT_AO_ROWS 0x20u	/* -n, --rows N: 0..100000 */
#define RXT_AO_TITLE 0x40u	/* -t, --title TEXT */
struct rxt_ana_spec {
	unsigned want;
	const char *const *formats;	/* NULL-terminated; the first is the default */
	const char *const *tables;	/* the same for --table */
	const char *output;		/* -o's default: "-" (stdout), NULL if none */
	double light_frac;		/* --light-frac's default: RXA_MODEL_LIGHT_FRAC */
	int min_operands, max_operands; /* max < 0: no limit */
	const char *operands;		/* the count line's "expected ...": "one RESULTS path" */
	const char *counted;		/* NULL, or the count's noun: "got 1 argument" */
	void (*usage)(FILE *f);		/* --help, on stdout */
};
struct rxt_ana_opts {
	const char *format, *table, *output, *select, *title;
	double light_frac; /* spec's unless given */
	uint64_t rows;	   /* 12 unless given */
	char **operand;	   /* the operands, wherever they stood among the options */
	int noperands;
};
/*
 * Parse an analysis verb's options (rxt_cli_getopt underneath), then check
 * the format, the table and the number of operands. Returns RXT_CLI_GO
 * with o filled, or the exit code to return: 0 after --help, RXU_EXIT_USAGE
 * after one line on stderr.
 *
 *   if ((ec = rxt_cli_ana_parse(VERB, argc, argv, &spec, &o)) != RXT_CLI_GO)
 *           return ec;
 */
#define RXT_CLI_GO (-1)
int rxt_cli_ana_parse(const char *verb, int argc, char **argv, const struct rxt_ana_spec *sp,
		      struct rxt_ana_opts *o);

/*
 * Check an input path before it is read (rxray/input.h): a FIFO, device
 * or socket, or a folder when !dir_ok, prints one line and returns 2; a
 * missing file 2; "-" passes. Returns the exit code (0 when fine).
 */
int rxt_cli_in_check(const char *verb, const char *path, bool dir_ok);

/*
 * Open a verb's output (rxray/afile.h: "-" stdout, files atomically,
 * devices/FIFOs written through). Returns 0, or the exit code after one
 * line: 2 for a directory or a missing folder, 1 otherwise.
 */
int rxt_cli_out_open(const char *verb, const char *path, struct rxr_afile *af);
/* Exit code for an output error from rxray/afile.h (or rxr_result_write):
 * 2 for a directory, a missing folder, a name too long or a link loop. */
int rxt_cli_out_exit_code(int rc);
/*
 * The tail: wrc is the result of writing (0 or -errno). 0 -> commit; else
 * abort (the target is untouched). Prints the line on failure; returns
 * the exit code (0 or 1).
 */
int rxt_cli_out_finish(const char *verb, const char *path, struct rxr_afile *af, int wrc);

/*
 * Load run/sweep results for an analysis verb (tools/setload.c): prints
 * the error line or the truncated-last-line warning itself. Returns 0, or
 * the exit code (2 bad input, 1 out of memory); *out is then NULL.
 */
int rxt_cli_set_load(const char *verb, const char *path, struct rxa_set **out);
/*
 * rxt_cli_set_load, then the view of the points that select (-s
 * knob=value[,...]; NULL: all) matches: *view is **s with pts an array of
 * its own holding the matching points (borrowed from *s: free view->pts,
 * then rxa_set_free(*s)). Returns 0, or the exit code after one line
 * ("--select: ...", "--select SEL: no point matches"); *s and view->pts
 * are then NULL.
 */
int rxt_cli_set_select(const char *verb, const char *path, const char *select, struct rxa_set **s,
		       struct rxa_set *view);

/* The default sweep spec compiled into the binary (sweeps/default.yaml). */
extern const char rxt_default_spec[];

/* Path of the running rxray binary (for verbs that re-exec it). */
const char *rxt_self_exe(void);

#endif
