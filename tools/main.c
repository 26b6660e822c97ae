/* SPDX-License-Identifier: MIT */
/* rxray: one binary, one verb per file; this file only dispatches. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rxray/util.h"

#ifndef RXRAY_VERSION
#define RXRAY_VERSION "0"
#endif

struct verb {
	const char *name;
	const char *summary;
	int (*fn)(int argc, char **argv); /* NULL: not in this build */
};

/*
 * tools/CMakeLists.txt compiles a verb's file only when its library is in
 * the build; a verb left out leaves its function undefined, and as a weak
 * reference it reads NULL below ("not available in this build"). Adding a
 * verb is one line here and one in that CMake table.
 */
#pragma weak rxt_cmd_run
#pragma weak rxt_cmd_sweep
#pragma weak rxt_cmd_ceiling
#pragma weak rxt_cmd_diff
#pragma weak rxt_cmd_flame
#pragma weak rxt_cmd_report
#pragma weak rxt_cmd_attach
#pragma weak rxt_cmd_whatif
#pragma weak rxt_cmd_caps
#pragma weak rxt_cmd_doctor

static const struct verb verbs[] = {
	{"run", "run one point on an engine and write its result JSON", rxt_cmd_run},
	{"sweep", "sweep frame size x queues x ring depth, NDR/PDR per point", rxt_cmd_sweep},
	{"ceiling", "ceiling table: measured vs predicted, bottleneck stage", rxt_cmd_ceiling},
	{"diff", "stage-by-stage delta of two configurations", rxt_cmd_diff},
	{"flame", "flame graph (SVG) from run results or folded stacks", rxt_cmd_flame},
	{"report", "evidence bundle: markdown, HTML, SVG plots", rxt_cmd_report},
	{"attach", "per-packet profile of a running, unmodified DPDK process", rxt_cmd_attach},
	{"whatif", "ceiling if a stage cost more or less (cost model)", rxt_cmd_whatif},
	{"caps", "what the device can do; check a config against it", rxt_cmd_caps},
	{"doctor", "check this host: cores, clock, hugepages, BPF, DPDK, GPU", rxt_cmd_doctor},
};

static char self_exe[PATH_MAX];

const char *rxt_self_exe(void)
{
	return self_exe;
}

static void usage(FILE *f)
{
	fprintf(f, "USAGE\n  rxray <verb> [options]      (rxray <verb> --help for each)\n\nVERBS\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-8s %s%s\n", verbs[i].name, verbs[i].summary,
			verbs[i].fn ? "" : " (not available in this build)");
	fprintf(f, "\nEXAMPLES\n"
		   "  rxray doctor\n"
		   "  rxray run --engine verbs --device sim --mode hds --frame 1064 --seconds 2\n"
		   "  rxray sweep                      # default sweep on the software NIC\n"
		   "  rxray ceiling results/\n"
		   "  rxray flame run.json -o flame.svg\n"
		   "\nExit codes: 0 ok, 1 runtime failure, 2 bad input.\n");
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n > 0)
		self_exe[n] = '\0';
	else
		snprintf(self_exe, sizeof(self_exe), "%s", argv[0]);

	if (argc < 2) {
		usage(stderr);
		return RXU_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return RXU_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("rxray %s\n", RXRAY_VERSION);
		return RXU_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(argv[1], verbs[i].name))
			continue;
		if (!verbs[i].fn) {
			fprintf(stderr, "rxray %s: not available in this build\n", verbs[i].name);
			return RXU_EXIT_RUNTIME;
		}
		return verbs[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "rxray: unknown verb '%s' (rxray --help lists them)\n", argv[1]);
	return RXU_EXIT_USAGE;
}
