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
/* --light-frac F (the cost model's light-load fraction, 0 < F <= 1) into
 * *out: 0, or RXU_EXIT_USAGE after one line naming the option. */
int rxt_cli_light_frac(const char *verb, const char *arg, double *out);
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

/* The default sweep spec compiled into the binary (sweeps/default.yaml). */
extern const char rxt_default_spec[];

/* Path of the running rxray binary (for verbs that re-exec it). */
const char *rxt_self_exe(void);

#endif
