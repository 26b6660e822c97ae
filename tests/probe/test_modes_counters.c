/* The counters mode (the default build's) keeps the stage hint out of its
 * hot paths: rxp_stage_begin evaluates nothing. */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 1
#include <criterion/criterion.h>

#include "rxray/probe.h"

Test(modes, counters_mode_stage_hint_evaluates_nothing)
{
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	int evaluated = 0;
	rxp_lap_start(p);
	rxp_burst_begin(p);
	rxp_stage_begin(p, (evaluated++, RXP_ST_APP));
	rxp_stage_begin((evaluated++, p), RXP_ST_APP);
	rxp_lap(p, RXP_ST_APP, 1);
	rxp_burst_end(p, 1);
	cr_assert_eq(evaluated, 0, "the hint evaluated its arguments in the counters mode");
	cr_assert_eq(p->st[RXP_ST_APP].count, 1);
	rxp_probe_free(p);
}
