/* The off mode compiles laps to nothing. */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 0
#include <criterion/criterion.h>

#include "rxray/probe.h"

Test(modes, off_mode_records_nothing)
{
	struct rxr_probe *p = NULL;
	rxr_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	rxr_lap_start(p);
	rxr_burst_begin(p);
	rxr_lap(p, RXR_ST_CQE_POLL, 32);
	rxr_burst_end(p, 32);
	cr_assert_eq(p->st[RXR_ST_CQE_POLL].count, 0);
	cr_assert_eq(p->busy_packets, 0);
	rxr_probe_free(p);
}

/* The stage hint (rxr_stage_begin) is nothing outside full mode: its
 * arguments are not even evaluated, so a hint that computes its stage (a
 * GPU launch asking how many batches are in flight) costs the off and
 * counters builds nothing. */
Test(modes, off_mode_stage_hint_evaluates_nothing)
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
	cr_assert_eq(evaluated, 0, "the hint evaluated its arguments in the off mode");
	rxr_probe_free(p);
}
