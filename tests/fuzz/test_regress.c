/* SPDX-License-Identifier: MIT */
/*
 * The fuzzers' findings, kept: every file under fuzz/regress/<target>/
 * (an input that crashed that target once) is run through the same
 * harness in this build, so the ASan build fails if the bug comes back;
 * and each finding's behaviour is asserted where it has one beyond "does
 * not crash".
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FUZZ_HAVE_options
#include "engine_list.h"
#include "rxray/core.h"
#endif

#define FUZZ_DECL(t) int fuzz_one_##t(const uint8_t *data, size_t size);
FUZZ_DECL(result)
FUZZ_DECL(telemetry)
FUZZ_DECL(spec)
FUZZ_DECL(set)
FUZZ_DECL(folded)
FUZZ_DECL(options)

/* Run every file of fuzz/regress/<target> through one; how many ran. */
static size_t replay(const char *target, int (*one)(const uint8_t *, size_t))
{
	char dir[600], path[900];
	snprintf(dir, sizeof(dir), "%s/%s", FUZZ_REGRESS_DIR, target);
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		cr_assert(f, "%s", path);
		uint8_t *buf = malloc(1 << 20);
		cr_assert(buf);
		size_t len = fread(buf, 1, 1 << 20, f);
		fclose(f);
		cr_log_info("%s: %zu bytes", path, len);
		one(buf, len);
		free(buf);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

#define REPLAY_TEST(t)                                                                    \
	Test(fuzz_regress, t)                                                             \
	{                                                                                 \
		size_t n = replay(#t, fuzz_one_##t);                                      \
		cr_log_info("%s: %zu inputs replayed", #t, n);                            \
	}

#ifdef FUZZ_HAVE_result
REPLAY_TEST(result)
#endif
#ifdef FUZZ_HAVE_telemetry
REPLAY_TEST(telemetry)
#endif
#ifdef FUZZ_HAVE_spec
REPLAY_TEST(spec)
#endif
#ifdef FUZZ_HAVE_set
REPLAY_TEST(set)
#endif
#ifdef FUZZ_HAVE_folded
REPLAY_TEST(folded)
#endif

#ifdef FUZZ_HAVE_options
REPLAY_TEST(options)

/*
 * fuzz/regress/options/crash-b416...: a parse that stopped inside an
 * option (an unknown or ambiguous one) left getopt pointing into that
 * call's argv; the next parse read it (a use after free once that argv
 * was freed) and could act on the old arguments instead of its own.
 */
Test(fuzz_regress, options_a_second_parse_forgets_the_first)
{
	struct rx_config c;
	char a0[] = "run", a1[] = "-qxh";
	char *argv1[] = {a0, a1, NULL};
	rx_config_defaults(&c);
	cr_expect_eq(rxt_config_parse_argv("run", 2, argv1, &c, NULL), 2, "-x is not an option");
	char b1[] = "--frame", b2[] = "2000";
	char *argv2[] = {a0, b1, b2, NULL};
	rx_config_defaults(&c);
	cr_expect_eq(rxt_config_parse_argv("run", 3, argv2, &c, NULL), 0,
		     "the second parse acted on the first one's '-qxh'");
	cr_expect_eq(c.frame, 2000);
	cr_expect_not(c.quiet, "-q of the first parse leaked into the second");
}
#endif
