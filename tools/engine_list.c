/* SPDX-License-Identifier: MIT */
/* Options of the verbs that take a run config (see engine_list.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine_list.h"
#include "rxray/util.h"

#define OPT_BASE 1000

void rxt_engine_opt_line(const char *err, char *out, size_t len)
{
	size_t n = strcspn(err, ": ");
	bool field = n > 0 && err[n] == ':' && err[n + 1] == ' ';
	snprintf(out, len, "%s%s", field ? "--" : "", err);
}

/* run's own options, past the knob table's */
#define OPT_SAMPLE (OPT_BASE - 2)
#define OPT_SAMPLE_FREQ (OPT_BASE - 1)
#define OPT_GENERATOR (OPT_BASE - 3)

int rxt_config_parse_argv(const char *verb, int argc, char **argv, struct rx_config *c,
			  struct rxt_run_opts *ro)
{
	struct option opts[68]; /* 60 knobs + 7 options + the end */
	size_t n = 0;
	for (size_t i = 0; i < rx_knob_count() && n < 60; i++, n++)
		opts[n] = (struct option){rx_knob_at(i)->name,
					  rx_knob_at(i)->type == RX_KT_FLAG ? no_argument
									    : required_argument,
					  NULL, OPT_BASE + (int)i};
	opts[n++] = (struct option){"out", required_argument, NULL, 'o'};
	opts[n++] = (struct option){"quiet", no_argument, NULL, 'q'};
	opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	if (ro) {
		opts[n++] = (struct option){"sample", no_argument, NULL, OPT_SAMPLE};
		opts[n++] = (struct option){"sample-freq", required_argument, NULL, OPT_SAMPLE_FREQ};
		opts[n++] = (struct option){"generator", required_argument, NULL, OPT_GENERATOR};
	}
	opts[n] = (struct option){NULL, 0, NULL, 0};

	char err[512];
	int ch;
	/* 0, not 1: glibc then also forgets a cluster ("-qxh") an earlier
	 * parse stopped inside, which would point into that call's argv */
	optind = 0;
	while ((ch = rxt_cli_getopt(verb, argc, argv, "o:qh", opts)) != -1) {
		if (ch == 'h')
			return -1;
		uint64_t hz;
		if (ch == OPT_SAMPLE && ro) {
			if (!ro->sample_hz)
				ro->sample_hz = RXT_RUN_SAMPLE_HZ;
		} else if (ch == OPT_SAMPLE_FREQ && ro) {
			if (rxu_parse_u64(optarg, 1, 20000, &hz) < 0)
				return rxu_usage_err(verb, "--sample-freq: '%s' is not 1-20000 Hz",
						     optarg);
			ro->sample_hz = (unsigned)hz;
		} else if (ch == OPT_GENERATOR && ro) {
			ro->generator = optarg;
		} else if (ch == 'q') {
			c->quiet = true;
		} else if (ch == 'o') {
			if (!*optarg || strlen(optarg) >= sizeof(c->out))
				return rxu_usage_err(verb, "--out: bad path '%s'", optarg);
			snprintf(c->out, sizeof(c->out), "%s", optarg);
		} else if (ch >= OPT_BASE && ch < OPT_BASE + (int)rx_knob_count()) {
			const char *key = rx_knob_at((size_t)(ch - OPT_BASE))->name;
			if (rx_config_set(c, key, optarg, err, sizeof(err)) < 0)
				return rxu_usage_err(verb, "--%s", err);
		} else {
			return RXU_EXIT_USAGE; /* the line is printed */
		}
	}
	if (optind < argc)
		return rxu_usage_err(verb, "%s: unexpected argument (options only)", argv[optind]);
	return 0;
}

void rxt_config_print_options(FILE *f)
{
	for (size_t i = 0; i < rx_knob_count(); i++) {
		const struct rx_knob *k = rx_knob_at(i);
		char left[48];
		snprintf(left, sizeof(left), "--%s%s%s", k->name, k->arg ? " " : "",
			 k->arg ? k->arg : "");
		fprintf(f, "  %-28s %s\n", left, k->help);
	}
	fprintf(f, "  %-28s %s\n  %-28s %s\n  %-28s %s\n", "-o, --out FILE",
		"write the result JSON to FILE ('-' = stdout)", "-q, --quiet", "no human summary",
		"-h, --help", "this text");
}
