/* Numbers with units, range checks. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "rxray/util.h"

Test(util, units_and_ranges)
{
	uint64_t v;
	cr_assert_eq(rxu_parse_u64("64", 1, 100, &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(rxu_parse_u64("8k", 1, 1 << 20, &v), 0);
	cr_assert_eq(v, 8000);
	cr_assert_eq(rxu_parse_u64("8Ki", 1, 1 << 20, &v), 0);
	cr_assert_eq(v, 8192);
	cr_assert_eq(rxu_parse_u64("1.5M", 1, 1ull << 40, &v), 0);
	cr_assert_eq(v, 1500000);
	cr_assert_eq(rxu_parse_u64("101", 1, 100, &v), -ERANGE);
	cr_assert_eq(rxu_parse_u64("0", 1, 100, &v), -ERANGE);
	cr_assert_eq(rxu_parse_u64("1.5", 1, 100, &v), -EINVAL);
	cr_assert_eq(rxu_parse_u64("12x", 1, 100, &v), -EINVAL);
	cr_assert_eq(rxu_parse_u64("-3", 0, 100, &v), -EINVAL);
	cr_assert_eq(rxu_parse_u64("", 0, 100, &v), -EINVAL);
	cr_assert_eq(rxu_parse_u64(" 3", 0, 100, &v), -EINVAL);
	double d;
	cr_assert_eq(rxu_parse_rate("12M", &d), 0);
	cr_assert_float_eq(d, 12e6, 1);
	cr_assert_eq(rxu_parse_rate("max", &d), 0);
	cr_assert_float_eq(d, 0, 0);
	cr_assert_lt(rxu_parse_rate("fast", &d), 0);
	cr_assert_eq(rxu_parse_seconds("500ms", 0.01, 60, &d), 0);
	cr_assert_float_eq(d, 0.5, 1e-12);
	cr_assert_eq(rxu_parse_seconds("2s", 0.01, 60, &d), 0);
	cr_assert_float_eq(d, 2, 1e-12);
	cr_assert_eq(rxu_parse_seconds("2h", 0.01, 60, &d), -EINVAL);
	cr_assert_eq(rxu_parse_seconds("100", 0.01, 60, &d), -ERANGE);
	cr_assert_eq(rxu_parse_double("0.005", 0, 1, &d), 0);
	cr_assert_eq(rxu_parse_double("1.5", 0, 1, &d), -ERANGE);
	cr_assert_geq(rxu_cores_available(), 1);
	cr_assert_geq(rxu_core_nth(0), 0);
	cr_assert_eq(rxu_core_nth(100000), -1);
	cr_assert_eq(rxu_pin_self(rxu_core_nth(0)), 0);
}

/* The one core-list parser (--cores and a spec's cores:): what it takes,
 * and the one line for each way a list is wrong. */
Test(util, core_lists)
{
	int c[16];
	char err[160];
	cr_assert_eq(rxu_cores_parse("0-3,6", c, 16, err, sizeof(err)), 5);
	cr_assert_eq(c[0], 0);
	cr_assert_eq(c[3], 3);
	cr_assert_eq(c[4], 6);
	cr_assert_eq(rxu_cores_parse("5", c, 16, err, sizeof(err)), 1);
	cr_assert_eq(c[0], 5);
	cr_assert_eq(rxu_cores_parse("4095", c, 16, err, sizeof(err)), 1);
	cr_assert_eq(rxu_cores_parse("3-1", c, 16, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "cores: range 3-1 runs backwards");
	cr_assert_eq(rxu_cores_parse("0,1-2,2", c, 16, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "cores: core 2 is listed twice");
	cr_assert_eq(rxu_cores_parse("0-20", c, 4, err, sizeof(err)), -ERANGE);
	cr_assert_str_eq(err, "cores: more than 4 cores");
	/* what --cores once took through the number parser, and what no one
	 * writes meaning a core list */
	const char *bad[] = {"", "1k", "1Ki", "1e1", "0x1", ",0", "0,,1", "0-1,", "0-", "-1",
			     "4096", "1 ", " 1", "a", "0-3-5", NULL};
	for (int i = 0; bad[i]; i++) {
		err[0] = 0;
		cr_assert_eq(rxu_cores_parse(bad[i], c, 16, err, sizeof(err)), -EINVAL, "%s",
			     bad[i]);
		cr_assert(strstr(err, "cores: expected a core list like"), "%s: %s", bad[i], err);
	}
	cr_assert_eq(rxu_cores_parse(NULL, c, 16, NULL, 0), -EINVAL);
}
