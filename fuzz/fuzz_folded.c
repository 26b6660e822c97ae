/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the folded-stack reader ("a;b;c N" lines), then what
 * `rxray flame` does with an accepted set: the SVG (escaping of frame
 * names, narrow-frame merging), folded and speedscope output. Output goes
 * to /dev/null: the target looks for crashes, the tests check content.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rxray/flame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	char err[512];
	if (!sink && !(sink = fopen("/dev/null", "w")))
		abort();
	if (!size)
		return 0;
	FILE *in = fmemopen((void *)data, size, "r");
	struct rxa_flame *f = NULL;
	rxa_flame_open(&f);
	if (!in || !f)
		abort();
	if (rxa_flame_read_folded(f, in, "fuzz.folded", err, sizeof(err)) == 0 &&
	    rxa_flame_total(f) > 0) {
		struct rxa_flame_svg_opts o = {.title = "fuzz"};
		rxa_flame_svg_write(f, sink, &o);
		rxa_flame_folded_write(f, sink);
		rxa_flame_speedscope_write(f, sink, "fuzz", "samples");
		rxa_flame_scale(f, 0.5);
		rxa_flame_diff_svg_write(f, f, sink, &o);
	}
	fclose(in);
	rxa_flame_free(f);
	return 0;
}
