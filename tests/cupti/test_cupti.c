/* librxray_cupti.so injected into a real CUDA program records its copies,
 * memset and NVTX ranges (NVTX_INJECTION64_PATH naming the same library,
 * which hands NVTX to the libcupti it uses). Needs a GPU: skips visibly
 * without one. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

Test(cupti, injection_records_gpu_activity_and_nvtx)
{
	char out[] = "/tmp/rxray-cupti-XXXXXX";
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(out);
	/* The build's paths, or the environment's when the test runs from a
	 * bundle on another machine (tools/device-bundle.sh). */
	const char *smoke = getenv("RXRAY_CUPTI_SMOKE") ? getenv("RXRAY_CUPTI_SMOKE") : CUPTI_SMOKE;
	const char *lib = getenv("RXRAY_CUPTI_LIB") ? getenv("RXRAY_CUPTI_LIB") : CUPTI_LIB;
	const char *cupti = getenv("RXRAY_LIBCUPTI") ? getenv("RXRAY_LIBCUPTI") : LIBCUPTI;
	char cmd[2048], errf[] = "/tmp/rxray-cupti-err-XXXXXX";
	int efd = mkstemp(errf);
	cr_assert_geq(efd, 0);
	close(efd);
	snprintf(cmd, sizeof(cmd),
		 "CUDA_INJECTION64_PATH=%s NVTX_INJECTION64_PATH=%s RXRAY_CUPTI_OUT=%s %s 2>%s", lib,
		 lib, out, smoke, errf);
	int st = system(cmd);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (rc == 3)
		cr_skip_test("needs a CUDA GPU: none usable here");
	cr_assert_eq(rc, 0, "smoke program failed: %d", rc);
	json_error_t je;
	json_t *doc = json_load_file(out, 0, &je);
	cr_assert_not_null(doc, "no trace written: %s", je.text);
	json_t *sum = json_object_get(doc, "rxray");
	cr_assert_str_eq(json_string_value(json_object_get(sum, "schema")), "rxray.cupti/1");
	json_int_t copies = json_integer_value(json_object_get(json_object_get(sum, "memcpy"), "count"));
	json_int_t sets = json_integer_value(json_object_get(json_object_get(sum, "memset"), "count"));
	json_int_t ranges = json_integer_value(json_object_get(json_object_get(sum, "nvtx"), "count"));
	cr_expect_eq(copies, 8, "memcpy records: %lld", (long long)copies);
	cr_expect_eq(sets, 1);
	if (ranges != 2) {
		/* the diagnosis: what the library said, and where libcupti is */
		char said[2048] = "";
		FILE *f = fopen(errf, "r");
		if (f) {
			size_t n = fread(said, 1, sizeof(said) - 1, f);
			said[n] = 0;
			fclose(f);
		}
		cr_expect_eq(ranges, 2,
			     "nvtx ranges: %lld (NVTX_INJECTION64_PATH=%s; libcupti here: %s; "
			     "the smoke program's stderr: %s)",
			     (long long)ranges, lib, cupti, said[0] ? said : "(empty)");
	}
	json_t *evs = json_object_get(doc, "traceEvents");
	cr_assert_eq((json_int_t)json_array_size(evs), copies + sets + ranges);
	size_t i;
	json_t *e;
	int found = 0;
	json_array_foreach(evs, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		found += name && !strcmp(name, "rxray-smoke-copy");
		cr_expect_geq(json_number_value(json_object_get(e, "dur")), 0);
	}
	cr_expect_eq(found, 1);
	json_decref(doc);
	unlink(out);
	unlink(errf);
}
