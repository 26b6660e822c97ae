/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the sweep spec parser (YAML text -> struct
 * sweep_spec; it also expands and checks every point of the matrix).
 */
#include <stddef.h>
#include <stdint.h>

#include "rxray/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[SWEEP_ERR_LEN];
	struct sweep_spec *sp = NULL;
	if (sweep_spec_parse((const char *)data, size, "fuzz.yaml", &sp, err, sizeof(err)) == 0)
		sweep_spec_free(sp);
	return 0;
}
