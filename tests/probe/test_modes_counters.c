/* The counters mode (the default build's) keeps the stage hint out of its
 * hot paths: rxr_stage_begin evaluates nothing. */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 1
#include <criterion/criterion.h>

#include "rxray/probe.h"

Test(modes, counters_mode_stage_hint_evaluates_nothing)
{
	struct rxr_probe *p = NULL;
	rxr_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	int evaluated = 0;
	rxr_lap_start(p);
	rxr_burst_begin(p);
	rxr_stage_begin(p, (evaluated++, RXR_ST_APP));
	rxr_stage_begin((evaluated++, p), RXR_ST_APP);
	rxr_lap(p, RXR_ST_APP, 1);
	rxr_burst_end(p, 1);
	cr_assert_eq(evaluated, 0, "the hint evaluated its arguments in the counters mode");
	cr_assert_eq(p->st[RXR_ST_APP].count, 1);
	rxr_probe_free(p);
}
