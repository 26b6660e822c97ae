/* SPDX-License-Identifier: MIT */
/*
 * The CLI's verb table. Each verb lives in tools/cmd_<verb>.c and exports
 * int rxr_cmd_<verb>(int argc, char **argv): argv[0] is the verb name,
 * getopt_long parses the rest. Returns the exit code: 0 ok, 1 runtime
 * failure, 2 bad input (after one line on stderr naming the field).
 * Every verb answers --help with USAGE and EXAMPLES on stdout, exit 0.
 */
#ifndef RXRAY_TOOLS_CLI_H
#define RXRAY_TOOLS_CLI_H

int rxr_cmd_doctor(int argc, char **argv);
int rxr_cmd_run(int argc, char **argv);
int rxr_cmd_caps(int argc, char **argv);
int rxr_cmd_sweep(int argc, char **argv);
int rxr_cmd_ceiling(int argc, char **argv);
int rxr_cmd_diff(int argc, char **argv);
int rxr_cmd_flame(int argc, char **argv);
int rxr_cmd_report(int argc, char **argv);
int rxr_cmd_attach(int argc, char **argv);
int rxr_cmd_whatif(int argc, char **argv);

struct rxr_set;
/*
 * Load run/sweep results for an analysis verb (tools/setload.c): prints
 * the error line or the truncated-last-line warning itself. Returns 0, or
 * the exit code (2 bad input, 1 out of memory); *out is then NULL.
 */
int rxr_cli_set_load(const char *verb, const char *path, struct rxr_set **out);

/* Path of the running rxray binary (for verbs that re-exec it). */
const char *rxr_self_exe(void);

#endif
