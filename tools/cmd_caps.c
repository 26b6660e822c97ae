/* SPDX-License-Identifier: MIT */
/*
 * rxray caps: what a device can do (queried without opening a datapath),
 * and whether a configuration fits it. Same options as `rxray run`; exit 2
 * when the configuration does not fit, naming the option.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine_list.h"
#include "rxray/core.h"
#include "rxray/util.h"

#define VERB "caps"

static void caps_help(void)
{
	printf("USAGE\n  rxray caps [--engine NAME] [--device DEV] [config options]\n\n"
	       "Print the device's capabilities (ring depth, segments, queues, frame\n"
	       "sizes, buffer split) and check a configuration against them and\n"
	       "against this host's cores, exactly as `rxray run` would before it\n"
	       "starts anything. -o writes {caps, config, placement, valid, error}.\n\n"
	       "OPTIONS\n");
	rxt_config_print_options(stdout);
	printf("\nEXAMPLES\n"
	       "  rxray caps --device sim\n"
	       "  rxray caps --device sim --mode hds --split 2048 --frame 1064\n"
	       "  rxray caps --engine verbs --device mlx5:0000:3b:00.0 --ring 65536\n"
	       "\nExit codes: 0 config fits, 1 device query failed, 2 bad input or a\n"
	       "config that does not fit.\n");
}

static void caps_print(const struct rx_caps *k, const char *engine)
{
	printf("device %s (engine %s)\n", k->name, engine);
	printf("  max ring depth   %u\n", k->max_ring);
	printf("  max segments     %u\n", k->max_sges);
	printf("  max queues       %u\n", k->max_queues);
	printf("  frame bytes      %u..%u\n", k->min_frame, k->max_frame);
	printf("  buffer split     %s (min split %u)\n", k->buffer_split ? "yes" : "no",
	       k->min_split);
	printf("  gpu memory       %s%s%s%s\n", k->gpu_mem ? "yes" : "no", k->gpu_why[0] ? " (" : "",
	       k->gpu_why, k->gpu_why[0] ? ")" : "");
	printf("  software NIC     %s\n", k->dev ? "yes (needs a core)" : "no");
	if (k->max_rate_pps > 0)
		printf("  max rate         %.2f Mpps\n", k->max_rate_pps / 1e6);
}

static int caps_write(const char *path, const struct rx_config *c, const struct rx_caps *k,
		      const struct rx_placement *pl, const char *error)
{
	json_t *o = json_object();
	int rc = -ENOMEM;
	if (!o)
		return rc;
	json_object_set_new(o, "schema", json_string("rxray.caps/1"));
	json_object_set_new(o, "caps", rx_caps_to_json(k));
	json_object_set_new(o, "config", rx_config_to_json(c));
	if (pl)
		json_object_set_new(o, "placement", rx_placement_to_json(pl));
	json_object_set_new(o, "valid", json_boolean(error == NULL));
	if (error)
		json_object_set_new(o, "error", json_string(error));
	if (!strcmp(path, "-"))
		rc = json_dumpf(o, stdout, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	else
		rc = json_dump_file(o, path, JSON_INDENT(2)) == 0 ? 0 : -EIO;
	json_decref(o);
	return rc;
}

int rxt_cmd_caps(int argc, char **argv)
{
	struct rx_config c;
	struct rx_caps k;
	struct rx_placement pl;
	char err[512] = "", line[520] = "", list[128];
	rx_config_defaults(&c);
	int ex = rxt_config_parse_argv(VERB, argc, argv, &c, NULL);
	if (ex < 0) {
		caps_help();
		return RXU_EXIT_OK;
	}
	if (ex)
		return ex;
	const struct rx_engine_ops *ops = rxe_find(c.engine);
	if (!ops)
		return rxu_usage_err(VERB, "--engine: '%s' is not an engine of this build (%s)",
				     c.engine, rxe_list(list, sizeof(list), ", "));
	memset(&k, 0, sizeof(k));
	int rc = ops->caps(&c, &k, err, sizeof(err));
	if (rc < 0) {
		rxt_engine_opt_line(err[0] ? err : strerror(-rc), line, sizeof(line));
		rxu_err(VERB, "%s", line);
		return rc == -EINVAL ? RXU_EXIT_USAGE : RXU_EXIT_RUNTIME;
	}
	/* the same check `rxray run` and the sweep's --dry-run make */
	bool placed = rx_run_check(ops, &c, 0, NULL, &pl, err, sizeof(err)) == 0;
	if (!c.quiet && strcmp(c.out, "-") != 0) {
		caps_print(&k, ops->name);
		if (placed) {
			printf("config fits: %s frame %u, %u queue%s, ring %u, batch %u\n",
			       rx_mode_name(c.mode), c.frame, c.queues, c.queues == 1 ? "" : "s",
			       c.ring, c.batch);
			printf("placement: nic");
			/* every device thread's core: NIC threads x their writers */
			if (pl.nic_all <= 0)
				printf(" none");
			for (int t = 0; t < pl.nic_all; t++)
				printf(" %d", pl.nic_cores[t]);
			printf(", rx");
			for (uint32_t i = 0; i < c.queues; i++)
				printf(" %d", pl.rx_core[i]);
			printf(", app %s", rx_app_name(pl.app));
			if (pl.app != RX_APP_INLINE)
				for (uint32_t i = 0; i < c.queues; i++)
					printf(" %d", pl.app_core[i]);
			printf(" (%d of %d cores%s)\n", pl.needed, pl.available,
			       pl.oversubscribed ? ", oversubscribed" : "");
		}
	}
	if (!placed)
		rxt_engine_opt_line(err, line, sizeof(line));
	if (c.out[0] && (rc = caps_write(c.out, &c, &k, placed ? &pl : NULL,
					 placed ? NULL : line)) < 0) {
		rxu_err(VERB, "%s: cannot write: %s", c.out, strerror(-rc));
		return RXU_EXIT_RUNTIME;
	}
	if (!placed)
		return rxu_usage_err(VERB, "%s", line);
	return RXU_EXIT_OK;
}
