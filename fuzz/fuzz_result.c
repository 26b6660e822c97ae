/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the run-result reader (one rxray.run/1 JSON text ->
 * struct rxr_result), then what every analyzer asks of an accepted one:
 * the bottleneck, cycles per packet, and writing it back out.
 *
 * Differential: the fast reader (rxr_result_scan, which the sweep loader
 * takes for every compact line) must agree with the checked one whenever
 * it accepts: the checked reader accepts too, and both results write out
 * the same JSON. So must the duplicate-key scan (rxr_json_dup_find,
 * which the loader runs over the trial lines it only skims): where it
 * answers, jansson with JSON_REJECT_DUPLICATES takes the text (0) or
 * refuses it for a repeated key (1). Any disagreement aborts (a finding).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct rxr_result *r = NULL;
	rxr_result_parse(text, "fuzz.json", 1, &r, err, sizeof(err));
	/* up to the first NUL, as the checked reader sees it */
	struct rxr_result *f = NULL;
	if (rxr_result_scan(text, strlen(text), NULL, &f) == 0) {
		if (!r)
			abort(); /* fast accepted what the checked reader refuses */
		json_t *a = rxr_result_to_json(r), *b = rxr_result_to_json(f);
		if (a && b && !json_equal(a, b))
			abort(); /* both accepted, different results */
		json_decref(a);
		json_decref(b);
	}
	rxr_result_free(f);
	free(text);
	char path[128];
	int dup = rxr_json_dup_find((const char *)data, size, path, sizeof(path));
	if (dup >= 0) {
		json_error_t je;
		json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
		if (dup == 0 ? !j : j || json_error_code(&je) != json_error_duplicate_key)
			abort(); /* the scan answered, jansson disagrees */
		json_decref(j);
	}
	if (!r)
		return 0;
	for (size_t i = 0; i < r->nthreads; i++)
		(void)rxr_thread_cycles_per_packet(&r->threads[i]);
	(void)rxr_counters_conserved(&r->c);
	json_t *back = rxr_result_to_json(r);
	char *s = back ? json_dumps(back, JSON_COMPACT) : NULL;
	free(s);
	json_decref(back);
	rxr_result_free(r);
	return 0;
}
