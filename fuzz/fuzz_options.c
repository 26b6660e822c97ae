/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the `rxray run`/`rxray caps` option parser
 * (rxt_config_parse_argv over rx_config_set and every knob's value
 * parser), then the config as the result records it. The input is an
 * argv: arguments separated by NUL bytes (at most 24).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_list.h"
#include "rxray/core.h"

#define MAX_ARGS 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	int argc = 0;
	argv[argc++] = "run";
	for (size_t off = 0; off <= size && argc < MAX_ARGS + 1;) {
		argv[argc++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	argv[argc] = NULL;
	struct rx_config c;
	struct rxt_run_opts ro = {0};
	rx_config_defaults(&c);
	if (rxt_config_parse_argv("run", argc, argv, &c, &ro) == 0) {
		json_t *j = rx_config_to_json(&c);
		char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
		free(s);
		json_decref(j);
	}
	free(buf);
	return 0;
}
