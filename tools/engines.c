/* SPDX-License-Identifier: MIT */
/* The engines this build can drive (see engines.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "engines.h"
#include "rxray/util.h"

#define OPT_BASE 1000

static const struct rx_engine_ops *const engines[] = {
#ifdef RXRAY_ENGINE_VERBS
	&rx_engine_verbs,
#endif
#ifdef RXRAY_ENGINE_DPDK
	&rx_engine_dpdk,
#endif
	NULL,
};

size_t rxr_engine_count(void)
{
	return sizeof(engines) / sizeof(engines[0]) - 1;
}

const struct rx_engine_ops *rxr_engine_at(size_t i)
{
	return i < rxr_engine_count() ? engines[i] : NULL;
}

const struct rx_engine_ops *rxr_engine_find(const char *name)
{
	for (size_t i = 0; name && i < rxr_engine_count(); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

const char *rxr_engine_list(char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < rxr_engine_count() && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
					engines[i]->name);
	if (!rxr_engine_count())
		snprintf(buf, len, "none in this build");
	return buf;
}

void rxr_engine_opt_line(const char *err, char *out, size_t len)
{
	size_t n = strcspn(err, ": ");
	bool field = n > 0 && err[n] == ':' && err[n + 1] == ' ';
	snprintf(out, len, "%s%s", field ? "--" : "", err);
}

int rxr_config_parse_argv(const char *verb, int argc, char **argv, struct rx_config *c)
{
	struct option opts[64];
	size_t n = 0;
	for (size_t i = 0; i < rx_config_nkeys && n < 60; i++, n++)
		opts[n] = (struct option){rx_config_keys[i].name,
					  rx_config_keys[i].has_arg ? required_argument : no_argument,
					  NULL, OPT_BASE + (int)i};
	opts[n++] = (struct option){"out", required_argument, NULL, 'o'};
	opts[n++] = (struct option){"quiet", no_argument, NULL, 'q'};
	opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	opts[n] = (struct option){NULL, 0, NULL, 0};

	char err[512];
	int ch;
	opterr = 0;
	/* 0, not 1: glibc then also forgets a cluster ("-qxh") an earlier
	 * parse stopped inside, which would point into that call's argv */
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		if (ch == 'h')
			return -1;
		if (ch == 'q') {
			c->quiet = true;
		} else if (ch == 'o') {
			if (!*optarg || strlen(optarg) >= sizeof(c->out))
				return rxr_usage_err(verb, "--out: bad path '%s'", optarg);
			snprintf(c->out, sizeof(c->out), "%s", optarg);
		} else if (ch >= OPT_BASE && ch < OPT_BASE + (int)rx_config_nkeys) {
			const char *key = rx_config_keys[ch - OPT_BASE].name;
			if (rx_config_set(c, key, optarg, err, sizeof(err)) < 0)
				return rxr_usage_err(verb, "--%s", err);
		} else if (ch == ':') {
			return rxr_usage_err(verb, "%s: needs a value", argv[optind - 1]);
		} else {
			return rxr_usage_err(verb, "%s: unknown option (see rxray %s --help)",
					     argv[optind - 1], verb);
		}
	}
	if (optind < argc)
		return rxr_usage_err(verb, "%s: unexpected argument (options only)", argv[optind]);
	return 0;
}

void rxr_config_print_options(FILE *f)
{
	for (size_t i = 0; i < rx_config_nkeys; i++) {
		const struct rx_config_key *k = &rx_config_keys[i];
		char left[48];
		snprintf(left, sizeof(left), "--%s%s%s", k->name, k->has_arg ? " " : "",
			 k->has_arg ? k->arg : "");
		fprintf(f, "  %-28s %s\n", left, k->help);
	}
	fprintf(f, "  %-28s %s\n  %-28s %s\n  %-28s %s\n", "-o, --out FILE",
		"write the result JSON to FILE ('-' = stdout)", "-q, --quiet", "no human summary",
		"-h, --help", "this text");
}
