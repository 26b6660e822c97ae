/* Numbers with units, range checks. */
#include <criterion/criterion.h>
#include <errno.h>

#include "rxray/util.h"

Test(util, units_and_ranges)
{
	uint64_t v;
	cr_assert_eq(rxp_parse_u64("64", 1, 100, &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(rxp_parse_u64("8k", 1, 1 << 20, &v), 0);
	cr_assert_eq(v, 8000);
	cr_assert_eq(rxp_parse_u64("8Ki", 1, 1 << 20, &v), 0);
	cr_assert_eq(v, 8192);
	cr_assert_eq(rxp_parse_u64("1.5M", 1, 1ull << 40, &v), 0);
	cr_assert_eq(v, 1500000);
	cr_assert_eq(rxp_parse_u64("101", 1, 100, &v), -ERANGE);
	cr_assert_eq(rxp_parse_u64("0", 1, 100, &v), -ERANGE);
	cr_assert_eq(rxp_parse_u64("1.5", 1, 100, &v), -EINVAL);
	cr_assert_eq(rxp_parse_u64("12x", 1, 100, &v), -EINVAL);
	cr_assert_eq(rxp_parse_u64("-3", 0, 100, &v), -EINVAL);
	cr_assert_eq(rxp_parse_u64("", 0, 100, &v), -EINVAL);
	cr_assert_eq(rxp_parse_u64(" 3", 0, 100, &v), -EINVAL);
	double d;
	cr_assert_eq(rxp_parse_rate("12M", &d), 0);
	cr_assert_float_eq(d, 12e6, 1);
	cr_assert_eq(rxp_parse_rate("max", &d), 0);
	cr_assert_float_eq(d, 0, 0);
	cr_assert_lt(rxp_parse_rate("fast", &d), 0);
	cr_assert_eq(rxp_parse_seconds("500ms", 0.01, 60, &d), 0);
	cr_assert_float_eq(d, 0.5, 1e-12);
	cr_assert_eq(rxp_parse_seconds("2s", 0.01, 60, &d), 0);
	cr_assert_float_eq(d, 2, 1e-12);
	cr_assert_eq(rxp_parse_seconds("2h", 0.01, 60, &d), -EINVAL);
	cr_assert_eq(rxp_parse_seconds("100", 0.01, 60, &d), -ERANGE);
	cr_assert_eq(rxp_parse_double("0.005", 0, 1, &d), 0);
	cr_assert_eq(rxp_parse_double("1.5", 0, 1, &d), -ERANGE);
	cr_assert_geq(rxp_cores_available(), 1);
	cr_assert_geq(rxp_core_nth(0), 0);
	cr_assert_eq(rxp_core_nth(100000), -1);
	cr_assert_eq(rxp_pin_self(rxp_core_nth(0)), 0);
}
